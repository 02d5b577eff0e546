package blocklist

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestBlocked(t *testing.T) {
	l := &List{Entries: []Entry{{Pattern: "alice/*"}, {Pattern: "acme/widgets"}}}
	cases := []struct {
		repo    string
		pattern string
		blocked bool
	}{
		{"alice/anything", "alice/*", true},
		{"Alice/Repo", "alice/*", true},
		{"acme/widgets", "acme/widgets", true},
		{"ACME/Widgets", "acme/widgets", true},
		{"acme/gadgets", "", false},
		{"alicex/repo", "", false},
	}
	for _, c := range cases {
		p, ok := l.Blocked(c.repo)
		assert.Equal(t, c.blocked, ok, c.repo)
		assert.Equal(t, c.pattern, p, c.repo)
	}
	var nilList *List
	_, ok := nilList.Blocked("a/b")
	assert.False(t, ok)
}

func TestAuthorityPatterns(t *testing.T) {
	cases := []struct {
		name string
		a    Authority
		want []string
	}{
		{"passer-by blocks only their own account", Authority{Commenter: "Bob", Repo: "acme/widgets"}, []string{"bob/*"}},
		{"collaborator also blocks the repo", Authority{Commenter: "bob", Repo: "acme/widgets", CanWrite: true}, []string{"bob/*", "acme/widgets"}},
		{"org admin blocks the org", Authority{Commenter: "bob", Repo: "acme/widgets", CanWrite: true, OrgAdmin: true}, []string{"bob/*", "acme/*", "acme/widgets"}},
		{"owner's own repo is covered by owner/*", Authority{Commenter: "bob", Repo: "bob/app", CanWrite: true}, []string{"bob/*"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { assert.Equal(t, c.want, c.a.Patterns()) })
	}
}

func TestAddRemove(t *testing.T) {
	l := &List{}
	at := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	assert.Equal(t, 2, l.Add([]string{"Bob/*", "acme/widgets"}, "bob", "https://x", at))
	assert.Equal(t, 0, l.Add([]string{"bob/*"}, "bob", "https://y", at), "no duplicates")
	assert.Equal(t, "acme/widgets", l.Entries[0].Pattern)
	assert.Equal(t, 1, l.Remove([]string{"ACME/widgets", "nobody/*"}, nil))
	assert.Len(t, l.Entries, 1)
}

// TestRemoveKeepsOtherIDs: a name that changed hands cannot lift the block
// of the account or repository that held it; RemoveIDs lifts by id
// whatever the name is now.
func TestRemoveKeepsOtherIDs(t *testing.T) {
	l := &List{Entries: []Entry{{Pattern: "bob/*", ID: 7}, {Pattern: "acme/app", ID: 70}, {Pattern: "old/*"}}}
	assert.Equal(t, 0, l.Remove([]string{"bob/*", "acme/app"}, map[string]int64{"bob/*": 8, "acme/app": 71}))
	assert.Equal(t, 0, l.Remove([]string{"bob/*"}, nil), "an unknown id does not lift an entry that has one")
	assert.Equal(t, 1, l.Remove([]string{"old/*"}, nil), "entries without ids lift by name")
	assert.Equal(t, 1, l.Remove([]string{"bob/*"}, map[string]int64{"bob/*": 7}))
	assert.Equal(t, 1, l.RemoveIDs(nil, []int64{70}))
	assert.Empty(t, l.Entries)
}
