package dispatch

import (
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/core/ghclient"
	"github.com/mention-runner/mention-runner/internal/testrig/fakeclock"
	"github.com/mention-runner/mention-runner/internal/testrig/githubsim"
)

// slowDispatches moves clk on by step after each repository_dispatch
// answer: GitHub's time to accept one, on the dispatcher's clock.
type slowDispatches struct {
	base http.RoundTripper
	clk  *fakeclock.Clock
	step time.Duration
}

func (s slowDispatches) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := s.base.RoundTrip(r)
	if r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/dispatches") {
		s.clk.Advance(s.step)
	}
	return resp, err
}

// TestDispatchedObserver: Config.Dispatched hears of each mention whose
// dispatch GitHub accepted, once, with the time from its claim to that
// answer on the dispatcher's clock: a dispatch whose answer was lost and
// that is sent again in the same call counts both sends' time, one sent
// again by a later call counts from that call's claim, a mention whose
// mark was refused after its dispatch landed is not heard of again when the
// next call marks it, a sharded context is one mention, and a reply is
// none.
func TestDispatchedObserver(t *testing.T) {
	const step = 3 * time.Second
	for _, tc := range []struct {
		name  string
		retry bool // the control and dispatch clients retry POST/PATCH, as cmd/dispatcher's
		fault *githubsim.Fault
		body  string
		big   bool // two long comments before the trigger: the context goes in shards
		calls int  // Handle calls until the mention is handled
		sends int  // repository_dispatch events GitHub stored (sharded: per send)
		want  []time.Duration
	}{
		{name: "one mention", retry: true, calls: 1, sends: 1, want: []time.Duration{step}},
		{name: "lost dispatch answer, sent again at once", retry: true, calls: 1, sends: 2, want: []time.Duration{2 * step},
			fault: &githubsim.Fault{Method: "POST", Path: "/repos/ops/control/dispatches", Kind: githubsim.FaultStatus502, OnCall: 1, AfterApply: true}},
		{name: "lost dispatch answer, sent again next call", calls: 2, sends: 2, want: []time.Duration{step},
			fault: &githubsim.Fault{Method: "POST", Path: "/repos/ops/control/dispatches", Kind: githubsim.FaultStatus502, OnCall: 1, AfterApply: true}},
		{name: "mark refused, marked next call", calls: 2, sends: 1, want: []time.Duration{step},
			fault: &githubsim.Fault{Method: "PATCH", Path: "/repos/ops/control/git/refs/*", Mentions: "/mention-runner/dispatched/", Kind: githubsim.FaultStatus502, Rate: 1, PerRequest: 3}},
		{name: "sharded", retry: true, big: true, calls: 1, sends: 1},
		{name: "invalid !cfg: a reply", retry: true, body: "@mrbot do it !cfg bogus", calls: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			clk := fakeclock.New(time.Now().UTC())
			n := e.issue("x")
			if tc.big {
				for range 2 {
					e.comment(n, "bob", strings.Repeat("a long comment ", 3000))
				}
			}
			body := tc.body
			if body == "" {
				body = "@mrbot do it"
			}
			c := e.comment(n, "alice", body)
			var mu sync.Mutex
			var got []time.Duration
			cfg := e.cfg
			cfg.Now = clk.Now
			cfg.Dispatched = func(_ string, since time.Duration) {
				mu.Lock()
				defer mu.Unlock()
				got = append(got, since)
			}
			dsp, err := ghclient.New(ghclient.Options{BaseURL: e.base, Token: botToken, Sleep: noSleep, MaxRetries: 2, RetryUnsafe: tc.retry,
				RequestTimeout: 20 * time.Second, Base: slowDispatches{base: http.DefaultTransport, clk: clk, step: step}})
			require.NoError(t, err)
			d, err := New(cfg, Clients{GitHub: e.gh, Control: e.client(tc.retry), Dispatch: dsp})
			require.NoError(t, err)
			if tc.fault != nil {
				e.sim.AddFault(*tc.fault)
			}
			var dec Decision
			for i := range tc.calls {
				dec, err = d.Handle(e.ctx(), e.trigger("issue_comment", n, c.GetID()))
				if i < tc.calls-1 {
					require.Error(t, err, "call %d", i+1)
				}
			}
			require.NoError(t, err)
			want, sends := tc.want, tc.sends
			if tc.big {
				require.Greater(t, dec.Dispatches, 1, "sharded")
				want, sends = []time.Duration{time.Duration(dec.Dispatches) * step}, dec.Dispatches
			}
			assert.Len(t, e.sim.Dispatches(control), sends)
			mu.Lock()
			defer mu.Unlock()
			assert.Equal(t, want, got)
			if want == nil {
				assert.Equal(t, Reply, dec.Decision, dec.Reason)
			} else {
				assert.Equal(t, StatusDispatched, e.claimState(dec.JobID))
			}
		})
	}
}
