package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/core/contract"
	"github.com/mention-runner/mention-runner/internal/testrig/demo"
	"github.com/mention-runner/mention-runner/internal/testrig/githubsim"
)

// maxWorkflowREST is how many REST requests the control repo's workflow
// token may make for a lone mention on the small path, assemble and
// publish together. GitHub allows that token 1,000 an hour per
// repository, shared by every job of the control repo, so this bounds the
// mentions one control repo serves in an hour.
const maxWorkflowREST = 8

// TestFlowWorkflowTokenRequests counts the workflow token's REST requests
// for an issue mention answered with one comment, on the first attempt,
// after an earlier mention opened what an installation keeps for the hour
// (the write ledger's generation): git pushes are not REST requests, and
// the sweep of old job states (one assemble run in
// assemble.StateSweepOneIn) is listed apart.
func TestFlowWorkflowTokenRequests(t *testing.T) {
	t.Parallel()
	needBins(t)
	w, err := demo.Seed(demo.SeedOptions{Comment: "Same here on Windows 10.", Logf: t.Logf})
	require.NoError(t, err)
	t.Cleanup(func() { w.Sim.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), flowTimeout)
	defer cancel()

	warm, err := w.Sim.CreateIssue(demo.TargetRepo, "bob", "Lint output", "The lint step prints a warning per file.")
	require.NoError(t, err)
	require.NoError(t, mentionAndRun(ctx, t, w, warm), "the warm-up mention")

	w.Sim.ResetRequests()
	require.NoError(t, mentionAndRun(ctx, t, w, w.Issue), "the mention measured")
	rest, sweep := workflowREST(w.Sim.Requests())
	t.Logf("the workflow token's REST requests: %d, and %d of the job-state sweep:\n  %s", len(rest), len(sweep), strings.Join(append(rest, sweep...), "\n  "))
	assert.LessOrEqual(t, len(rest), maxWorkflowREST, "the workflow token's REST requests for one mention, assemble and publish:\n  %s", strings.Join(rest, "\n  "))
}

// mentionAndRun mentions the bot on thread n and runs the mention's flow,
// the agent answering with one comment there.
func mentionAndRun(ctx context.Context, t *testing.T, w *demo.World, n int) error {
	t.Helper()
	out := t.TempDir()
	script := filepath.Join(out, "replay.jsonl")
	step := fmt.Sprintf(`{"tool": "add_comment", "args": {"repo": %q, "number": %d, "body": "Add a .gitattributes with * text=auto eol=lf."}}`, demo.TargetRepo, n)
	if err := os.WriteFile(script, []byte(step+"\n"), 0o644); err != nil {
		return err
	}
	if _, err := w.Sim.Comment(demo.TargetRepo, n, demo.Author, "@"+demo.BotLogin+" !cfg here-only\nWhy does the build fail on Windows?"); err != nil {
		return err
	}
	f, err := demo.New(demo.Options{World: w, Bins: bins, OutDir: filepath.Join(out, "flow"), Engine: demo.EngineReplay, ReplayScript: script,
		Settings: settings(), DispatcherSettings: dispatcherSettings})
	if err != nil {
		return err
	}
	return f.Run(ctx)
}

// workflowREST is the workflow token's REST requests among reqs, apart
// from the sweep of old job states: not its git pushes and fetches (smart
// HTTP is not a REST request).
func workflowREST(reqs []githubsim.LoggedRequest) (rest, stateSweep []string) {
	ctl := "/repos/" + demo.ControlRepo + "/git/"
	for _, r := range reqs {
		if r.Token != demo.ControlToken || strings.Contains(r.Path, ".git/") {
			continue
		}
		what := r.Method + " " + r.Path
		if r.Query != "" {
			what += "?" + r.Query
		}
		if r.Path == ctl+"matching-refs/"+strings.TrimPrefix(contract.RunStateRefPrefix, "refs/") || strings.HasPrefix(r.Path, ctl+"commits/") {
			stateSweep = append(stateSweep, what)
			continue
		}
		rest = append(rest, what)
	}
	return rest, stateSweep
}
