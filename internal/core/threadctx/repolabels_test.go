package threadctx

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/core/contract"
	"github.com/mention-runner/mention-runner/internal/testrig/githubsim"
	"github.com/mention-runner/mention-runner/internal/testrig/simfixture"
)

// labelList is n labels of about size bytes each, as GitHub lists them.
func labelList(n, size int) json.RawMessage {
	ls := make([]map[string]any, n)
	for i := range ls {
		ls[i] = map[string]any{"id": i + 1, "name": fmt.Sprintf("label-%d", i), "description": strings.Repeat("d", size)}
	}
	b, _ := json.Marshal(ls)
	return b
}

// repoLabelsOf reads the context's repo_labels: owner/name → label names.
func repoLabelsOf(t *testing.T, res *Result) map[string][]string {
	t.Helper()
	var c struct {
		RepoLabels map[string][]struct {
			Name string `json:"name"`
		} `json:"repo_labels"`
	}
	require.NoError(t, json.Unmarshal(res.JSON, &c))
	if c.RepoLabels == nil {
		return nil
	}
	out := map[string][]string{}
	for r, ls := range c.RepoLabels {
		out[r] = []string{}
		for _, l := range ls {
			out[r] = append(out[r], l.Name)
		}
	}
	return out
}

// The labels of the repositories repo= names take a sixteenth of the
// budget each, like the thread repository's; the whole context stays
// within its budget, however many labels they have and however long the
// thread is.
func TestRepoLabelsWithinBudget(t *testing.T) {
	const budget = 64 << 10
	cases := []struct {
		name        string
		labels      map[string]json.RawMessage
		missing     map[string]string
		comments    int
		wantCounts  map[string]RepoLabelCount
		wantNoField bool
	}{
		{"small lists kept whole", map[string]json.RawMessage{"Octo/Lib": labelList(3, 10), "octo/docs": labelList(0, 0)}, nil, 5,
			map[string]RepoLabelCount{"octo/lib": {Total: 3, Kept: 3}, "octo/docs": {Total: 0, Kept: 0}}, false},
		{"a long list cut to its share", map[string]json.RawMessage{"octo/lib": labelList(100, 200)}, nil, 5,
			map[string]RepoLabelCount{"octo/lib": {Total: 100, Kept: (budget/16 - 2) / len(`{"description":"`+strings.Repeat("d", 200)+`","id":100,"name":"label-99"},`)}}, false},
		{"four long lists and a thread over the budget", map[string]json.RawMessage{"a/one": labelList(100, 300), "a/two": labelList(100, 300),
			"a/three": labelList(100, 300), "a/four": labelList(100, 300)}, nil, 200, nil, false},
		{"an unreadable repository is recorded, not listed", map[string]json.RawMessage{"octo/lib": labelList(1, 1)},
			map[string]string{"octo/secret": "not readable by the bot (HTTP 404)"}, 5,
			map[string]RepoLabelCount{"octo/lib": {Total: 1, Kept: 1}, "octo/secret": {Missing: "not readable by the bot (HTTP 404)"}}, false},
		{"none asked for: no field", nil, nil, 5, nil, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req := request(thread(tc.comments, 1000), int64(tc.comments))
			req.Labels = labelList(100, 300)
			req.RepoLabels, req.RepoLabelsMissing = tc.labels, tc.missing
			res, err := Build(context.Background(), nil, req, Options{MaxBytes: budget})
			require.NoError(t, err)
			assert.LessOrEqual(t, len(res.JSON), budget, "the context keeps its budget")
			assert.True(t, json.Valid(res.JSON))
			var top map[string]json.RawMessage
			require.NoError(t, json.Unmarshal(res.JSON, &top))
			_, has := top[contract.KeyRepoLabels]
			assert.Equal(t, !tc.wantNoField, has)
			for repo, raw := range top {
				if repo == contract.KeyRepoLabels {
					var each map[string]json.RawMessage
					require.NoError(t, json.Unmarshal(raw, &each))
					for r, ls := range each {
						assert.LessOrEqual(t, len(ls), budget/16, "%s's labels within their share", r)
						assert.Equal(t, strings.ToLower(r), r, "keyed by lower-case owner/name")
					}
				}
			}
			if tc.wantCounts != nil {
				assert.Equal(t, tc.wantCounts, res.Truncation.RepoLabels)
			}
			for r := range tc.missing {
				assert.NotContains(t, repoLabelsOf(t, res), r)
			}
			if tc.comments > 100 {
				assert.NotEmpty(t, res.Truncation.DroppedIDs, "the thread was cut, not the budget broken")
				for r, c := range res.Truncation.RepoLabels {
					assert.Positive(t, c.Kept, "%s keeps its share", r)
				}
			}
		})
	}
}

// Build reads the labels of the repositories LabelRepos names: at most
// contract.MaxLabelRepos, never the thread's own again, an unreadable one
// recorded as such (the mention goes on), a private one left out when
// only public ones may go in.
func TestBuildReadsRepoLabels(t *testing.T) {
	cases := []struct {
		name        string
		repos       []string
		publicOnly  bool
		wantLabels  map[string][]string
		wantMissing map[string]string
		wantOver    int
		wantReads   int // of the repositories repo= names
	}{
		{"a public repository", []string{"octo/lib"}, false,
			map[string][]string{"octo/lib": {"docs", "bug"}}, map[string]string{}, 0, 1},
		{"unreadable: 404 recorded", []string{"octo/lib", "octo/secret"}, false,
			map[string][]string{"octo/lib": {"docs", "bug"}}, map[string]string{"octo/secret": "not readable by the bot (HTTP 404)"}, 0, 2},
		{"a private one the bot can read", []string{"octo/priv"}, false,
			map[string][]string{"octo/priv": {"internal"}}, map[string]string{}, 0, 1},
		{"public only: the private one left out", []string{"octo/lib", "octo/priv"}, true,
			map[string][]string{"octo/lib": {"docs", "bug"}},
			map[string]string{"octo/priv": "private (or its visibility unknown), and the context goes to a public control repository"}, 0, 4},
		{"the thread's own repository and repeats are not read again", []string{"Octo/App", "octo/lib", "OCTO/LIB"}, false,
			map[string][]string{"octo/lib": {"docs", "bug"}}, map[string]string{}, 0, 1},
		{"over the cap", []string{"octo/e1", "octo/e2", "octo/e3", "octo/e4", "octo/e5", "octo/e6"}, false,
			map[string][]string{"octo/e1": {}, "octo/e2": {}, "octo/e3": {}, "octo/e4": {}}, map[string]string{}, 2, contract.MaxLabelRepos},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			sim, _ := simfixture.Start(t, githubsim.Options{})
			simfixture.Writer(t, sim, "octo/app", "mrbot", "tok", false)
			for _, r := range []string{"octo/lib", "octo/e1", "octo/e2", "octo/e3", "octo/e4", "octo/e5", "octo/e6"} {
				_, err := sim.AddRepo(r, false)
				require.NoError(t, err)
			}
			for _, r := range []string{"octo/secret", "octo/priv"} {
				_, err := sim.AddRepo(r, true)
				require.NoError(t, err)
			}
			sim.SetPermission("octo/priv", "mrbot", "read")
			require.NoError(t, sim.CreateLabel("octo/lib", "docs", ""))
			require.NoError(t, sim.CreateLabel("octo/lib", "bug", ""))
			require.NoError(t, sim.CreateLabel("octo/priv", "internal", ""))
			n, err := sim.CreateIssue("octo/app", "mrbot", "t", "b")
			require.NoError(t, err)
			trig, err := sim.Comment("octo/app", n, "mrbot", "@x go")
			require.NoError(t, err)
			c := sim.Client("tok")
			base, err := Build(context.Background(), c, Request{Repo: "octo/app", Number: n, TriggerNodeID: trig.GetNodeID()}, Options{})
			require.NoError(t, err)

			res, err := Build(context.Background(), c, Request{Repo: "octo/app", Number: n, TriggerNodeID: trig.GetNodeID(),
				LabelRepos: func(context.Context) LabelRepos { return LabelRepos{Repos: tc.repos, PublicOnly: tc.publicOnly} }}, Options{})
			require.NoError(t, err, "an unreadable repository never stops the mention")
			got := repoLabelsOf(t, res)
			if len(tc.wantLabels) == 0 {
				assert.Nil(t, got)
			} else {
				assert.Equal(t, tc.wantLabels, got)
			}
			missing := map[string]string{}
			for r, c := range res.Truncation.RepoLabels {
				if c.Missing != "" {
					missing[r] = c.Missing
				}
			}
			assert.Equal(t, tc.wantMissing, missing)
			assert.Equal(t, tc.wantOver, res.Truncation.RepoLabelsOver)
			assert.Equal(t, tc.wantReads, res.Requests-base.Requests, "reads added for repo=")
		})
	}
}
