package dispatch

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/core/blockfile"
	"github.com/mention-runner/mention-runner/internal/core/blocklist"
)

func (e *env) entries() map[string]int64 {
	l, err := (&blockfile.Store{Client: e.gh, Repo: control}).Load(e.ctx())
	require.NoError(e.t, err)
	out := map[string]int64{}
	for _, en := range l.Entries {
		out[en.Pattern] = en.ID
	}
	return out
}

// TestOwnLoginEntryKeepsID: "go away" from someone who does not own the
// thread's repository blocks their own account with its id, so their
// account stays blocked after they rename it.
func TestOwnLoginEntryKeepsID(t *testing.T) {
	e := newEnv(t)
	bob := e.sim.AddUser("bob") // exists: returns the account
	n := e.issue("x")
	c := e.comment(n, "bob", "@mrbot go away")
	dec, err := e.dispatcher().Handle(e.ctx(), e.trigger("issue_comment", n, c.GetID()))
	require.NoError(t, err)
	require.Equal(t, Block, dec.Decision, dec.Reason)
	assert.Equal(t, map[string]int64{"bob/*": bob.ID}, e.entries())

	// bob renames his account: his repositories now report another owner
	// login, the same owner id.
	l, err := (&blockfile.Store{Client: e.gh, Repo: control}).Load(e.ctx())
	require.NoError(t, err)
	p, blocked := l.BlockedID(blocklist.RepoIDs{Repo: 999, Owner: bob.ID})
	assert.True(t, blocked)
	assert.Equal(t, "bob/*", p)
}

// TestBlocklistIDsFilledOnWrite: entries written before ids were kept
// match by name until the next write of the list, which gives them their
// repository or account id.
func TestBlocklistIDsFilledOnWrite(t *testing.T) {
	e := newEnv(t)
	alice := e.sim.AddUser("alice")
	store := &blockfile.Store{Client: e.gh, Repo: control}
	_, err := store.Update(e.ctx(), "old entries", func(l *blocklist.List) bool {
		l.Entries = []blocklist.Entry{{Pattern: "acme/tool", By: "olga"}, {Pattern: "alice/*", By: "alice"}, {Pattern: "gone/*", By: "x"}}
		return true
	})
	require.NoError(t, err)

	n := e.issue("x")
	c := e.comment(n, "alice", "@mrbot do it") // old entries still block by name
	dec, err := e.dispatcher().Handle(e.ctx(), e.trigger("issue_comment", n, c.GetID()))
	require.NoError(t, err)
	assert.Equal(t, Ignore, dec.Decision)
	assert.Contains(t, dec.Reason, `blocked by opt-out "alice/*"`)

	c = e.comment(n, "carol", "@mrbot go away") // the next write
	_, err = e.dispatcher().Handle(e.ctx(), e.trigger("issue_comment", n, c.GetID()))
	require.NoError(t, err)
	carol := e.sim.AddUser("carol")
	tool := e.raw("repos/acme/tool")
	var repo struct{ ID int64 }
	require.NoError(t, json.Unmarshal(tool, &repo))
	assert.Equal(t, map[string]int64{
		"acme/tool": repo.ID, "alice/*": alice.ID, "carol/*": carol.ID,
		"gone/*": 0, // GitHub has no such account: it keeps matching by name
	}, e.entries())
}

// TestFreedLoginDoesNotInheritAllowList: ALLOWED_USERS names carol by
// login only; the dispatcher remembers the id it first saw under that
// login, so another account that registers the freed login later is not
// allowed. A "login:id" pin allows the new account on purpose.
func TestFreedLoginDoesNotInheritAllowList(t *testing.T) {
	e := newEnv(t)
	e.cfg.Allowed = ParseAllowList("carol")
	carol := e.sim.AddUser("carol")
	n := e.issue("x")
	c := e.comment(n, "carol", "@mrbot first")
	d := e.dispatcher()
	dec, err := d.Handle(e.ctx(), e.trigger("issue_comment", n, c.GetID()))
	require.NoError(t, err)
	require.Equal(t, Dispatch, dec.Decision, dec.Reason)
	require.NoError(t, d.Flush(e.ctx()))

	// carol deletes her account; someone else registers "carol".
	c = e.comment(n, "carol", "@mrbot second")
	trig := e.trigger("issue_comment", n, c.GetID())
	trig.AuthorID = carol.ID + 1000
	dec, err = e.dispatcher().Handle(e.ctx(), trig) // a fresh dispatcher: the id was stored in CONTROL
	require.NoError(t, err)
	assert.Equal(t, Ignore, dec.Decision)
	assert.Contains(t, dec.Reason, "changed hands")

	e.cfg.Allowed = ParseAllowList("carol:" + strconv.FormatInt(carol.ID+1000, 10))
	dec, err = e.dispatcher().Handle(e.ctx(), trig)
	require.NoError(t, err)
	assert.Equal(t, Dispatch, dec.Decision, dec.Reason)

	// the original account, by id, whatever its login is now
	c = e.comment(n, "carol", "@mrbot third")
	trig = e.trigger("issue_comment", n, c.GetID())
	e.cfg.Allowed = ParseAllowList("carol")
	dec, err = e.dispatcher().Handle(e.ctx(), trig)
	require.NoError(t, err)
	assert.Equal(t, Dispatch, dec.Decision, dec.Reason)
	assert.False(t, strings.Contains(dec.Reason, "changed hands"))
}

// TestComeBackAfterRename: "come back" lifts the blocks its authority put
// up even when they were written under a login or repository name that has
// changed since: the entries are matched by id.
func TestComeBackAfterRename(t *testing.T) {
	e := newEnv(t)
	n := e.issue("x")
	c := e.comment(n, "bob", "@mrbot go away")
	_, err := e.dispatcher().Handle(e.ctx(), e.trigger("issue_comment", n, c.GetID()))
	require.NoError(t, err)
	require.Contains(t, e.entries(), "bob/*")

	// bob renamed his account to "bobby": same id, new login
	c = e.comment(n, "bob", "@mrbot come back")
	trig := e.trigger("issue_comment", n, c.GetID())
	trig.Author = "bobby"
	dec, err := e.dispatcher().Handle(e.ctx(), trig)
	require.NoError(t, err)
	assert.Equal(t, Unblock, dec.Decision, dec.Reason)
	assert.Empty(t, e.entries(), "bob/* (bob's id) lifted by bobby")

	// someone who registers the freed login "bob" (another id) cannot lift
	// the old bob's block by name
	_, err = e.dispatcher().Handle(e.ctx(), e.trigger("issue_comment", n, e.comment(n, "bob", "@mrbot go away").GetID()))
	require.NoError(t, err)
	trig = e.trigger("issue_comment", n, e.comment(n, "bob", "@mrbot come back").GetID())
	trig.AuthorID += 1000
	dec, err = e.dispatcher().Handle(e.ctx(), trig)
	require.NoError(t, err)
	assert.Contains(t, dec.Reason, "(0 changed)")
	assert.Contains(t, e.entries(), "bob/*")
}
