package publish

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// ContextError means the trusted context cannot be used: missing, or not
// the file assemble produced.
type ContextError struct {
	Path   string
	Reason string
}

func (e *ContextError) Error() string {
	return fmt.Sprintf("trusted context %s: %s", e.Path, e.Reason)
}

// VerifyContext reads the context file and checks it against the SHA-256
// assemble reported. An empty wantSHA is refused: publish never acts on a
// context it could not verify.
func VerifyContext(path, wantSHA string) ([]byte, error) {
	if wantSHA == "" {
		return nil, &ContextError{Path: path, Reason: "no MR_CONTEXT_SHA256 was given, so the file cannot be verified; pass the context_sha256 output of the prepare job"}
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, &ContextError{Path: path, Reason: fmt.Sprintf("cannot read it (%v); download assemble's artifact before publish", err)}
	}
	sum := sha256.Sum256(data)
	if got := hex.EncodeToString(sum[:]); got != strings.ToLower(wantSHA) {
		return nil, &ContextError{Path: path, Reason: fmt.Sprintf("SHA-256 is %s but assemble reported %s; the file was changed after assemble and is refused", got, wantSHA)}
	}
	return data, nil
}

// ErrNoRecord means the agent job left no run directory (it crashed before
// uploading its artifact, or the artifact is missing).
var ErrNoRecord = errors.New("agent produced no record")

// FindRunDir returns the agent's run directory under runsDir: runID's when
// given, else the only directory there. A missing or empty runsDir is
// ErrNoRecord; several candidates without runID is an error naming them.
func FindRunDir(runsDir, runID string) (string, error) {
	if runID != "" {
		if strings.ContainsAny(runID, `/\`) || runID == "." || runID == ".." {
			return "", fmt.Errorf("run id %q is not a plain directory name", runID)
		}
		dir := filepath.Join(runsDir, runID)
		st, err := os.Stat(dir)
		if err != nil || !st.IsDir() {
			return "", fmt.Errorf("%w: %s is not a directory", ErrNoRecord, dir)
		}
		return dir, nil
	}
	ents, err := os.ReadDir(runsDir)
	if errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("%w: %s does not exist", ErrNoRecord, runsDir)
	}
	if err != nil {
		return "", fmt.Errorf("list run dirs in %s: %w", runsDir, err)
	}
	var dirs []string
	for _, e := range ents {
		if e.IsDir() {
			dirs = append(dirs, e.Name())
		}
	}
	sort.Strings(dirs)
	switch len(dirs) {
	case 0:
		return "", fmt.Errorf("%w: no run directory in %s", ErrNoRecord, runsDir)
	case 1:
		return filepath.Join(runsDir, dirs[0]), nil
	}
	return "", fmt.Errorf("%d run directories in %s (%s); set MR_RUN_ID to the one to publish", len(dirs), runsDir, strings.Join(dirs, ", "))
}
