package loadtest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/dispatch"
	"github.com/mention-runner/mention-runner/internal/refstate"
)

// proveKills SIGKILLs real `dispatcher once` processes at random moments
// (claim, dispatch and mark-read all fall in the window), then lets runs
// finish, delivers every dispatch to assemble and measures.
func proveKills(t *testing.T, mentions, kills int) (Measures, int) {
	w := newWorldN(t, 3, 15)
	ms, err := w.SeedMentions(mentions, 0)
	require.NoError(t, err)
	ctx := proveCtx(t)
	bins := builtBinaries(t, ctx)
	require.NoError(t, w.LiftAccountLimits(ctx)) // no content limits here; real processes pace in real time
	env := append(os.Environ(), "BOT_LOGIN="+Bot, "BOT_TOKEN="+BotToken, "CONTROL_REPO="+Control, "CONTROL_TOKEN="+ControlToken,
		"ALLOWED_USERS=*", "GITHUB_API_URL="+w.Base,
		// Runs here are sequential and a killed one is dead: its claims
		// may be taken over at once.
		"CLAIM_LEASE=1ms")
	run := func(killAfter time.Duration) error {
		w.Clock.Advance(time.Minute) // the next scheduled run: threads handled before it may be marked read
		cmd := exec.CommandContext(ctx, bins.Dispatcher, "once")
		cmd.Env = env
		require.NoError(t, cmd.Start())
		if killAfter > 0 {
			timer := time.AfterFunc(killAfter, func() { _ = cmd.Process.Signal(syscall.SIGKILL) })
			defer timer.Stop()
		}
		return cmd.Wait()
	}
	rng := rand.New(rand.NewPCG(15, 15))
	killed := 0
	for k := 0; k < kills; k++ {
		if err := run(time.Duration(50+rng.IntN(2500)) * time.Millisecond); err != nil {
			killed++
		}
	}
	// Then runs without kills until a cycle ends clean.
	for i := 0; ; i++ {
		err := run(0)
		if err == nil {
			break
		}
		require.Less(t, i, 10, "dispatcher once keeps failing: %v", err)
	}
	p := newProveRun(w, ms)
	// Every mention's claim says dispatched.
	for id, status := range claimStates(t, ctx, w, ms) {
		if status != dispatch.StatusDispatched {
			t.Logf("mention %s: claim %q", id, status)
		}
	}
	p.deliver(t, ctx, w.Sim.Dispatches(Control), 1)
	return p.measure(), killed
}

// claimStates reads each mention's claim state ("" = no claim).
func claimStates(t *testing.T, ctx context.Context, w *World, ms []Mention) map[string]string {
	gh, err := w.Client(ControlToken, false, nil)
	require.NoError(t, err)
	st, err := refstate.New(gh, Control, w.Clock.Now)
	require.NoError(t, err)
	out := map[string]string{}
	for _, m := range ms {
		cur, err := st.Read(ctx, dispatch.DedupeRef(m.JobID))
		require.NoError(t, err)
		out[m.JobID] = ""
		if cur != nil {
			out[m.JobID] = cur.Status
		}
	}
	return out
}

func TestProveKills(t *testing.T) {
	if testing.Short() {
		t.Skip("real processes: skipped by -short")
	}
	t.Parallel() // its own world; mostly waiting on real processes
	mentions, kills := 4, 8
	if proveFull() {
		mentions, kills = 20, 60
	}
	m, killed := proveKills(t, mentions, kills)
	row := m.Row(fmt.Sprintf("%d mentions, %d SIGKILLs of `dispatcher once` (%d landed mid-run)", mentions, kills, killed))
	fmt.Println(row)
	t.Log(row)
	require.Zero(t, m)
}
