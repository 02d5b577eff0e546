package loadtest

import (
	"context"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/core/contract"
	"github.com/mention-runner/mention-runner/internal/dispatcher/dispatch"
	"github.com/mention-runner/mention-runner/internal/testrig/githubsim"
)

// applyFailWorld is a small world run through every stage: `dispatcher
// once` runs (poll mode, a rate limit, so the rate state is written),
// each delivery assembled as its own workflow run, each job published.
// One mention has a bad !cfg (the dispatcher replies), one asks the bot
// to go away (from its author's own repositories: the blocklist is
// written, a reply posted), one thread is a pull request whose context is
// sharded.
type applyFailWorld struct {
	w      *World
	ms     []Mention
	badCfg Mention
	goAway Mention // an opt-out: the blocklist is written and a reply posted
}

func newApplyFailWorld(t *testing.T, seed int64) *applyFailWorld {
	w := newWorldN(t, 2, seed)
	w.PadEvery = 3
	ms, err := w.SeedMentions(3, 3)
	require.NoError(t, err)
	w.Sim.AddUser("cfg-typo")
	bad, err := w.MentionOn(ms[0].Repo, ms[0].Number, false, "cfg-typo", fmt.Sprintf("@%s !cfg comment-limit=banana please", Bot))
	require.NoError(t, err)
	w.Sim.AddUser("quiet")
	away, err := w.MentionOn(ms[1].Repo, ms[1].Number, false, "quiet", fmt.Sprintf("@%s go away", Bot))
	require.NoError(t, err)
	return &applyFailWorld{w: w, ms: ms, badCfg: bad, goAway: away}
}

// stages of the pipeline, in order.
var applyFailStages = []string{"dispatch", "assemble", "publish"}

// run runs the pipeline; around(stage, f) runs each stage.
func (a *applyFailWorld) run(t *testing.T, ctx context.Context, around func(stage string, f func())) *proveRun {
	p := newProveRun(a.w, a.ms)
	p.all = true
	around("dispatch", func() {
		for i := 0; ; i++ {
			a.w.Clock.Advance(time.Minute) // the next scheduled run
			_, err := a.w.PollOnce(ctx, func(c *dispatch.Config) { c.RatePerHour = 50 })
			if err == nil && a.unread() == 0 {
				break
			}
			if i == 8 {
				p.m.ManualReruns++
				t.Logf("dispatcher once still failing or leaving threads unread after %d runs: %v", i+1, err)
				break
			}
		}
	})
	around("assemble", func() { p.deliver(t, ctx, a.w.Sim.Dispatches(Control), 1) })
	around("publish", func() { p.publish(t, ctx) })
	return p
}

func (a *applyFailWorld) unread() int {
	n := 0
	for _, th := range a.w.Sim.Notifications(Bot) {
		if th.GetUnread() {
			n++
		}
	}
	return n
}

// replies counts the dispatcher's replies of kind to m.
func (a *applyFailWorld) replies(m Mention, kind string) int {
	marker := contract.ReplyMarker(kind, m.Trigger.CommentID, m.Trigger.NodeID)
	n := 0
	for _, c := range a.w.Sim.Comments(m.Repo, m.Number) {
		if strings.Contains(c.GetBody(), marker) {
			n++
		}
	}
	return n
}

// checkReplies: one reply to the bad !cfg, one to the opt-out, which is
// in the blocklist.
func (a *applyFailWorld) checkReplies(t *testing.T, ctx context.Context) {
	assert.Equal(t, 1, a.replies(a.badCfg, contract.ReplyCfg), "one reply to the bad !cfg")
	assert.Equal(t, 1, a.replies(a.goAway, contract.ReplyGoAway), "one reply to the opt-out")
	gh, err := a.w.Client(ControlToken, false, nil)
	require.NoError(t, err)
	owner, name, _ := strings.Cut(Control, "/")
	f, _, _, err := gh.Repositories.GetContents(ctx, owner, name, contract.BlocklistPath, nil)
	require.NoError(t, err, "the blocklist was written")
	text, err := f.GetContent()
	require.NoError(t, err)
	assert.Contains(t, text, "quiet/*")
}

// endpoint is a request path with every segment that names one object
// (it holds a digit: a number, a job id, a sha) made a wildcard, so a
// fault aims at the endpoint, not at one object. A target repository's
// owner is one of them: the same code writes to owner00/repo and
// owner01/repo, and their calls are one endpoint's 1st, 2nd, ... calls
// (the dispatcher's reply to the bad !cfg and its reply to the opt-out
// are the 1st and 2nd comment, each repository's mark-read the 1st and
// 2nd mark).
func endpoint(p string) string {
	segs := strings.Split(p, "/")
	if len(segs) > 3 && segs[1] == "repos" && segs[2]+"/"+segs[3] != Control {
		segs[2] = "*"
	}
	for i := 4; i < len(segs); i++ {
		if strings.ContainsAny(segs[i], "0123456789") {
			segs[i] = "*"
		}
	}
	return strings.Join(segs, "/")
}

// controlPush is where the jobs push the control repo's refs.
const controlPush = "/" + Control + ".git/git-receive-pack"

func isWrite(method string) bool {
	switch method {
	case http.MethodPost, http.MethodPatch, http.MethodPut, http.MethodDelete:
		return true
	}
	return false
}

// TestApplyThenFailEachWriteEndpoint: every write endpoint the dispatcher
// (poll mode), assemble and publish use, found by a clean run, gets GitHub's
// apply-then-fail (the write is stored, the answer is a 502, a reset or a
// timeout) on its first call in that stage, one endpoint at a time. Each
// run must end with every mention run once, nothing written twice, one
// reply to the bad !cfg, every thread read and no manual re-run.
// `make test` runs it without -race only (the Makefile's RACE_SKIP says why).
func TestApplyThenFailEachWriteEndpoint(t *testing.T) {
	if testing.Short() {
		t.Skip("load scenario: skipped by -short")
	}
	ctx := proveCtx(t)
	type target struct{ stage, method, path string }
	var targets []target
	calls := map[target]int{} // by the clean run, per stage
	{
		a := newApplyFailWorld(t, 40)
		seen := map[target]bool{}
		p := a.run(t, ctx, func(stage string, f func()) {
			before := len(a.w.Sim.Requests())
			f()
			for _, r := range a.w.Sim.Requests()[before:] {
				tg := target{stage, r.Method, endpoint(r.Path)}
				// the API's writes, and the pushes of the control repo's refs
				push := r.Method == http.MethodPost && r.Path == controlPush
				if !push && (!isWrite(r.Method) || !strings.HasPrefix(r.Path, "/repos/") || strings.Contains(r.Path, ".git/")) {
					continue
				}
				calls[tg]++
				if !seen[tg] {
					seen[tg] = true
					targets = append(targets, tg)
				}
			}
		})
		require.Zero(t, p.measure(), "the clean run")
		require.Zero(t, p.lostNewKinds(), "the clean run")
		a.checkReplies(t, ctx)
	}
	sort.SliceStable(targets, func(i, j int) bool { return stageIndex(targets[i].stage) < stageIndex(targets[j].stage) })
	var names []string
	for _, tg := range targets {
		names = append(names, tg.stage+" "+tg.method+" "+tg.path)
	}
	t.Logf("%d write endpoints:\n%s", len(targets), strings.Join(names, "\n"))
	for _, must := range []target{
		{"dispatch", "POST", controlPush}, // claims and marks
		{"dispatch", "POST", "/repos/" + Control + "/dispatches"},
		{"dispatch", "PUT", "/repos/" + Control + "/contents/.mention-runner/ratelimit.json"},
		{"dispatch", "PUT", "/repos/*/repo/notifications"},
		{"dispatch", "PUT", "/repos/" + Control + "/contents/" + contract.BlocklistPath},
		{"dispatch", "POST", "/repos/*/repo/issues/*/comments"},
		{"publish", "POST", "/repos/*/repo/issues/*/comments"},
		{"assemble", "POST", controlPush},
		{"publish", "POST", controlPush}, // the sharded job's refs deleted
	} {
		assert.Contains(t, targets, must, "the clean run made this write")
	}

	kinds := []githubsim.FaultKind{githubsim.FaultStatus502, githubsim.FaultReset, githubsim.FaultHang}
	// Each endpoint: its first call, its second, and half of its calls.
	variants := []struct {
		name   string
		onCall int
		rate   float64
	}{{"1st call", 1, 0}, {"2nd call", 2, 0}, {"half the calls", 0, 0.5}}
	for i, tg := range targets {
		for j, v := range variants {
			kind := kinds[(i+j)%len(kinds)]
			if v.rate > 0 && calls[tg] < 2 {
				// One call: half of them is a coin flip on it. Fail that
				// call, with this variant's kind (the 1st-call variant
				// has another).
				v.name, v.onCall, v.rate = "1st call", 1, 0
			}
			if v.onCall > calls[tg] {
				// Up to its fault the run is the clean one (a fault only
				// in this stage, drawn by call, not by seed): that call
				// never comes, and a run would prove nothing.
				t.Logf("%s %s %s: called %d time(s) by the clean run, no %s variant", tg.stage, tg.method, tg.path, calls[tg], v.name)
				continue
			}
			t.Run(fmt.Sprintf("%s %s %s %s %s", tg.stage, tg.method, tg.path, v.name, kind), func(t *testing.T) {
				t.Parallel()
				a := newApplyFailWorld(t, 40+int64(j))
				fired := 0
				p := a.run(t, ctx, func(stage string, f func()) {
					if stage != tg.stage {
						f()
						return
					}
					id := a.w.Sim.AddFault(githubsim.Fault{Method: tg.method, Path: tg.path, Kind: kind, Delay: 5 * time.Millisecond,
						AfterApply: true, OnCall: v.onCall, Rate: v.rate})
					before := len(a.w.Sim.Requests())
					f()
					a.w.Sim.RemoveFault(id)
					for _, r := range a.w.Sim.Requests()[before:] {
						if r.AppliedStatus != 0 {
							fired++
						}
					}
				})
				if fired == 0 && v.onCall != 1 {
					t.Skipf("the endpoint was not called that often (no write applied and lost)")
				}
				require.NotZero(t, fired, "a write was applied and its answer lost")
				assert.Zero(t, p.measure())
				assert.Zero(t, p.lostNewKinds(), "every review and label change is on GitHub once")
				a.checkReplies(t, ctx)
				assert.Zero(t, a.unread(), "every thread read")
				for id, st := range claimStates(t, ctx, a.w, append(a.ms, a.badCfg, a.goAway)) {
					assert.Equal(t, dispatch.StatusDispatched, st, "claim of %s", id)
				}
			})
		}
	}
}

func stageIndex(s string) int {
	for i, st := range applyFailStages {
		if st == s {
			return i
		}
	}
	return len(applyFailStages)
}
