package streamjson

import (
	"errors"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/session"
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
	many := strings.Repeat(all.String(), 40) // a few thousand events
	long := `{"type":"user","message":{"content":"` + strings.Repeat("x", 300<<10) + `"}}` + "\n"
	tests := []struct {
		name   string
		input  string
		strict bool
		reader func(string) io.Reader
	}{
		{"real logs", all.String(), true, nil},
		{"many batches", many, true, nil},
		{"big events among small ones", strings.Repeat(long+all.String(), 3), true, nil},
		{"not a stream halfway (strict)", many + "# markdown\n" + all.String(), true, nil},
		{"bad lines leniently", all.String() + "{nope\n[1]\n" + all.String(), false, nil},
		{"empty", "", true, nil},
		{"reader error", many, true, func(s string) io.Reader { return &failingReader{strings.NewReader(s)} }},
		{"one byte at a time", all.String(), true, func(s string) io.Reader { return &oneByteReader{s: s} }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			open := func() io.Reader {
				if tt.reader != nil {
					return tt.reader(tt.input)
				}
				return strings.NewReader(tt.input)
			}
			want, wantErr := drain(fixedDecoder(open(), tt.strict).Next)
			p := fixedDecoder(open(), tt.strict).Prefetch()
			defer p.Close()
			got, gotErr := drain(p.Next)
			require.Equal(t, len(want), len(got))
			assert.Equal(t, want, got)
			assert.Equal(t, wantErr, gotErr)
			_, again := p.Next()
			assert.Equal(t, wantErr, again, "the error is sticky")
		})
	}
}

type oneByteReader struct {
	s string
	i int
}

func (r *oneByteReader) Read(p []byte) (int, error) {
	if r.i >= len(r.s) {
		return 0, io.EOF
	}
	if len(p) == 0 {
		return 0, nil
	}
	p[0] = r.s[r.i]
	r.i++
	return 1, nil
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
