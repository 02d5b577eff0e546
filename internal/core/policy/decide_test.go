package policy

import (
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeBlocker blocks exact lower-case repos and owner/* patterns.
type fakeBlocker map[string]bool

func (b fakeBlocker) Blocked(repo string) (string, bool) {
	if b[repo] {
		return repo, true
	}
	owner, _, _ := strings.Cut(repo, "/")
	if b[owner+"/*"] {
		return owner + "/*", true
	}
	return "", false
}

func (b fakeBlocker) BlockedID(RepoIDs) (string, bool) { return "", false }

func comment(repo string, n int) Action { return Action{Kind: KindComment, Repo: repo, Number: n} }
func issue(repo string) Action          { return Action{Kind: KindIssue, Repo: repo} }
func pr(repo string) Action             { return Action{Kind: KindPullRequest, Repo: repo} }

func mustPolicy(t testing.TB, line string, c Ceilings, b Blocker) Policy {
	t.Helper()
	f, err := ParseFlagLine(line)
	require.NoError(t, err)
	return Effective(f, c, Thread{Repo: "Owner/Name", Number: 12}, b)
}

func TestDecide(t *testing.T) {
	big := Ceilings{CommentLimit: 5, IssueLimit: 5, PRLimit: 5, MaxWrites: 100}
	tests := []struct {
		name    string
		line    string
		blocker Blocker
		history []Action
		action  Action
		rule    string // "" = allowed
		reason  string // a piece of Reason
	}{
		// every kind allowed under a loose policy
		{"comment allowed", "no-issue", nil, nil, comment("a/b", 1), "", "allowed: comment on a/b#1 (1 of 5 on this thread)"},
		{"issue allowed", "no-pr", nil, nil, issue("a/b"), "", "allowed: new issue in a/b (1 of 5 for this run)"},
		{"pr allowed", "no-issue", nil, nil, pr("a/b"), "", "allowed: new pull request in a/b (1 of 5 for this run)"},

		// invalid actions
		{"unknown kind", "no-pr", nil, nil, Action{Kind: "merge", Repo: "a/b"}, RuleInvalidAction, `unknown action kind "merge"`},
		{"bad repo", "no-pr", nil, nil, comment("a", 1), RuleInvalidAction, `"a" is not a repository name`},
		{"comment without number", "no-pr", nil, nil, comment("a/b", 0), RuleInvalidAction, "needs the number"},
		{"issue with number", "no-pr", nil, nil, Action{Kind: KindIssue, Repo: "a/b", Number: 3}, RuleInvalidAction, "creating a new issue takes no number"},
		{"invalid beats blocked", "no-pr", fakeBlocker{"a/*": true}, nil, comment("a/b", -1), RuleInvalidAction, ""},

		// repos
		{"blocked owner", "no-pr", fakeBlocker{"a/*": true}, nil, comment("A/B", 1), RuleRepoBlocked, `A/B is blocked by the opt-out entry "a/*"`},
		{"blocked beats allow", "repo=a/b", fakeBlocker{"a/b": true}, nil, comment("a/b", 1), RuleRepoBlocked, ""},
		{"blocked here", "here-only", fakeBlocker{"owner/name": true}, nil, comment("owner/name", 12), RuleRepoBlocked, ""},
		{"deny case-insensitive", "deny=Foo/Bar", nil, nil, issue("fOO/bAR"), RuleRepoDenied, "deny=foo/bar forbids writing to fOO/bAR"},
		{"deny beats allow", "repo=foo/bar deny=foo/bar", nil, nil, comment("foo/bar", 1), RuleRepoDenied, ""},
		{"allow list case-insensitive", "repo=Foo/Bar", nil, nil, pr("FOO/bar"), "", "allowed"},
		{"not in allow list", "repo=foo/bar repo=foo/baz", nil, nil, issue("foo/qux"), RuleRepoNotAllowed, "writes are allowed only to foo/bar, foo/baz, not to foo/qux"},
		{"allow list beats here-only", "here-only repo=x/y", nil, nil, comment("owner/name", 12), RuleRepoNotAllowed, ""},

		// here-only / comment-only
		{"here-only here", "here-only", nil, nil, comment("OWNER/name", 12), "", "allowed"},
		{"here-only other thread", "here-only", nil, nil, comment("other/repo", 3), RuleHereOnly, "denied: here-only allows comments only on Owner/Name#12, not on other/repo#3"},
		{"here-only other number", "here-only", nil, nil, comment("owner/name", 13), RuleHereOnly, ""},
		{"here-only issue", "here-only", nil, nil, issue("owner/name"), RuleHereOnly, "not a new issue in owner/name"},
		{"here-only pr", "comment-only here-only", nil, nil, pr("owner/name"), RuleHereOnly, ""},
		{"comment-only issue", "comment-only", nil, nil, issue("a/b"), RuleCommentOnly, "comment-only allows comments and reviews only, not a new issue in a/b"},
		{"comment-only pr", "comment-only", nil, nil, pr("a/b"), RuleCommentOnly, "pull request in a/b"},
		{"comment-only comment", "comment-only", nil, nil, comment("a/b", 9), "", "allowed"},

		// limits
		{"no-issue", "no-issue", nil, nil, issue("a/b"), RuleIssueLimit, "no issues may be created in this run (issue-limit is 0)"},
		{"no-pr", "no-pr", nil, nil, pr("a/b"), RulePRLimit, "no pull requests may be created"},
		{"spec example 2", "repo=foo/bar pr-limit=0", nil, nil, pr("foo/bar"), RulePRLimit, ""},
		{"issue limit reached", "issue-limit=2", nil, []Action{issue("a/b"), issue("c/d")}, issue("e/f"), RuleIssueLimit, "issue-limit is 2 and this run already created 2 issues"},
		{"pr limit reached", "pr-limit=1", nil, []Action{pr("a/b")}, pr("a/b"), RulePRLimit, "pr-limit is 1 and this run already created 1 pull request"},
		{"pr below limit", "pr-limit=2", nil, []Action{pr("a/b"), issue("a/b")}, pr("a/b"), "", "2 of 2"},
		{"comment limit per thread", "comment-limit=2", nil, []Action{comment("a/b", 1), comment("A/B", 1)}, comment("a/b", 1), RuleCommentLimit, "comment-limit is 2 and this run already wrote 2 comments on a/b#1"},
		{"comment limit other thread", "comment-limit=2", nil, []Action{comment("a/b", 1), comment("a/b", 1)}, comment("a/b", 2), "", "1 of 2"},
		{"comment limit zero", "comment-limit=0", nil, nil, comment("a/b", 1), RuleCommentLimit, "no comments may be written"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := mustPolicy(t, tt.line, big, tt.blocker)
			l := Replay(tt.history)
			d := p.Decide(tt.action, l)
			assert.Equal(t, tt.rule == "", d.Allowed, d.Reason)
			assert.Equal(t, tt.rule, d.Rule)
			assert.Contains(t, d.Reason, tt.reason)
			if d.Allowed {
				assert.True(t, strings.HasPrefix(d.Reason, "allowed: "))
			} else {
				assert.True(t, strings.HasPrefix(d.Reason, "denied: "))
			}
			// Decide is pure: deciding again gives the same answer.
			assert.Equal(t, d, p.Decide(tt.action, l))
		})
	}
}

func TestCeilingsCombination(t *testing.T) {
	// Operator ceiling 1 issue; the user asks for 3: only one goes through.
	p := mustPolicy(t, "issue-limit=3", DefaultCeilings(), nil)
	l := NewLedger()
	assert.True(t, p.Apply(issue("a/b"), l).Allowed)
	d := p.Apply(issue("a/b"), l)
	assert.Equal(t, RuleIssueLimit, d.Rule)
	// Default comment ceiling 3 per thread.
	for i := range 3 {
		assert.True(t, p.Apply(comment("a/b", 1), l).Allowed, i)
	}
	assert.Equal(t, RuleCommentLimit, p.Apply(comment("a/b", 1), l).Rule)
	assert.True(t, p.Apply(comment("a/b", 2), l).Allowed)
}

func TestApplyRecordsOnlyAllowed(t *testing.T) {
	p := mustPolicy(t, "no-pr", DefaultCeilings(), nil)
	l := NewLedger()
	assert.False(t, p.Apply(pr("a/b"), l).Allowed)
	assert.False(t, p.Apply(comment("bad", 1), l).Allowed)
	assert.True(t, p.Apply(issue("a/b"), l).Allowed)
	assert.True(t, p.Apply(comment("a/b", 1), l).Allowed)
	assert.Equal(t, 1, l.Issues())
	assert.Equal(t, 0, l.PRs())
	assert.Equal(t, 1, l.Comments(Thread{"A/b", 1}))

	// A nil ledger counts as empty and records nothing.
	assert.True(t, p.Apply(issue("a/b"), nil).Allowed)
	assert.True(t, p.Decide(issue("a/b"), nil).Allowed)
}

func TestApplyConcurrent(t *testing.T) {
	p := mustPolicy(t, "comment-limit=7", Ceilings{CommentLimit: 100, MaxWrites: 100}, nil)
	l := NewLedger()
	var mu sync.Mutex
	allowed := 0
	var wg sync.WaitGroup
	for range 50 {
		wg.Go(func() {
			if p.Apply(comment("a/b", 1), l).Allowed {
				mu.Lock()
				allowed++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	assert.Equal(t, 7, allowed)
	assert.Equal(t, 7, l.Comments(Thread{"a/b", 1}))
}

func TestHereOnlyWithoutThread(t *testing.T) {
	p := Effective(Flags{HereOnly: true}, DefaultCeilings(), Thread{}, nil)
	d := p.Decide(comment("a/b", 1), nil)
	assert.Equal(t, RuleHereOnly, d.Rule)
	assert.Contains(t, d.Reason, "the triggering issue or pull request")
}

// TestMaxWritesAndControlRepo: one run may not write more than max-writes
// in all (without it a run could comment on 25 issues), and never to the control repository, whatever the flags.
func TestMaxWritesAndControlRepo(t *testing.T) {
	c := DefaultCeilings()
	c.ControlRepo = "Ops/Control"
	p := Effective(Flags{}, c, Thread{Repo: "a/b", Number: 1}, nil)
	l := NewLedger()
	for i := 1; i <= 25; i++ {
		d := p.Apply(Action{Kind: KindComment, Repo: "a/b", Number: i}, l)
		if i <= DefaultMaxWrites {
			require.True(t, d.Allowed, "write %d: %s", i, d.Reason)
		} else {
			require.False(t, d.Allowed, "write %d", i)
			assert.Equal(t, RuleMaxWrites, d.Rule)
		}
	}
	fresh := NewLedger()
	for _, a := range []Action{{Kind: KindIssue, Repo: "ops/control"}, {Kind: KindComment, Repo: "OPS/CONTROL", Number: 3}, {Kind: KindPullRequest, Repo: "ops/control"}} {
		d := p.Apply(a, fresh)
		assert.False(t, d.Allowed)
		assert.Equal(t, RuleControlRepo, d.Rule)
	}
	f, err := ParseFlagLine("repo=ops/control")
	require.NoError(t, err)
	assert.Equal(t, RuleControlRepo, Effective(f, c, Thread{Repo: "ops/control", Number: 1}, nil).Decide(Action{Kind: KindComment, Repo: "ops/control", Number: 1}, nil).Rule)
}

func TestDecideNewKinds(t *testing.T) {
	review := func(repo string, n int) Action { return Action{Kind: KindReview, Repo: repo, Number: n} }
	push := func(repo string, n int) Action { return Action{Kind: KindPush, Repo: repo, Number: n} }
	labels := func(repo string, n, changes int) Action {
		return Action{Kind: KindLabels, Repo: repo, Number: n, Changes: changes}
	}
	loose := Ceilings{CommentLimit: 2, IssueLimit: 5, PRLimit: 2, MaxWrites: 100, LabelLimit: 5, ReviewComments: 30, AllowPush: true}
	tests := []struct {
		name    string
		line    string
		c       Ceilings
		history []Action
		action  Action
		rule    string // "" = allowed
		reason  string
	}{
		{"review allowed", "no-issue", loose, nil, review("owner/name", 12), "", "review of owner/name#12 (counts as comment 1 of 2"},
		{"review under comment-only", "comment-only", loose, nil, review("owner/name", 12), "", ""},
		{"review under here-only here", "here-only", loose, nil, review("Owner/Name", 12), "", ""},
		{"review under here-only elsewhere", "here-only", loose, nil, review("owner/name", 13), RuleHereOnly, "not on owner/name#13"},
		{"review counts as a comment", "no-issue", loose, []Action{comment("owner/name", 12), comment("owner/name", 12)}, review("owner/name", 12), RuleCommentLimit, "comment-limit is 2"},
		{"comment after review counts", "no-issue", loose, []Action{review("owner/name", 12), comment("owner/name", 12)}, comment("owner/name", 12), RuleCommentLimit, ""},
		{"review without number", "", loose, nil, review("owner/name", 0), RuleInvalidAction, "a review needs the number"},
		{"review deny=", "deny=owner/name", loose, nil, review("owner/name", 12), RuleRepoDenied, ""},

		{"push allowed", "", loose, nil, push("owner/name", 12), "", "push to the branch of owner/name#12 (1 of 2 pull requests"},
		{"push off by default", "", DefaultCeilings(), nil, push("owner/name", 12), RuleAllowPush, "allow-push"},
		{"push under no-pr", "no-pr", loose, nil, push("owner/name", 12), RulePRLimit, "pr-limit is 0"},
		{"push under comment-only", "comment-only", loose, nil, push("owner/name", 12), RuleCommentOnly, "not a push to the branch of owner/name#12"},
		{"push under here-only", "here-only", loose, nil, push("owner/name", 12), RuleHereOnly, ""},
		{"push to another PR", "", loose, nil, push("owner/name", 13), RuleNotHere, "only to the branch of Owner/Name#12"},
		{"push to another repository", "", loose, nil, push("other/repo", 12), RuleNotHere, ""},
		{"push counts as a PR", "", loose, []Action{pr("owner/name"), pr("owner/name")}, push("owner/name", 12), RulePRLimit, "a push counts as a pull request; pr-limit is 2"},

		{"labels allowed", "", loose, nil, labels("owner/name", 12, 2), "", "2 label changes on owner/name#12 (2 of 5"},
		{"labels under comment-only", "comment-only", loose, nil, labels("owner/name", 12, 1), RuleCommentOnly, "not 1 label change on owner/name#12"},
		{"labels under here-only", "here-only", loose, nil, labels("owner/name", 12, 1), RuleHereOnly, ""},
		{"labels elsewhere", "", loose, nil, labels("owner/name", 3, 1), RuleNotHere, "repo= flag names"},
		{"labels in a repo= repository", "repo=other/repo repo=owner/name", loose, nil, labels("other/repo", 3, 1), "", ""},
		{"labels under deny=", "deny=owner/name", loose, nil, labels("owner/name", 12, 1), RuleRepoDenied, ""},
		{"labels over the limit", "", loose, []Action{labels("owner/name", 12, 4)}, labels("owner/name", 12, 2), RuleLabelLimit, "already made 4 and this call names 2"},
		{"labels up to the limit", "", loose, []Action{labels("owner/name", 12, 4)}, labels("owner/name", 12, 1), "", ""},
		{"labels limit 0", "", Ceilings{MaxWrites: 5}, nil, labels("owner/name", 12, 1), RuleLabelLimit, "label-limit is 0"},
		{"labels without a count", "", loose, nil, labels("owner/name", 12, 0), RuleInvalidAction, "names 1 to"},
		{"count on a comment", "", loose, nil, Action{Kind: KindComment, Repo: "owner/name", Number: 12, Changes: 2}, RuleInvalidAction, "only a label change"},
		{"labels count toward max-writes", "", Ceilings{MaxWrites: 1, LabelLimit: 5, CommentLimit: 3}, []Action{comment("owner/name", 12)}, labels("owner/name", 12, 1), RuleMaxWrites, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var f Flags
			if tt.line != "" {
				var err error
				f, err = ParseFlagLine(tt.line)
				require.NoError(t, err)
			}
			p := Effective(f, tt.c, Thread{Repo: "Owner/Name", Number: 12}, nil)
			d := p.Decide(tt.action, Replay(tt.history))
			assert.Equal(t, tt.rule == "", d.Allowed, d.Reason)
			assert.Equal(t, tt.rule, d.Rule, d.Reason)
			assert.Contains(t, d.Reason, tt.reason)
		})
	}
}
