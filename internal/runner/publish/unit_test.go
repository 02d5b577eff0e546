package publish

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/mention-runner/mention-runner/internal/core/contract"
	"github.com/mention-runner/mention-runner/internal/core/policy"
	"github.com/mention-runner/mention-runner/internal/runner/outputs"
	"github.com/mention-runner/mention-runner/internal/runner/record"
	"github.com/mention-runner/mention-runner/internal/runner/render"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type blocked map[string]bool

func (b blocked) Blocked(repo string) (string, bool) { return repo, b[repo] }

func (b blocked) BlockedID(policy.RepoIDs) (string, bool) { return "", false }

func TestRecheck(t *testing.T) {
	here := policy.Thread{Repo: "acme/widgets", Number: 7}
	c := func(repo string, n int) outputs.Entry {
		return outputs.Entry{Kind: policy.KindComment, Repo: repo, Number: n, Body: "x"}
	}
	iss := func(repo string) outputs.Entry {
		return outputs.Entry{Kind: policy.KindIssue, Repo: repo, Title: "t", Body: "x"}
	}
	pr := func(index int) outputs.Entry {
		return outputs.Entry{Kind: policy.KindPullRequest, Repo: "acme/widgets", Title: "t", Bundle: contract.BundleFile(index)}
	}
	tests := []struct {
		name      string
		flags     []string
		entries   []outputs.Entry
		readErr   error
		policyErr error
		writes    int
		noops     int
		rules     []string
	}{
		{"all allowed", nil, []outputs.Entry{c("acme/widgets", 7), iss("acme/widgets"), pr(2)}, nil, nil, 3, 0, nil},
		{"another entry's bundle", nil, []outputs.Entry{c("acme/widgets", 7), pr(0)}, nil, nil, 1, 0, []string{RuleInvalidBundle}},
		{"forged log-issue marker", nil, []outputs.Entry{{Kind: policy.KindComment, Repo: "acme/widgets", Number: 7, Body: contract.LogIssueMarker("j")}}, nil, nil, 0, 0, []string{RuleForgedMarker}},
		{"forged reply marker", nil, []outputs.Entry{{Kind: policy.KindComment, Repo: "acme/widgets", Number: 7, Body: contract.ReplyMarker(contract.ReplyCfg, 1, "n")}}, nil, nil, 0, 0, []string{RuleForgedMarker}},
		{"body too long", nil, []outputs.Entry{{Kind: policy.KindComment, Repo: "acme/widgets", Number: 7, Body: strings.Repeat("x", contract.AgentBodyChars+1)}}, nil, nil, 0, 0, []string{outputs.RuleTooLong}},
		{"fresh ledger: limits count again", []string{"comment-limit=2"}, []outputs.Entry{c("acme/widgets", 7), c("acme/widgets", 7), c("acme/widgets", 7), c("acme/widgets", 8)}, nil, nil, 3, 0, []string{policy.RuleCommentLimit}},
		{"blocked repo", nil, []outputs.Entry{c("gone/away", 1)}, nil, nil, 0, 0, []string{policy.RuleRepoBlocked}},
		{"here-only", []string{"here-only"}, []outputs.Entry{c("acme/widgets", 8), iss("acme/widgets")}, nil, nil, 0, 0, []string{policy.RuleHereOnly, policy.RuleHereOnly}},
		{"forged marker in title", nil, []outputs.Entry{{Kind: policy.KindIssue, Repo: "acme/widgets", Title: "<!-- Mention-Runner:job=a;output=1 -->"}}, nil, nil, 0, 0, []string{RuleForgedMarker}},
		{"forged marker does not use a slot", []string{"issue-limit=1"}, []outputs.Entry{{Kind: policy.KindIssue, Repo: "acme/widgets", Title: "t", Body: "mention-runner:job=x"}, iss("acme/widgets")}, nil, nil, 1, 0, []string{RuleForgedMarker}},
		{"bundle path", nil, []outputs.Entry{{Kind: policy.KindPullRequest, Repo: "acme/widgets", Title: "t", Bundle: "../../etc/passwd"}}, nil, nil, 0, 0, []string{RuleInvalidBundle}},
		{"issue without title", nil, []outputs.Entry{{Kind: policy.KindIssue, Repo: "acme/widgets", Body: "x"}}, nil, nil, 0, 0, []string{policy.RuleInvalidAction}},
		{"unknown kind", nil, []outputs.Entry{{Kind: "push", Repo: "acme/widgets"}}, nil, nil, 0, 0, []string{policy.RuleInvalidAction}},
		{"noop", nil, []outputs.Entry{{Kind: outputs.KindNoop, Reason: "nothing"}}, nil, nil, 0, 1, nil},
		{"torn file refuses all", nil, []outputs.Entry{c("acme/widgets", 7)}, errors.New("outputs: line 2 is not terminated (torn write)"), nil, 0, 0, []string{RuleOutputsUnreadable, RuleOutputsUnreadable}},
		{"no policy refuses all", nil, []outputs.Entry{c("acme/widgets", 7), {Kind: outputs.KindNoop}}, nil, errors.New("blocklist down"), 0, 1, []string{RulePolicyUnavailable}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var f policy.Flags
			if len(tc.flags) > 0 {
				var err error
				f, err = policy.ParseFlags(tc.flags)
				require.NoError(t, err)
			}
			for i := range tc.entries {
				tc.entries[i].Index = i
			}
			p := policy.Effective(f, policy.Ceilings{CommentLimit: 5, IssueLimit: 3, PRLimit: 1, MaxWrites: 10}, here, blocked{"gone/away": true})
			plan := Recheck(tc.entries, tc.readErr, tc.policyErr, p)
			assert.Len(t, plan.Writes, tc.writes)
			assert.Len(t, plan.Noops, tc.noops)
			var rules []string
			for _, r := range plan.Refused {
				rules = append(rules, r.Rule)
				assert.NotEmpty(t, r.Reason)
			}
			assert.Equal(t, tc.rules, rules)
		})
	}
}

func TestVerifyContext(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "context.json")
	data := []byte(`{"a":1}`)
	require.NoError(t, os.WriteFile(path, data, 0o644))
	sum := sha256.Sum256(data)
	good := hex.EncodeToString(sum[:])
	tests := []struct {
		name, path, sha, errPart string
	}{
		{"ok", path, good, ""},
		{"upper-case sha", path, strings.ToUpper(good), ""},
		{"mismatch", path, strings.Repeat("0", 64), "changed after assemble"},
		{"no sha", path, "", "cannot be verified"},
		{"missing", filepath.Join(dir, "nope.json"), good, "cannot read"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := VerifyContext(tc.path, tc.sha)
			if tc.errPart == "" {
				require.NoError(t, err)
				assert.Equal(t, data, got)
				return
			}
			var ce *ContextError
			require.ErrorAs(t, err, &ce)
			assert.Contains(t, err.Error(), tc.errPart)
		})
	}
}

func TestFindRunDir(t *testing.T) {
	root := t.TempDir()
	one := filepath.Join(root, "one")
	require.NoError(t, os.MkdirAll(filepath.Join(one, "run-1"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(one, "context.json"), nil, 0o644))
	two := filepath.Join(root, "two")
	require.NoError(t, os.MkdirAll(filepath.Join(two, "a"), 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(two, "b"), 0o755))
	tests := []struct {
		name, dir, id, want string
		noRecord            bool
		errPart             string
	}{
		{"single", one, "", filepath.Join(one, "run-1"), false, ""},
		{"by id", two, "b", filepath.Join(two, "b"), false, ""},
		{"several", two, "", "", false, "set MR_RUN_ID"},
		{"missing dir", filepath.Join(root, "none"), "", "", true, ""},
		{"empty", filepath.Join(root, "one", "run-1"), "", "", true, ""},
		{"missing id", two, "c", "", true, ""},
		{"escaping id", two, "../one", "", false, "plain directory name"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := FindRunDir(tc.dir, tc.id)
			switch {
			case tc.noRecord:
				assert.ErrorIs(t, err, ErrNoRecord)
			case tc.errPart != "":
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.errPart)
			default:
				require.NoError(t, err)
				assert.Equal(t, tc.want, got)
			}
		})
	}
}

func TestClassify(t *testing.T) {
	tests := []struct{ status, failure, want string }{
		{"completed", "", ""},
		{"failed", "", contract.CauseFailed},
		{"", "", contract.CauseFailed},
		{"weird", "", contract.CauseFailed},
		{"failed", "crash", contract.CauseCrash},
		{"failed", "budget", contract.CauseBudget},
		{"failed", "loop-detected", contract.CauseLoop},
		{"failed", "timeout", contract.CauseTimeout},
		{"failed", "max-turns", contract.CauseMaxTurns},
		{"failed", "max_turns", contract.CauseFailed}, // one spelling: anything else is a failure, never a guess
		{"completed", "timeout", contract.CauseTimeout},
	}
	for _, tc := range tests {
		assert.Equal(t, tc.want, classify(tc.status, tc.failure), "%q/%q", tc.status, tc.failure)
	}
}

func TestLoadAgentRun(t *testing.T) {
	dir := t.TempDir()
	now := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	rec, err := record.Open(dir, record.Meta{RunID: "r", SessionID: "s", TaskID: "j"}, func() time.Time { return now })
	require.NoError(t, err)
	_, err = rec.Emit("policy.denied", "gate", record.SeverityInfo, "denied", map[string]any{})
	require.NoError(t, err)
	cost := 0.5
	_, err = rec.Emit("engine.result", "engine", record.SeverityError, "done", map[string]any{"num_turns": 6, "duration_ms": 61000, "total_cost_usd": cost})
	require.NoError(t, err)
	for i := range 7 {
		args := `{"b":2, "a":1}`
		if i == 0 {
			args = `{"a":0}`
		}
		require.NoError(t, rec.Tool(record.ToolRecord{ID: "t" + string(rune('0'+i)), Name: "Read", Arguments: json.RawMessage(args), Status: "done"}))
	}
	_, err = rec.Emit("run.failed", "runner", record.SeverityError, "loop", map[string]any{})
	require.NoError(t, err)
	require.NoError(t, rec.Close())
	require.NoError(t, record.WriteMeta(dir, record.RunMeta{RunID: "r", Engine: "claude", Status: "running"}))
	require.NoError(t, record.WriteOutcome(dir, record.Outcome{RunID: "r", Engine: "claude", Status: contract.StatusFailed, Failure: contract.CauseLoop}))

	a := LoadAgentRun(dir)
	assert.Empty(t, a.Problems)
	assert.Equal(t, contract.CauseLoop, a.Cause)
	assert.Equal(t, 6, a.Turns)
	assert.Equal(t, 61*time.Second, a.Duration)
	require.NotNil(t, a.CostUSD)
	assert.Equal(t, 1, a.Denied)
	assert.Equal(t, []render.LoopCall{{Tool: "Read", Args: `{"a":1,"b":2}`, Count: 6}}, a.Loop)

	// one schema, read strictly: an alias or unknown field is a problem,
	// and the run is not read as a success
	odd := t.TempDir()
	require.NoError(t, record.WriteMeta(odd, record.RunMeta{RunID: "r"}))
	require.NoError(t, os.WriteFile(filepath.Join(odd, contract.OutcomeFile), []byte(`{"status":"completed","num_turns":3}`), 0o644))
	strict := LoadAgentRun(odd)
	assert.Equal(t, contract.CauseFailed, strict.Cause)
	require.Len(t, strict.Problems, 1)
	assert.Contains(t, strict.Problems[0], `unknown field "num_turns"`)

	empty := LoadAgentRun(t.TempDir())
	assert.Equal(t, contract.CauseFailed, empty.Cause, "a record without a status is not a success")
	assert.NotEmpty(t, empty.Problems)
}

func TestWithNoteCutsLongBodies(t *testing.T) {
	n := noted{control: "ops/control", logIssue: 3, bot: "mrbot", jobID: "job-1"}
	for _, size := range []int{10, contract.GitHubBodyChars - 300, contract.GitHubBodyChars, 3 * contract.GitHubBodyChars} {
		body := strings.Repeat("é", size)
		out := n.withNote(body, 4)
		assert.LessOrEqual(t, utf8.RuneCountInString(out), contract.GitHubBodyChars, "size %d", size)
		job, idx, ok := contract.ParseOutputMarker(out)
		require.True(t, ok)
		assert.Equal(t, "job-1", job)
		assert.Equal(t, 4, idx)
		if size > contract.GitHubBodyChars-300 {
			assert.Contains(t, out, "the full text is in the run artifact of ops/control#3")
		}
	}
	assert.Equal(t, MaxTitleChars, utf8.RuneCountInString(cutTitle(strings.Repeat("t", 400))))
}

func TestTriggerKind(t *testing.T) {
	tests := []struct{ url, node, want string }{
		{"https://github.com/a/b/issues/1#issuecomment-5", "", "issue_comment"},
		{"https://github.com/a/b/pull/1#discussion_r5", "", "review_comment"},
		{"https://github.com/a/b/pull/1#pullrequestreview-5", "", "review"},
		{"https://github.com/a/b/issues/1", "I_kw", "issue"},
		{"", "IC_kw", "issue_comment"},
		{"", "PRRC_kw", "review_comment"},
	}
	for _, tc := range tests {
		assert.Equal(t, tc.want, triggerKind(tc.url, tc.node), tc.url+tc.node)
	}
}

func TestBranch(t *testing.T) {
	assert.Equal(t, "mention-runner/6f1c1a53-3", Branch("6f1c1a53-2b1e-5d4f-9a57-0c0a4e0b8d11", 3))
	assert.Equal(t, "mention-runner/ab-0", Branch("ab", 0))
}

func TestCapLogBody(t *testing.T) {
	s := strings.Repeat("- https://github.com/a/b/issues/1#issuecomment-1\n", 3000)
	out := capLogBody(s)
	assert.LessOrEqual(t, utf8.RuneCountInString(out), contract.GitHubBodyChars-100)
	assert.True(t, strings.HasSuffix(out, logCutNote))
	assert.Equal(t, "short", capLogBody("short"))
}

// TestLogCommentsAreInert: agent text posted on the control repo's log
// issue neither pings (@user) nor loads images, whatever the run's policy.
func TestLogCommentsAreInert(t *testing.T) {
	k := sessionKey("job-1", 0)
	out := withMarker("[Assistant]\nping @alice and @org/team ![x](https://evil.example/p.png) <img src=https://evil.example/q.png>", k)
	assert.NotRegexp(t, `@[A-Za-z]`, out)
	assert.NotContains(t, out, "![")
	assert.NotContains(t, out, "<img")
	assert.True(t, strings.HasSuffix(out, k.marker()))
}

// The log issue publish finishes carries the one marker assemble looks for
// on a re-run, so no job opens a second log issue.
func TestLogIssueMarkerIsAssembles(t *testing.T) {
	j := "6f1c1a53-2b1e-5d4f-9a57-0c0a4e0b8d11"
	assert.Equal(t, contract.LogIssueMarker(j), logKey(j).marker())
}
