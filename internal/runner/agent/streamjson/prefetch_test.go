package streamjson

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/runner/session"
)

// drain reads every event and the final error from next.
func drain(next func() (session.Event, error)) ([]session.Event, error) {
	var out []session.Event
	for {
		ev, err := next()
		if err != nil {
			return out, err
		}
		out = append(out, ev)
	}
}

func fixedDecoder(r io.Reader, strict bool) *Decoder {
	d := NewDecoder(r)
	d.Strict = strict
	d.Now = func() time.Time { return fixedTime }
	return d
}

// TestPrefetchSameEvents: the read-ahead hands out exactly the decoder's
// events and then its error, across batch boundaries too.
func TestPrefetchSameEvents(t *testing.T) {
	var all strings.Builder
	for _, file := range realLogs(t) {
		b, err := os.ReadFile(file)
		require.NoError(t, err)
		all.Write(b)
	}
	// ≈ 700 kB, five jobs of jobBytes and more: past the first batches the
	// reader takes recycled jobs from the free pool (a job not reset when
	// recycled fails "many batches"), and errors come after several jobs.
	many := strings.Repeat(all.String(), 20)
	long := `{"type":"user","message":{"content":"` + strings.Repeat("x", 300<<10) + `"}}` + "\n"
	// a giant line is one past giantLine (its text alone is giantLine long)
	giant := `{"type":"assistant","message":{"id":"g","content":[{"type":"text","text":"` + strings.Repeat("y", giantLine) + `"}]}}` + "\n"
	mid := `{"type":"user","message":{"content":"` + strings.Repeat("z", ownLine) + `"}}` + "\n"
	tests := []struct {
		name    string
		input   string
		strict  bool
		reader  func(string) io.Reader
		maxLine int
	}{
		{"real logs", all.String(), true, nil, 0},
		{"many batches", many, true, nil, 0},
		{"big events among small ones", strings.Repeat(long+all.String(), 3), true, nil, 0},
		{"not a stream halfway (strict)", many + "# markdown\n" + all.String(), true, nil, 0},
		{"bad lines leniently", all.String() + "{nope\n[1]\n" + all.String(), false, nil, 0},
		{"empty", "", true, nil, 0},
		{"reader error", many, true, func(s string) io.Reader { return &failingReader{strings.NewReader(s)} }, 0},
		{"one byte at a time", all.String(), true, func(s string) io.Reader { return &chunkReader{s: s, n: 1} }, 0},
		{"giant lines among small ones", all.String() + giant + many + giant + giant + all.String(), true, nil, 0},
		{"lines just over the copy limit", strings.Repeat(mid+all.String()+mid+mid, 5), true, nil, 0},
		{"lines over MaxLine", strings.Repeat(long+all.String(), 3) + long, true, nil, 100 << 10},
		{"CRLF, blank lines, no final newline", strings.ReplaceAll(many, "\n", "\r\n\n  \n") + `{"type":"result"}`, true, nil, 0},
		{"not a stream after a giant line (strict)", many + giant + "[1]\n" + many, true, nil, 0},
		{"invalid JSON late (strict)", many + many + `{"type":"user",` + "\n" + many, true, nil, 0},
		{"truncated last line (strict)", many + `{"type":"assistant","message":{"content":[{"ty`, true, nil, 0},
		{"truncated last line, reader error", many + `{"type":"assistant","mess`, true, func(s string) io.Reader { return &failingReader{strings.NewReader(s)} }, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			open := func() io.Reader {
				if tt.reader != nil {
					return tt.reader(tt.input)
				}
				return strings.NewReader(tt.input)
			}
			dec := func() *Decoder {
				d := fixedDecoder(open(), tt.strict)
				d.MaxLine = tt.maxLine
				return d
			}
			p, wantErr := samePrefetched(t, dec)
			_, again := p.Next()
			assert.Equal(t, wantErr, again, "the error is sticky")
		})
	}
}

// TestPrefetchIncremental: an event is handed out while the writer still
// holds back the next line (batches do not wait to fill up).
func TestPrefetchIncremental(t *testing.T) {
	pr, pw := io.Pipe()
	p := NewDecoder(pr).Prefetch()
	defer p.Close()
	checkIncremental(t, pw, p.Next)
}

// TestPrefetchClose: closing stops the goroutine whether it waits to hand
// over a batch or for input, and never blocks the caller.
func TestPrefetchClose(t *testing.T) {
	var all strings.Builder
	for _, file := range realLogs(t) {
		b, err := os.ReadFile(file)
		require.NoError(t, err)
		all.Write(b)
	}
	t.Run("waiting to hand over", func(t *testing.T) {
		p := NewDecoder(strings.NewReader(strings.Repeat(all.String(), 200))).Prefetch()
		_, err := p.Next()
		require.NoError(t, err)
		p.Close()
		p.Close() // twice is fine
		<-p.done
		_, err = drain(p.Next)
		assert.Error(t, err)
		assert.False(t, errors.Is(err, io.EOF), "a closed read-ahead is not a finished log")
	})
	t.Run("waiting for input", func(t *testing.T) {
		pr, pw := io.Pipe()
		p := NewDecoder(pr).Prefetch()
		p.Close() // returns at once although the reader blocks
		require.NoError(t, pw.Close())
		<-p.done
	})
}

// FuzzPrefetch: on any input, the parallel read-ahead hands out exactly
// the decoder's events and error (strict and lenient, tiny line limit).
func FuzzPrefetch(f *testing.F) {
	for _, file := range realLogs(f) {
		b, err := os.ReadFile(file)
		require.NoError(f, err)
		f.Add(b[:min(len(b), 4<<10)], true)
	}
	f.Add([]byte("{\"type\":\"result\"}\r\n\n[1]\n{"), false)
	f.Fuzz(func(t *testing.T, in []byte, strict bool) {
		// a few copies read in small pieces: many small jobs, decoded out
		// of order by the workers
		input := bytes.Repeat(in, 3)
		dec := func() *Decoder {
			d := fixedDecoder(&chunkReader{s: string(input), n: 1 + len(in)%23}, strict)
			d.MaxLine = 200
			return d
		}
		samePrefetched(t, dec)
	})
}

// TestPrefetchMapKeepsOrder: another engine's mapper may keep state from
// line to line, so its lines are mapped one by one in the log's order.
func TestPrefetchMapKeepsOrder(t *testing.T) {
	input := strings.Repeat(`{"type":"x"}`+"\n", 3*jobBytes/13)
	dec := func() *Decoder {
		seen := 0 // state across lines: the order they are mapped in
		d := fixedDecoder(strings.NewReader(input), true)
		d.Map = func(line []byte, n int, now time.Time) []session.Event {
			seen++
			return []session.Event{{Kind: session.EventText, Time: now, Text: fmt.Sprint(n, seen)}}
		}
		return d
	}
	samePrefetched(t, dec)
}

// samePrefetched checks that the read-ahead of a decoder from dec hands
// out exactly what a decoder from dec gives, events and error, and
// returns the read-ahead (drained).
func samePrefetched(t *testing.T, dec func() *Decoder) (*Prefetcher, error) {
	t.Helper()
	want, wantErr := drain(dec().Next)
	p := dec().Prefetch()
	t.Cleanup(p.Close)
	got, gotErr := drain(p.Next)
	require.Equal(t, len(want), len(got))
	assert.Equal(t, want, got)
	assert.Equal(t, wantErr, gotErr)
	return p, wantErr
}

// chunkReader reads n bytes at a time, so the read-ahead cuts a job
// wherever a read ends.
type chunkReader struct {
	s    string
	i, n int
}

func (r *chunkReader) Read(p []byte) (int, error) {
	if r.i >= len(r.s) {
		return 0, io.EOF
	}
	k := copy(p[:min(len(p), r.n)], r.s[r.i:])
	r.i += k
	return k, nil
}

// TestPrefetchOneGiantAhead: after a giant line the reader waits until its
// job is handed out, so giant lines do not pile up jobsAhead deep.
func TestPrefetchOneGiantAhead(t *testing.T) {
	// Each line is just over giantLine; three of them: a reader that did not
	// wait would be into the second before the first is handed out.
	giant := `{"type":"assistant","message":{"id":"g","content":[{"type":"text","text":"` + strings.Repeat("y", giantLine) + `"}]}}` + "\n"
	r := &countingReader{r: strings.NewReader(strings.Repeat(giant, 3))}
	p := NewDecoder(r).Prefetch()
	defer p.Close()
	ev, err := p.Next()
	require.NoError(t, err)
	assert.Len(t, ev.Text, giantLine)
	// the first job is still being handed out: the reader waits for it
	assert.LessOrEqual(t, r.n.Load(), int64(len(giant)+64<<10), "read ahead past the first giant line")
	evs, err := drain(p.Next)
	assert.ErrorIs(t, err, io.EOF)
	assert.Len(t, evs, 2)
}

type countingReader struct {
	r io.Reader
	n atomic.Int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}
