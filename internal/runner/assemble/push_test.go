package assemble

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/core/contract"
	"github.com/mention-runner/mention-runner/internal/core/transport"
	"github.com/mention-runner/mention-runner/internal/testrig/githubsim"
)

func stateRef(jobID string, _ int) string { return contract.RunStateRef(jobID) }
func lockRef(jobID string, _ int) string  { return contract.LockRef(jobID) }

// A push (a piece, the lock, the job's state) that lands but whose answer
// is lost: the run reads its ref back, with no retry of its own, and
// goes on. Exactly one run proceeds with the whole context, later
// deliveries stay out, a re-run of that workflow run proceeds, and
// nothing is doubled (one log issue).
func TestPushAnswerLost(t *testing.T) {
	tests := []struct {
		name   string
		pad    int // 0 = agent_small
		onCall int // which push of the last event's run loses its answer
		ref    func(jobID string, last int) string
	}{
		{"small: the job state", 0, 1, stateRef},
		{"sharded: the last piece", 120_000, 1, contract.ShardRef},
		{"sharded: the lock", 120_000, 2, lockRef},
		{"sharded: the job state", 120_000, 3, stateRef},
	}
	for _, tc := range tests {
		for _, kind := range []githubsim.FaultKind{githubsim.FaultStatus502, githubsim.FaultReset, githubsim.FaultHang} {
			t.Run(tc.name+" "+string(kind), func(t *testing.T) {
				t.Parallel()
				h := newHarness(t)
				node := "IC_pushlost"
				jobID := transport.JobID(node)
				c := contextFor(node, tc.pad)
				ev := events(t, jobID, c)
				last := len(ev) - 1
				for i := range last {
					o := h.run(t, ev[i])
					require.NoError(t, o.err, o.log)
					require.False(t, o.res.Ready, o.log)
				}
				h.sim.AddFault(githubsim.Fault{Method: "POST", Path: "/" + control + ".git/git-receive-pack", Kind: kind,
					OnCall: tc.onCall, AfterApply: true, Delay: 20 * time.Millisecond})
				o := h.run(t, ev[last])
				assertProceeded(t, h, o, jobID, c)
				h.sim.ClearFaults()
				var lost []string
				for _, r := range h.requestsOf(o) {
					if r.Fault != "" {
						lost = append(lost, string(r.ReqBody))
					}
				}
				require.Len(t, lost, 1, "one answer lost")
				assert.Contains(t, lost[0], " "+tc.ref(jobID, last)+"\x00", "the push that lost its answer")

				for _, e := range ev {
					d := h.run(t, e)
					require.NoError(t, d.err, d.log)
					assert.False(t, d.res.Ready, "a later delivery: %s", d.log)
				}
				again := h.run(t, ev[last], rerun(o))
				assertProceeded(t, h, again, jobID, c)
				assert.Equal(t, o.res.LogIssue, again.res.LogIssue)
				assert.Len(t, h.sim.Issues(control), 1, "one log issue")
			})
		}
	}
}
