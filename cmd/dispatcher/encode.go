package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/mention-runner/mention-runner/internal/core/cli"
	"github.com/mention-runner/mention-runner/internal/core/contract"
	"github.com/mention-runner/mention-runner/internal/core/transport"
)

func init() {
	app.Register(&cli.Command{
		Name:    "encode",
		Summary: "encode a context JSON object (stdin) into repository_dispatch request bodies, one per line",
		Run:     runEncode,
	})
}

func runEncode(_ context.Context, env *cli.Env, args []string) error {
	fs := cli.FlagSet(env, "dispatcher", "encode", "--jobid UUID [--timestamp RFC3339] [--max-bytes N] < context.json")
	jobID := fs.String("jobid", "", "job id (UUID; required)")
	stamp := fs.String("timestamp", "", "timestamp to send, RFC 3339 (default: now, UTC, whole seconds)")
	maxBytes := fs.Int("max-bytes", transport.DefaultMaxContextBytes, "refuse contexts larger than this (the runner's cap)")
	if err := cli.ParseFlags(fs, args, false); err != nil {
		return err
	}
	if *jobID == "" {
		return cli.Usagef("--jobid is required")
	}
	if _, err := contract.ParseJobID(*jobID); err != nil {
		return cli.Usagef("--jobid: %v", err)
	}
	if *maxBytes <= 0 {
		return cli.Usagef("--max-bytes must be positive, got %d", *maxBytes)
	}
	ts := time.Now().UTC().Truncate(time.Second)
	if *stamp != "" {
		t, err := time.Parse(time.RFC3339, *stamp)
		if err != nil {
			return cli.Usagef("--timestamp %q is not RFC 3339 (e.g. 2025-11-22T05:09:00Z)", *stamp)
		}
		ts = t
	}

	// Sized once when stdin is a file: growing a 10 MiB buffer by
	// doubling costs more in page faults than the copying itself.
	var in bytes.Buffer
	if f, ok := env.Stdin.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode().IsRegular() {
			in.Grow(int(min(st.Size(), int64(*maxBytes))) + bytes.MinRead)
		}
	}
	if _, err := in.ReadFrom(io.LimitReader(env.Stdin, int64(*maxBytes)+1)); err != nil {
		return fmt.Errorf("read context from stdin: %w", err)
	}
	raw := in.Bytes()
	if len(raw) > *maxBytes {
		return &cli.ExitError{Code: 2, Err: fmt.Errorf("context on stdin is over %d bytes (--max-bytes)", *maxBytes)}
	}
	// Compacted (in place) so the bytes sent do not depend on how stdin was
	// indented. Each request is written as soon as it is encoded: the runner
	// at the other end of a pipe decodes the first while later ones are made.
	if _, err := transport.WriteCompact(env.Stdout, *jobID, raw, ts); err != nil {
		if te := (*transport.Error)(nil); errors.As(err, &te) && te.Kind == transport.KindNotJSONObject {
			// raw is untouched when it is refused; encoding/json says where
			// it goes wrong.
			var sink bytes.Buffer
			if cerr := json.Compact(&sink, raw); cerr != nil {
				return &cli.ExitError{Code: 2, Err: fmt.Errorf("context on stdin is not valid JSON: %w", cerr)}
			}
			return &cli.ExitError{Code: 2, Err: fmt.Errorf("context on stdin must be one JSON object: %w", err)}
		}
		return err
	}
	return nil
}
