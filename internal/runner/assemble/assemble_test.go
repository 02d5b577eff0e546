package assemble

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/core/blockfile"
	"github.com/mention-runner/mention-runner/internal/core/blocklist"
	"github.com/mention-runner/mention-runner/internal/core/contract"
	"github.com/mention-runner/mention-runner/internal/core/transport"
	"github.com/mention-runner/mention-runner/internal/runner/record"
)

func sha(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// assertProceeded checks a run that proceeded with the exact context.
func assertProceeded(t *testing.T, h *harness, o outcome, jobID string, want []byte) {
	t.Helper()
	require.NoError(t, o.err, o.log)
	got, err := os.ReadFile(o.res.ContextFile)
	require.NoError(t, err)
	assert.Equal(t, want, got, "the exact input is assembled")
	assert.Equal(t, "true", o.outputs["ready"])
	assert.Equal(t, jobID, o.outputs["jobid"])
	assert.Equal(t, sha(want), o.outputs["context_sha256"])
	assert.Equal(t, "alice/app", o.outputs["target_repo"])
	assert.Equal(t, "7", o.outputs["target_number"])
	assert.Equal(t, fmt.Sprint(o.res.LogIssue), o.outputs["log_issue"])
	is, ok := h.sim.Issue(control, o.res.LogIssue)
	require.True(t, ok)
	assert.Contains(t, is.GetBody(), contract.LogIssueMarker(jobID))
	assert.Contains(t, is.GetBody(), "**Status:** running")
	assert.Contains(t, is.GetBody(), "`comment-only issue-limit=0 pr-limit=0 comment-limit=3`")
	assert.Contains(t, is.GetBody(), "Created Comments:\n- (none)")
	assert.Contains(t, is.GetBody(), "https://github.com/acme/control/actions/runs/"+o.runID)
	assert.Equal(t, "mention-runner: alice/app#7 by alice (job "+jobID+")", is.GetTitle())
	require.Len(t, is.Labels, 1)
	assert.Equal(t, contract.LogLabel, is.Labels[0].GetName())
}

func TestSmallEvent(t *testing.T) {
	h := newHarness(t)
	c := contextFor("IC_small", 100)
	jobID := transport.JobID("IC_small")
	ev := events(t, jobID, c)
	require.Equal(t, 1, len(ev))
	o := h.run(t, ev[0])
	assertProceeded(t, h, o, jobID, c)
	assert.Empty(t, h.sim.Refs(control, contract.JobRefPrefix), "agent_small needs no refs")
	// the run record starts here, beside the context, for the next jobs
	evs, err := record.ReadEvents(filepath.Join(o.dir, "runs", o.runID+"-1", contract.EventsFile))
	require.NoError(t, err)
	var types []string
	for _, e := range evs {
		types = append(types, e.Type)
		assert.Equal(t, jobID, e.TaskID)
		assert.Equal(t, record.SessionID(jobID, o.runID+"-1"), e.SessionID)
	}
	assert.Equal(t, []string{contract.EventRunCreated, contract.EventFileWritten, contract.EventLogIssueReady}, types)
	assert.Equal(t, int64(1), evs[0].Sequence)

	// a re-run finds the same log issue
	again := h.run(t, ev[0], rerun(o))
	require.NoError(t, again.err)
	assert.Equal(t, o.res.LogIssue, again.res.LogIssue)
	assert.Len(t, h.sim.Issues(control), 1)
	assert.Contains(t, again.log, "found the run-log issue")
}

// runInOrder runs the shard events of one job one after another in order
// and returns the outcomes by shard index.
func runInOrder(t *testing.T, h *harness, ev [][]byte, order []int) []outcome {
	out := make([]outcome, len(ev))
	for _, i := range order {
		out[i] = h.run(t, ev[i])
	}
	return out
}

func TestShardedAllOrders(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	for n, order := range permutations([]int{0, 1, 2}) {
		t.Run(fmt.Sprint(order), func(t *testing.T) {
			node := fmt.Sprintf("IC_perm%d", n)
			c, jobID, ev := shardedJob(t, node)
			require.Equal(t, 3, len(ev))
			out := runInOrder(t, h, ev, order)
			last := order[len(order)-1]
			for i, o := range out {
				if i == last {
					assertProceeded(t, h, o, jobID, c)
					continue
				}
				require.NoError(t, o.err, o.log)
				assert.Equal(t, map[string]string{"ready": "false", "jobid": jobID}, o.outputs)
				assert.Contains(t, o.log, fmt.Sprintf("stored shard %d of 3 (index %d)", i+1, i))
				assert.Contains(t, o.log, "waiting for")
			}
			// a late redelivery of any shard is harmless and names the winner
			late := h.run(t, ev[order[0]])
			require.NoError(t, late.err, late.log)
			assert.Equal(t, "false", late.outputs["ready"])
			assert.Contains(t, late.log, "already stored with the same content")
			assert.Contains(t, late.log, "run "+out[last].runID+" (attempt 1) https://github.com/acme/control/actions/runs/"+out[last].runID+" proceeds")
		})
	}
	assert.Len(t, h.sim.Issues(control), 6, "one log issue per job")
}

func permutations(xs []int) [][]int {
	if len(xs) <= 1 {
		return [][]int{append([]int(nil), xs...)}
	}
	var out [][]int
	for i := range xs {
		rest := append(append([]int(nil), xs[:i]...), xs[i+1:]...)
		for _, p := range permutations(rest) {
			out = append(out, append([]int{xs[i]}, p...))
		}
	}
	return out
}

// runConcurrently starts one run per event at once (bounded to par at a
// time) in the given order.
// assertOneProceeded checks that every run ended without error and exactly
// one of them proceeded, with the whole context.
func assertOneProceeded(t *testing.T, h *harness, out []outcome, jobID string, want []byte, msg string) {
	t.Helper()
	ready := 0
	for _, o := range out {
		require.NoError(t, o.err, o.log)
		if o.res.Ready {
			ready++
			assertProceeded(t, h, o, jobID, want)
		}
	}
	assert.Equal(t, 1, ready, msg)
}

func runConcurrently(t *testing.T, h *harness, ev [][]byte, order []int, par int) []outcome {
	out := make([]outcome, len(ev))
	sem := make(chan struct{}, par)
	var wg sync.WaitGroup
	for _, i := range order {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			out[i] = h.run(t, ev[i])
		}()
	}
	wg.Wait()
	return out
}

// TestSharded20RandomConcurrent: a job of 20 shards (two-digit indices,
// more pieces than any other test). All but the highest index arrive six
// at a time in random order and none may proceed, so a run that counts
// fewer than all n shards as complete (an off-by-one in Missing) fails
// here every time, not only when the random order happens to end on the
// highest index. The last shard then races a redelivery of another: both
// runs may see the job complete, exactly one proceeds, with the whole
// context.
func TestSharded20RandomConcurrent(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	rng := rand.New(rand.NewPCG(20, 20))
	node := "IC_twenty"
	c := contextFor(node, 900_000)
	jobID := transport.JobID(node)
	ev := events(t, jobID, c)
	require.Equal(t, 20, len(ev))
	last := len(ev) - 1
	order := rng.Perm(last)
	for i, o := range runConcurrently(t, h, ev[:last], order, 6) {
		require.NoError(t, o.err, o.log)
		require.False(t, o.res.Ready, "shard %d proceeded without shard %d (order %v)", i, last, order)
		assert.Contains(t, o.log, "waiting for")
	}
	out := runConcurrently(t, h, [][]byte{ev[last], ev[order[0]]}, []int{0, 1}, 2)
	assertOneProceeded(t, h, out, jobID, c, "exactly one of the last shard and a redelivery proceeds")
	assert.Len(t, h.sim.Issues(control), 1)
}

func TestShardedConcurrentEveryOrder3(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	for n, order := range permutations([]int{0, 1, 2}) {
		node := fmt.Sprintf("IC_conc%d", n)
		c, jobID, ev := shardedJob(t, node)
		out := runConcurrently(t, h, ev, order, 3)
		assertOneProceeded(t, h, out, jobID, c, fmt.Sprintf("order %v", order))
	}
}

func TestLostShard(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	_, jobID, ev := shardedJob(t, "IC_lost")
	// shard 1 never arrives; a slice, not a map, so the runs go in this order
	for _, step := range []struct {
		i       int
		missing []int
	}{{0, []int{1, 2}}, {2, []int{1}}} {
		i, missing := step.i, step.missing
		o := h.run(t, ev[i])
		require.NoError(t, o.err)
		assert.Equal(t, "false", o.outputs["ready"])
		assert.Equal(t, missing, o.res.Missing)
		assert.Contains(t, o.log, fmt.Sprintf("waiting for %d more", len(missing)))
	}
	assert.Empty(t, h.sim.Refs(control, contract.LockRef(jobID)))
	assert.Empty(t, h.sim.Issues(control), "nobody proceeds, nothing is reported")
}

func TestLockRaceLastTwoShards(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	for round := range 4 {
		node := fmt.Sprintf("IC_race%d", round)
		c, jobID, ev := shardedJob(t, node)
		first := h.run(t, ev[0])
		require.NoError(t, first.err)
		var a, b outcome
		var wg sync.WaitGroup
		start := make(chan struct{})
		wg.Add(2)
		go func() { defer wg.Done(); <-start; a = h.run(t, ev[1]) }()
		go func() { defer wg.Done(); <-start; b = h.run(t, ev[2]) }()
		close(start)
		wg.Wait()
		require.NoError(t, a.err, a.log)
		require.NoError(t, b.err, b.log)
		require.NotEqual(t, a.res.Ready, b.res.Ready, "exactly one of the racing runs proceeds")
		winner := a
		if b.res.Ready {
			winner = b
		}
		assertProceeded(t, h, winner, jobID, c)
	}
}

func TestRerunWinnerSameIssue(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	c, jobID, ev := shardedJob(t, "IC_rerun")
	out := runInOrder(t, h, ev, []int{0, 1, 2})
	winner := out[2]
	assertProceeded(t, h, winner, jobID, c)

	h.clock.Advance(2 * time.Hour)
	again := h.run(t, ev[2], rerun(winner))
	assertProceeded(t, h, again, jobID, c)
	assert.Equal(t, winner.res.LogIssue, again.res.LogIssue)
	assert.Contains(t, again.log, "already holds the lock (re-run)")
	assert.Len(t, h.sim.Issues(control), 1, "no second issue")

	// a re-run of a losing run stays out
	lose := h.run(t, ev[0], rerun(out[0]))
	require.NoError(t, lose.err)
	assert.Equal(t, "false", lose.outputs["ready"])
}

func TestConflictingDuplicateShard(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	_, jobID, ev := shardedJob(t, "IC_conflict")
	out := runInOrder(t, h, ev, []int{0, 1, 2})
	require.True(t, out[2].res.Ready)

	// shard 1 again, with other (still valid) content
	other := events(t, jobID, contextFor("IC_conflict", 120_001))
	o := h.run(t, other[1])
	require.Error(t, o.err)
	assert.True(t, transport.IsKind(o.err, transport.KindConflictingDuplicate), o.err)
	assert.Equal(t, "false", o.outputs["ready"])
	assert.Equal(t, fmt.Sprint(out[2].res.LogIssue), o.outputs["log_issue"], "recorded on the job's log issue")
	comments := h.sim.Comments(control, out[2].res.LogIssue)
	require.Len(t, comments, 1)
	assert.Contains(t, comments[0].GetBody(), "## Error: Invalid Context")
	assert.Contains(t, comments[0].GetBody(), "conflicting_duplicate")
	assert.Len(t, h.sim.Issues(control), 1)
}

func TestInvalidInputRecorded(t *testing.T) {
	jobID := transport.JobID("IC_bad")
	ts := "2025-03-01T11:59:00Z"
	payload := func(b64 string) map[string]any {
		return map[string]any{"jobid": jobID, "context_b64": b64, "timestamp": ts}
	}
	b64 := func(s string) string { return base64Std(s) }
	tests := []struct {
		name     string
		event    []byte
		opts     []runOpt
		want     string // in the error and on the issue
		knownJob bool
	}{
		{"bad base64", webhookRaw(t, contract.EventAgentSmall, payload("@@@@")), nil, "invalid_base64", true},
		{"not a JSON object", webhookRaw(t, contract.EventAgentSmall, payload(b64(`[1,2]`))), nil, "not_json_object", true},
		{"too large", webhookRaw(t, contract.EventAgentSmall, payload(b64(string(contextFor("IC_bad", 2000))))), []runOpt{withEnv("MR_MAX_CONTEXT_BYTES", "1024")}, "too_large", true},
		{"not a job", webhookRaw(t, contract.EventAgentSmall, payload(b64(`{"repository":{"full_name":"a/b"}}`))), nil, "does not describe a job", true},
		{"shard index out of range", webhookRaw(t, contract.EventAgentShard, map[string]any{"jobid": jobID, "shard": map[string]any{"index": 3, "total": 3}, "context_b64": "AAAA", "timestamp": ts}), nil, "index_out_of_range", true},
		{"unknown field", webhookRaw(t, contract.EventAgentSmall, map[string]any{"jobid": jobID, "context_b64": "AAAA", "timestamp": ts, "actor": "x"}), nil, "unknown field", false},
		{"not JSON", []byte("not json"), nil, "not a JSON object", false},
		{"bad jobid", webhookRaw(t, contract.EventAgentSmall, map[string]any{"jobid": "job-1", "context_b64": "AAAA", "timestamp": ts}), nil, "not a lowercase canonical UUID", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t)
			o := h.run(t, tt.event, tt.opts...)
			require.Error(t, o.err)
			assert.Contains(t, o.err.Error(), tt.want)
			assert.True(t, IsInvalidInput(o.err), o.err)
			assert.Equal(t, "false", o.outputs["ready"])
			assert.Contains(t, o.log, "::error::")
			issues := h.sim.Issues(control)
			require.Len(t, issues, 1)
			is := issues[0]
			assert.Equal(t, fmt.Sprint(is.GetNumber()), o.outputs["log_issue"])
			assert.Contains(t, is.GetBody(), "## Error: Invalid Context")
			assert.Contains(t, is.GetBody(), tt.want)
			assert.Contains(t, is.GetBody(), "**Status:** failed")
			var labels []string
			for _, l := range is.Labels {
				labels = append(labels, l.GetName())
			}
			assert.ElementsMatch(t, []string{contract.LogLabel, contract.CauseFailed}, labels)
			if tt.knownJob {
				assert.Equal(t, "mention-runner: assemble failed for job "+jobID, is.GetTitle())
				assert.Contains(t, is.GetBody(), contract.LogIssueMarker(jobID))
				assert.Equal(t, jobID, o.outputs["jobid"])
				// the same failure again lands on the same issue
				again := h.run(t, tt.event, tt.opts...)
				require.Error(t, again.err)
				assert.Len(t, h.sim.Issues(control), 1)
				assert.Len(t, h.sim.Comments(control, is.GetNumber()), 1)
			} else {
				assert.Contains(t, is.GetTitle(), "unknown job id")
				assert.NotContains(t, o.outputs, "jobid")
			}
		})
	}
}

// TestSweepStaleRefs: stale shard refs are swept by the first shard's
// run of a sharded job and by the runs that drew it (one in
// ShardSweepOneIn), in one push; the other runs do not list them.
func TestSweepStaleRefs(t *testing.T) {
	t.Parallel()
	drawn, _ := seedWhere(t, func(d draws) bool { return d.shards && !d.states })
	undrawn, _ := seedWhere(t, func(d draws) bool { return !d.shards && !d.states })
	for _, tc := range []struct {
		name  string
		shard int // the run's shard of a sharded job; -1 = agent_small
		seed  uint64
		swept bool
	}{
		{"a small job that drew it", -1, drawn, true},
		{"a small job that did not", -1, undrawn, false},
		{"a sharded job's first shard", 0, undrawn, true},
		{"a sharded job's other shard", 1, undrawn, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			// a job that never completed, a day and more ago
			stale := events(t, transport.JobID("IC_stale"), contextFor("IC_stale", 120_000))
			h.run(t, stale[0], withSeed(undrawn))
			h.run(t, stale[1], withSeed(undrawn))
			h.clock.Advance(23 * time.Hour)
			fresh := events(t, transport.JobID("IC_fresh"), contextFor("IC_fresh", 120_000))
			h.run(t, fresh[0], withSeed(undrawn))
			h.clock.Advance(2 * time.Hour)

			ev := events(t, transport.JobID("IC_now"), contextFor("IC_now", 10))[0]
			if tc.shard >= 0 {
				ev = events(t, transport.JobID("IC_now"), contextFor("IC_now", 120_000))[tc.shard]
			}
			before := len(h.sim.Requests())
			o := h.run(t, ev, withSeed(tc.seed))
			require.NoError(t, o.err)
			listed := false
			for _, r := range h.sim.Requests()[before:] {
				assert.NotEqual(t, "DELETE", r.Method, "the stale refs go in one push: %s", r.Path)
				listed = listed || strings.HasSuffix(r.Path, "matching-refs/mention-runner/jobs")
			}
			assert.Equal(t, tc.swept, listed, "every job's refs listed")
			assert.Len(t, h.sim.Refs(control, contract.JobRefs(transport.JobID("IC_fresh"))), 1)
			if !tc.swept {
				assert.Nil(t, o.res.Sweep)
				assert.Len(t, h.sim.Refs(control, contract.JobRefs(transport.JobID("IC_stale"))), 2)
				return
			}
			require.NotNil(t, o.res.Sweep)
			assert.Len(t, o.res.Sweep.Deleted, 2)
			assert.Empty(t, h.sim.Refs(control, contract.JobRefs(transport.JobID("IC_stale"))))
			assert.Contains(t, o.log, "swept 2 stale job refs")
		})
	}
}

func TestSettingsErrors(t *testing.T) {
	h := newHarness(t)
	ev := events(t, transport.JobID("IC_s"), contextFor("IC_s", 10))[0]
	tests := []struct {
		name string
		opt  runOpt
		want string
	}{
		{"no token", withEnv("GITHUB_TOKEN", ""), "GITHUB_TOKEN is not set"},
		{"no bot", withEnv("BOT_LOGIN", ""), "BOT_LOGIN"},
		{"no event", withEnv("GITHUB_EVENT_PATH", ""), "GITHUB_EVENT_PATH is not set"},
		{"missing event file", withEnv("GITHUB_EVENT_PATH", "/nonexistent/event.json"), "read event"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := h.run(t, ev, tt.opt)
			require.Error(t, o.err)
			assert.Contains(t, o.err.Error(), tt.want)
			assert.False(t, strings.Contains(o.outputs["ready"], "true"))
		})
	}
}

// The proceeding run writes the opt-out list as it stands next to the
// context, for the agent's gate; a corrupt list stops the job.
func TestBlocklistSnapshot(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	h.sim.AddToken("tok-admin", "mr-runner")
	store := &blockfile.Store{Client: h.sim.Client("tok-admin"), Repo: control}
	_, err := store.Update(ctx, "block", func(l *blocklist.List) bool {
		return l.Add([]string{"evil/*"}, "evil", "https://x", time.Unix(0, 0)) > 0
	})
	require.NoError(t, err)
	c := contextFor("IC_snap", 100)
	o := h.run(t, events(t, transport.JobID("IC_snap"), c)[0])
	require.NoError(t, o.err, o.log)
	raw, err := os.ReadFile(filepath.Join(filepath.Dir(o.res.ContextFile), contract.BlocklistSnapshotFile))
	require.NoError(t, err)
	var l blocklist.List
	require.NoError(t, json.Unmarshal(raw, &l))
	require.Len(t, l.Entries, 1)
	assert.Equal(t, "evil/*", l.Entries[0].Pattern)
}
