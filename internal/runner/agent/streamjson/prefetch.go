package streamjson

import (
	"errors"
	"runtime"
	"sync"
	"time"

	"github.com/mention-runner/mention-runner/internal/runner/session"
)

// Read-ahead bounds. The log is cut into jobs of whole lines, about
// jobBytes each (a line over ownLine is handed on without a copy and ends
// its job); at most jobsAhead jobs wait decoded or decoding, so memory
// stays about jobsAhead × jobBytes past the decoder's own (plus the giant
// lines in flight, one per job at most) whatever the log's size.
// A job also goes as soon as the reader would block, so a live stream's
// events are not held back.
const (
	jobBytes  = 128 << 10
	ownLine   = 32 << 10
	jobsAhead = 4
	// giantLine: after a job holding a line this long the reader waits
	// until Next has handed the job out, so one giant line at a time is in
	// the decode stage, not jobsAhead of them.
	giantLine = 1 << 20
)

// Prefetcher hands out a Decoder's events while goroutines of its own read
// and decode the lines that follow: one reads and cuts the input into jobs
// of whole lines, GOMAXPROCS workers decode the jobs (lines are independent),
// and Next hands their events out in the log's order. Reading a log and
// working on its events (rendering it) so use every core. Events come out
// in the same order and with the same content as from the Decoder itself;
// after the first error (io.EOF included) Next returns that error again. It
// is not safe for concurrent use; Close it when done.
type Prefetcher struct {
	order  chan *job // jobs in the log's order, decoded or being decoded
	work   chan *job
	free   chan *job
	stop   chan struct{}
	done   chan struct{} // closed when every goroutine has ended
	cur    *job
	i      int
	err    error
	closed bool
}

// job is a run of whole lines, then the events a worker decoded from them.
type job struct {
	buf   []byte
	lines []jobLine
	err   error // the read error after the lines, if any

	evs     []session.Event
	evErr   error         // the first error decoding, else err
	decoded chan struct{} // one send when evs and evErr are set
	giant   bool          // holds a giant line: read waits for handedOut
	handed  chan struct{} // one send when Next is done with a giant job
}

type jobLine struct {
	start, end int    // in buf, unless big
	big        []byte // a long line, not copied
	n          int    // 1-based line number
	tooLong    int    // the size of a line skipped for it
	at         time.Time
}

// Prefetch starts reading and decoding d ahead of the caller. d must not be
// used directly afterwards. With a Map (another engine's stream, whose
// mapper may keep state from line to line) one worker decodes, in order.
func (d *Decoder) Prefetch() *Prefetcher {
	workers := runtime.GOMAXPROCS(0)
	if d.Map != nil {
		workers = 1
	}
	p := &Prefetcher{
		order: make(chan *job, jobsAhead-1), // one more is being handed out
		work:  make(chan *job),
		free:  make(chan *job, jobsAhead+workers+1),
		stop:  make(chan struct{}),
		done:  make(chan struct{}),
	}
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() { p.decode(d) })
	}
	go func() {
		p.read(d)
		close(p.work)
		wg.Wait()
		close(p.done)
	}()
	return p
}

// read cuts d's input into jobs, numbering and stamping each line as it
// arrives, and queues them in order for the workers and for Next.
func (p *Prefetcher) read(d *Decoder) {
	defer close(p.order)
	for {
		var j *job
		select {
		case j = <-p.free:
		default:
			// a job's copied lines end within ownLine past jobBytes
			j = &job{buf: make([]byte, 0, jobBytes+ownLine), decoded: make(chan struct{}, 1), handed: make(chan struct{}, 1)}
		}
		size := 0
		for size < jobBytes && j.err == nil {
			line, tooLong, err := d.readLine()
			j.err = d.readErr(err)
			if line != nil || tooLong > 0 {
				d.line++
				l := jobLine{n: d.line, tooLong: tooLong, at: d.now()}
				if len(line) > ownLine {
					l.big, d.buf = line, nil // readLine starts a new buffer
					j.giant = j.giant || len(line) > giantLine
				} else {
					l.start = len(j.buf)
					j.buf = append(j.buf, line...)
					l.end = len(j.buf)
				}
				j.lines = append(j.lines, l)
				size += len(line) + 64
			}
			if len(j.lines) > 0 && d.r.Buffered() == 0 {
				break // the next read may wait for the writer: hand these on now
			}
		}
		last, giant := j.err != nil, j.giant // j is not ours once queued
		select {
		case p.order <- j:
		case <-p.stop:
			return
		}
		select {
		case p.work <- j:
		case <-p.stop:
			return
		}
		if last {
			return
		}
		if giant {
			select {
			case <-j.handed:
			case <-p.stop:
				return
			}
		}
	}
}

// decode decodes jobs with a decoder of its own (reused buffers, interned
// strings), each line with the number and arrival time read gave it.
func (p *Prefetcher) decode(d *Decoder) {
	var at time.Time
	w := &Decoder{MaxLine: d.MaxLine, Strict: d.Strict, Map: d.Map, Now: func() time.Time { return at }}
	for j := range p.work {
		var err error
		for _, l := range j.lines {
			w.line, at = l.n, l.at
			line := l.big
			if line == nil {
				line = j.buf[l.start:l.end]
			}
			if j.evs, err = w.lineEvents(j.evs, line, l.tooLong); err != nil {
				break
			}
		}
		j.evErr = cmpErr(err, j.err)
		j.decoded <- struct{}{}
	}
}

func cmpErr(first, second error) error {
	if first != nil {
		return first
	}
	return second
}

// Next returns the next event, or the decoder's error once they are all out.
func (p *Prefetcher) Next() (session.Event, error) {
	for p.cur == nil || p.i >= len(p.cur.evs) {
		if p.err != nil {
			return session.Event{}, p.err
		}
		if p.closed {
			p.err = errClosed
			continue
		}
		if p.cur != nil {
			if p.cur.giant {
				select { // the reader waits for it (never full: it takes each)
				case p.cur.handed <- struct{}{}:
				default:
				}
			}
			p.recycle(p.cur)
			p.cur = nil
		}
		j, ok := <-p.order
		if !ok {
			// the reader only stops early when closed
			p.err = errClosed
			continue
		}
		<-j.decoded
		p.cur, p.i = j, 0
		if j.evErr != nil {
			p.err = j.evErr
			p.Close() // nothing after the error is wanted: stop reading ahead
		}
	}
	ev := p.cur.evs[p.i]
	p.i++
	return ev, nil
}

// recycle drops a handed-out job's payloads and keeps its arrays.
func (p *Prefetcher) recycle(j *job) {
	clear(j.evs)
	clear(j.lines) // big lines
	j.evs, j.lines, j.err, j.evErr, j.giant = j.evs[:0], j.lines[:0], nil, nil, false
	j.buf = j.buf[:0]
	if cap(j.evs) > 4096 {
		j.evs = nil
	}
	select {
	case p.free <- j:
	default:
	}
}

// Close stops the read-ahead. The goroutines end once the line being read
// (if any) is read; Close never blocks.
func (p *Prefetcher) Close() {
	if !p.closed {
		p.closed = true
		close(p.stop)
	}
}

var errClosed = errors.New("stream-json: read-ahead closed")
