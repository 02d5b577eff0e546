package dispatch

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/core/refpush"
	"github.com/mention-runner/mention-runner/internal/core/refstate"
	"github.com/mention-runner/mention-runner/internal/core/transport"
	"github.com/mention-runner/mention-runner/internal/testrig/githubsim"
)

// pushing has the dispatcher write CONTROL's refs with git pushes, over
// a client that does not retry (a lost answer stays lost).
func (e *env) pushing(c *Config) {
	p, err := refpush.New(&http.Client{Timeout: 10 * time.Second}, e.base, botToken)
	require.NoError(e.t, err)
	c.Push = p
}

// writesTo counts the bot's accepted writes whose path ends with suffix.
func (e *env) writesTo(method, suffix string) int {
	n := 0
	for _, r := range e.sim.Requests() {
		if r.Method == method && strings.HasSuffix(r.Path, suffix) && r.Status < 400 && r.Status != 0 {
			n++
		}
	}
	return n
}

// movePushes counts the pushes that landed whose first update moves a ref
// (a claim's is a create: its old id is git's zero id).
func (e *env) movePushes() int {
	n := 0
	for _, r := range e.sim.Requests() {
		if strings.HasSuffix(r.Path, "/git-receive-pack") && r.Status == http.StatusOK &&
			len(r.ReqBody) > 44 && strings.Trim(string(r.ReqBody[4:44]), "0") != "" {
			n++
		}
	}
	return n
}

func (e *env) claimStatus(jobID string) string {
	st, err := refstate.New(e.gh, control, nil)
	require.NoError(e.t, err)
	m, err := st.Read(e.ctx(), DedupeRef(jobID))
	require.NoError(e.t, err)
	require.NotNil(e.t, m, jobID)
	return m.Status
}

// A poll cycle marks all its mentions dispatched in one push, not a ref
// update each.
func TestCycleMarksInOnePush(t *testing.T) {
	e := newEnv(t)
	n := e.issue("x")
	var jobs []string
	for _, who := range []string{"alice", "bob", "alice"} {
		jobs = append(jobs, transport.JobID(e.comment(n, who, "@mrbot do it").GetNodeID()))
	}
	other := e.issue("y")
	jobs = append(jobs, transport.JobID(e.comment(other, "bob", "@mrbot and this").GetNodeID()))
	e.later(time.Minute)

	_, err := e.poller(e.dispatcher(e.pushing)).Cycle(e.ctx())
	require.NoError(t, err)
	for _, j := range jobs {
		assert.Equal(t, 1, e.jobsDispatched()[j], j)
		assert.Equal(t, StatusDispatched, e.claimStatus(j), j)
	}
	// claims made at once share pushes (creates), the marks one for all
	assert.LessOrEqual(t, e.writesTo(http.MethodPost, "/git-receive-pack"), len(jobs)+1)
	assert.Equal(t, 1, e.movePushes(), "one push for the cycle's marks")
	assert.Zero(t, e.writesTo(http.MethodPatch, "/git/refs/"+strings.TrimPrefix(RefPrefix, "refs/")+jobs[0]), "no mark of its own")
	assertUnread(t, e, false, "marked: read")
}

// A cycle's threads are handled side by side, and the claims they make at
// once go out together: fewer claim pushes than mentions, each mention
// dispatched once.
func TestCycleClaimsShareAPush(t *testing.T) {
	e := newEnv(t)
	var jobs []string
	for i := range 12 {
		n := e.issue(fmt.Sprintf("thread %d", i))
		jobs = append(jobs, transport.JobID(e.comment(n, "alice", "@mrbot do it").GetNodeID()))
	}
	e.later(time.Minute)
	// Each push is held a while, as GitHub's take tens of milliseconds, so
	// the threads' claims find one in flight however fast this machine is.
	e.sim.AddFault(githubsim.Fault{Method: http.MethodPost, Path: "/ops/control.git/git-receive-pack", Kind: githubsim.FaultSlow, Rate: 1, Delay: 100 * time.Millisecond})

	_, err := e.poller(e.dispatcher(e.pushing)).Cycle(e.ctx())
	require.NoError(t, err)
	for _, j := range jobs {
		assert.Equal(t, 1, e.jobsDispatched()[j], j)
		assert.Equal(t, StatusDispatched, e.claimStatus(j), j)
	}
	claims := e.writesTo(http.MethodPost, "/git-receive-pack") - e.movePushes()
	assert.Less(t, claims, len(jobs), "claim pushes for %d mentions", len(jobs))
	t.Logf("%d mentions claimed in %d pushes", len(jobs), claims)
	assertUnread(t, e, false, "marked: read")
}

// The marks' push answered with an error, applied or not: the threads stay
// unread, and the next cycle marks them without sending anything again;
// a fresh process that finds them marked sends nothing either.
func TestCycleMarksLost(t *testing.T) {
	for _, tc := range []struct {
		name  string
		fault githubsim.Fault
	}{
		{"refused before it was applied", githubsim.Fault{Kind: githubsim.FaultStatus502}},
		{"applied, answer reset", githubsim.Fault{Kind: githubsim.FaultReset, AfterApply: true}},
		{"applied, answer 502", githubsim.Fault{Kind: githubsim.FaultStatus502, AfterApply: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			n := e.issue("x")
			job := transport.JobID(e.comment(n, "alice", "@mrbot do it").GetNodeID())
			e.later(time.Minute)
			f := tc.fault
			// the claim's push is the 1st, the marks' the 2nd
			f.Method, f.Path, f.OnCall = http.MethodPost, "/"+control+".git/git-receive-pack", 2
			e.sim.AddFault(f)
			p := e.poller(e.dispatcher(e.pushing))
			res, err := p.Cycle(e.ctx())
			require.Error(t, err)
			assert.Equal(t, 1, res.Failed)
			assertUnread(t, e, true, "its mark unknown: unread")

			_, err = p.Cycle(e.ctx())
			require.NoError(t, err)
			assert.Equal(t, map[string]int{job: 1}, e.jobsDispatched(), "marked, not sent again")
			assert.Equal(t, StatusDispatched, e.claimStatus(job))
			assertUnread(t, e, false, "read")

			e.comment(n, "bob", "no mention, wakes the thread")
			e.later(time.Minute)
			res, err = e.poller(e.dispatcher(e.pushing)).Cycle(e.ctx())
			require.NoError(t, err)
			assert.Equal(t, map[string]int{job: 1}, e.jobsDispatched())
			for _, d := range res.Decisions {
				assert.Equal(t, Ignore, d.Decision, d.Reason)
			}
		})
	}
}
