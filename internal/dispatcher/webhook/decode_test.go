package webhook

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// example reads one real GitHub delivery from testdata/examples (see
// scripts/fixtures for where they come from).
func example(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "examples", name+".json"))
	require.NoError(t, err)
	return b
}

// mutate sets (or, with value == deleteField, removes) the field at a dotted
// path in a JSON document.
func mutate(t testing.TB, doc []byte, path string, value any) []byte {
	t.Helper()
	var root map[string]any
	require.NoError(t, json.Unmarshal(doc, &root))
	keys := strings.Split(path, ".")
	m := root
	for _, k := range keys[:len(keys)-1] {
		next, ok := m[k].(map[string]any)
		require.Truef(t, ok, "path %s: %s is not an object", path, k)
		m = next
	}
	last := keys[len(keys)-1]
	if value == deleteField {
		delete(m, last)
	} else {
		m[last] = value
	}
	out, err := json.Marshal(root)
	require.NoError(t, err)
	return out
}

type deleteMarker struct{}

var deleteField = deleteMarker{}

func ts(s string) time.Time {
	at, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return at
}

func TestDecodeRealExamples(t *testing.T) {
	base := Trigger{Repo: "Codertocat/Hello-World", RepoOwnerType: "User", Author: "Codertocat", AuthorType: "User", AuthorID: 21031067}
	with := func(f func(*Trigger)) *Trigger { tr := base; f(&tr); return &tr }
	cases := []struct {
		event, file string
		want        *Trigger
	}{
		{"issue_comment", "issue_comment.created", with(func(t *Trigger) {
			t.Event, t.Action, t.Number = "issue_comment", "created", 1
			t.CommentID, t.NodeID = 492700400, "MDEyOklzc3VlQ29tbWVudDQ5MjcwMDQwMA=="
			t.Body = "You are totally right! I'll get this fixed right away."
			t.URL = "https://github.com/Codertocat/Hello-World/issues/1#issuecomment-492700400"
			t.CreatedAt = ts("2019-05-15T15:20:21Z")
		})},
		{"issues", "issues.opened", with(func(t *Trigger) {
			t.Event, t.Action, t.Number = "issues", "opened", 1
			t.NodeID = "MDU6SXNzdWU0NDQ1MDAwNDE="
			t.Body = "It looks like you accidently spelled 'commit' with two 't's."
			t.URL = "https://github.com/Codertocat/Hello-World/issues/1"
			t.CreatedAt = ts("2019-05-15T15:20:18Z")
		})},
		{"pull_request", "pull_request.opened", with(func(t *Trigger) {
			t.Event, t.Action, t.Number, t.IsPR = "pull_request", "opened", 2, true
			t.NodeID = "MDExOlB1bGxSZXF1ZXN0Mjc5MTQ3NDM3"
			t.Body = "This is a pretty simple change that we need to pull into master."
			t.URL = "https://github.com/Codertocat/Hello-World/pull/2"
			t.CreatedAt = ts("2019-05-15T15:20:33Z")
		})},
		{"pull_request_review", "pull_request_review.submitted", with(func(t *Trigger) {
			t.Event, t.Action, t.Number, t.IsPR = "pull_request_review", "submitted", 2, true
			t.CommentID, t.NodeID = 237895671, "MDE3OlB1bGxSZXF1ZXN0UmV2aWV3MjM3ODk1Njcx"
			t.Body = "" // GitHub sent null
			t.URL = "https://github.com/Codertocat/Hello-World/pull/2#pullrequestreview-237895671"
			t.CreatedAt = ts("2019-05-15T15:20:38Z")
		})},
		{"pull_request_review_comment", "pull_request_review_comment.created", with(func(t *Trigger) {
			t.Event, t.Action, t.Number, t.IsPR = "pull_request_review_comment", "created", 2, true
			t.CommentID, t.NodeID = 284312630, "MDI0OlB1bGxSZXF1ZXN0UmV2aWV3Q29tbWVudDI4NDMxMjYzMA=="
			t.Body = "Maybe you should use more emoji on this line."
			t.URL = "https://github.com/Codertocat/Hello-World/pull/2#discussion_r284312630"
			t.CreatedAt = ts("2019-05-15T15:20:37Z")
		})},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			got, err := Decode(c.event, example(t, c.file))
			require.NoError(t, err)
			assert.Equal(t, c.want, got)
		})
	}
}

func TestDecodeVariants(t *testing.T) {
	comment := example(t, "issue_comment.created")
	cases := []struct {
		name  string
		event string
		body  []byte
		check func(t *testing.T, tr *Trigger)
	}{
		{"comment on a pull request", "issue_comment",
			mutate(t, comment, "issue.pull_request", map[string]any{"url": "https://api.github.com/repos/o/r/pulls/1"}),
			func(t *testing.T, tr *Trigger) { assert.True(t, tr.IsPR) }},
		{"null pull_request key is an issue", "issue_comment",
			mutate(t, comment, "issue.pull_request", nil),
			func(t *testing.T, tr *Trigger) { assert.False(t, tr.IsPR) }},
		{"private org repo", "issue_comment",
			mutate(t, mutate(t, comment, "repository.private", true), "repository.owner.type", "Organization"),
			func(t *testing.T, tr *Trigger) {
				assert.True(t, tr.RepoPrivate)
				assert.Equal(t, "Organization", tr.RepoOwnerType)
			}},
		{"bot author", "issue_comment",
			mutate(t, comment, "comment.user.type", "Bot"),
			func(t *testing.T, tr *Trigger) { assert.Equal(t, "Bot", tr.AuthorType) }},
		{"null issue body", "issues",
			mutate(t, example(t, "issues.opened"), "issue.body", nil),
			func(t *testing.T, tr *Trigger) { assert.Empty(t, tr.Body) }},
		{"body change recorded", "issues",
			mutate(t, example(t, "issues.opened"), "changes", map[string]any{"body": map[string]any{"from": "old"}}),
			func(t *testing.T, tr *Trigger) { assert.True(t, tr.Edited) }},
		{"edited comment", "issue_comment",
			mutate(t, comment, "action", "edited"),
			func(t *testing.T, tr *Trigger) { assert.True(t, tr.Edited) }},
		{"edited review comment", "pull_request_review_comment",
			mutate(t, example(t, "pull_request_review_comment.created"), "action", "edited"),
			func(t *testing.T, tr *Trigger) { assert.True(t, tr.Edited) }},
		{"edited review", "pull_request_review",
			mutate(t, example(t, "pull_request_review.submitted"), "action", "edited"),
			func(t *testing.T, tr *Trigger) { assert.True(t, tr.Edited) }},
		{"offset time normalised to UTC", "issue_comment",
			mutate(t, comment, "comment.created_at", "2019-05-15T17:20:21+02:00"),
			func(t *testing.T, tr *Trigger) {
				assert.Equal(t, ts("2019-05-15T15:20:21Z"), tr.CreatedAt)
				assert.Equal(t, time.UTC, tr.CreatedAt.Location())
			}},
		{"review with a body", "pull_request_review",
			mutate(t, example(t, "pull_request_review.submitted"), "review.body", "@bot please fix"),
			func(t *testing.T, tr *Trigger) { assert.Equal(t, "@bot please fix", tr.Body) }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tr, err := Decode(c.event, c.body)
			require.NoError(t, err)
			c.check(t, tr)
		})
	}
}

func TestDecodeUnsupported(t *testing.T) {
	cases := []struct {
		name, event string
		body        []byte
	}{
		{"deleted comment", "issue_comment", mutate(t, example(t, "issue_comment.created"), "action", "deleted")},
		{"closed issue", "issues", mutate(t, example(t, "issues.opened"), "action", "closed")},
		{"synchronized PR", "pull_request", mutate(t, example(t, "pull_request.opened"), "action", "synchronize")},
		{"dismissed review", "pull_request_review", mutate(t, example(t, "pull_request_review.submitted"), "action", "dismissed")},
		{"ping", "ping", []byte(`{"zen":"Keep it logically awesome."}`)},
		{"push", "push", []byte(`{"ref":"refs/heads/main"}`)},
		{"no event header", "", []byte(`{}`)},
		// An ignored action is ignored whatever the rest looks like.
		{"ignored action with odd fields", "issue_comment", []byte(`{"action":"deleted","comment":7}`)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tr, err := Decode(c.event, c.body)
			assert.Nil(t, tr)
			require.ErrorIs(t, err, ErrUnsupported)
			var de *DecodeError
			assert.False(t, errors.As(err, &de))
		})
	}
}

func TestDecodeErrors(t *testing.T) {
	comment := example(t, "issue_comment.created")
	review := example(t, "pull_request_review.submitted")
	cases := []struct {
		name, event string
		body        []byte
		field       string // "" for whole-document errors
		msg         string // substring of the message
	}{
		{"malformed JSON", "issue_comment", []byte(`{"action":"created",`), "", "malformed JSON"},
		{"not an object", "issue_comment", []byte(`[1,2]`), "", "want an object"},
		{"empty body", "issues", nil, "", "malformed JSON"},
		{"no action", "issue_comment", mutate(t, comment, "action", deleteField), "action", "is missing"},
		{"action not a string", "issue_comment", mutate(t, comment, "action", 5), "action", "want a string"},
		{"no repository", "issue_comment", mutate(t, comment, "repository", deleteField), "repository", "is missing"},
		{"no full_name", "issue_comment", mutate(t, comment, "repository.full_name", deleteField), "repository.full_name", "is missing"},
		{"bad full_name", "issue_comment", mutate(t, comment, "repository.full_name", "a/b/c"), "repository.full_name", "not owner/name"},
		{"full_name without owner", "issue_comment", mutate(t, comment, "repository.full_name", "/b"), "repository.full_name", "not owner/name"},
		{"no private flag", "issue_comment", mutate(t, comment, "repository.private", deleteField), "repository.private", "is missing"},
		{"private not bool", "issue_comment", mutate(t, comment, "repository.private", "yes"), "repository.private", "want a boolean"},
		{"no owner", "issue_comment", mutate(t, comment, "repository.owner", deleteField), "repository.owner", "is missing"},
		{"no owner type", "issue_comment", mutate(t, comment, "repository.owner.type", deleteField), "repository.owner.type", "is missing"},
		{"no issue", "issue_comment", mutate(t, comment, "issue", deleteField), "issue", "is missing"},
		{"no issue number", "issue_comment", mutate(t, comment, "issue.number", deleteField), "issue.number", "is missing"},
		{"zero issue number", "issue_comment", mutate(t, comment, "issue.number", 0), "issue.number", "not a positive"},
		{"issue number as string", "issue_comment", mutate(t, comment, "issue.number", "1"), "issue.number", "want an integer"},
		{"no comment", "issue_comment", mutate(t, comment, "comment", deleteField), "comment", "is missing"},
		{"no comment id", "issue_comment", mutate(t, comment, "comment.id", deleteField), "comment.id", "is missing"},
		{"negative comment id", "issue_comment", mutate(t, comment, "comment.id", -3), "comment.id", "not a positive"},
		{"no node_id", "issue_comment", mutate(t, comment, "comment.node_id", deleteField), "comment.node_id", "is missing"},
		{"empty node_id", "issue_comment", mutate(t, comment, "comment.node_id", ""), "comment.node_id", "is empty"},
		{"no user", "issue_comment", mutate(t, comment, "comment.user", nil), "comment.user", "is missing"},
		{"no login", "issue_comment", mutate(t, comment, "comment.user.login", deleteField), "comment.user.login", "is missing"},
		{"no user type", "issue_comment", mutate(t, comment, "comment.user.type", deleteField), "comment.user.type", "is missing"},
		{"no comment body", "issue_comment", mutate(t, comment, "comment.body", deleteField), "comment.body", "is missing"},
		{"body not a string", "issue_comment", mutate(t, comment, "comment.body", 12), "comment.body", "not a string or null"},
		{"no html_url", "issue_comment", mutate(t, comment, "comment.html_url", deleteField), "comment.html_url", "is missing"},
		{"no created_at", "issue_comment", mutate(t, comment, "comment.created_at", deleteField), "comment.created_at", "is missing"},
		{"bad created_at", "issue_comment", mutate(t, comment, "comment.created_at", "yesterday"), "comment.created_at", "not an RFC 3339 time"},
		{"review without submitted_at", "pull_request_review", mutate(t, review, "review.submitted_at", nil), "review.submitted_at", "is missing"},
		{"review without pull_request", "pull_request_review", mutate(t, review, "pull_request", deleteField), "pull_request", "is missing"},
		{"issue body missing", "issues", mutate(t, example(t, "issues.opened"), "issue.body", deleteField), "issue.body", "is missing"},
		{"pr number missing", "pull_request", mutate(t, example(t, "pull_request.opened"), "pull_request.number", deleteField), "pull_request.number", "is missing"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tr, err := Decode(c.event, c.body)
			assert.Nil(t, tr)
			var de *DecodeError
			require.ErrorAs(t, err, &de)
			assert.Equal(t, c.field, de.Field)
			assert.Equal(t, c.event, de.Event)
			assert.Contains(t, err.Error(), c.msg)
			if c.field != "" {
				assert.Contains(t, err.Error(), c.field, "the message names the field")
			}
			assert.NotErrorIs(t, err, ErrUnsupported)
		})
	}
}

func FuzzDecode(f *testing.F) {
	events := []string{"issue_comment", "issues", "pull_request", "pull_request_review", "pull_request_review_comment"}
	files := []string{"issue_comment.created", "issues.opened", "pull_request.opened", "pull_request_review.submitted", "pull_request_review_comment.created"}
	for i, name := range files {
		f.Add(events[i], example(f, name))
	}
	f.Add("issue_comment", []byte(`{"action":"created"}`))
	f.Add("issues", []byte(`{"action":"opened","issue":{"number":1e99}}`))
	f.Add("push", []byte(`{}`))
	f.Fuzz(func(t *testing.T, event string, body []byte) {
		tr, err := Decode(event, body)
		if err != nil {
			require.Nil(t, tr)
			var de *DecodeError
			if !errors.Is(err, ErrUnsupported) && !errors.As(err, &de) {
				t.Fatalf("error is neither ErrUnsupported nor *DecodeError: %v", err)
			}
			return
		}
		// A decoded trigger always has what the dispatcher needs.
		require.NotNil(t, tr)
		assert.Equal(t, event, tr.Event)
		assert.Positive(t, tr.Number)
		assert.NotEmpty(t, tr.NodeID)
		assert.NotEmpty(t, tr.Author)
		assert.NotEmpty(t, tr.URL)
		owner, name, ok := strings.Cut(tr.Repo, "/")
		assert.True(t, ok && owner != "" && name != "" && !strings.Contains(name, "/"), "repo %q", tr.Repo)
		if tr.CommentID == 0 {
			assert.Contains(t, []string{"issues", "pull_request"}, event)
		}
	})
}

func BenchmarkDecode(b *testing.B) {
	body := example(b, "pull_request_review_comment.created")
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Decode("pull_request_review_comment", body); err != nil {
			b.Fatal(err)
		}
	}
}
