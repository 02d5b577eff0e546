package demo

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/mention-runner/mention-runner/internal/testrig/actionwiring"
)

// ErrArtifactExists is GitHub's 409 Conflict to an upload of a name the
// workflow run already holds, without overwrite: a re-run of a job that
// uploads under a fixed name fails this way.
var ErrArtifactExists = errors.New("409 Conflict: an artifact with this name already exists on the workflow run")

// artifactStore holds one workflow run's artifacts by name, as GitHub
// does: every attempt of the run sees them, and a name is uploaded once
// unless the upload says overwrite.
type artifactStore struct {
	root string
	mu   sync.Mutex
	held map[string]bool
}

func newArtifactStore(root string) *artifactStore {
	return &artifactStore{root: root, held: map[string]bool{}}
}

// upload copies the tree at src under the transfer's name and returns
// where the artifact is.
func (a *artifactStore) upload(t actionwiring.Transfer, src string) (string, error) {
	if t.Name == "" || filepath.Base(t.Name) != t.Name {
		return "", fmt.Errorf("upload-artifact: name %q is not a plain name", t.Name)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	dst := filepath.Join(a.root, t.Name)
	if a.held[t.Name] {
		if !t.Overwrite {
			return "", fmt.Errorf("upload-artifact %s (step %d): %w", t.Name, t.Step, ErrArtifactExists)
		}
		if err := os.RemoveAll(dst); err != nil {
			return "", fmt.Errorf("upload-artifact %s: %w", t.Name, err)
		}
	}
	if err := copyTree(src, dst); err != nil {
		return "", fmt.Errorf("upload-artifact %s: %w", t.Name, err)
	}
	a.held[t.Name] = true
	return dst, nil
}

// dir is where artifact name is, for a download.
func (a *artifactStore) dir(name string) (string, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.held[name] {
		return "", fmt.Errorf("download-artifact: no artifact named %q in the workflow run", name)
	}
	return filepath.Join(a.root, name), nil
}

// reset forgets every artifact: a new workflow run.
func (a *artifactStore) reset() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.held = map[string]bool{}
	_ = os.RemoveAll(a.root)
}
