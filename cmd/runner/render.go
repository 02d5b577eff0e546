package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"

	"github.com/mention-runner/mention-runner/internal/core/cli"
	"github.com/mention-runner/mention-runner/internal/core/contract"
	"github.com/mention-runner/mention-runner/internal/runner/agent/streamjson"
	"github.com/mention-runner/mention-runner/internal/runner/record"
	"github.com/mention-runner/mention-runner/internal/runner/render"
	"github.com/mention-runner/mention-runner/internal/runner/session"
)

// SessionMarkdownFile holds the session as posted on the log issue.
const SessionMarkdownFile = "session.md"

func init() {
	app.Register(&cli.Command{
		Name:    "render",
		Summary: "rebuild transcript.md and session.md from a run record, or print a stream-json log as session markdown",
		Run:     runRender,
	})
}

func runRender(ctx context.Context, env *cli.Env, args []string) error {
	fs := cli.FlagSet(env, "runner", "render", "--run DIR | --from-stream FILE")
	runDir := fs.String("run", "", "run directory: rewrite DIR/transcript.md and write DIR/session.md from the record")
	stream := fs.String("from-stream", "", "Claude Code stream-json log to print as session markdown ('-' reads stdin)")
	maxResult := fs.Int("max-result-chars", render.DefaultMaxResultChars, "cut tool results and arguments longer than this")
	if err := cli.ParseFlags(fs, args, false); err != nil {
		return err
	}
	if (*runDir == "") == (*stream == "") {
		return cli.Usagef("give exactly one of --run DIR or --from-stream FILE")
	}
	if *maxResult <= 0 {
		return cli.Usagef("--max-result-chars must be positive")
	}
	o := render.SessionOptions{MaxResultChars: *maxResult}
	if *runDir != "" {
		return renderRun(*runDir, o)
	}
	return renderStream(ctx, env, *stream, o)
}

// renderRun rebuilds the human-readable files of a run from its record.
func renderRun(dir string, o render.SessionOptions) error {
	run, err := record.LoadRun(dir)
	if err != nil {
		return err
	}
	if err := record.WriteTranscript(dir, run.Transcript()); err != nil {
		return err
	}
	s := session.Session{}
	if run.Session != nil {
		s = *run.Session
	}
	parts := render.SessionMarkdown(s, o)
	path := filepath.Join(dir, SessionMarkdownFile)
	if err := os.WriteFile(path, []byte(strings.Join(parts, contract.PartBreak)), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// renderStream prints the session of a stream-json log as it reads it, so
// a log of any size renders in the memory of a few turns.
// renderGCPercent: the stream's live heap is a few MiB, so at Go's default
// (100) it collects every ~3 MiB allocated, ~100 times per 100 MB of log;
// 150 is ~8% less CPU with peaks of 24-25 MiB at 200 MB (100: 22-24). 200
// saved a little more but peaked at 35-36 MiB in 2 of 13 runs on a busy
// machine (32 MiB is the goal), and a memory limit as a cap made logs of
// giant lines collect without end (4x the CPU): neither is used.
const renderGCPercent = 150

func renderStream(ctx context.Context, env *cli.Env, path string, o render.SessionOptions) error {
	if _, set := os.LookupEnv("GOGC"); !set { // the runtime reads the process's own environment
		defer debug.SetGCPercent(debug.SetGCPercent(renderGCPercent))
	}
	in := env.Stdin
	if path != "-" {
		f, err := os.Open(path)
		if err != nil {
			return fmt.Errorf("open stream log: %w", err)
		}
		defer f.Close()
		in = f
	}
	w := bufio.NewWriterSize(env.Stdout, 64<<10)
	// Three stages on the machine's cores: decoding (lines cut into jobs,
	// decoded by one worker per core), assembling turns (here), rendering
	// and writing (the stream's goroutine); bounded batches keep memory flat.
	out := render.NewPipelinedSessionStream(w, o)
	defer out.Stop() // on an early return: ends the writing goroutine, renders nothing more
	dec := streamjson.NewDecoder(in)
	dec.Strict = true // a file that is not a stream-json log is a mistake to name, not an empty session
	events := dec.Prefetch()
	defer events.Close()
	for n := 0; ; n++ {
		if n%1024 == 0 && ctx.Err() != nil {
			return fmt.Errorf("render stream: %w", ctx.Err())
		}
		ev, err := events.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		var fe *streamjson.FormatError
		if errors.As(err, &fe) {
			return &cli.ExitError{Code: 2, Err: fmt.Errorf("render --from-stream %s: %w", path, fe)}
		}
		if err != nil {
			return fmt.Errorf("render stream %s: %w", path, err)
		}
		if err := out.Add(ev); err != nil {
			return err
		}
	}
	if err := out.Close(); err != nil {
		return err
	}
	if err := w.Flush(); err != nil {
		return fmt.Errorf("write session markdown: %w", err)
	}
	return nil
}
