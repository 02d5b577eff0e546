package benchreport

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/runner/agent/streamjson"
	"github.com/mention-runner/mention-runner/internal/runner/render"
)

// benchLogBytes is the size of the in-memory log the render benchmarks
// share: big enough to amortise start-up, small enough for 2 busy cores.
const benchLogBytes = 20e6

var (
	benchLogOnce sync.Once
	benchLog     []byte
)

func realLog(b *testing.B) []byte {
	benchLogOnce.Do(func() {
		var buf bytes.Buffer
		_, err := WriteStreamLog(&buf, realSeed(b), benchLogBytes)
		require.NoError(b, err)
		benchLog = buf.Bytes()
	})
	return benchLog
}

// BenchmarkRenderStream is `runner render --from-stream` in process: the
// strict decoder (read ahead) feeding the pipelined streaming renderer,
// output discarded.
func BenchmarkRenderStream(b *testing.B) {
	log := realLog(b)
	b.SetBytes(int64(len(log)))
	b.ReportAllocs()
	for b.Loop() {
		out := render.NewPipelinedSessionStream(bufio.NewWriterSize(io.Discard, 64<<10), render.SessionOptions{})
		dec := streamjson.NewDecoder(bytes.NewReader(log))
		dec.Strict = true
		events := dec.Prefetch()
		for {
			ev, err := events.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			if err := out.Add(ev); err != nil {
				b.Fatal(err)
			}
		}
		events.Close()
		require.NoError(b, out.Close())
	}
}

// BenchmarkFloorRender is the floor of the render row: encoding/json.Valid
// on every line of the same log (what `benchreport floor render` does).
func BenchmarkFloorRender(b *testing.B) {
	log := realLog(b)
	b.SetBytes(int64(len(log)))
	b.ReportAllocs()
	for b.Loop() {
		sc := bufio.NewScanner(bytes.NewReader(log))
		sc.Buffer(make([]byte, 0, 1<<20), 64<<20)
		for sc.Scan() {
			if len(sc.Bytes()) > 0 && !json.Valid(sc.Bytes()) {
				b.Fatal("not JSON")
			}
		}
	}
}
