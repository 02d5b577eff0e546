package dispatch

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/core/blockfile"
	"github.com/mention-runner/mention-runner/internal/core/blocklist"
	"github.com/mention-runner/mention-runner/internal/core/contract"
	"github.com/mention-runner/mention-runner/internal/core/threadctx"
	"github.com/mention-runner/mention-runner/internal/testrig/githubsim"
)

// labelRepos adds the repositories the repo= label tests name: carol/lib
// and carol/e1…e5 public with a label each, carol/secret private and
// closed to the bot, carol/inside private and readable by it, bob/denied
// and bob/gone public.
func (e *env) labelRepos() {
	e.t.Helper()
	for _, r := range []string{"carol/lib", "carol/e1", "carol/e2", "carol/e3", "carol/e4", "carol/e5", "bob/denied", "bob/gone"} {
		_, err := e.sim.AddRepo(r, false)
		require.NoError(e.t, err)
		require.NoError(e.t, e.sim.CreateLabel(r, "from-"+strings.ReplaceAll(r, "/", "-"), ""))
	}
	for _, r := range []string{"carol/secret", "carol/inside"} {
		_, err := e.sim.AddRepo(r, true)
		require.NoError(e.t, err)
		require.NoError(e.t, e.sim.CreateLabel(r, "internal", ""))
	}
	e.sim.SetPermission("carol/inside", bot, "read")
}

// labelReads lists the repositories (other than the thread's) whose
// labels, or whose repository object, the dispatcher read.
func (e *env) labelReads() (labels, objects []string) {
	for _, r := range e.sim.Requests() {
		repo, rest, _ := strings.Cut(strings.TrimPrefix(r.Path, "/repos/"), "/labels")
		switch {
		case r.Method != "GET" || !strings.HasPrefix(r.Path, "/repos/") || strings.EqualFold(repo, proj) || strings.EqualFold(repo, control):
		case rest == "" && strings.HasSuffix(r.Path, "/labels"):
			labels = append(labels, repo)
		case strings.Count(repo, "/") == 1 && !strings.Contains(r.Path, "/labels"):
			objects = append(objects, repo)
		}
	}
	sort.Strings(labels)
	sort.Strings(objects)
	return labels, objects
}

// The dispatcher gathers the labels of the repositories repo= names: a
// read each (a second, of the repository, while only public ones may go
// to a public control repository), at most contract.MaxLabelRepos; one it
// cannot read is recorded and the mention goes on; deny=, opted-out and
// control repositories are never read; comment-only and here-only read
// none.
func TestRepoFlagLabelsGathered(t *testing.T) {
	const thread = "repo=alice/proj "
	cases := []struct {
		name         string
		cfg          string
		allowPrivate bool
		wantLabels   map[string][]string
		wantMissing  map[string]string
		wantOver     int
		wantReads    []string // labels read (a private one's beside its visibility, then dropped)
		wantObjects  []string // repository objects read (visibility)
	}{
		{"a readable repository", thread + "repo=carol/lib", true,
			map[string][]string{"carol/lib": {"from-carol-lib"}}, nil, 0, []string{"carol/lib"}, nil},
		{"an unreadable one is recorded, the mention goes on", thread + "repo=carol/lib repo=carol/secret", true,
			map[string][]string{"carol/lib": {"from-carol-lib"}}, map[string]string{"carol/secret": "not readable by the bot (HTTP 404)"}, 0,
			[]string{"carol/lib", "carol/secret"}, nil},
		{"a private one it can read, private targets allowed", thread + "repo=carol/inside", true,
			map[string][]string{"carol/inside": {"internal"}}, nil, 0, []string{"carol/inside"}, nil},
		{"public control repository: a private one left out", thread + "repo=carol/inside repo=carol/lib", false,
			map[string][]string{"carol/lib": {"from-carol-lib"}},
			map[string]string{"carol/inside": "private (or its visibility unknown), and the context goes to a public control repository"}, 0,
			[]string{"carol/inside", "carol/lib"}, []string{"carol/inside", "carol/lib"}},
		{"deny= is not read", thread + "repo=carol/lib repo=bob/denied deny=BOB/denied", true,
			map[string][]string{"carol/lib": {"from-carol-lib"}}, nil, 0, []string{"carol/lib"}, nil},
		{"opted out is not read", thread + "repo=carol/lib repo=bob/gone", true,
			map[string][]string{"carol/lib": {"from-carol-lib"}}, nil, 0, []string{"carol/lib"}, nil},
		{"the control repository is not read", thread + "repo=carol/lib repo=ops/control", true,
			map[string][]string{"carol/lib": {"from-carol-lib"}}, nil, 0, []string{"carol/lib"}, nil},
		{"the cap", thread + "repo=carol/e1 repo=carol/e2 repo=carol/e3 repo=carol/e4 repo=carol/e5 repo=carol/lib", true,
			map[string][]string{"carol/e1": {"from-carol-e1"}, "carol/e2": {"from-carol-e2"}, "carol/e3": {"from-carol-e3"}, "carol/e4": {"from-carol-e4"}},
			nil, 2, []string{"carol/e1", "carol/e2", "carol/e3", "carol/e4"}, nil},
		{"comment-only reads none", thread + "repo=carol/lib comment-only", true, nil, nil, 0, nil, nil},
		{"here-only reads none", thread + "repo=carol/lib here-only", true, nil, nil, 0, nil, nil},
		{"no repo= reads none", "no-pr", true, nil, nil, 0, nil, nil},
	}
	require.Equal(t, 4, contract.MaxLabelRepos, "the cap case names two past it")
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			e.labelRepos()
			store := &blockfile.Store{Client: e.gh, Repo: control}
			_, err := store.Update(e.ctx(), "seed", func(l *blocklist.List) bool { return l.Add([]string{"bob/gone"}, "bob", "x", time.Now()) > 0 })
			require.NoError(t, err)
			n := e.issue("x")
			c := e.comment(n, "alice", "@mrbot !cfg "+tc.cfg+"\ntriage this")
			e.sim.ResetRequests()
			dec, err := e.dispatcher(func(c *Config) { c.AllowPrivateTargets = tc.allowPrivate }).Handle(e.ctx(), e.trigger("issue_comment", n, c.GetID()))
			require.NoError(t, err)
			require.Equal(t, Dispatch, dec.Decision, dec.Reason)
			m := e.contexts()[dec.JobID]
			var got map[string][]struct {
				Name string `json:"name"`
			}
			if raw, ok := m[contract.KeyRepoLabels]; ok {
				require.NoError(t, json.Unmarshal(raw, &got))
			}
			names := map[string][]string{}
			for r, ls := range got {
				for _, l := range ls {
					names[r] = append(names[r], l.Name)
				}
			}
			if tc.wantLabels == nil {
				assert.NotContains(t, m, contract.KeyRepoLabels)
			} else {
				assert.Equal(t, tc.wantLabels, names)
			}
			tr := truncationOf(t, m)
			missing := map[string]string{}
			for r, c := range tr.RepoLabels {
				if c.Missing != "" {
					missing[r] = c.Missing
				}
			}
			if tc.wantMissing == nil {
				tc.wantMissing = map[string]string{}
			}
			assert.Equal(t, tc.wantMissing, missing)
			assert.Equal(t, tc.wantOver, tr.RepoLabelsOver)
			reads, objects := e.labelReads()
			assert.Equal(t, tc.wantReads, reads, "labels read")
			assert.Equal(t, tc.wantObjects, objects, "repositories read for their visibility")
		})
	}
}

// Four repo= repositories with many labels each and a thread over the
// budget: the context keeps its budget and every repository its share.
func TestRepoFlagLabelsWithinBudget(t *testing.T) {
	e := newEnv(t)
	e.sim.SetRequestLogLimit(0)
	repos := []string{"carol/l1", "carol/l2", "carol/l3", "carol/l4"}
	for _, r := range repos {
		_, err := e.sim.AddRepo(r, false)
		require.NoError(t, err)
		for i := range 100 {
			require.NoError(t, e.sim.CreateLabel(r, fmt.Sprintf("%s-%03d", strings.Repeat("l", 40), i), ""))
		}
	}
	n := e.issue("a long thread")
	filler := strings.Repeat("words and more words ", 60)
	for i := range 450 {
		e.comment(n, "bob", fmt.Sprintf("comment %d %s", i, filler))
	}
	c := e.comment(n, "alice", "@mrbot !cfg repo=alice/proj repo="+strings.Join(repos, " repo=")+"\nlabel the related issues")
	dec, err := e.dispatcher(func(c *Config) { c.AllowPrivateTargets = true }).Handle(e.ctx(), e.trigger("issue_comment", n, c.GetID()))
	require.NoError(t, err)
	require.Equal(t, Dispatch, dec.Decision, dec.Reason)
	assert.LessOrEqual(t, len(e.rawContexts()[dec.JobID]), threadctx.DefaultMaxBytes)
	tr := truncationOf(t, e.contexts()[dec.JobID])
	assert.NotEmpty(t, tr.DroppedIDs, "the thread was cut to fit")
	require.Len(t, tr.RepoLabels, len(repos))
	for _, r := range repos {
		assert.Equal(t, 100, tr.RepoLabels[r].Total, r)
		assert.Equal(t, 100, tr.RepoLabels[r].Kept, "%s: 100 labels fit in a sixteenth of the budget", r)
	}
}

// What repo= labels add to a mention's cost: one read per repository
// named (besides the thread's), made beside the thread's reads, so a
// running dispatcher (opt-out list cached) spends no round trip more.
// While only public repositories' labels may go to a public control
// repository, each also costs a read of the repository (its visibility,
// read beside its labels), and the control repository's visibility is
// read once per process.
func TestRepoFlagLabelsCost(t *testing.T) {
	if testing.Short() {
		t.Skip("request counts at an added latency: make test and make bench run them")
	}
	synctest.Test(t, func(t *testing.T) {
		cases := []struct {
			name         string
			fresh        bool // a process of its own per mention (event mode): nothing cached
			allowPrivate bool
			wantMore     int
		}{
			{"running, private targets allowed (or a private control repository)", false, true, 2},
			{"running, a public control repository, PRIVATE_TARGETS=refuse", false, false, 4},
			{"fresh, private targets allowed", true, true, 2},
			{"fresh, a public control repository: its visibility read too", true, false, 5},
		}
		for _, tc := range cases {
			e := newEnvInMemory(t)
			e.labelRepos()
			mk := func() *Dispatcher {
				return e.dispatcher(func(c *Config) { c.AllowPrivateTargets = tc.allowPrivate })
			}
			d := mk()
			warm := e.issue("warm")
			c := e.comment(warm, "alice", "@mrbot !cfg repo=alice/proj repo=carol/e5\nwarm up the caches")
			_, err := d.Handle(e.ctx(), e.trigger("issue_comment", warm, c.GetID()))
			require.NoError(t, err)
			e.sim.AddFault(githubsim.Fault{Kind: githubsim.FaultSlow, Rate: 1, Delay: costLatency})
			if tc.fresh {
				d = mk()
			}
			n := e.issue("base")
			c = e.comment(n, "alice", "@mrbot !cfg repo=alice/proj\ntriage this")
			base, baseTrips := e.measureCost(d, e.trigger("issue_comment", n, c.GetID()))
			if tc.fresh {
				d = mk()
			}
			n = e.issue("two more")
			c = e.comment(n, "alice", "@mrbot !cfg repo=alice/proj repo=carol/lib repo=carol/e1\ntriage this and the related issues")
			more, moreTrips := e.measureCost(d, e.trigger("issue_comment", n, c.GetID()))
			t.Logf("%s: %d requests (%d round trips) without repo= labels, %d (%d) with two repo= repositories: %v",
				tc.name, len(base), baseTrips, len(more), moreTrips, more)
			assert.Equal(t, tc.wantMore, len(more)-len(base), tc.name)
			assert.Equal(t, baseTrips, moreTrips, "%s: read beside the thread", tc.name)
		}
	})
}
