package gate

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/core/blocklist"
	"github.com/mention-runner/mention-runner/internal/core/policy"
)

func TestConfigRoundTrip(t *testing.T) {
	c := withFlags(t, baseConfig(t), "here-only repo=octo/app")
	c.Blocklist = &blocklist.List{Entries: []blocklist.Entry{{Pattern: "evil/*", By: "evil", ID: 42}}}
	c.WorkDir, c.StartCommit, c.DefaultBase, c.CheckoutRepo, c.MaxBundleBytes = "/w", "abc", "main", "octo/app", 1000
	path := filepath.Join(t.TempDir(), "gate.json")
	require.NoError(t, c.WriteFile(path))
	got, err := LoadConfig(path)
	require.NoError(t, err)
	assert.Equal(t, c, got)
	g, err := New(got)
	require.NoError(t, err)
	p := g.Policy()
	assert.True(t, p.HereOnly && p.CommentOnly)
	assert.Equal(t, policy.Thread{Repo: "octo/app", Number: 7}, p.Here)
	pat, blocked := p.Blocker.Blocked("evil/thing")
	assert.True(t, blocked)
	assert.Equal(t, "evil/*", pat)
}

func TestConfigKeysAreTheDocumentedOnes(t *testing.T) {
	c := withFlags(t, baseConfig(t), "comment-limit=2")
	c.Ceilings.ControlRepo = "ops/control"
	b, err := json.Marshal(c)
	require.NoError(t, err)
	var m map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(b, &m))
	for _, k := range []string{"run_dir", "bot", "here", "flags", "ceilings", "workdir", "allow_workflow_changes", "max_bundle_bytes", "jobid"} {
		assert.Contains(t, m, k)
	}
	assert.NotContains(t, m, "policy", "the gate gets raw inputs, never a digested policy")
	assert.JSONEq(t, `{"repo":"octo/app","number":7}`, string(m["here"]))
	assert.JSONEq(t, `"comment-limit=2"`, string(m["flags"]))
	assert.JSONEq(t, `{"comment_limit":3,"issue_limit":1,"pr_limit":1,"max_writes":10,"label_limit":5,"review_comment_limit":30,"allow_push":false,"control_repo":"ops/control"}`, string(m["ceilings"]))
}

func TestConfigErrors(t *testing.T) {
	ok := `"run_dir":"/r","here":{"repo":"o/r","number":1},"ceilings":{"comment_limit":1,"max_writes":1}`
	cases := []struct{ json, contains string }{
		{`{` + ok + `,"polcy":{}}`, `unknown field "polcy"`},
		{`{` + ok + `,"policy":{"comment_limit":3}}`, `unknown field "policy"`},
		{`{"run_dir":"/r","here":{"repo":"o/r","number":1},"ceilings":{"comment_limt":3}}`, `unknown field "comment_limt"`},
		{`{"here":{"repo":"o/r","number":1}}`, "run_dir is required"},
		{`{"run_dir":"/r","here":{"repo":"o","number":1}}`, "here must name the triggering thread"},
		{`{"run_dir":"/r","here":{"repo":"o/r","number":1}}`, "ceilings are required"},
		{`{"run_dir":"/r","here":{"repo":"o/r","number":1},"ceilings":{"pr_limit":5000}}`, "ceilings: operator ceiling pr-limit=5000"},
		{`{` + ok + `,"flags":"repo=bad"}`, `flags "repo=bad"`},
		{`{` + ok + `,"flags":"comment-limt=1"}`, `flags "comment-limt=1"`},
		{`{` + ok + `,"flags":"issue-limit=-1"}`, `flags "issue-limit=-1"`},
		{`{` + ok + `,"blocklist":{"entries":[{"pattern":"nope"}]}}`, `pattern "nope"`},
		{`{` + ok + `,"blocklist":["a/*"]}`, "decode"},
		{`{` + ok + `,"default_base":"a..b"}`, "default_base"},
		{`{` + ok + `} {}`, "trailing data"},
		{`[]`, "decode"},
	}
	for _, c := range cases {
		_, err := ParseConfig([]byte(c.json))
		assert.ErrorContains(t, err, c.contains, c.json)
	}
	_, err := LoadConfig(filepath.Join(t.TempDir(), "missing.json"))
	var ce *ConfigError
	assert.ErrorAs(t, err, &ce)
}

func TestValidBranch(t *testing.T) {
	for s, want := range map[string]bool{
		"main": true, "release/1.2": true, "feat_x-y": true,
		"": false, "-x": false, "/x": false, "x/": false, "a..b": false, "a b": false, "a~1": false,
		"x.lock": false, ".hidden": false, "a/.b": false, "a@{1}": false, "a//b": false, "x.": false,
	} {
		assert.Equal(t, want, validBranch(s), s)
	}
}

func FuzzParseConfig(f *testing.F) {
	f.Add([]byte(`{"run_dir":"/r","here":{"repo":"o/r","number":1},"flags":"comment-limit=9","ceilings":{"comment_limit":2,"max_writes":3}}`))
	f.Add([]byte(`{"run_dir":"/r","here":{"repo":"o/r","number":1},"blocklist":{"entries":[{"pattern":"a/*"}]},"flags":"here-only issue-limit=4","ceilings":{"issue_limit":1}}`))
	f.Add([]byte(`{}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := ParseConfig(b)
		if err != nil {
			return
		}
		c.RunDir = t.TempDir()
		g, err := New(c)
		require.NoError(t, err)
		p := g.Policy()
		// Whatever the file says, the enforced policy never exceeds its ceilings
		// or the implications of here-only/comment-only.
		assert.LessOrEqual(t, p.CommentLimit, c.Ceilings.CommentLimit)
		assert.LessOrEqual(t, p.IssueLimit, c.Ceilings.IssueLimit)
		assert.LessOrEqual(t, p.PRLimit, c.Ceilings.PRLimit)
		assert.LessOrEqual(t, p.MaxWrites, c.Ceilings.MaxWrites)
		if p.HereOnly || p.CommentOnly {
			assert.Zero(t, p.IssueLimit+p.PRLimit)
		}
	})
}

func FuzzToolArgs(f *testing.F) {
	for _, s := range []string{
		`{"repo":"o/r","number":1,"body":"x"}`, `{"repo":"o/r","number":"#2","body":"x"}`,
		`{"repo":"o/r","title":"t","body":"b","labels":["a"]}`, `{"repo":"o/r","title":"t","body":"b","base":"main","draft":true}`,
		`{"reason":"r"}`, `null`, `[]`, `{"number":1e99}`, ``,
	} {
		f.Add(s)
	}
	parsers := []func(json.RawMessage) (request, error){parseAddComment, parseCreateIssue, parseCreatePullRequest, parseNoop}
	f.Fuzz(func(t *testing.T, s string) {
		for _, parse := range parsers {
			r, err := parse(json.RawMessage(s))
			if err != nil {
				var ae *ArgError
				assert.ErrorAs(t, err, &ae)
				continue
			}
			if r.entry.Kind != "noop" {
				assert.True(t, policy.ValidRepo(r.entry.Repo))
				assert.NotEmpty(t, r.entry.Body)
			}
			if r.entry.Kind == policy.KindComment {
				assert.Positive(t, r.entry.Number)
			}
		}
		_ = redactArgs(json.RawMessage(s))
		assert.True(t, json.Valid(redactArgs(json.RawMessage(s))))
	})
}
