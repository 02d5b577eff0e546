package assemble

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/google/go-github/v62/github"

	"github.com/mention-runner/mention-runner/internal/core/contract"
	"github.com/mention-runner/mention-runner/internal/core/transport"
	"github.com/mention-runner/mention-runner/internal/runner/jobstate"
	"github.com/mention-runner/mention-runner/internal/testrig/githubsim"
)

// A job delivered several times at once, and again after its publish
// finished, proceeds in exactly one workflow run; a re-run of that run
// proceeds again (GitHub re-runs keep the run id).
func TestDuplicateDeliveries(t *testing.T) {
	for _, tc := range []struct {
		name string
		pad  int // 0 = agent_small
	}{{"small", 0}, {"sharded", 120_000}} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			node := "IC_dup_" + tc.name
			jobID := transport.JobID(node)
			ev := events(t, jobID, contextFor(node, tc.pad))
			deliver := func() []outcome {
				var out []outcome
				for _, e := range ev {
					out = append(out, h.run(t, e))
				}
				return out
			}
			// Three deliveries of the whole job at once.
			var mu sync.Mutex
			var all []outcome
			var wg sync.WaitGroup
			for range 3 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					o := deliver()
					mu.Lock()
					all = append(all, o...)
					mu.Unlock()
				}()
			}
			wg.Wait()
			var ready []outcome
			for _, o := range all {
				require.NoError(t, o.err, o.log)
				if o.res.Ready {
					ready = append(ready, o)
				}
			}
			require.Len(t, ready, 1, "exactly one run proceeds")
			assert.Len(t, h.sim.Issues(control), 1, "one log issue")
			assert.Equal(t, fmt.Sprint(tc.pad != 0), ready[0].outputs["sharded"], "publish lists shard refs only after shards")

			// The run that proceeded is re-run (its agent job failed): it proceeds.
			again := h.run(t, ev[len(ev)-1], rerun(ready[0]))
			require.NoError(t, again.err, again.log)
			if tc.pad == 0 {
				assert.True(t, again.res.Ready, again.log)
			}

			// Publish ends the job (its final update ends the log issue with
			// the job's final marker); neither a later delivery nor a re-run
			// of the run that ran it runs it again.
			gh := h.sim.Client("tok-" + ready[0].runID)
			is := h.sim.Issues(control)[0]
			body := is.GetBody() + "\n" + contract.LogIssueFinalMarker(jobID) + "\n"
			_, _, err := gh.Issues.Edit(context.Background(), "acme", "control", is.GetNumber(), &github.IssueRequest{Body: &body})
			require.NoError(t, err)
			for _, o := range deliver() {
				require.NoError(t, o.err, o.log)
				assert.False(t, o.res.Ready, "delivered after publish: %s", o.log)
			}
			late := h.run(t, ev[len(ev)-1], rerun(ready[0]))
			require.NoError(t, late.err, late.log)
			assert.False(t, late.res.Ready, "a re-run after publish: %s", late.log)
			require.NotNil(t, late.res.AlreadyRun)
			assert.Equal(t, jobstate.Done, late.res.AlreadyRun.Status)
			assert.Len(t, h.sim.Issues(control), 1, "still one log issue")
		})
	}
}

// The log issue's creation applied but its answer lost (502, reset,
// timeout): the run finds it instead of opening a second one.
func TestLogIssueCreatedOnceWhenAnswerLost(t *testing.T) {
	for _, kind := range []githubsim.FaultKind{githubsim.FaultStatus502, githubsim.FaultReset, githubsim.FaultHang} {
		t.Run(string(kind), func(t *testing.T) {
			h := newHarness(t)
			node := "IC_lost_" + string(kind)
			ev := events(t, transport.JobID(node), contextFor(node, 0))
			h.sim.AddFault(githubsim.Fault{Method: "POST", Path: "/repos/*/*/issues", Kind: kind, OnCall: 1, AfterApply: true, Delay: 20 * time.Millisecond})
			o := h.run(t, ev[0])
			require.NoError(t, o.err, o.log)
			assert.True(t, o.res.Ready)
			assert.Len(t, h.sim.Issues(control), 1, "exactly one log issue")
			// the first attempt sent it without looking; the lost answer
			// made it look before sending again
			var issues []string
			for _, r := range h.requestsOf(o) {
				if shape(r.Path) == "issues" {
					issues = append(issues, r.Method)
				}
			}
			require.GreaterOrEqual(t, len(issues), 2, issues)
			assert.Equal(t, []string{"POST", "GET"}, issues[:2], "sent, then looked for")
			assert.True(t, o.res.LogIssueNew)
		})
	}
}

// TestRerunLongAfterPublish: a re-run of a finished run, a day later and
// behind more newer log issues than a listing of the newest reads, still
// finds the job's final log issue (it looks from the day the run began:
// its state's date, or the dispatch's when the state was swept since)
// and stops: no second agent run, no second log issue.
func TestRerunLongAfterPublish(t *testing.T) {
	for _, swept := range []bool{false, true} {
		t.Run(fmt.Sprintf("state swept=%v", swept), func(t *testing.T) {
			h := newHarness(t)
			node := "IC_rerun_late"
			jobID := transport.JobID(node)
			ev := events(t, jobID, contextFor(node, 0))
			first := h.run(t, ev[0])
			require.NoError(t, first.err, first.log)
			require.True(t, first.res.Ready, first.log)
			is := h.sim.Issues(control)[0]
			gh := h.sim.Client("tok-" + first.runID)
			body := is.GetBody() + "\n" + contract.LogIssueFinalMarker(jobID) + "\n"
			closed := "closed"
			_, _, err := gh.Issues.Edit(context.Background(), "acme", "control", is.GetNumber(), &github.IssueRequest{Body: &body, State: &closed})
			require.NoError(t, err)

			h.clock.Advance(24 * time.Hour)
			labels := []string{contract.LogLabel}
			for i := range 1100 {
				b := fmt.Sprintf("another job's log\n%s\n", contract.LogIssueMarker(fmt.Sprintf("other-%d", i)))
				_, _, err := gh.Issues.Create(context.Background(), "acme", "control", &github.IssueRequest{Title: github.String("log"), Body: &b, Labels: &labels})
				require.NoError(t, err)
			}
			if swept {
				_, err := gh.Git.DeleteRef(context.Background(), "acme", "control", strings.TrimPrefix(jobstate.Ref(jobID), "refs/"))
				require.NoError(t, err)
			}

			late := h.run(t, ev[0], rerun(first))
			require.NoError(t, late.err, late.log)
			assert.False(t, late.res.Ready, late.log)
			require.NotNil(t, late.res.AlreadyRun, late.log)
			assert.Equal(t, jobstate.Done, late.res.AlreadyRun.Status)
			assert.Len(t, h.sim.Issues(control), 1101, "no second log issue for the job")
		})
	}
}
