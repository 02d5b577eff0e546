package publish

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/core/contract"
	"github.com/mention-runner/mention-runner/internal/core/policy"
	"github.com/mention-runner/mention-runner/internal/testrig/githubsim"
)

// firstAttempt are the options of a publish in the first attempt of the
// workflow run whose assemble opened the log issue, for an agent_small
// job, with the control repo's ids from the environment.
func (f *fixture) firstAttempt() Options {
	o := f.options()
	o.Attempt, o.LogIssueNew, o.Unsharded = 1, true, true
	o.ControlIDs = policy.RepoIDs{Repo: 9001, Owner: 9002}
	return o
}

// controlRequests are the requests to the control repo since the log was
// reset, as "METHOD path".
func (f *fixture) controlRequests() []string {
	var out []string
	for _, r := range f.sim.Requests() {
		if strings.HasPrefix(r.Path, "/repos/"+testControl) || strings.HasPrefix(r.Path, "/"+testControl+".git") {
			out = append(out, r.Method+" "+r.Path)
		}
	}
	return out
}

// sessionComments counts the log issue's session comments.
func (f *fixture) sessionComments() int {
	n := 0
	for _, c := range f.botComments(testControl, f.logIssue) {
		if k, ok := markerKey(c.GetBody()); ok && strings.HasSuffix(k.job, ".session") {
			n++
		}
	}
	return n
}

// TestFirstAttemptReadsNothingSettled: on the first attempt of the run
// that opened the log issue, publish neither lists the issue's comments
// before posting the session nor reads its labels before closing it on
// success; it does not list shard refs of an agent_small job nor look up
// ids the environment gave. The control repo sees the opt-out list's read,
// the session and the update, nothing else.
func TestFirstAttemptReadsNothingSettled(t *testing.T) {
	f := newFixture(t, "")
	f.sim.AddIssueLabels(testControl, f.logIssue, contract.LogLabel)
	f.add(f.comment(testTarget, f.issue, "the answer"))
	f.sim.ResetRequests()
	res := f.run(f.firstAttempt())
	require.Equal(t, "completed", res.Status, res.Problems)
	assert.Equal(t, []string{
		"GET /repos/" + testControl + "/contents/" + contract.BlocklistPath,
		fmt.Sprintf("POST /repos/%s/issues/%d/comments", testControl, f.logIssue),
		fmt.Sprintf("PATCH /repos/%s/issues/%d", testControl, f.logIssue),
	}, f.controlRequests())
	assert.Equal(t, 1, f.sessionComments())
	assert.Equal(t, "closed", f.log().GetState())
	assert.Equal(t, []string{contract.LogLabel}, labelNames(f.log()), "labels left as they were")

	// anything else reads as before: a re-run lists and reads
	f.sim.ResetRequests()
	o := f.options()
	o.Attempt, o.LogIssueNew = 2, true
	res = f.run(o)
	require.Equal(t, "completed", res.Status, res.Problems)
	reqs := strings.Join(f.controlRequests(), "\n")
	assert.Contains(t, reqs, fmt.Sprintf("GET /repos/%s/issues/%d/comments", testControl, f.logIssue))
	assert.Contains(t, reqs, fmt.Sprintf("GET /repos/%s/issues/%d\n", testControl, f.logIssue))
	assert.Contains(t, reqs, "GET /repos/"+testControl+"\n", "the ids looked up")
	assert.Contains(t, reqs, "matching-refs/"+strings.TrimPrefix(contract.JobRefPrefix, "refs/"))
	assert.Equal(t, 1, f.sessionComments(), "the re-run found the session")
}

// TestFirstAttemptLostAnswers: the session post's and the update's
// answers are lost after they applied (apply-then-fail): the session is
// looked for before it is posted again and the update is sent again;
// nothing is doubled.
func TestFirstAttemptLostAnswers(t *testing.T) {
	for _, ep := range []struct{ method, path string }{
		{"POST", "/repos/" + testControl + "/issues/*/comments"},
		{"PATCH", "/repos/" + testControl + "/issues/*"},
	} {
		for _, kind := range []githubsim.FaultKind{githubsim.FaultStatus502, githubsim.FaultReset, githubsim.FaultHang} {
			t.Run(ep.method+" "+string(kind), func(t *testing.T) {
				f := newFixture(t, "")
				f.add(f.comment(testTarget, f.issue, "the answer"))
				f.sim.AddFault(githubsim.Fault{Method: ep.method, Path: ep.path, Kind: kind, Delay: 5 * time.Millisecond, AfterApply: true, OnCall: 1})
				res := f.run(f.firstAttempt())
				require.Equal(t, "completed", res.Status, res.Problems)
				assert.Equal(t, 1, f.sessionComments(), "one session comment")
				assert.Len(t, f.botComments(testTarget, f.issue), 1, "one answer on the thread")
				assert.Equal(t, "closed", f.log().GetState())
			})
		}
	}
}

// TestRerunAfterKill: the first attempt stops at each point (after the
// thread's answer, after the session, after the log issue's update); the
// run's second attempt writes nothing twice, and a cause label the first
// attempt left goes when the second succeeds.
func TestRerunAfterKill(t *testing.T) {
	errKilled := errors.New("killed")
	for _, tc := range []struct {
		name     string
		kill     func(f *fixture, o *Options)
		sessions int    // session comments the first attempt left
		state    string // the log issue's state it left
	}{
		{"after the answer", func(f *fixture, o *Options) { o.afterWrite = func(int) error { return errKilled } }, 0, "open"},
		{"after the session", func(f *fixture, o *Options) {
			// the update is refused: the attempt ends with the session posted
			f.sim.AddFault(githubsim.Fault{Method: "PATCH", Path: "/repos/" + testControl + "/issues/*", Kind: githubsim.FaultText, Status: 422, OnCall: 1})
		}, 1, "open"},
		{"after the update", func(*fixture, *Options) {}, 1, "closed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, "")
			f.add(f.comment(testTarget, f.issue, "the answer"))
			o := f.firstAttempt()
			tc.kill(f, &o)
			_, _ = Run(t.Context(), o)
			require.Equal(t, tc.sessions, f.sessionComments(), "the first attempt's session comments")
			require.Equal(t, tc.state, f.log().GetState())

			res := f.run(f.rerun())
			require.Equal(t, "completed", res.Status, res.Problems)
			assert.Equal(t, 1, f.sessionComments(), "one session comment")
			assert.Len(t, f.botComments(testTarget, f.issue), 1, "one answer on the thread")
			assert.Equal(t, "closed", f.log().GetState())
		})
	}
	t.Run("a failed first attempt's cause label", func(t *testing.T) {
		f := newFixture(t, "")
		f.add(f.comment(testTarget, f.issue, "partial answer"))
		f.writeRun(`{"status":"failed","failure":"crash","error":"claude exited 3: boom"}`)
		res := f.run(f.firstAttempt())
		require.Equal(t, contract.CauseCrash, res.Cause)
		assert.Equal(t, []string{contract.CauseCrash}, labelNames(f.log()), "a failure reads the labels and adds its cause")

		f.writeRun(`{"status":"completed"}`)
		res = f.run(f.rerun())
		require.Equal(t, "completed", res.Status, res.Problems)
		assert.Empty(t, labelNames(f.log()), "the re-run that succeeds drops the stale cause")
		assert.Equal(t, 1, f.sessionComments(), "the re-run edits the session comment, it does not post another")
	})
}

// rerun is firstAttempt's options in the workflow run's second attempt.
func (f *fixture) rerun() Options {
	o := f.firstAttempt()
	o.Attempt = 2
	return o
}
