package writebudget_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-github/v62/github"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/core/writebudget"
)

// beforeLedgerWrite runs hook before the first ledger ref write with
// method (PATCH: an update, POST: a generation's creation) gh sends.
type beforeLedgerWrite struct {
	next   http.RoundTripper
	method string
	once   atomic.Bool
	hook   func()
	fail   error // when set, that write is not sent: it fails with this
}

func (b *beforeLedgerWrite) RoundTrip(r *http.Request) (*http.Response, error) {
	// a creation names its ref in the body, an update in the path
	ledgerRef := strings.HasSuffix(r.URL.Path, "/git/refs") || strings.Contains(r.URL.Path, "/git/refs/mention-runner/pace/")
	method := r.Method
	if strings.HasSuffix(r.URL.Path, "/git-receive-pack") {
		// a push: its first command says create (from no object) or update
		ledgerRef, method = true, pushMethod(r)
	}
	if method == b.method && ledgerRef && b.once.CompareAndSwap(false, true) {
		b.hook()
		if b.fail != nil {
			return nil, b.fail
		}
	}
	return b.next.RoundTrip(r)
}

// pushMethod is the REST method a push's first update stands for: POST
// for a creation, PATCH for an update.
func pushMethod(r *http.Request) string {
	body, err := r.GetBody()
	if err != nil {
		return ""
	}
	defer body.Close()
	head := make([]byte, 4+40)
	if _, err := io.ReadFull(body, head); err != nil {
		return ""
	}
	if string(head[4:]) == strings.Repeat("0", 40) {
		return http.MethodPost
	}
	return http.MethodPatch
}

// hooked runs hook before gh's first ledger ref update.
func hooked(gh *github.Client, hook func()) *github.Client {
	return hookedOn(gh, http.MethodPatch, hook)
}

// hookedOn runs hook before gh's first ledger ref write with method.
func hookedOn(gh *github.Client, method string, hook func()) *github.Client {
	return wrapped(gh, &beforeLedgerWrite{method: method, hook: hook})
}

// unsent fails gh's first ledger ref write with method before it is
// sent, as a connection refused or a DNS failure does: its answer is
// lost and GitHub never stored it.
func unsent(gh *github.Client, method string) *github.Client {
	return wrapped(gh, &beforeLedgerWrite{method: method, hook: func() {}, fail: errors.New("dial tcp: connection refused")})
}

func wrapped(gh *github.Client, b *beforeLedgerWrite) *github.Client {
	hc := gh.Client()
	b.next = hc.Transport
	hc.Transport = b
	c := github.NewClient(hc)
	c.BaseURL = gh.BaseURL
	if tok, ok := tokens.Load(gh); ok {
		tokens.Store(c, tok)
	}
	return c
}

// takeSoon reports whether a slot of l is taken with ctx within wait (it
// runs while the grant's update is held, so a Take waiting for the grant
// never returns: a short wait shows that without flaking; one that
// should go at once is given long).
func takeSoon(t *testing.T, ctx context.Context, l *writebudget.Ledger, wait time.Duration) bool {
	t.Helper()
	done := make(chan error, 1)
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() { done <- l.Take(cctx) }()
	select {
	case err := <-done:
		require.NoError(t, err)
		return true
	case <-time.After(wait):
		return false
	}
}

// TestOneWriteOnCredit: while a grant's ref update is in flight, one
// write marked OnCredit goes at once (Granted returns the grant's commit
// by then); an unmarked one, or a second, waits for the grant. When the
// update lands, the write used one of its slots; when it loses, the write
// is recorded with the lost update's own by the next grant (3 wasted
// writes with SelfCost 2: DefaultSpare).
func TestOneWriteOnCredit(t *testing.T) {
	for _, lose := range []bool{false, true} {
		name := "update lands"
		if lose {
			name = "update loses"
		}
		t.Run(name, func(t *testing.T) {
			w := newWorld(t)
			ctx := ctxT(t)
			// the ledger exists: a's grant is an update of it
			require.NoError(t, w.ledger(t, "c", writebudget.Options{Block: 8}).Take(ctx))
			other := w.ledger(t, "b", writebudget.Options{Block: 8})
			var a *writebudget.Ledger
			var pending writebudget.Grant
			var credited, second bool
			hook := func() {
				var ok bool
				var err error
				pending, ok, err = a.Granted(ctx)
				require.NoError(t, err)
				require.True(t, ok)
				credited = takeSoon(t, writebudget.OnCredit(ctx), a, 20*time.Second)
				second = takeSoon(t, writebudget.OnCredit(ctx), a, 200*time.Millisecond)
				if lose {
					require.NoError(t, other.Take(ctx)) // moves the ledger first
				}
			}
			a = w.ledger(t, "a", writebudget.Options{Block: 4, SelfCost: 2, Client: hooked(w.gh, hook)})
			require.NoError(t, a.Ready(ctx, 4))
			assert.True(t, credited, "the first write on credit goes at once")
			assert.False(t, second, "a second one waits for the grant")
			grants, lost, _ := a.Stats()
			assert.Equal(t, 1, grants)
			g, ok, err := a.Granted(ctx)
			require.NoError(t, err)
			require.True(t, ok)
			sizes := w.ledgerGrants(t, ctx)
			if !lose {
				assert.Equal(t, 0, lost)
				assert.Equal(t, pending, g, "the commit returned while in flight is the grant's")
				assert.Equal(t, []int{8, 4 + 2}, sizes)
			} else {
				assert.Equal(t, 1, lost)
				assert.NotEqual(t, pending.Commit, g.Commit)
				assert.Equal(t, []int{8, 8, 4 + 2 + 3}, sizes, "the lost update's commit and ref update and the write on credit")
			}
			// slots left: 4, less the one on credit when the update landed
			left := 4
			if !lose {
				left--
			}
			for i := 0; i < left; i++ {
				require.NoError(t, a.Take(ctx))
			}
			grants, _, _ = a.Stats()
			assert.Equal(t, 1, grants, "the grant's slots")
			require.NoError(t, a.Take(ctx))
			grants, _, _ = a.Stats()
			assert.Equal(t, 2, grants, "then the next grant")
		})
	}
}
