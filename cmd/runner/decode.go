package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/mention-runner/mention-runner/internal/core/cli"
	"github.com/mention-runner/mention-runner/internal/core/transport"
)

// maxLineBytes bounds one input line: a request body is under 64,000 bytes;
// a webhook event adds repository/sender objects, far below this.
const maxLineBytes = 1 << 20

func init() {
	app.Register(&cli.Command{
		Name:    "decode",
		Summary: "reassemble a context from request bodies or repository_dispatch events (stdin, one per line)",
		Run:     runDecode,
	})
}

func runDecode(_ context.Context, env *cli.Env, args []string) error {
	fs := cli.FlagSet(env, "runner", "decode", "[--max-bytes N] < events.jsonl")
	maxBytes := fs.Int("max-bytes", transport.DefaultMaxContextBytes, "largest decoded context accepted")
	maxShards := fs.Int("max-shards", 0, "most shards accepted (default: derived from --max-bytes)")
	if err := cli.ParseFlags(fs, args, false); err != nil {
		return err
	}
	if *maxBytes <= 0 || *maxShards < 0 {
		return cli.Usagef("--max-bytes must be positive and --max-shards not negative")
	}
	ctx, err := decode(env.Stdin, transport.Options{MaxContextBytes: *maxBytes, MaxShards: *maxShards})
	if err != nil {
		return &cli.ExitError{Code: 2, Err: err}
	}
	w := bufio.NewWriter(env.Stdout)
	w.Write(ctx)
	w.WriteByte('\n')
	if err := w.Flush(); err != nil {
		return fmt.Errorf("write context: %w", err)
	}
	return nil
}

func decode(r io.Reader, o transport.Options) ([]byte, error) {
	a := transport.NewAssembler(o)
	lr := lineReader{br: bufio.NewReaderSize(r, lineBufferBytes)}
	for n := 1; ; n++ {
		line, err := lr.next()
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("line %d: %w", n, err)
		}
		if len(bytes.TrimSpace(line)) > 0 {
			et, p, perr := transport.ParseLine(line)
			if perr == nil {
				_, perr = a.Add(et, p)
			}
			if perr != nil {
				return nil, fmt.Errorf("line %d: %w", n, perr)
			}
		}
		if errors.Is(err, io.EOF) {
			break
		}
	}
	return a.Context()
}

// lineBufferBytes holds a whole request body (under 64,000 bytes) and its
// newline, so such a line is handed out where bufio read it, uncopied.
const lineBufferBytes = 64 << 10

// lineReader reads lines that are valid only until its next call: ParseLine
// copies what it keeps (TestParseLineKeepsNoSliceOfTheLine).
type lineReader struct {
	br   *bufio.Reader
	long []byte // a line longer than br's buffer is gathered here, reused
}

// next returns the next line without its newline, refusing lines longer
// than maxLineBytes instead of buffering them. It returns io.EOF with the
// last line when the input ends.
func (l *lineReader) next() ([]byte, error) {
	chunk, err := l.br.ReadSlice('\n')
	if err == nil {
		return chunk[:len(chunk)-1], nil
	}
	line := l.long[:0]
	for {
		if len(line)+len(chunk) > maxLineBytes+1 { // +1: the newline itself
			return nil, fmt.Errorf("line is longer than %d bytes; each line must be one request body or webhook event", maxLineBytes)
		}
		line = append(line, chunk...)
		l.long = line
		switch {
		case err == nil:
			return line[:len(line)-1], nil
		case errors.Is(err, bufio.ErrBufferFull):
			chunk, err = l.br.ReadSlice('\n')
		case errors.Is(err, io.EOF):
			return line, io.EOF
		default:
			return nil, fmt.Errorf("read stdin: %w", err)
		}
	}
}
