package record

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/mention-runner/mention-runner/internal/core/contract"
	"github.com/mention-runner/mention-runner/internal/runner/localfs"
	"github.com/mention-runner/mention-runner/internal/runner/render"
)

// RunMeta is run.json: what the transcript says about the run that no
// other record file holds. The runner writes it at start and again at the
// end; publish may fill in Deliverables.
type RunMeta struct {
	RunID          string          `json:"run_id"`
	JobID          string          `json:"jobid"`
	SessionID      string          `json:"session_id"`
	Target         string          `json:"target"` // owner/name#n
	TargetURL      string          `json:"target_url"`
	TriggerAuthor  string          `json:"trigger_author"`
	TriggerURL     string          `json:"trigger_url"`
	WorkflowRunURL string          `json:"workflow_run_url"`
	Engine         string          `json:"engine"`
	Model          string          `json:"model"`
	StartedAt      *time.Time      `json:"started_at"`
	EndedAt        *time.Time      `json:"ended_at"`
	Status         string          `json:"status"`
	Prompt         string          `json:"prompt"`
	PolicyWords    string          `json:"policy_words"` // the effective policy
	Deliverables   render.Tracking `json:"deliverables"`
}

// WriteMeta writes dir/run.json (redacted), replacing it whole.
func WriteMeta(dir string, m RunMeta) error { return WriteMetaFS(nil, dir, m) }

// WriteMetaFS is WriteMeta through fsys (nil = the OS).
func WriteMetaFS(fsys localfs.FS, dir string, m RunMeta) error {
	return WriteJSONFS(fsys, filepath.Join(dir, contract.MetaFile), m)
}

// ReadMeta reads dir/run.json; ok is false when there is none.
func ReadMeta(dir string) (m RunMeta, ok bool, err error) {
	data, err := os.ReadFile(filepath.Join(dir, contract.MetaFile))
	if errors.Is(err, os.ErrNotExist) {
		return RunMeta{}, false, nil
	}
	if err != nil {
		return RunMeta{}, false, fmt.Errorf("read run meta: %w", err)
	}
	if err := decodeStrict(contract.MetaFile, data, &m); err != nil {
		return RunMeta{}, false, err
	}
	return m, true, nil
}
