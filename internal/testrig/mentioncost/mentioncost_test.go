package mentioncost

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/core/contract"
	"github.com/mention-runner/mention-runner/internal/testrig/demo"
)

// measured runs every case once for the package's tests, side by side
// (each on its own simulator).
var measured = sync.OnceValues(func() (map[string]Cost, error) {
	root, err := demo.ModuleRoot(".")
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "mentioncost-test-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	bins, err := demo.BuildOrPrebuilt(ctx, root, dir+"/bin")
	if err != nil {
		return nil, err
	}
	var mu sync.Mutex
	var errs []error
	out := map[string]Cost{}
	var wg sync.WaitGroup
	for _, c := range Cases {
		wg.Go(func() {
			cost, err := Measure(ctx, Options{Bins: bins, WorkDir: dir}, c)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, err)
				return
			}
			out[c.Name] = cost
		})
	}
	wg.Wait()
	if len(errs) > 0 {
		return nil, errs[0]
	}
	return out, nil
})

func costs(t *testing.T) map[string]Cost {
	t.Helper()
	if testing.Short() {
		t.Skip("runs the dispatcher and the runner jobs as processes: skipped by -short")
	}
	out, err := measured()
	require.NoError(t, err)
	return out
}

// TestIssueMentionBotWritesWithinGoal: a mention answered with one
// comment costs the bot account at most 3 writes when the dispatcher's
// CONTROL_TOKEN is an account of its own, so one bot serves 150 or more
// mentions within GitHub's 500 writes an hour.
func TestIssueMentionBotWritesWithinGoal(t *testing.T) {
	c := costs(t)["issue"]
	assert.LessOrEqual(t, c.Bot, 3, "the bot's writes: %v", c.WriteLog)
}

// workflowRESTCeiling bounds the workflow token's REST requests for an
// issue mention answered with one comment at the measured figure, below
// the goal of 10 (the control repo's 1,000 requests an hour serve 100
// mentions), so that no change raises it unseen.
const workflowRESTCeiling = 6

// TestIssueMentionWorkflowRequestsWithinCeiling: a mention answered with
// one comment costs the control repo's workflow token at most
// workflowRESTCeiling REST requests, outside the runs that draw a sweep.
func TestIssueMentionWorkflowRequestsWithinCeiling(t *testing.T) {
	c := costs(t)["issue"]
	assert.LessOrEqual(t, steadyWorkflowREST(c), workflowRESTCeiling, "the workflow token's REST requests: %v", loginLog(c.RESTLog, demo.ActionsLogin))
}

// steadyWorkflowREST is c's workflow-token REST requests as the runs that
// draw no sweep make them. Assemble draws its sweeps from the job's id
// (one job in assemble.StateSweepOneIn reads the sweep marker, and lists
// a slice of the job states when it is stale; one in
// assemble.ShardSweepOneIn lists every job's refs), so a case's mention
// draws the same each time, but a change of the jobs' ids would move it.
func steadyWorkflowREST(c Cost) int {
	n := c.WorkflowREST
	for _, r := range loginLog(c.RESTLog, demo.ActionsLogin) {
		if r.Method != http.MethodGet {
			continue
		}
		switch {
		case strings.HasSuffix(r.Path, "/git/ref/"+strings.TrimPrefix(contract.SweepMarkerRef, "refs/")),
			strings.Contains(r.Path, "/git/matching-refs/"+strings.TrimPrefix(contract.RunStateRefPrefix, "refs/")),
			strings.HasSuffix(r.Path, "/git/matching-refs/"+strings.TrimSuffix(strings.TrimPrefix(contract.JobRefPrefix, "refs/"), "/")),
			// a small context's jobs read no commit: the state sweep's
			!c.Case.Shard && strings.Contains(r.Path, "/git/commits/"):
			n--
		}
	}
	return n
}

// loginLog is the requests in log that login made.
func loginLog(log []Write, login string) []Write {
	var out []Write
	for _, w := range log {
		if w.Login == strings.ToLower(login) {
			out = append(out, w)
		}
	}
	return out
}

// TestCostsAreSane checks the figures against each other and against
// what a person sees, whichever writes the code makes.
func TestCostsAreSane(t *testing.T) {
	all := costs(t)
	require.Len(t, all, len(Cases))
	for _, c := range Cases {
		t.Run(c.Name, func(t *testing.T) {
			got := all[c.Name]
			t.Logf("bot %d, control %d, workflow %d, all %d writes; REST requests: bot %d, control %d, workflow %d; %d requests, %d round trips, %d jobs, %d dispatches",
				got.Bot, got.Control, got.Workflow, got.Writes, got.BotREST, got.ControlREST, got.WorkflowREST,
				got.Requests, got.RoundTrips, got.Jobs, got.Dispatches)
			for _, w := range got.WriteLog {
				t.Log(w)
			}
			t.Log("REST requests:")
			for _, r := range got.RESTLog {
				t.Log(r)
			}
			// every write is one of the three identities', and the log
			// holds each one the content limits counted
			assert.Equal(t, got.Writes, got.Bot+got.Control+got.Workflow)
			assert.Len(t, got.WriteLog, got.Writes)
			assert.Positive(t, got.Bot, "the answer is the bot's")
			assert.Positive(t, got.Workflow, "the jobs keep their state in the control repo")
			if !c.OwnControl {
				assert.Zero(t, got.Control)
			} else {
				// the bot writes only what a person sees as the bot's: on
				// the thread, never the control repo's bookkeeping
				for _, w := range got.WriteLog {
					if w.Login == strings.ToLower(demo.BotLogin) {
						assert.True(t, strings.HasPrefix(w.Path, "/repos/"+demo.TargetRepo+"/"), "the bot wrote %s", w)
					}
				}
			}
			// the account's ledger is pushed: a grant is one write, its
			// commit and ref in one request, never a REST ref update
			for _, w := range got.WriteLog {
				assert.NotContains(t, w.Path, "/git/refs/mention-runner/pace/", "a ledger ref written with the REST API: %s", w)
			}
			assert.GreaterOrEqual(t, got.Requests, got.Writes)
			// every REST request is one of the three identities', among
			// all the requests, and every write but a push is one
			assert.Len(t, got.RESTLog, got.BotREST+got.ControlREST+got.WorkflowREST)
			assert.Less(t, len(got.RESTLog), got.Requests, "git's requests are not REST requests")
			assert.Positive(t, got.BotREST)
			assert.Positive(t, got.WorkflowREST)
			assert.Equal(t, c.OwnControl, got.ControlREST > 0, "the control account's REST requests: %d", got.ControlREST)
			for _, w := range got.WriteLog {
				if !strings.HasSuffix(w.Path, ".git/git-receive-pack") {
					assert.Contains(t, got.RESTLog, w, "a REST write")
				}
			}
			assert.Positive(t, got.RoundTrips)
			assert.LessOrEqual(t, got.RoundTrips, got.Requests)
			// one prepare job per dispatch, then the agent and publish
			assert.Equal(t, got.Dispatches+2, got.Jobs)
			if c.Shard {
				assert.Greater(t, got.Dispatches, 1, "the context is sent as shards")
			} else {
				assert.Equal(t, 1, got.Dispatches)
				assert.Equal(t, 3, got.Jobs, "the small path runs three jobs")
			}
			// the workflow token's refs are pushes, one a state: the
			// job's state and publish's ledger grant; a sharded context's
			// pieces (one a dispatch), its lock and, in publish, the
			// deletion of them all
			pushes := 2
			if c.Shard {
				pushes += got.Dispatches + 2
			}
			assert.Equal(t, pushes, workflowRefWrites(got.WriteLog, true), "the workflow token's pushes")
			assert.Zero(t, workflowRefWrites(got.WriteLog, false), "no job ref written through the REST API")
		})
	}
	// a CONTROL_TOKEN of its own moves the dispatcher's writes off the bot,
	// it does not add or remove any
	own, shared := all["issue"], all["issue-bot-control"]
	assert.Equal(t, own.Writes, shared.Writes)
	assert.Equal(t, own.Bot+own.Control, shared.Bot)
	assert.Equal(t, steadyWorkflowREST(own), steadyWorkflowREST(shared), "the jobs' REST requests do not depend on the dispatcher's token")
	// a sharded context costs more than a small one; the bot's share does not grow
	assert.Greater(t, all["sharded"].Writes, own.Writes)
	assert.Equal(t, own.Bot, all["sharded"].Bot)
}

// workflowRefWrites counts the workflow token's writes of the control
// repo's refs: its pushes, or else the REST writes that make the jobs'
// (a tree, a commit, a ref's creation, a job ref's update or deletion).
func workflowRefWrites(log []Write, pushes bool) int {
	n := 0
	for _, w := range log {
		if w.Login != demo.ActionsLogin {
			continue
		}
		push := strings.HasSuffix(w.Path, ".git/git-receive-pack")
		rest := strings.HasSuffix(w.Path, "/git/trees") || strings.HasSuffix(w.Path, "/git/commits") || strings.HasSuffix(w.Path, "/git/refs") ||
			strings.Contains(w.Path, "/git/refs/"+contract.JobRefPrefix[len("refs/"):]) ||
			strings.Contains(w.Path, "/git/refs/"+contract.RunStateRefPrefix[len("refs/"):])
		if pushes && push || !pushes && rest {
			n++
		}
	}
	return n
}

// TestReadmeCostRow: the README's row of what a mention costs is the one
// measured (an issue mention answered with one comment): each identity's
// writes and the workflow token's REST requests, as the runs that draw no
// sweep make them.
func TestReadmeCostRow(t *testing.T) {
	c := costs(t)["issue"]
	root, err := demo.ModuleRoot(".")
	require.NoError(t, err)
	readme, err := os.ReadFile(root + "/README.md")
	require.NoError(t, err)
	perHour := func(n, hourly int) string { return fmt.Sprintf("%d (%d/h)", n, hourly/n) }
	writes := func(n int) string { return perHour(n, contract.ContentWritesPerHour) }
	row := fmt.Sprintf("| %s | %s | %s | %d | %s |", writes(c.Bot), writes(c.Control), writes(c.Workflow), c.Writes,
		perHour(steadyWorkflowREST(c), contract.WorkflowTokenRequestsPerHour))
	assert.Contains(t, string(readme), row, "README.md's cost row; measured: %v; the workflow token's REST requests: %v",
		c.WriteLog, loginLog(c.RESTLog, demo.ActionsLogin))
}
