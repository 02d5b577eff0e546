package refpush_test

import (
	"context"
	"encoding/base64"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/go-github/v62/github"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/core/refpush"
	"github.com/mention-runner/mention-runner/internal/testrig/githubsim"
	"github.com/mention-runner/mention-runner/internal/testrig/simfixture"
)

type fixture struct {
	sim  *githubsim.Sim
	gh   *github.Client
	push *refpush.Client
}

func newFixture(t *testing.T) fixture {
	t.Helper()
	sim, base := simfixture.Start(t, githubsim.Options{Seed: 5})
	sim.AddUser("ops")
	sim.AddToken("tok", "ops")
	_, err := sim.AddRepo("ops/control", true)
	require.NoError(t, err)
	p, err := refpush.New(&http.Client{Timeout: 20 * time.Second}, base, "tok")
	require.NoError(t, err)
	p.Timeout = 2 * time.Second
	return fixture{sim: sim, gh: sim.Client("tok"), push: p}
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func commit(msg string, parents ...string) refpush.Commit {
	return refpush.Commit{Parents: parents, Message: msg,
		Sig: refpush.Signature{Name: "mention-runner", Email: "mention-runner@users.noreply.github.com", At: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}}
}

// refAt is the commit ref points at in the repository, "" when it is gone.
func (f fixture) refAt(t *testing.T, ref string) string {
	t.Helper()
	r, resp, err := f.gh.Git.GetRef(context.Background(), "ops", "control", ref[len("refs/"):])
	if resp != nil && resp.StatusCode == http.StatusNotFound {
		return ""
	}
	require.NoError(t, err)
	return r.GetObject().GetSHA()
}

const ref = "refs/mention-runner/test/state"

// Every kind of update, against real git receive-pack: what it applies
// and what it refuses, each refusal a compare-and-swap lost.
func TestPushUpdates(t *testing.T) {
	first, second := commit("first"), commit("second")
	second.Parents = []string{first.SHA()}
	other := commit("other")
	tests := []struct {
		name     string
		before   []refpush.Commit // pushed as creates of ref first, in order
		commits  []refpush.Commit
		update   refpush.Update
		rejected bool
		want     string // ref's commit after
	}{
		{"create", nil, []refpush.Commit{first}, refpush.Update{Ref: ref, New: first.SHA()}, false, first.SHA()},
		{"create where the ref exists", []refpush.Commit{other}, []refpush.Commit{first}, refpush.Update{Ref: ref, New: first.SHA()}, true, other.SHA()},
		{"update from the value it has", []refpush.Commit{first}, []refpush.Commit{second}, refpush.Update{Ref: ref, Old: first.SHA(), New: second.SHA()}, false, second.SHA()},
		{"update from a value it no longer has", []refpush.Commit{other}, []refpush.Commit{second, first}, refpush.Update{Ref: ref, Old: first.SHA(), New: second.SHA()}, true, other.SHA()},
		{"update of a ref that is gone", nil, []refpush.Commit{second, first}, refpush.Update{Ref: ref, Old: first.SHA(), New: second.SHA()}, true, ""},
		{"update that is no fast-forward", []refpush.Commit{first}, []refpush.Commit{other}, refpush.Update{Ref: ref, Old: first.SHA(), New: other.SHA()}, false, other.SHA()},
		{"delete from the value it has", []refpush.Commit{first}, nil, refpush.Update{Ref: ref, Old: first.SHA()}, false, ""},
		{"delete from a value it no longer has", []refpush.Commit{first, other}, nil, refpush.Update{Ref: ref, Old: first.SHA()}, true, other.SHA()},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			ctx := ctxT(t)
			for _, c := range tc.before {
				res, err := f.push.Push(ctx, "ops/control", []refpush.Commit{c}, []refpush.Update{{Ref: ref, Old: f.refAt(t, ref), New: c.SHA()}})
				require.NoError(t, err)
				require.NoError(t, res[0])
			}
			res, err := f.push.Push(ctx, "ops/control", tc.commits, []refpush.Update{tc.update})
			require.NoError(t, err)
			require.Len(t, res, 1)
			if tc.rejected {
				assert.ErrorIs(t, res[0], refpush.ErrRejected)
				assert.False(t, refpush.MaybeApplied(res[0]))
			} else {
				assert.NoError(t, res[0])
			}
			assert.Equal(t, tc.want, f.refAt(t, ref))
		})
	}
}

// The commit pushed is the one Commit describes: its id is known before
// the push, and the REST API reads back its message and date.
func TestPushedCommitReadsBack(t *testing.T) {
	f := newFixture(t)
	ctx := ctxT(t)
	c := commit("mention-runner state: running\n\nrun 42\n")
	res, err := f.push.Push(ctx, "ops/control", []refpush.Commit{c}, []refpush.Update{{Ref: ref, New: c.SHA()}})
	require.NoError(t, err)
	require.NoError(t, res[0])
	got, _, err := f.gh.Git.GetCommit(ctx, "ops", "control", c.SHA())
	require.NoError(t, err)
	assert.Equal(t, c.Message, got.GetMessage())
	assert.Equal(t, refpush.EmptyTree, got.GetTree().GetSHA())
	assert.True(t, c.Sig.At.Equal(got.GetCommitter().GetDate().Time))
}

// Several updates in one push are applied or refused one by one.
func TestPushSeveralUpdates(t *testing.T) {
	f := newFixture(t)
	ctx := ctxT(t)
	a, b := commit("a"), commit("b")
	res, err := f.push.Push(ctx, "ops/control", []refpush.Commit{a}, []refpush.Update{{Ref: ref, New: a.SHA()}})
	require.NoError(t, err)
	require.NoError(t, res[0])
	res, err = f.push.Push(ctx, "ops/control", []refpush.Commit{a, b}, []refpush.Update{
		{Ref: ref, New: b.SHA()},       // exists: refused
		{Ref: ref + "2", New: b.SHA()}, // new: applied
	})
	require.NoError(t, err)
	require.Len(t, res, 2)
	assert.ErrorIs(t, res[0], refpush.ErrRejected)
	assert.NoError(t, res[1])
	assert.Equal(t, a.SHA(), f.refAt(t, ref))
	assert.Equal(t, b.SHA(), f.refAt(t, ref+"2"))
	assert.Len(t, f.sim.ContentWrites()["ops"], 2, "each push is one content write of its account")
}

// A push whose answer is lost may have been applied: the caller is told so
// and reads the ref.
func TestPushLostAnswer(t *testing.T) {
	for _, kind := range []githubsim.FaultKind{githubsim.FaultStatus502, githubsim.FaultReset, githubsim.FaultHang} {
		t.Run(string(kind), func(t *testing.T) {
			f := newFixture(t)
			ctx := ctxT(t)
			f.sim.AddFault(githubsim.Fault{Method: "POST", Path: "/ops/control.git/git-receive-pack", Kind: kind, OnCall: 1, AfterApply: true, Delay: 5 * time.Second})
			c := commit("lost")
			_, err := f.push.Push(ctx, "ops/control", []refpush.Commit{c}, []refpush.Update{{Ref: ref, New: c.SHA()}})
			require.Error(t, err)
			assert.True(t, refpush.MaybeApplied(err), "%v", err)
			assert.Equal(t, c.SHA(), f.refAt(t, ref), "applied before the answer was lost")
		})
	}
}

// Refusals of the whole push say nothing was applied, and why.
func TestPushRefused(t *testing.T) {
	f := newFixture(t)
	ctx := ctxT(t)
	f.sim.AddUser("eve")
	f.sim.AddToken("evetok", "eve")
	base, _ := url.Parse(f.sim.URL())
	for _, tc := range []struct {
		name, token, repo string
		status            int
	}{
		{"unknown token", "nope", "ops/control", http.StatusUnauthorized},
		{"no write permission", "evetok", "ops/control", http.StatusNotFound},
		{"no such repository", "tok", "ops/missing", http.StatusNotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := refpush.New(nil, refpush.ServerFromAPI(base), tc.token)
			require.NoError(t, err)
			c := commit("x")
			_, err = p.Push(ctx, tc.repo, []refpush.Commit{c}, []refpush.Update{{Ref: ref, New: c.SHA()}})
			var ae *refpush.AnswerError
			require.ErrorAs(t, err, &ae)
			assert.Equal(t, tc.status, ae.Status)
			assert.False(t, refpush.MaybeApplied(err))
			assert.Equal(t, "", f.refAt(t, ref))
		})
	}
	// A push over the account's content limit is refused with its wait.
	f.sim.SetContentLimits(1, 0)
	c, d := commit("c"), commit("d")
	res, err := f.push.Push(ctx, "ops/control", []refpush.Commit{c}, []refpush.Update{{Ref: ref, New: c.SHA()}})
	require.NoError(t, err)
	require.NoError(t, res[0])
	_, err = f.push.Push(ctx, "ops/control", []refpush.Commit{d}, []refpush.Update{{Ref: ref + "2", New: d.SHA()}})
	var ae *refpush.AnswerError
	require.ErrorAs(t, err, &ae)
	assert.Equal(t, http.StatusForbidden, ae.Status)
	assert.Positive(t, ae.RetryAfter)
	assert.False(t, refpush.MaybeApplied(err))
}

// Input that would make a wrong or ambiguous push is refused before
// anything is sent.
func TestPushBadInput(t *testing.T) {
	f := newFixture(t)
	ctx := ctxT(t)
	c := commit("c")
	bad := commit("bad")
	bad.Sig.Email = "a>b"
	for _, tc := range []struct {
		name    string
		repo    string
		commits []refpush.Commit
		updates []refpush.Update
	}{
		{"no update", "ops/control", nil, nil},
		{"not a full ref name", "ops/control", nil, []refpush.Update{{Ref: "heads/main", New: c.SHA()}}},
		{"a ref twice", "ops/control", nil, []refpush.Update{{Ref: ref, New: c.SHA()}, {Ref: ref, New: c.SHA()}}},
		{"not an id", "ops/control", nil, []refpush.Update{{Ref: ref, New: "main"}}},
		{"neither old nor new", "ops/control", nil, []refpush.Update{{Ref: ref}}},
		{"a signature git would store otherwise", "ops/control", []refpush.Commit{bad}, []refpush.Update{{Ref: ref, New: bad.SHA()}}},
		{"not owner/name", "control", nil, []refpush.Update{{Ref: ref, New: c.SHA()}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := f.push.Push(ctx, tc.repo, tc.commits, tc.updates)
			require.ErrorIs(t, err, refpush.ErrInvalid)
			assert.False(t, errors.Is(err, refpush.ErrRejected))
			assert.False(t, refpush.MaybeApplied(err), "nothing was sent")
		})
	}
	assert.Empty(t, f.sim.ContentWrites()["ops"], "nothing was sent")
}

func TestServerFromAPI(t *testing.T) {
	for _, tc := range []struct{ api, want string }{
		{"https://api.github.com/", "https://github.com"},
		{"https://ghe.example.com/api/v3/", "https://ghe.example.com"},
		{"http://127.0.0.1:8080/", "http://127.0.0.1:8080"},
	} {
		u, err := url.Parse(tc.api)
		require.NoError(t, err)
		assert.Equal(t, tc.want, refpush.ServerFromAPI(u), tc.api)
	}
}

// A commit of content: its blob and tree travel in the same push, their
// ids are git's, and the REST API reads the content back.
func TestPushObjects(t *testing.T) {
	f := newFixture(t)
	ctx := ctxT(t)
	blob := refpush.Blob([]byte("aGVsbG8="))
	tree, err := refpush.Tree(refpush.TreeEntry{Name: "piece.b64", Blob: blob.SHA()})
	require.NoError(t, err)
	c := commit("shard")
	c.Tree = tree.SHA()
	res, err := f.push.PushObjects(ctx, "ops/control", []refpush.Object{blob, tree}, []refpush.Commit{c}, []refpush.Update{{Ref: ref, New: c.SHA()}})
	require.NoError(t, err)
	require.NoError(t, res[0])
	assert.Equal(t, c.SHA(), f.refAt(t, ref))
	got, _, err := f.gh.Git.GetTree(ctx, "ops", "control", tree.SHA(), false)
	require.NoError(t, err)
	require.Len(t, got.Entries, 1)
	assert.Equal(t, "piece.b64", got.Entries[0].GetPath())
	assert.Equal(t, blob.SHA(), got.Entries[0].GetSHA())
	b, _, err := f.gh.Git.GetBlob(ctx, "ops", "control", blob.SHA())
	require.NoError(t, err)
	content, err := base64.StdEncoding.DecodeString(strings.ReplaceAll(b.GetContent(), "\n", ""))
	require.NoError(t, err)
	assert.Equal(t, "aGVsbG8=", string(content))
	assert.Len(t, f.sim.ContentWrites()["ops"], 1, "blob, tree, commit and ref: one write")
}

func TestTreeEntries(t *testing.T) {
	blob := refpush.Blob([]byte("x")).SHA()
	for _, tc := range []struct {
		name    string
		entries []refpush.TreeEntry
		ok      bool
	}{
		{"one file", []refpush.TreeEntry{{Name: "a", Blob: blob}}, true},
		{"sorted by name", []refpush.TreeEntry{{Name: "b", Blob: blob}, {Name: "a", Blob: blob}}, true},
		{"a name twice", []refpush.TreeEntry{{Name: "a", Blob: blob}, {Name: "a", Blob: blob}}, false},
		{"a directory", []refpush.TreeEntry{{Name: "a/b", Blob: blob}}, false},
		{"no name", []refpush.TreeEntry{{Blob: blob}}, false},
		{"not a blob id", []refpush.TreeEntry{{Name: "a", Blob: "main"}}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := refpush.Tree(tc.entries...)
			assert.Equal(t, tc.ok, err == nil, "%v", err)
		})
	}
}

// receivePacks counts the pushes the simulator was sent.
func (f fixture) receivePacks() int {
	n := 0
	for _, r := range f.sim.Requests() {
		if r.Method == http.MethodPost && strings.HasSuffix(r.Path, "/git-receive-pack") {
			n++
		}
	}
	return n
}

// A server that refuses pushes as such (here a 403 page) gets the REST
// API's writes instead, from the refused push on: objects made one by one
// with the same ids, a create still refused when the ref exists, an update
// on top of the old value still refused when the ref moved.
func TestPushFallsBackToREST(t *testing.T) {
	f := newFixture(t)
	ctx := ctxT(t)
	p, err := refpush.ForAPI(f.gh, "tok")
	require.NoError(t, err)
	f.sim.AddFault(githubsim.Fault{Method: http.MethodPost, Path: "/ops/control.git/git-receive-pack", Kind: githubsim.FaultText, Rate: 1})

	blob := refpush.Blob([]byte("a piece"))
	tree, err := refpush.Tree(refpush.TreeEntry{Name: "piece", Blob: blob.SHA()})
	require.NoError(t, err)
	first := commit("first")
	first.Tree = tree.SHA()
	res, err := p.PushObjects(ctx, "ops/control", []refpush.Object{blob, tree}, []refpush.Commit{first}, []refpush.Update{{Ref: ref, New: first.SHA()}})
	require.NoError(t, err)
	require.NoError(t, res[0])
	assert.Equal(t, first.SHA(), f.refAt(t, ref))
	assert.Equal(t, 1, f.receivePacks(), "one push tried, then the REST API")

	second := commit("second", first.SHA())
	other := commit("other", first.SHA())
	for _, tc := range []struct {
		name     string
		commits  []refpush.Commit
		up       refpush.Update
		rejected bool
		want     string
	}{
		{"create where the ref exists", []refpush.Commit{second}, refpush.Update{Ref: ref, New: second.SHA()}, true, first.SHA()},
		{"update on top of the value it has", []refpush.Commit{second}, refpush.Update{Ref: ref, Old: first.SHA(), New: second.SHA()}, false, second.SHA()},
		{"update on top of a value it no longer has", []refpush.Commit{other}, refpush.Update{Ref: ref, Old: first.SHA(), New: other.SHA()}, true, second.SHA()},
		{"delete", nil, refpush.Update{Ref: ref, Old: second.SHA()}, false, ""},
	} {
		res, err := p.Push(ctx, "ops/control", tc.commits, []refpush.Update{tc.up})
		require.NoError(t, err, tc.name)
		if tc.rejected {
			assert.ErrorIs(t, res[0], refpush.ErrRejected, tc.name)
		} else {
			assert.NoError(t, res[0], tc.name)
		}
		assert.Equal(t, tc.want, f.refAt(t, ref), tc.name)
	}
	assert.Equal(t, 1, f.receivePacks(), "no push tried again")
}

// A rate limit's refusal (a 403 with Retry-After) is no reason to stop
// pushing.
func TestPushRateLimitedKeepsPushing(t *testing.T) {
	f := newFixture(t)
	ctx := ctxT(t)
	p, err := refpush.ForAPI(f.gh, "tok")
	require.NoError(t, err)
	f.sim.AddFault(githubsim.Fault{Method: http.MethodPost, Path: "/ops/control.git/git-receive-pack", Kind: githubsim.FaultSecondaryLimit, OnCall: 1})
	c := commit("c")
	_, err = p.Push(ctx, "ops/control", []refpush.Commit{c}, []refpush.Update{{Ref: ref, New: c.SHA()}})
	var ae *refpush.AnswerError
	require.ErrorAs(t, err, &ae)
	assert.Positive(t, ae.RetryAfter)
	res, err := p.Push(ctx, "ops/control", []refpush.Commit{c}, []refpush.Update{{Ref: ref, New: c.SHA()}})
	require.NoError(t, err)
	require.NoError(t, res[0])
	assert.Equal(t, 2, f.receivePacks(), "pushed again")
}
