package streamjson

import (
	"errors"

	"github.com/mention-runner/mention-runner/internal/session"
)

// Read-ahead bounds: a batch holds at most prefetchEvents events or about
// prefetchBytes of their payload (a bigger event goes alone), and at most
// prefetchBatches batches wait, so memory stays a few hundred KiB past
// the decoder's own (plus any single giant event) whatever the log's size.
// A batch also goes as soon as the decoder would have to wait for input,
// so a live stream's events are not held back.
const (
	prefetchEvents  = 256
	prefetchBytes   = 128 << 10
	prefetchBatches = 2
)

// Prefetcher hands out a Decoder's events while a goroutine of its own
// decodes the lines that follow, so reading a log and working on its
// events (rendering it) run on two cores. Events come out in the same
// order and with the same content as from the Decoder itself; after the
// first error (io.EOF included) Next returns that error again. It is not
// safe for concurrent use; Close it when done.
type Prefetcher struct {
	batches chan batch
	free    chan []session.Event
	stop    chan struct{}
	done    chan struct{} // closed when the goroutine ends
	cur     batch
	i       int
	err     error
	closed  bool
}

type batch struct {
	evs []session.Event
	err error // after evs
}

// Prefetch starts decoding d ahead of the caller. d must not be used
// directly afterwards.
func (d *Decoder) Prefetch() *Prefetcher {
	p := &Prefetcher{
		batches: make(chan batch, prefetchBatches),
		free:    make(chan []session.Event, prefetchBatches+2),
		stop:    make(chan struct{}),
		done:    make(chan struct{}),
	}
	go p.run(d)
	return p
}

func (p *Prefetcher) run(d *Decoder) {
	defer close(p.done)
	defer close(p.batches)
	for {
		var evs []session.Event
		select {
		case evs = <-p.free:
		default:
			evs = make([]session.Event, 0, prefetchEvents)
		}
		size := 0
		var err error
		for len(evs) < prefetchEvents && size < prefetchBytes {
			var ev session.Event
			if ev, err = d.Next(); err != nil {
				break
			}
			evs = append(evs, ev)
			size += eventSize(ev)
			if d.drained() {
				break
			}
		}
		select {
		case p.batches <- batch{evs, err}:
		case <-p.stop:
			return
		}
		if err != nil {
			return
		}
	}
}

// eventSize approximates the memory an event's payload holds.
func eventSize(ev session.Event) int {
	return 64 + len(ev.Text) + len(ev.Input) + len(ev.Output) + len(ev.Raw)
}

// Next returns the next event, or the decoder's error once they are all out.
func (p *Prefetcher) Next() (session.Event, error) {
	for p.i >= len(p.cur.evs) {
		if p.err != nil {
			return session.Event{}, p.err
		}
		if p.cur.evs != nil {
			clear(p.cur.evs) // drop the payloads before the array goes back
			select {
			case p.free <- p.cur.evs[:0]:
			default:
			}
		}
		b, ok := <-p.batches
		if !ok {
			// the goroutine only stops early when closed
			p.cur, p.err = batch{}, errClosed
			continue
		}
		p.cur, p.i = b, 0
		if b.err != nil {
			p.err = b.err
		}
	}
	ev := p.cur.evs[p.i]
	p.i++
	return ev, nil
}

// Close stops the read-ahead. The goroutine ends once the line it is
// reading (if any) is read; it never blocks on Close's caller.
func (p *Prefetcher) Close() {
	if !p.closed {
		p.closed = true
		close(p.stop)
	}
}

var errClosed = errors.New("stream-json: read-ahead closed")
