package assemble

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/core/transport"
	"github.com/mention-runner/mention-runner/internal/runner/jobstate"
)

// TestLogIssueSearchedOnlyWhenItMayExist: the first attempt of the run
// that makes an agent_small job's state opens the log issue without
// listing log issues first (none of the job can exist); a re-run after a
// kill at any point, and a run that finds the job's state made by another
// run, look first or not at all, and the job keeps one log issue.
func TestLogIssueSearchedOnlyWhenItMayExist(t *testing.T) {
	for _, tc := range []struct {
		name string
		// before runs what happened ahead of the run measured and returns
		// the options of that run
		before     func(t *testing.T, h *harness, ev []byte, jobID string) []runOpt
		ready      bool
		searched   bool
		issueIsNew bool
	}{
		{name: "first attempt", ready: true, issueIsNew: true,
			before: func(*testing.T, *harness, []byte, string) []runOpt { return nil }},
		{name: "re-run after a kill once the log issue was opened", ready: true, searched: true,
			before: func(t *testing.T, h *harness, ev []byte, _ string) []runOpt {
				first := h.run(t, ev)
				require.NoError(t, first.err, first.log)
				return []runOpt{rerun(first)}
			}},
		{name: "re-run after a kill between the job's state and the log issue", ready: true, searched: true, issueIsNew: true,
			before: func(t *testing.T, h *harness, _ []byte, jobID string) []runOpt {
				beginAs(t, h, jobID, "77")
				return []runOpt{rerun(outcome{runID: "77"})}
			}},
		{name: "another run holds the job", ready: false,
			before: func(t *testing.T, h *harness, _ []byte, jobID string) []runOpt {
				beginAs(t, h, jobID, "78")
				return nil
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			node := "IC_search"
			jobID := transport.JobID(node)
			ev := events(t, jobID, contextFor(node, 0))[0]
			opts := tc.before(t, h, ev, jobID)
			issues := len(h.sim.Issues(control))
			h.sim.ResetRequests()
			o := h.run(t, ev, opts...)
			require.NoError(t, o.err, o.log)
			assert.Equal(t, tc.ready, o.res.Ready, o.log)
			searched := false
			for _, r := range h.sim.Requests() {
				searched = searched || r.Method == "GET" && shape(r.Path) == "issues"
			}
			assert.Equal(t, tc.searched, searched, "listed log issues")
			if !tc.ready {
				assert.Len(t, h.sim.Issues(control), issues, "no log issue")
				return
			}
			assert.Len(t, h.sim.Issues(control), 1, "one log issue for the job")
			assert.Equal(t, tc.issueIsNew, o.res.LogIssueNew)
			assert.Equal(t, map[bool]string{true: "true", false: "false"}[tc.issueIsNew], o.outputs["log_issue_new"])
			assert.Equal(t, "false", o.outputs["sharded"], "agent_small")
		})
	}
}

// beginAs makes the job's state as workflow run runID did (a run killed
// after that, or one that holds the job).
func beginAs(t *testing.T, h *harness, jobID, runID string) {
	t.Helper()
	h.sim.AddToken("tok-setup", "mr-runner")
	js, err := jobstate.New(h.sim.Client("tok-setup"), nil, control, h.clock.Now)
	require.NoError(t, err)
	b, err := js.Begin(context.Background(), jobID, runID)
	require.NoError(t, err)
	require.True(t, b.Created)
}
