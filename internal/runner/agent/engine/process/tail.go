package process

import "sync"

// Tail keeps the last max bytes written to it: a child's stderr, for
// error reports. It is safe for concurrent use.
type Tail struct {
	mu    sync.Mutex
	max   int
	buf   []byte
	total int64
}

// NewTail keeps the last max bytes.
func NewTail(max int) *Tail { return &Tail{max: max} }

func (t *Tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.total += int64(len(p))
	if len(p) >= t.max {
		t.buf = append(t.buf[:0], p[len(p)-t.max:]...)
		return len(p), nil
	}
	if over := len(t.buf) + len(p) - t.max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	t.buf = append(t.buf, p...)
	return len(p), nil
}

// String is the kept tail, marked when earlier output was dropped.
func (t *Tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.total > int64(len(t.buf)) {
		return "…" + string(t.buf)
	}
	return string(t.buf)
}
