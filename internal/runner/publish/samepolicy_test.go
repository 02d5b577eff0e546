package publish

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/core/blocklist"
	"github.com/mention-runner/mention-runner/internal/core/contract"
	"github.com/mention-runner/mention-runner/internal/core/policy"
	"github.com/mention-runner/mention-runner/internal/runner/agent/gate"
	"github.com/mention-runner/mention-runner/internal/runner/job"
	"github.com/mention-runner/mention-runner/internal/runner/outputs"
)

// TestGateAndPublishDecideAlike feeds the same raw inputs (the trigger's
// !cfg as written, operator ceilings, the thread, the opt-out list) to the
// gate, as `runner agent` hands them over, and to publish, as Run derives
// them, and shows that every attempted write gets the same decision: the
// gate over MCP, publish through Recheck of the very same attempts.
func TestGateAndPublishDecideAlike(t *testing.T) {
	const here, control = "acme/widgets", "ops/control"
	comment := func(repo string, n int) outputs.Entry {
		return outputs.Entry{Kind: policy.KindComment, Repo: repo, Number: n, Body: "hello"}
	}
	issue := func(repo string) outputs.Entry {
		return outputs.Entry{Kind: policy.KindIssue, Repo: repo, Title: "follow-up", Body: "details"}
	}
	// Pull requests appear only where the policy refuses them: an allowed
	// one needs a checkout to bundle, which is the gate's business alone.
	pr := outputs.Entry{Kind: policy.KindPullRequest, Repo: here, Title: "fix", Body: "b", Base: "main"}
	forged := outputs.Entry{Kind: policy.KindComment, Repo: here, Number: 7, Body: "done " + contract.LogIssueMarker("x")}
	label := func(repo string, names ...string) outputs.Entry {
		return outputs.Entry{Kind: policy.KindLabels, Repo: repo, Number: 3, Labels: names}
	}
	defaults := policy.Ceilings{CommentLimit: 3, IssueLimit: 1, PRLimit: 1, MaxWrites: 10, ControlRepo: control}
	withLabels := defaults
	withLabels.LabelLimit = 5
	cases := []struct {
		name     string
		cfg      string // the !cfg line as the person wrote it ("" = none)
		ceilings policy.Ceilings
		blocked  []string
		writes   []outputs.Entry
		want     []string // "" = allowed, else the rule
		check    func(t *testing.T, p policy.Policy)
	}{
		{name: "defaults", ceilings: defaults,
			writes: []outputs.Entry{comment(here, 7), comment(here, 7), comment(here, 7), comment(here, 7), issue(here), issue(here), comment(control, 1), comment("other/repo", 2), forged},
			want:   []string{"", "", "", policy.RuleCommentLimit, "", policy.RuleIssueLimit, policy.RuleControlRepo, "", outputs.RuleForgedMarker}},
		{name: "here-only implies comment-only and zero limits", cfg: "here-only", ceilings: defaults,
			writes: []outputs.Entry{comment(here, 7), comment(here, 8), comment("other/repo", 7), issue(here), pr},
			want:   []string{"", policy.RuleHereOnly, policy.RuleHereOnly, policy.RuleHereOnly, policy.RuleHereOnly},
			check: func(t *testing.T, p policy.Policy) {
				assert.True(t, p.HereOnly && p.CommentOnly)
				assert.Zero(t, p.IssueLimit)
				assert.Zero(t, p.PRLimit)
			}},
		{name: "comment-only zeroes issue and PR limits", cfg: "Comment-Only issue-limit=5", ceilings: defaults,
			writes: []outputs.Entry{issue(here), pr, comment("other/repo", 3)},
			want:   []string{policy.RuleCommentOnly, policy.RuleCommentOnly, ""},
			check: func(t *testing.T, p policy.Policy) {
				assert.True(t, p.CommentOnly)
				assert.Zero(t, p.IssueLimit+p.PRLimit)
			}},
		{name: "no-issue no-pr", cfg: "no-issue no-pr", ceilings: defaults,
			writes: []outputs.Entry{issue(here), pr, comment(here, 7)},
			want:   []string{policy.RuleIssueLimit, policy.RulePRLimit, ""}},
		{name: "allow, deny and opt-out lists", cfg: "repo=acme/widgets repo=Acme/Lib deny=acme/lib", ceilings: defaults, blocked: []string{"acme/*"},
			writes: []outputs.Entry{comment(here, 7), comment("acme/lib", 1), comment("else/where", 1)},
			want:   []string{policy.RuleRepoBlocked, policy.RuleRepoBlocked, policy.RuleRepoNotAllowed}},
		{name: "deny beats allow", cfg: "repo=acme/widgets repo=acme/lib deny=acme/lib", ceilings: defaults,
			writes: []outputs.Entry{comment("acme/lib", 1), comment(here, 7)},
			want:   []string{policy.RuleRepoDenied, ""}},
		{name: "ceilings bound the flags", cfg: "comment-limit=9 issue-limit=5 pr-limit=3", ceilings: policy.Ceilings{CommentLimit: 1, MaxWrites: 2, ControlRepo: control},
			writes: []outputs.Entry{comment(here, 7), comment(here, 7), issue(here), pr, comment("other/repo", 1), comment("third/repo", 1)},
			want:   []string{"", policy.RuleCommentLimit, policy.RuleIssueLimit, policy.RulePRLimit, "", policy.RuleMaxWrites}},
		{name: "labels in repositories repo= names", cfg: "repo=acme/widgets repo=acme/lib repo=acme/secret", ceilings: withLabels,
			writes: []outputs.Entry{label("acme/lib", "docs"), label("acme/lib", "wontfix"), label("acme/secret", "bug"), label("acme/else", "docs"), label(here, "docs")},
			want:   []string{"", outputs.RuleNoSuchLabel, outputs.RuleLabelsUnknown, policy.RuleRepoNotAllowed, outputs.RuleNoSuchLabel}},
		{name: "labels in a repo= repository under comment-only and deny=", cfg: "repo=acme/lib repo=acme/other comment-only deny=acme/other", ceilings: withLabels,
			writes: []outputs.Entry{label("acme/lib", "docs"), label("acme/other", "docs")},
			want:   []string{policy.RuleCommentOnly, policy.RuleRepoDenied}},
		{name: "repeated limits take the minimum", cfg: "comment-limit=2 comment-limit=1", ceilings: defaults,
			writes: []outputs.Entry{comment(here, 7), comment(here, 7)},
			want:   []string{"", policy.RuleCommentLimit}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			require.Len(t, tc.want, len(tc.writes))
			var list *blocklist.List
			if tc.blocked != nil {
				list = &blocklist.List{}
				list.Add(tc.blocked, "someone", "https://example.test/c/1", time.Unix(0, 0))
			}
			body := "@helperbot please help"
			if tc.cfg != "" {
				body = "@helperbot !cfg " + tc.cfg + "\nplease help"
			}
			ctxJSON, err := json.Marshal(map[string]any{
				"repository": map[string]any{"full_name": here},
				"issue":      map[string]any{"number": 7},
				"trigger_comment": map[string]any{"id": 1, "node_id": "IC_same", "body": body,
					"user": map[string]any{"login": "alice"}, "created_at": "2026-01-01T00:00:00Z"},
				// the labels as the dispatcher gathers them for repo=
				"labels":      []map[string]any{{"name": "bug"}},
				"repo_labels": map[string]any{"acme/lib": []map[string]any{{"name": "docs"}}, "acme/other": []map[string]any{{"name": "docs"}}},
				"truncation": map[string]any{"repo_labels": map[string]any{
					"acme/secret": map[string]any{"total": 0, "kept": 0, "missing": "not readable by the bot (HTTP 404)"}}},
			})
			require.NoError(t, err)

			// publish: the policy as Run builds it, then Recheck of every attempt
			j, err := job.FromContext(ctxJSON, "helperbot")
			require.NoError(t, err)
			var b policy.Blocker
			if list != nil {
				b = list
			}
			pubPol := j.Policy(tc.ceilings, b)
			entries := make([]outputs.Entry, len(tc.writes))
			for i, e := range tc.writes {
				e.Index = i
				if e.Kind == policy.KindPullRequest {
					e.Bundle = contract.BundleFile(i)
				}
				entries[i] = e
			}
			facts := outputs.Facts{Here: pubPol.Here}
			facts.Labels, facts.LabelsMissing = job.Labels(ctxJSON)
			plan := RecheckFacts(entries, nil, nil, pubPol, facts)
			published := make([]string, len(entries))
			for _, r := range plan.Refused {
				published[r.Index] = r.Rule
			}

			// the gate: the config `runner agent` writes, over MCP
			ceil := tc.ceilings
			cfg := gate.Config{RunDir: t.TempDir(), Bot: "helperbot", Here: gate.Thread{Repo: j.Repo, Number: j.Number},
				Flags: j.Flags.String(), Ceilings: &ceil, Blocklist: list, JobID: j.JobID}
			cfg.Labels, cfg.LabelsMissing = job.Labels(ctxJSON)
			path := filepath.Join(t.TempDir(), "gate.json")
			require.NoError(t, cfg.WriteFile(path))
			cfg, err = gate.LoadConfig(path)
			require.NoError(t, err)
			g, err := gate.New(cfg)
			require.NoError(t, err)
			cs := connectGate(t, g)
			for _, e := range tc.writes {
				callGate(t, cs, e)
			}
			recs, err := gate.ReadLog(filepath.Join(cfg.RunDir, contract.GateLogFile))
			require.NoError(t, err)
			require.Len(t, recs, len(tc.writes))
			gated := make([]string, len(recs))
			for i, r := range recs {
				gated[i] = r.Rule
				assert.Equal(t, r.Rule == "", r.Decision == gate.DecisionAllowed, "write %d: %+v", i, r)
			}

			assert.Equal(t, tc.want, gated, "gate")
			assert.Equal(t, tc.want, published, "publish")
			gp, pp := g.Policy(), pubPol
			assert.Equal(t, pp.Words(), gp.Words())
			assert.Equal(t, pp.Flags(), gp.Flags())
			gp.Blocker, pp.Blocker = nil, nil
			assert.Equal(t, pp, gp)
			if tc.check != nil {
				tc.check(t, g.Policy())
				tc.check(t, pubPol)
			}
		})
	}
}

func connectGate(t *testing.T, g *gate.Gate) *mcp.ClientSession {
	t.Helper()
	st, ct := mcp.NewInMemoryTransports()
	ctx, cancel := context.WithCancel(context.Background())
	ss, err := g.Server("test").Connect(ctx, st, nil)
	require.NoError(t, err)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(ctx, ct, nil)
	require.NoError(t, err)
	t.Cleanup(func() { cs.Close(); ss.Wait(); cancel() })
	return cs
}

// callGate asks the gate for e with the tool and arguments the agent would use.
func callGate(t *testing.T, cs *mcp.ClientSession, e outputs.Entry) {
	t.Helper()
	tool, args := contract.ToolAddComment, map[string]any{"repo": e.Repo, "number": e.Number, "body": e.Body}
	switch e.Kind {
	case policy.KindIssue:
		tool, args = contract.ToolCreateIssue, map[string]any{"repo": e.Repo, "title": e.Title, "body": e.Body}
	case policy.KindPullRequest:
		tool, args = contract.ToolCreatePullRequest, map[string]any{"repo": e.Repo, "title": e.Title, "body": e.Body, "base": e.Base}
	case policy.KindLabels:
		tool, args = contract.ToolAddLabels, map[string]any{"repo": e.Repo, "number": e.Number, "labels": e.Labels}
	}
	_, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
	require.NoError(t, err)
}
