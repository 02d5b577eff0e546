package benchreport

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/runner/agent/streamjson"
	"github.com/mention-runner/mention-runner/internal/runner/session"
)

func realSeed(t testing.TB) StreamSeed {
	files, err := filepath.Glob(filepath.Join("..", "..", "runner", "agent", "streamjson", "testdata", "*.jsonl"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	var logs [][]byte
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		logs = append(logs, b)
	}
	s, err := ParseStreamSeed(logs...)
	require.NoError(t, err)
	return s
}

func TestParseStreamSeed(t *testing.T) {
	tests := []struct {
		name    string
		logs    []string
		turns   int
		wantErr error
		errText string
	}{
		{"turns only", []string{`{"type":"assistant"}` + "\n" + `{"type":"user"}`}, 2, nil, ""},
		{"no turns", []string{`{"type":"system","subtype":"init"}`}, 0, ErrNoTurns, ""},
		{"bad json", []string{"{"}, 0, nil, "stream seed 1 line 1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var logs [][]byte
			for _, l := range tc.logs {
				logs = append(logs, []byte(l))
			}
			s, err := ParseStreamSeed(logs...)
			switch {
			case tc.wantErr != nil:
				assert.ErrorIs(t, err, tc.wantErr)
			case tc.errText != "":
				assert.ErrorContains(t, err, tc.errText)
			default:
				require.NoError(t, err)
				assert.Len(t, s.Turns, tc.turns)
			}
		})
	}
}

// The generated log must be what the decoder sees from Claude Code: every
// line decodes, tool calls stay paired and ids are unique per repetition.
func TestWriteStreamLogDecodes(t *testing.T) {
	seed := realSeed(t)
	var buf bytes.Buffer
	n, err := WriteStreamLog(&buf, seed, 256<<10)
	require.NoError(t, err)
	assert.EqualValues(t, buf.Len(), n)
	assert.GreaterOrEqual(t, n, int64(256<<10))
	d := streamjson.NewDecoder(&buf)
	calls := map[string]int{}
	for {
		ev, err := d.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err)
		if ev.Kind == session.EventToolUse {
			calls[ev.ToolCallID]++
		}
	}
	require.NotEmpty(t, calls)
	for id, c := range calls {
		assert.Equal(t, 1, c, "tool id %s repeated", id)
		assert.True(t, strings.HasPrefix(id, "toolu_"), id)
	}
}

func TestWriteStreamLogNoTurns(t *testing.T) {
	_, err := WriteStreamLog(io.Discard, StreamSeed{}, 10)
	assert.ErrorIs(t, err, ErrNoTurns)
}
