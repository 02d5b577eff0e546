package gate

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/policy"
)

func TestConfigRoundTrip(t *testing.T) {
	c := withFlags(t, baseConfig(t), "here-only repo=octo/app")
	c.Blocklist = []string{"evil/*"}
	c.WorkDir, c.StartCommit, c.DefaultBase, c.CheckoutRepo, c.MaxBundleBytes = "/w", "abc", "main", "octo/app", 1000
	path := filepath.Join(t.TempDir(), "gate.json")
	require.NoError(t, c.WriteFile(path))
	got, err := LoadConfig(path)
	require.NoError(t, err)
	assert.Equal(t, c, got)
	p := got.effective()
	assert.True(t, p.HereOnly && p.CommentOnly)
	assert.Equal(t, policy.Thread{Repo: "octo/app", Number: 7}, p.Here)
	pat, blocked := p.Blocker.Blocked("evil/thing")
	assert.True(t, blocked)
	assert.Equal(t, "evil/*", pat)
}

func TestConfigKeysAreTheDocumentedOnes(t *testing.T) {
	b, err := json.Marshal(baseConfig(t))
	require.NoError(t, err)
	var m map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(b, &m))
	for _, k := range []string{"run_dir", "bot", "here", "policy", "blocklist", "workdir", "allow_workflow_changes", "max_bundle_bytes", "jobid"} {
		assert.Contains(t, m, k)
	}
	assert.JSONEq(t, `{"repo":"octo/app","number":7}`, string(m["here"]))
	var p map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(m["policy"], &p))
	for _, k := range []string{"comment_only", "here_only", "allow_repos", "deny_repos", "issue_limit", "pr_limit", "comment_limit", "ceilings"} {
		assert.Contains(t, p, k)
	}
}

func TestConfigErrors(t *testing.T) {
	ok := `"run_dir":"/r","here":{"repo":"o/r","number":1},"policy":{"comment_limit":1}`
	cases := []struct{ json, contains string }{
		{`{` + ok + `,"polcy":{}}`, `unknown field "polcy"`},
		{`{` + ok + `,"policy":{"comment_limt":3}}`, `unknown field "comment_limt"`},
		{`{"here":{"repo":"o/r","number":1}}`, "run_dir is required"},
		{`{"run_dir":"/r","here":{"repo":"o","number":1}}`, "here must name the triggering thread"},
		{`{"run_dir":"/r","here":{"repo":"o/r","number":1},"policy":{"issue_limit":-1}}`, "policy.issue_limit=-1"},
		{`{"run_dir":"/r","here":{"repo":"o/r","number":1},"policy":{"ceilings":{"pr_limit":5000}}}`, "policy.ceilings"},
		{`{"run_dir":"/r","here":{"repo":"o/r","number":1},"policy":{"allow_repos":["bad"]}}`, `policy repo "bad"`},
		{`{"run_dir":"/r","here":{"repo":"o/r","number":1},"blocklist":["nope"]}`, `blocklist pattern "nope"`},
		{`{"run_dir":"/r","here":{"repo":"o/r","number":1},"default_base":"a..b"}`, "default_base"},
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
	f.Add([]byte(`{"run_dir":"/r","here":{"repo":"o/r","number":1},"policy":{"comment_limit":1,"ceilings":{"comment_limit":2}}}`))
	f.Add([]byte(`{"run_dir":"/r","here":{"repo":"o/r","number":1},"blocklist":["a/*"],"policy":{"here_only":true,"issue_limit":4}}`))
	f.Add([]byte(`{}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := ParseConfig(b)
		if err != nil {
			return
		}
		p := c.effective()
		// Whatever the file says, the enforced policy never exceeds its ceilings
		// or the implications of here-only/comment-only.
		if ce := c.Policy.Ceilings; ce != nil {
			assert.LessOrEqual(t, p.CommentLimit, ce.CommentLimit)
			assert.LessOrEqual(t, p.IssueLimit, ce.IssueLimit)
			assert.LessOrEqual(t, p.PRLimit, ce.PRLimit)
		}
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
