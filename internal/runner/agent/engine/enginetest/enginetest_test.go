package enginetest

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/mention-runner/mention-runner/internal/runner/session"
)

func TestDecodeFlushesLast(t *testing.T) {
	var lines []int
	m := Mapper{
		Map: func(line []byte, n int, now time.Time) []session.Event {
			lines = append(lines, n)
			return []session.Event{{Kind: session.EventText, Text: string(line)}}
		},
		Flush: func() []session.Event { return []session.Event{{Kind: session.EventResult}} },
	}
	evs := Decode([]byte("a\nb\n"), m)
	assert.Equal(t, []int{1, 2}, lines)
	assert.Equal(t, []session.EventKind{session.EventText, session.EventText, session.EventResult}, Kinds(evs))
	assert.Equal(t, "b", evs[1].Text)

	m.Flush = nil
	assert.Equal(t, []session.EventKind{session.EventText}, Kinds(Decode([]byte("c"), m)))
}
