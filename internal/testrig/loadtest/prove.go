package loadtest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/mention-runner/mention-runner/internal/core/contract"
	"github.com/mention-runner/mention-runner/internal/core/ghclient"
	"github.com/mention-runner/mention-runner/internal/core/policy"
	"github.com/mention-runner/mention-runner/internal/runner/actions"
	"github.com/mention-runner/mention-runner/internal/runner/assemble"
	"github.com/mention-runner/mention-runner/internal/testrig/githubsim"
)

// RunnerToken is the workflow's GITHUB_TOKEN in CONTROL, whose requests
// are RunnerLogin's (its own account).
const (
	RunnerToken = "runner-token"
	RunnerLogin = "github-actions"
)

// Measures are what `make prove` reports per scenario; all should be 0.
type Measures struct {
	Lost         int // mentions whose agent never started
	DupAgentRuns int // jobs whose agent started in more than one workflow run
	DupWrites    int // publish outputs written more than once
	DupLogIssues int // log issues beyond one per job
	ManualReruns int // workflow runs still failing after GitHub-like automatic re-runs
}

// Row formats one table row.
func (m Measures) Row(name string) string {
	return fmt.Sprintf("| %s | %d | %d | %d | %d | %d |", name, m.Lost, m.DupAgentRuns, m.DupWrites, m.DupLogIssues, m.ManualReruns)
}

// TableHeader is the header of the rows.
const TableHeader = "| scenario | lost mentions | duplicate agent runs | duplicate writes | duplicate log issues | manual re-runs needed |\n|---|---|---|---|---|---|"

// AssembleRun is one workflow run's assemble job.
type AssembleRun struct {
	RunID   string
	Attempt int
	Res     *assemble.Result
	Err     error
}

// Assemble runs the assemble job of one workflow run triggered by d,
// re-running it (same run id, next attempt) while it fails, up to
// attempts times, as an operator's "re-run failed jobs" would.
func (w *World) Assemble(ctx context.Context, d githubsim.Dispatch, runID string, attempts int) (AssembleRun, error) {
	dir, err := os.MkdirTemp(w.dir(), "run-"+runID+"-")
	if err != nil {
		return AssembleRun{}, err
	}
	ev, err := json.Marshal(map[string]any{"action": d.EventType, "client_payload": d.ClientPayload,
		"repository": map[string]any{"full_name": Control}})
	if err != nil {
		return AssembleRun{}, err
	}
	if err := os.WriteFile(filepath.Join(dir, "event.json"), ev, 0o644); err != nil {
		return AssembleRun{}, err
	}
	ids, err := w.ControlIDs()
	if err != nil {
		return AssembleRun{}, err
	}
	var last AssembleRun
	for a := 1; a <= attempts; a++ {
		out := filepath.Join(dir, "output-"+strconv.Itoa(a))
		if err := os.WriteFile(out, nil, 0o644); err != nil {
			return last, err
		}
		env := map[string]string{
			"BOT_LOGIN": Bot, "CONTROL_REPO": Control, "GITHUB_API_URL": w.Base, "GITHUB_SERVER_URL": w.ServerURL(),
			"GITHUB_TOKEN": RunnerToken, "GITHUB_EVENT_PATH": filepath.Join(dir, "event.json"), "GITHUB_OUTPUT": out,
			"GITHUB_RUN_ID": runID, "GITHUB_RUN_ATTEMPT": strconv.Itoa(a), "GITHUB_REPOSITORY": Control,
			"GITHUB_REPOSITORY_ID": strconv.FormatInt(ids.Repo, 10), "GITHUB_REPOSITORY_OWNER_ID": strconv.FormatInt(ids.Owner, 10),
			"MR_CONTEXT_FILE": filepath.Join(dir, "runs", "context.json"),
		}
		res, err := assemble.Run(ctx, assemble.Options{
			Getenv: func(k string) string { return env[k] }, Stdout: io.Discard, Now: w.Clock.Now,
			Client: func(o *ghclient.Options) {
				o.Sleep, o.Now, o.RequestTimeout, o.Base = w.Clock.Sleep, w.Clock.Now, 20*time.Second, w.rt
			},
		})
		last = AssembleRun{RunID: runID, Attempt: a, Res: res, Err: err}
		if err == nil {
			if _, oerr := actions.ReadOutputs(out); oerr != nil {
				return last, oerr
			}
			return last, nil
		}
		if ctx.Err() != nil {
			return last, ctx.Err()
		}
	}
	return last, nil
}

// ControlIDs are CONTROL's ids, which Actions gives the jobs of a
// workflow running there (GITHUB_REPOSITORY_ID, ..._OWNER_ID).
func (w *World) ControlIDs() (policy.RepoIDs, error) {
	id, owner, err := w.Sim.RepoIDs(Control)
	if err != nil {
		return policy.RepoIDs{}, fmt.Errorf("loadtest: %w", err)
	}
	return policy.RepoIDs{Repo: id, Owner: owner}, nil
}

// dir is the parent of Assemble's run directories, made once: concurrent
// deliveries call it together.
func (w *World) dir() string {
	w.tmpOnce.Do(func() {
		w.tmp, _ = os.MkdirTemp("", "loadtest-")
	})
	return w.tmp
}

// CountLogIssues counts CONTROL's log issues per job, by their marker.
func (w *World) CountLogIssues(jobIDs []string) map[string]int {
	out := map[string]int{}
	for _, is := range w.Sim.Issues(Control) {
		for _, id := range jobIDs {
			if strings.Contains(is.GetBody(), contract.LogIssueMarker(id)) {
				out[id]++
			}
		}
	}
	return out
}
