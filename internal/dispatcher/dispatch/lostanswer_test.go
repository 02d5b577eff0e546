package dispatch

import (
	"testing"
	"time"

	"github.com/google/go-github/v62/github"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/core/blockfile"
	"github.com/mention-runner/mention-runner/internal/core/refstate"
	"github.com/mention-runner/mention-runner/internal/core/transport"
	"github.com/mention-runner/mention-runner/internal/testrig/fakeclock"
	"github.com/mention-runner/mention-runner/internal/testrig/githubsim"
)

// plainDispatcher is a dispatcher without a write ledger (its claim
// commits are its own) whose control client retries POST/PATCH
// (RetryUnsafe) only with retry, as cmd/dispatcher's does.
func (e *env) plainDispatcher(retry bool, mut ...func(*Config)) *Dispatcher {
	cfg := e.cfg
	for _, m := range mut {
		m(&cfg)
	}
	d, err := New(cfg, Clients{GitHub: e.gh, Control: e.client(retry), Dispatch: e.dsp})
	require.NoError(e.t, err)
	return d
}

// TestLostAnswerEachWrite: each write one mention makes, stored and its
// answer lost (502, reset or a timeout, in turn), one write at a time, in
// an event-mode process (FlushEach: the rate state is written with the
// mention), with the control client as cmd/dispatcher makes it (it
// retries POST/PATCH) and one that sends writes once (as loadtest's
// dispatcher): the one Handle call that meets it still dispatches the
// mention (no lease to wait out, no next cycle), the claim ends
// dispatched, the job is sent once (twice only when the lost answer is
// the dispatch's own: the runner's dedupe makes a second delivery
// harmless), 👀 is on the trigger once and the run is counted once in
// the rate state.
func TestLostAnswerEachWrite(t *testing.T) {
	const (
		commits   = "/repos/ops/control/git/commits"
		refs      = "/repos/ops/control/git/refs"
		reactions = "/repos/alice/proj/issues/comments/*/reactions"
	)
	for i, tc := range []struct {
		name   string
		ledger bool // wired with the account's write ledger (its grant commit is the claim commit)
		method string
		path   string
		which  string // the write's path or body holds this (githubsim.Fault.Mentions)
		sends  int    // the most dispatches
		// every: each attempt's answer is lost (the harness's clients
		// send a write at most 3 times), not the first one's only.
		every bool
		// refused: the fault comes before the write is stored (not a
		// lost answer: a write that is safe to repeat is sent again).
		refused bool
		// cold: the hour's shared dispatched commit is not made yet (the
		// hour's first mention makes it); else it exists.
		cold bool
	}{
		{name: "plain/dispatched commit (the hour's first)", method: "POST", path: commits, which: "state: dispatched", sends: 1, cold: true},
		{name: "ledger/dispatched commit (the hour's first)", ledger: true, method: "POST", path: commits, which: "state: dispatched", sends: 1, cold: true},
		{name: "plain/claim commit", method: "POST", path: commits, which: "state: claimed", sends: 1},
		{name: "plain/claim ref", method: "POST", path: refs, sends: 1},
		{name: "plain/dispatch", method: "POST", path: "/repos/ops/control/dispatches", sends: 2},
		{name: "plain/mark dispatched", method: "PATCH", path: refs + "/*", sends: 1},
		{name: "plain/mark dispatched, every attempt", method: "PATCH", path: refs + "/*", sends: 1, every: true},
		{name: "plain/mark dispatched refused", method: "PATCH", path: refs + "/*", sends: 1, refused: true},
		{name: "plain/reaction", method: "POST", path: reactions, sends: 1},
		{name: "plain/reaction refused", method: "POST", path: reactions, sends: 1, refused: true},
		{name: "plain/rate state", method: "PUT", path: "/repos/ops/control/contents/*", sends: 1},
		{name: "ledger/grant push", ledger: true, method: "POST", path: "/ops/control.git/git-receive-pack", sends: 1},
		{name: "ledger/claim ref", ledger: true, method: "POST", path: refs, which: "/mention-runner/dispatched/", sends: 1},
		{name: "ledger/dispatch", ledger: true, method: "POST", path: "/repos/ops/control/dispatches", sends: 2},
		{name: "ledger/mark dispatched", ledger: true, method: "PATCH", path: refs + "/*", which: "/mention-runner/dispatched/", sends: 1},
		{name: "ledger/reaction", ledger: true, method: "POST", path: reactions, sends: 1},
		{name: "ledger/rate state", ledger: true, method: "PUT", path: "/repos/ops/control/contents/*", sends: 1},
	} {
		for _, v := range lostAnswerRuns(tc.name, i) {
			retry, kind := v.retry, v.kind
			t.Run(v.name, func(t *testing.T) {
				e := newEnv(t)
				clk := fakeclock.New(time.Now().UTC())
				n := e.issue("x")
				c := e.comment(n, "alice", "@mrbot do it")
				event := func(c *Config) { c.FlushEach = true; c.Now = clk.Now }
				d := e.plainDispatcher(retry, event)
				if tc.ledger {
					e.ledgerAtWindow(clk)
					d = e.wiredDispatcherRetry(clk, retry, event)
				}
				// the hour's shared dispatched commit exists, as it does for
				// every mention but the hour's first
				if !tc.cold {
					warm, err := refstate.New(e.client(true), control, clk.Now)
					require.NoError(t, err)
					_, err = warm.SetShared(e.ctx(), "refs/mention-runner/test/warm", StatusDispatched)
					require.NoError(t, err)
				}
				e.sim.ResetRequests()
				f := githubsim.Fault{Method: tc.method, Path: tc.path, Kind: kind, OnCall: 1, Mentions: tc.which,
					AfterApply: !tc.refused, WritesOnly: true, Delay: 20 * time.Millisecond}
				if tc.every {
					f.OnCall, f.Rate, f.PerRequest = 0, 1, 3
				}
				e.sim.AddFault(f)
				dec, err := d.Handle(e.ctx(), e.trigger("issue_comment", n, c.GetID()))
				e.faultHit(!tc.refused)
				require.NoError(t, err, "the same process finds out in-run")
				assert.Equal(t, Dispatch, dec.Decision, dec.Reason)
				assert.Equal(t, StatusDispatched, e.claimState(dec.JobID))
				got := len(e.sim.Dispatches(control))
				assert.GreaterOrEqual(t, got, 1)
				assert.LessOrEqual(t, got, tc.sends)
				assert.Equal(t, []string{"eyes"}, e.sim.Reactions(proj, c.GetID()))
				st, _, err := d.loadRate(e.ctx())
				require.NoError(t, err)
				var runs int
				for _, r := range st.Runs {
					if r.JobID == dec.JobID {
						runs++
					}
				}
				assert.Equal(t, 1, runs, "the run is counted once")
			})
		}
	}
}

// faultHit checks that the fault met one write (each of its attempts),
// stored first when stored.
func (e *env) faultHit(stored bool) {
	e.t.Helper()
	var hit []githubsim.LoggedRequest
	for _, r := range e.sim.Requests() {
		if r.Fault != "" {
			hit = append(hit, r)
		}
	}
	require.NotEmpty(e.t, hit, "the fault met a request")
	for _, r := range hit {
		assert.Equal(e.t, hit[0].Method+" "+hit[0].Path+" "+string(hit[0].ReqBody), r.Method+" "+r.Path+" "+string(r.ReqBody), "one write")
		if stored {
			assert.True(e.t, r.AppliedStatus >= 200 && r.AppliedStatus < 300, "stored before its answer was lost: %s %s got %d", r.Method, r.Path, r.AppliedStatus)
		}
	}
}

// TestLostAnswerEachReplyWrite: the writes of a mention answered with a
// reply, not a run (a bad !cfg; "go away"), each stored and its answer
// lost, one at a time: the one Handle call that meets it still ends with
// one reply (found by its marker, not posted again), the opt-out written,
// and the claim dispatched.
func TestLostAnswerEachReplyWrite(t *testing.T) {
	const comments = "/repos/alice/proj/issues/*/comments"
	for i, tc := range []struct {
		name, body string
		method     string
		path       string
		want       string // the decision
	}{
		{"bad cfg/reply", "@mrbot !cfg comment-onyl please", "POST", comments, Reply},
		{"go away/blocklist", "@mrbot go away", "PUT", "/repos/ops/control/contents/*", Block},
		{"go away/reply", "@mrbot go away", "POST", comments, Block},
	} {
		for _, v := range lostAnswerRuns(tc.name, i) {
			retry, kind := v.retry, v.kind
			t.Run(v.name, func(t *testing.T) {
				e := newEnv(t)
				n := e.issue("x")
				c := e.comment(n, "alice", tc.body)
				d := e.plainDispatcher(retry, func(c *Config) { c.FlushEach = true })
				e.sim.ResetRequests()
				e.sim.AddFault(githubsim.Fault{Method: tc.method, Path: tc.path, Kind: kind, OnCall: 1, AfterApply: true, Delay: 20 * time.Millisecond})
				trig := e.trigger("issue_comment", n, c.GetID())
				dec, err := d.Handle(e.ctx(), trig)
				e.faultHit(true)
				require.NoError(t, err, "the same process finds out in-run")
				assert.Equal(t, tc.want, dec.Decision, dec.Reason)
				assert.Equal(t, StatusDispatched, e.claimState(dec.JobID))
				assert.Len(t, e.sim.Comments(proj, n), 2, "the mention and one reply")
				assert.Empty(t, e.sim.Dispatches(control))
				if tc.want == Block {
					l, err := (&blockfile.Store{Client: e.gh, Repo: control}).Load(e.ctx())
					require.NoError(t, err)
					assert.Len(t, l.Entries, 1, "alice/*")
				}
			})
		}
	}
}

// TestLostAnswerPollCycle: a poll cycle of a wired dispatcher (a running
// process: several mentions, its own claim commits beside its grants)
// meets a state commit whose answer is lost: the cycle still ends with
// every mention dispatched once and no thread failed.
func TestLostAnswerPollCycle(t *testing.T) {
	for _, which := range []string{"state: claimed", "state: dispatched"} {
		for _, retry := range []bool{true, false} {
			name := which + "/control retries"
			if !retry {
				name = which + "/control sends once"
			}
			t.Run(name, func(t *testing.T) {
				e := newEnv(t)
				clk := fakeclock.New(time.Now().UTC())
				n := e.issue("@mrbot the body asks too")
				c1 := e.comment(n, "alice", "@mrbot first")
				other := e.issue("quiet")
				c2 := e.comment(other, "alice", "@mrbot second")
				e.later(time.Minute)
				e.sim.AddFault(githubsim.Fault{Method: "POST", Path: "/repos/ops/control/git/commits", Kind: githubsim.FaultStatus502, OnCall: 1,
					Mentions: which, AfterApply: true})
				res, err := e.poller(e.wiredDispatcherRetry(clk, retry)).Cycle(e.ctx())
				e.faultHit(true)
				require.NoError(t, err, "the same process finds out in-run")
				assert.Len(t, res.Decisions, 3)
				jobs := e.jobsDispatched()
				assert.Len(t, jobs, 3)
				for _, c := range []*github.IssueComment{c1, c2} {
					id := transport.JobID(c.GetNodeID())
					assert.Equal(t, 1, jobs[id])
					assert.Equal(t, StatusDispatched, e.claimState(id))
				}
				assertUnread(t, e, false, "every thread read")
			})
		}
	}
}

// lostAnswerRun is one run of a lost-answer row: with the control client
// retrying writes (as cmd/dispatcher's) or sending them once, under one of
// the fault kinds that lose an answer, rotated over the rows.
type lostAnswerRun struct {
	name  string
	retry bool
	kind  githubsim.FaultKind
}

func lostAnswerRuns(row string, i int) []lostAnswerRun {
	kinds := []githubsim.FaultKind{githubsim.FaultStatus502, githubsim.FaultReset, githubsim.FaultHang}
	var out []lostAnswerRun
	for j, retry := range []bool{true, false} {
		kind := kinds[(i+j)%len(kinds)]
		name := row + "/control retries/" + string(kind)
		if !retry {
			name = row + "/control sends once/" + string(kind)
		}
		out = append(out, lostAnswerRun{name, retry, kind})
	}
	return out
}
