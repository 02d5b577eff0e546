package loadtest

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/core/transport"
	"github.com/mention-runner/mention-runner/internal/testrig/githubsim"
)

// TestJobContext: the harness reassembles a job from its first complete
// delivery. A dispatcher that failed halfway through a sharded job sends it
// again with a new timestamp (assemble proceeds with that one): the first,
// incomplete delivery must not fail the scenario.
func TestJobContext(t *testing.T) {
	const jobID = "a3f0534b-4cb8-51be-b8b6-6fa7f128f0ee"
	small := []byte(`{"thread":"short"}`)
	big := []byte(`{"thread":"` + strings.Repeat("long ", 60_000) + `"}`)
	t1, t2 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), time.Date(2026, 1, 2, 3, 5, 5, 0, time.UTC)
	deliveries := func(ctxJSON []byte, ts time.Time) []githubsim.Dispatch {
		reqs, err := transport.Encode(jobID, ctxJSON, ts)
		require.NoError(t, err)
		var ds []githubsim.Dispatch
		for _, r := range reqs {
			body, err := json.Marshal(r)
			require.NoError(t, err)
			ds = append(ds, githubsim.Dispatch{EventType: r.EventType, Body: body})
		}
		return ds
	}
	first, again := deliveries(big, t1), deliveries(big, t2)
	require.Greater(t, len(first), 2, "sharded")
	cat := func(parts ...[]githubsim.Dispatch) []githubsim.Dispatch {
		var out []githubsim.Dispatch
		for _, p := range parts {
			out = append(out, p...)
		}
		return out
	}
	for _, tc := range []struct {
		name string
		ds   []githubsim.Dispatch
		want []byte
		err  string
	}{
		{name: "one small event", ds: deliveries(small, t1), want: small},
		{name: "small event delivered twice", ds: cat(deliveries(small, t1), deliveries(small, t1)), want: small},
		{name: "shards, reversed", ds: cat(first[2:], first[:2]), want: big},
		{name: "first delivery cut short, sent again", ds: cat(first[:2], again), want: big},
		{name: "sent again, then the first one's rest", ds: cat(first[:2], again, first[2:]), want: big},
		{name: "never complete", ds: cat(first[:2], again[:1]), err: "incomplete"},
		{name: "nothing", err: "no events"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := JobContext(tc.ds)
			if tc.err != "" {
				assert.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			assert.JSONEq(t, string(tc.want), string(got))
		})
	}
}
