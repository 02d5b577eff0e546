package benchreport

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// StreamSeed is the material of a synthetic stream-json log: real lines
// captured from Claude Code (internal/runner/agent/streamjson/testdata).
type StreamSeed struct {
	Init   []byte   // the system/init line
	Turns  [][]byte // assistant and user lines, repeated to fill the log
	Result []byte   // the final result line
}

// ErrNoTurns means the seed logs had no assistant or user lines to repeat.
var ErrNoTurns = errors.New("stream seed: no assistant or user lines")

// ParseStreamSeed collects lines from real stream-json logs: the first init,
// every assistant/user line, and the last result line.
func ParseStreamSeed(logs ...[]byte) (StreamSeed, error) {
	var s StreamSeed
	for i, log := range logs {
		for n, line := range bytes.Split(log, []byte("\n")) {
			line = bytes.TrimSpace(line)
			if len(line) == 0 {
				continue
			}
			var head struct {
				Type    string `json:"type"`
				Subtype string `json:"subtype"`
			}
			if err := json.Unmarshal(line, &head); err != nil {
				return StreamSeed{}, fmt.Errorf("stream seed %d line %d: %w", i+1, n+1, err)
			}
			switch {
			case head.Type == "system" && head.Subtype == "init" && s.Init == nil:
				s.Init = line
			case head.Type == "assistant" || head.Type == "user":
				s.Turns = append(s.Turns, line)
			case head.Type == "result":
				s.Result = line
			}
		}
	}
	if len(s.Turns) == 0 {
		return StreamSeed{}, ErrNoTurns
	}
	return s, nil
}

// toolIDPrefix is how Claude Code's tool-use ids begin; renaming them per
// repetition keeps every call paired with its own result, as in a real log.
var toolIDPrefix = []byte(`"toolu_`)

// WriteStreamLog writes at least size bytes of stream-json: the init line,
// the turn lines repeated (tool ids made unique per repetition), the result
// line. It returns the bytes written.
func WriteStreamLog(w io.Writer, s StreamSeed, size int64) (int64, error) {
	if len(s.Turns) == 0 {
		return 0, ErrNoTurns
	}
	bw := bufio.NewWriterSize(w, 256<<10)
	var n int64
	put := func(line []byte) error {
		k, err := bw.Write(line)
		n += int64(k)
		if err != nil {
			return err
		}
		err = bw.WriteByte('\n')
		n++
		return err
	}
	if s.Init != nil {
		if err := put(s.Init); err != nil {
			return n, fmt.Errorf("write stream log: %w", err)
		}
	}
	var buf []byte
	for rep := 0; n < size; rep++ {
		repl := append(append([]byte(nil), toolIDPrefix...), strconv.Itoa(rep)+"_"...)
		for _, line := range s.Turns {
			buf = append(buf[:0], line...)
			buf = bytes.ReplaceAll(buf, toolIDPrefix, repl)
			if err := put(buf); err != nil {
				return n, fmt.Errorf("write stream log: %w", err)
			}
		}
	}
	if s.Result != nil {
		if err := put(s.Result); err != nil {
			return n, fmt.Errorf("write stream log: %w", err)
		}
	}
	if err := bw.Flush(); err != nil {
		return n, fmt.Errorf("write stream log: %w", err)
	}
	return n, nil
}
