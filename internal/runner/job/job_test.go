package job

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/core/policy"
	"github.com/mention-runner/mention-runner/internal/core/transport"
)

func ctxJSON(t *testing.T, body string, pr bool) []byte {
	t.Helper()
	c := map[string]any{
		"repository": map[string]any{"full_name": "Acme/Widgets"},
		"issue":      map[string]any{"number": 7},
		"trigger_comment": map[string]any{
			"id": 99, "node_id": "IC_kwDOabc", "html_url": "https://github.com/Acme/Widgets/issues/7#issuecomment-99",
			"body": body, "created_at": "2026-11-01T10:00:00Z", "user": map[string]any{"login": "alice"},
		},
	}
	if pr {
		c["issue"] = map[string]any{"number": 7, "pull_request": map[string]any{"url": "x"}}
	}
	b, err := json.Marshal(c)
	require.NoError(t, err)
	return b
}

func TestFromContext(t *testing.T) {
	j, err := FromContext(ctxJSON(t, "@bot !cfg here-only comment-limit=1\nplease summarise", false), "bot")
	require.NoError(t, err)
	assert.Equal(t, transport.JobID("IC_kwDOabc"), j.JobID)
	assert.Equal(t, "Acme/Widgets", j.Repo)
	assert.Equal(t, 7, j.Number)
	assert.False(t, j.IsPR)
	assert.Equal(t, "alice", j.Author)
	assert.Equal(t, "please summarise", j.Task)
	assert.True(t, j.Flags.HereOnly)

	p := j.Policy(policy.DefaultCeilings(), nil)
	assert.True(t, p.HereOnly)
	assert.Equal(t, 1, p.CommentLimit)
	assert.True(t, p.Decide(policy.Action{Kind: policy.KindComment, Repo: "acme/widgets", Number: 7}, policy.NewLedger()).Allowed)
	assert.False(t, p.Decide(policy.Action{Kind: policy.KindIssue, Repo: "acme/widgets"}, policy.NewLedger()).Allowed)

	j, err = FromContext(ctxJSON(t, "@bot look", true), "bot")
	require.NoError(t, err)
	assert.True(t, j.IsPR)
}

func TestFromContextErrors(t *testing.T) {
	_, err := FromContext(ctxJSON(t, "no mention here", false), "bot")
	assert.ErrorIs(t, err, ErrNoMention)

	_, err = FromContext(ctxJSON(t, "@bot !cfg comment-onyl", false), "bot")
	var fe *policy.FlagError
	require.True(t, errors.As(err, &fe), "an invalid !cfg is reported as a FlagError: %v", err)
	assert.Equal(t, "comment-onyl", fe.Word)

	_, err = FromContext([]byte(`[1]`), "bot")
	assert.ErrorContains(t, err, "not a JSON object")

	_, err = FromContext([]byte(`{"issue":{"number":1}}`), "bot")
	assert.ErrorContains(t, err, "repository.full_name")
	assert.ErrorContains(t, err, "trigger_comment")

	_, err = FromContext([]byte(`{"repository":{"full_name":"bad"},"issue":{"number":1},"trigger_comment":{"node_id":"x","body":"@bot","user":{"login":"a"}}}`), "bot")
	assert.ErrorContains(t, err, "not a valid owner/name")
}

func TestLabelsAndCanLabel(t *testing.T) {
	ctx := []byte(`{"repository":{"full_name":"Octo/App","permissions":{"triage":false,"pull":true}},"labels":[{"name":"bug"},{"name":""},{"name":"good first issue"}]}`)
	names, missing := Labels(ctx)
	assert.Equal(t, map[string][]string{"octo/app": {"bug", "good first issue"}}, names)
	assert.Empty(t, missing)
	can, known := CanLabel(ctx)
	assert.False(t, can)
	assert.True(t, known)
	_, known = CanLabel([]byte(`{"repository":{"full_name":"o/n"}}`))
	assert.False(t, known, "a webhook's repository object says nothing")
	names, _ = Labels([]byte(`{"repository":{"full_name":"o/n"}}`))
	assert.Empty(t, names, "no labels gathered: none known")
}

// The labels of the repositories repo= names come from repo_labels, and
// why one is missing from the truncation record; the thread repository's
// own labels are the ones read with the thread.
func TestLabelsOfRepoFlagRepositories(t *testing.T) {
	cases := []struct {
		name        string
		ctx         string
		wantNames   map[string][]string
		wantMissing map[string]string
	}{
		{"thread and a repo= repository",
			`{"repository":{"full_name":"octo/app"},"labels":[{"name":"bug"}],"repo_labels":{"Octo/Lib":[{"name":"docs"},{"name":""}]}}`,
			map[string][]string{"octo/app": {"bug"}, "octo/lib": {"docs"}}, map[string]string{}},
		{"an unreadable one says why",
			`{"repository":{"full_name":"octo/app"},"labels":[],"repo_labels":{},"truncation":{"repo_labels":{"octo/secret":{"total":0,"kept":0,"missing":"not readable by the bot (HTTP 404)"}}}}`,
			map[string][]string{"octo/app": {}}, map[string]string{"octo/secret": "not readable by the bot (HTTP 404)"}},
		{"a counted one is not missing",
			`{"repository":{"full_name":"octo/app"},"repo_labels":{"octo/lib":[]},"truncation":{"repo_labels":{"octo/lib":{"total":3,"kept":0}}}}`,
			map[string][]string{"octo/lib": {}}, map[string]string{}},
		{"the thread's own labels win over a repo_labels entry for it",
			`{"repository":{"full_name":"octo/app"},"labels":[{"name":"bug"}],"repo_labels":{"octo/app":[{"name":"forged"}]}}`,
			map[string][]string{"octo/app": {"bug"}}, map[string]string{}},
		{"not JSON", `{`, map[string][]string{}, map[string]string{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			names, missing := Labels([]byte(tc.ctx))
			assert.Equal(t, tc.wantNames, names)
			assert.Equal(t, tc.wantMissing, missing)
		})
	}
}
