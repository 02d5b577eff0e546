package agent

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/mention-runner/mention-runner/internal/core/blocklist"
	"github.com/mention-runner/mention-runner/internal/core/policy"
)

// ErrContextMismatch means the context file is not the one assemble wrote.
var ErrContextMismatch = errors.New("the context file does not match the SHA-256 from assemble")

// ErrNoContextSHA means no checksum was given, so the file cannot be trusted.
var ErrNoContextSHA = errors.New("no context SHA-256 given")

// ContextError is a context file the agent refuses to run on.
type ContextError struct {
	Path      string
	Want, Got string // hex SHA-256, when they differ
	Err       error
}

func (e *ContextError) Error() string {
	switch {
	case errors.Is(e.Err, ErrContextMismatch):
		return fmt.Sprintf("context %s: %v (want %s, file has %s); the file was changed or is from another job, so the run does not start", e.Path, e.Err, e.Want, e.Got)
	case errors.Is(e.Err, ErrNoContextSHA):
		return fmt.Sprintf("context %s: %v: set MR_CONTEXT_SHA256 (input context-sha256) to assemble's context_sha256 output; for a local run use the output of `sha256sum %s`", e.Path, e.Err, e.Path)
	}
	return fmt.Sprintf("context %s: %v", e.Path, e.Err)
}

func (e *ContextError) Unwrap() error { return e.Err }

// LoadContext reads the context file and checks it against wantSHA (hex).
func LoadContext(path, wantSHA string) ([]byte, error) {
	wantSHA = strings.ToLower(strings.TrimSpace(wantSHA))
	if wantSHA == "" {
		return nil, &ContextError{Path: path, Err: ErrNoContextSHA}
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, &ContextError{Path: path, Err: err}
	}
	sum := sha256.Sum256(data)
	if got := hex.EncodeToString(sum[:]); got != wantSHA {
		return nil, &ContextError{Path: path, Want: wantSHA, Got: got, Err: ErrContextMismatch}
	}
	return data, nil
}

// LoadBlocklistSnapshot reads the snapshot; a missing file is no list (the
// publish job checks a fresh copy anyway). A file that is there but cannot
// be read exactly is an error: guessing could let a write through to a
// repository that opted out.
func LoadBlocklistSnapshot(path string) (*blocklist.List, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("blocklist snapshot: %w", err)
	}
	var l blocklist.List
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&l); err != nil {
		return nil, fmt.Errorf("blocklist snapshot %s: %w", path, err)
	}
	if err := l.Validate(); err != nil {
		return nil, fmt.Errorf("blocklist snapshot %s: %w", path, err)
	}
	return &l, nil
}

// LoadRepoIDs reads the repository ids assemble resolved (contract.RepoIDsFile)
// and adds the thread's repository's ids from the context; a missing file
// is no ids (names still match, and publish resolves ids itself). A file
// that is there but cannot be read exactly is an error.
func LoadRepoIDs(path string, context []byte) (policy.IDs, error) {
	ids := policy.IDs{}
	data, err := os.ReadFile(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		return nil, fmt.Errorf("repository ids: %w", err)
	default:
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&ids); err != nil {
			return nil, fmt.Errorf("repository ids %s: %w", path, err)
		}
		if ids == nil {
			ids = policy.IDs{}
		}
	}
	var c struct {
		Repository struct {
			FullName string `json:"full_name"`
			ID       int64  `json:"id"`
			Owner    struct {
				ID int64 `json:"id"`
			} `json:"owner"`
		} `json:"repository"`
	}
	if json.Unmarshal(context, &c) == nil && policy.ValidRepo(c.Repository.FullName) {
		ids.Set(c.Repository.FullName, policy.RepoIDs{Repo: c.Repository.ID, Owner: c.Repository.Owner.ID})
	}
	return ids, nil
}
