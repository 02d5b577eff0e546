package loadtest

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/core/refstate"
	"github.com/mention-runner/mention-runner/internal/dispatcher/dispatch"
)

// proveKills SIGKILLs real `dispatcher once` processes, each at a write
// drawn from the writes its run has to make (so kills fall on the claim,
// the dispatch, the claim's mark and the mark-read alike), half before
// GitHub handles that write and half after it stored it with the answer
// lost, while new mentions keep arriving; then lets runs finish, delivers
// every dispatch to assemble and measures. It returns the mentions seeded
// and how many kills landed, by step.
func proveKills(t *testing.T, mentions, kills int) (Measures, int, map[string]int) {
	w := newWorldN(t, 3, 15)
	ms, err := w.SeedMentions(mentions, 0)
	require.NoError(t, err)
	ctx := proveCtx(t)
	bins := builtBinaries(t, ctx)
	require.NoError(t, w.LiftAccountLimits(ctx)) // no content limits here; real processes pace in real time
	// run starts the n-th `dispatcher once` with tokens of its own (so the
	// killer can tell its writes apart) and, when at > 0, kills it at its
	// at-th write; it says at which step the kill landed ("" = none).
	run := func(n, at int, afterApply bool) (string, error) {
		w.Clock.Advance(time.Minute) // the next scheduled run: threads handled before it may be marked read
		botTok, ctlTok := fmt.Sprintf("kill-bot-%d", n), fmt.Sprintf("kill-ctl-%d", n)
		w.Sim.AddToken(botTok, Bot)
		w.Sim.AddToken(ctlTok, Bot)
		cmd := exec.CommandContext(ctx, bins.Dispatcher, "once")
		cmd.Env = append(os.Environ(), "BOT_LOGIN="+Bot, "BOT_TOKEN="+botTok, "CONTROL_REPO="+Control, "CONTROL_TOKEN="+ctlTok,
			"ALLOWED_USERS=*", "GITHUB_API_URL="+w.Base,
			// Runs here are sequential and a killed one is dead: its claims
			// may be taken over at once. Kills are drawn by write, not by
			// time, so the 1 s gap between writes only slows the test.
			"CLAIM_LEASE=1ms", "WRITE_GAP=0s")
		require.NoError(t, cmd.Start())
		exited := make(chan struct{})
		stepc := make(chan string, 1) // Match runs on the server's goroutine
		if at > 0 {
			writes := 0
			w.Kill(KillPlan{Tokens: []string{botTok, ctlTok}, AfterApply: afterApply, Match: func(r *http.Request) bool {
				if r.Method == http.MethodGet || r.Method == http.MethodHead || strings.HasSuffix(r.URL.Path, "/graphql") {
					return false // reads (a GraphQL query is a POST)
				}
				writes++
				if writes < at {
					return false
				}
				stepc <- killStep(r)
				return true
			}}, cmd.Process, exited)
		}
		err := cmd.Wait()
		close(exited)
		select {
		case step := <-stepc:
			return step, err
		default:
			return "", err
		}
	}
	rng := rand.New(rand.NewPCG(15, 15))
	landed := map[string]int{}
	n := 0
	for k := 0; k < kills; k++ {
		if k%max(1, kills/mentions) == 0 && len(ms) < mentions+kills/2 {
			// new work keeps arriving, so runs late in the test still
			// claim, dispatch and mark threads read
			more, err := w.SeedMentions(1, 0)
			require.NoError(t, err)
			ms = append(ms, more...)
		}
		// A run goes through every unread thread's mention (one handled
		// already costs a claim attempt too) before it marks the threads
		// read: about seven writes a thread, then the mark-read and the
		// rate state. Kills are drawn over all of them.
		unread := 0
		for _, th := range w.Sim.Notifications(Bot) {
			if th.GetUnread() {
				unread++
			}
		}
		span := 7*unread + 4
		n++
		step, _ := run(n, 1+rng.IntN(span), rng.IntN(2) == 0)
		if step != "" {
			landed[step]++
		}
	}
	// Then runs without kills until a cycle ends clean.
	for i := 0; ; i++ {
		n++
		_, err := run(n, 0, false)
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
	return p.measure(), len(ms), landed
}

// killStep names the dispatcher's step a write belongs to.
func killStep(r *http.Request) string {
	path := r.URL.Path
	switch {
	case strings.HasSuffix(path, "/notifications"):
		return "mark-read"
	case strings.HasSuffix(path, "/dispatches"):
		return "dispatch"
	case strings.HasSuffix(path, "/git-receive-pack"):
		return "ledger push" // a grant's commit and the ledger's ref
	case strings.Contains(path, "/git/refs/") && strings.Contains(path, "/pace/"):
		return "ledger ref"
	case strings.Contains(path, "/git/refs/"):
		return "claim mark"
	case strings.HasSuffix(path, "/git/refs"):
		return "claim ref" // or, rarely, a new ledger generation
	case strings.HasSuffix(path, "/git/commits"):
		return "commit" // a claim's or the ledger's
	case strings.HasSuffix(path, "/reactions"):
		return "reaction"
	case strings.Contains(path, "/contents/"):
		return "rate state"
	default:
		return r.Method + " " + path
	}
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
	m, seeded, landed := proveKills(t, mentions, kills)
	steps := slices.Sorted(maps.Keys(landed))
	var by []string
	total := 0
	for _, s := range steps {
		by = append(by, fmt.Sprintf("%s %d", s, landed[s]))
		total += landed[s]
	}
	row := m.Row(fmt.Sprintf("%d mentions, %d SIGKILLs of `dispatcher once` (%d landed: %s)", seeded, kills, total, strings.Join(by, ", ")))
	fmt.Println(row)
	t.Log(row)
	require.Zero(t, m)
}
