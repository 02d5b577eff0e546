package loadtest

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/dispatcher/dispatch"
)

// pushOf matches a git push whose first update sets a ref under prefix:
// a create when create is set, else a move (its body is read and put back
// for the server).
func pushOf(prefix string, create bool) func(*http.Request) bool {
	return func(r *http.Request) bool {
		if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/git-receive-pack") {
			return false
		}
		b, err := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(b))
		// the first pkt-line: 4 bytes of length, then "OLD NEW REF"
		if err != nil || len(b) < 4+40 || !bytes.Contains(b, []byte(prefix)) {
			return false
		}
		return (string(b[4:44]) == strings.Repeat("0", 40)) == create
	}
}

// TestLateMentionSurvivesKill: a real `dispatcher once` process handles a
// thread; a second mention is posted in it after the process read the
// thread, and the process is SIGKILLed at that moment: while reading the
// thread, right after its first claim, dispatch or claim mark were stored, or
// at the mark-read (before GitHub stored it, or after, its answer never
// read). The next run dispatches the late mention, and every job runs
// its agent exactly once.
func TestLateMentionSurvivesKill(t *testing.T) {
	if testing.Short() {
		t.Skip("real processes: skipped by -short")
	}
	t.Parallel() // its own world; mostly waiting on real processes
	ctx := proveCtx(t)
	bins := builtBinaries(t, ctx)
	is := func(method, suffix string) func(*http.Request) bool {
		return func(r *http.Request) bool { return r.Method == method && strings.HasSuffix(r.URL.Path, suffix) }
	}
	points := []struct {
		name  string
		match func(*http.Request) bool
		after bool // the request is stored before the kill
	}{
		{"reading the thread's comments", is(http.MethodGet, "/comments"), true},
		{"first dispatch stored", is(http.MethodPost, "/dispatches"), true},
		{"claim stored", pushOf("refs/mention-runner/dispatched/", true), true},
		{"claim marked dispatched", pushOf("refs/mention-runner/dispatched/", false), true},
		{"mark-read lost", is(http.MethodPut, "/notifications"), false},
		{"mark-read stored, answer lost", is(http.MethodPut, "/notifications"), true},
	}
	for i, pt := range points {
		t.Run(pt.name, func(t *testing.T) {
			t.Parallel() // mostly the dispatcher's write gaps
			w := newWorldN(t, 1, int64(30+i))
			ms, err := w.SeedMentions(1, 0)
			require.NoError(t, err)
			require.NoError(t, w.LiftAccountLimits(ctx))
			m := ms[0]
			run := func(n int, plan *KillPlan) (bool, error) {
				w.Clock.Advance(time.Minute) // the next scheduled run
				botTok, ctlTok := fmt.Sprintf("late-bot-%d", n), fmt.Sprintf("late-ctl-%d", n)
				w.Sim.AddToken(botTok, Bot)
				w.Sim.AddToken(ctlTok, Bot)
				cmd := exec.CommandContext(ctx, bins.Dispatcher, "once")
				cmd.Env = append(os.Environ(), "BOT_LOGIN="+Bot, "BOT_TOKEN="+botTok, "CONTROL_REPO="+Control, "CONTROL_TOKEN="+ctlTok,
					"ALLOWED_USERS=*", "GITHUB_API_URL="+w.Base, "CLAIM_LEASE=1ms",
					"WRITE_GAP=0s") // kills are drawn by request, not by time: no pacing to wait for
				require.NoError(t, cmd.Start())
				exited := make(chan struct{})
				fired := func() (bool, int) { return false, 0 }
				if plan != nil {
					plan.Tokens = []string{botTok, ctlTok}
					fired = w.Kill(*plan, cmd.Process, exited)
				}
				err := cmd.Wait()
				close(exited)
				killed, _ := fired()
				return killed, err
			}
			var late Mention
			killed, err := run(1, &KillPlan{Match: pt.match, AfterApply: pt.after, Then: func() {
				var perr error
				late, perr = w.MentionOn(m.Repo, m.Number, false, "latecomer", fmt.Sprintf("@%s one more thing", Bot))
				require.NoError(t, perr)
			}})
			require.True(t, killed, "the kill landed (%v)", err)
			require.NotEmpty(t, late.JobID)
			for n := 2; ; n++ {
				if _, err := run(n, nil); err == nil {
					break
				}
				require.Less(t, n, 6, "dispatcher once keeps failing")
			}
			both := []Mention{m, late}
			assert.Equal(t, map[string]string{m.JobID: dispatch.StatusDispatched, late.JobID: dispatch.StatusDispatched},
				claimStates(t, ctx, w, both))
			for _, th := range w.Sim.Notifications(Bot) {
				assert.False(t, th.GetUnread(), "all handled: read")
			}
			p := newProveRun(w, both)
			p.deliver(t, ctx, w.Sim.Dispatches(Control), 1)
			assert.Zero(t, p.measure())
		})
	}
}
