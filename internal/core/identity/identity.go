// Package identity resolves GitHub names to the numeric ids behind them, so
// the opt-out list and deny= follow a repository or an account through a
// rename or transfer (GitHub redirects an old repository name to the
// repository's new one; the ids never change).
package identity

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/google/go-github/v62/github"

	"github.com/mention-runner/mention-runner/internal/core/blocklist"
	"github.com/mention-runner/mention-runner/internal/core/policy"
)

// callTimeout bounds one lookup.
const callTimeout = 30 * time.Second

// MaxFill bounds how many entries without ids one write of the opt-out
// list looks up (the rest are filled by later writes).
const MaxFill = 20

// Resolver looks names up once per name and remembers the answers.
type Resolver struct {
	Client *github.Client

	mu    sync.Mutex
	repos map[string]policy.RepoIDs
	users map[string]int64
}

// Repo returns the ids of repo ("owner/name"), following GitHub's redirect
// from an old name. A repository GitHub does not show (404) has zero ids and
// no error: it can only be matched by name.
func (r *Resolver) Repo(ctx context.Context, repo string) (policy.RepoIDs, error) {
	owner, name, _ := strings.Cut(repo, "/")
	ids, err := cached(ctx, r, &r.repos, repo, func(ctx context.Context) (policy.RepoIDs, *github.Response, error) {
		got, resp, err := r.Client.Repositories.Get(ctx, owner, name)
		return policy.RepoIDs{Repo: got.GetID(), Owner: got.GetOwner().GetID()}, resp, err
	})
	if err != nil {
		return ids, fmt.Errorf("look up the id of %s: %w", repo, err)
	}
	return ids, nil
}

// Account returns the numeric id of login (0 and no error when GitHub has
// no such account).
func (r *Resolver) Account(ctx context.Context, login string) (int64, error) {
	id, err := cached(ctx, r, &r.users, login, func(ctx context.Context) (int64, *github.Response, error) {
		u, resp, err := r.Client.Users.Get(ctx, login)
		return u.GetID(), resp, err
	})
	if err != nil {
		return 0, fmt.Errorf("look up the id of @%s: %w", login, err)
	}
	return id, nil
}

// cached answers name (any case) from m or, the first time, from fetch
// (bounded by callTimeout); "not found" is remembered as the zero value.
func cached[T any](ctx context.Context, r *Resolver, m *map[string]T, name string, fetch func(context.Context) (T, *github.Response, error)) (T, error) {
	key := strings.ToLower(name)
	r.mu.Lock()
	v, ok := (*m)[key]
	r.mu.Unlock()
	if ok {
		return v, nil
	}
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	v, resp, err := fetch(ctx)
	var zero T
	switch {
	case err == nil:
	case notFound(resp):
		v = zero
	default:
		return zero, err
	}
	r.mu.Lock()
	if *m == nil {
		*m = map[string]T{}
	}
	(*m)[key] = v
	r.mu.Unlock()
	return v, nil
}

// Repos resolves every name in repos (duplicates and case ignored).
func (r *Resolver) Repos(ctx context.Context, repos []string) (policy.IDs, error) {
	out := policy.IDs{}
	var errs []error
	for _, name := range repos {
		if _, done := out[strings.ToLower(name)]; done || !policy.ValidRepo(name) {
			continue
		}
		ids, err := r.Repo(ctx, name)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out.Set(name, ids)
	}
	return out, errors.Join(errs...)
}

// Fill gives ids to up to MaxFill entries of l that have none (entries
// written before ids were kept): "owner/*" gets the account's id,
// "owner/name" the repository's. An entry GitHub cannot resolve keeps
// matching by name only.
func (r *Resolver) Fill(ctx context.Context, l *blocklist.List) error {
	n := 0
	var errs []error
	for i := range l.Entries {
		e := &l.Entries[i]
		if e.ID != 0 || n >= MaxFill {
			continue
		}
		n++
		owner, name, _ := strings.Cut(e.Pattern, "/")
		var err error
		if name == "*" {
			e.ID, err = r.Account(ctx, owner)
		} else {
			var ids policy.RepoIDs
			ids, err = r.Repo(ctx, e.Pattern)
			e.ID = ids.Repo
		}
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

func notFound(resp *github.Response) bool {
	return resp != nil && resp.StatusCode == http.StatusNotFound
}
