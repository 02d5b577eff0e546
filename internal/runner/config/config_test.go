package config

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestLoadDefaults(t *testing.T) {
	c, err := Load(env(map[string]string{"BOT_LOGIN": "@Bot", "GITHUB_REPOSITORY": "acme/control"}))
	require.NoError(t, err)
	assert.Equal(t, "Bot", c.BotLogin)
	assert.Equal(t, "acme/control", c.ControlRepo)
	assert.Equal(t, 3, c.CommentLimit)
	assert.Equal(t, 1, c.IssueLimit)
	assert.Equal(t, 1, c.PRLimit)
	assert.Equal(t, 30*time.Minute, c.Timeout)
	assert.Equal(t, "claude", c.Engine)
	assert.False(t, c.AllowPushToTarget)
	assert.Zero(t, c.MaxBudgetUSD)
	assert.Empty(t, c.AllowedTools)

	c, err = Load(env(map[string]string{"BOT_LOGIN": "b", "CONTROL_REPO": "a/b", "MR_ALLOWED_TOOLS": " Edit, Bash(git commit:*) ,"}))
	require.NoError(t, err)
	assert.Equal(t, []string{"Edit", "Bash(git commit:*)"}, c.AllowedTools)
}

func TestLoadErrorsNameEveryBadVariable(t *testing.T) {
	cases := []struct {
		name string
		env  map[string]string
		want []string
	}{
		{"missing bot and control", map[string]string{}, []string{"BOT_LOGIN", "CONTROL_REPO"}},
		{"bad values", map[string]string{"BOT_LOGIN": "b", "CONTROL_REPO": "a/b", "MR_ENGINE": "gpt", "MR_MAX_TURNS": "0", "MR_TIMEOUT": "forever", "MR_ALLOW_PUSH_TO_TARGET": "yes", "MR_COMMENT_LIMIT": "-1", "MR_MAX_BUDGET_USD": "-3"},
			[]string{"MR_ENGINE", "MR_MAX_TURNS", "MR_TIMEOUT", "MR_ALLOW_PUSH_TO_TARGET", "MR_COMMENT_LIMIT", "MR_MAX_BUDGET_USD"}},
		{"bad tool rule", map[string]string{"BOT_LOGIN": "b", "CONTROL_REPO": "a/b", "MR_ALLOWED_TOOLS": "Edit,Bash(git"}, []string{"MR_ALLOWED_TOOLS", "Bash(git"}},
		{"control not owner/name", map[string]string{"BOT_LOGIN": "b", "CONTROL_REPO": "nope"}, []string{"CONTROL_REPO"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Load(env(c.env))
			require.Error(t, err)
			for _, w := range c.want {
				assert.Contains(t, err.Error(), w)
			}
		})
	}
}

func TestMarkdownTableListsEverySetting(t *testing.T) {
	tbl := MarkdownTable()
	for _, s := range Settings {
		assert.Contains(t, tbl, "`"+s.Env+"`")
	}
}

// TestControlIDsFromTheWorkflow: the control repo's ids come from the
// Actions environment only when it is the repository the workflow runs in
// and both ids are positive numbers; anything else is looked up (zero),
// never taken as an id.
func TestControlIDsFromTheWorkflow(t *testing.T) {
	for _, tc := range []struct {
		name             string
		control, repo    string
		id, owner        string
		wantID, wantOwnr int64
	}{
		{"the workflow's repository", "", "acme/control", "11", "22", 11, 22},
		{"named again in another case", "Acme/Control", "acme/control", "11", "22", 11, 22},
		{"another repository", "acme/other", "acme/control", "11", "22", 0, 0},
		{"no repository id", "", "acme/control", "", "22", 0, 0},
		{"no owner id", "", "acme/control", "11", "", 0, 0},
		{"garbled id", "", "acme/control", "11x", "22", 0, 0},
		{"zero id", "", "acme/control", "0", "22", 0, 0},
		{"negative owner id", "", "acme/control", "11", "-22", 0, 0},
		{"spaces around", "", "acme/control", " 11 ", "22\n", 11, 22},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Load(env(map[string]string{"BOT_LOGIN": "b", "CONTROL_REPO": tc.control, "GITHUB_REPOSITORY": tc.repo,
				"GITHUB_REPOSITORY_ID": tc.id, "GITHUB_REPOSITORY_OWNER_ID": tc.owner}))
			require.NoError(t, err)
			assert.Equal(t, tc.wantID, c.ControlIDs.Repo)
			assert.Equal(t, tc.wantOwnr, c.ControlIDs.Owner)
		})
	}
}

// TestPublishHandOffs: assemble's outputs as publish reads them; only
// exact words count, and empty is "not known".
func TestPublishHandOffs(t *testing.T) {
	for _, tc := range []struct {
		newIssue, sharded string
		wantNew, wantOne  bool
	}{
		{"true", "false", true, true},
		{"false", "true", false, false},
		{"", "", false, false},
	} {
		c, err := Load(env(map[string]string{"BOT_LOGIN": "b", "CONTROL_REPO": "a/b", "MR_LOG_ISSUE_NEW": tc.newIssue, "MR_SHARDED": tc.sharded}))
		require.NoError(t, err)
		assert.Equal(t, tc.wantNew, c.LogIssueNew, "log_issue_new=%q", tc.newIssue)
		assert.Equal(t, tc.wantOne, c.Unsharded, "sharded=%q", tc.sharded)
	}
	_, err := Load(env(map[string]string{"BOT_LOGIN": "b", "CONTROL_REPO": "a/b", "MR_LOG_ISSUE_NEW": "yes", "MR_SHARDED": "no"}))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "MR_LOG_ISSUE_NEW")
	assert.Contains(t, err.Error(), "MR_SHARDED")
}
