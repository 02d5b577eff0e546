package publish

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/go-github/v62/github"
	"github.com/mention-runner/mention-runner/internal/core/ghclient"
	"github.com/mention-runner/mention-runner/internal/runner/checkout"
	"github.com/mention-runner/mention-runner/internal/runner/outputs"
	"github.com/mention-runner/mention-runner/internal/runner/prbundle"
	"github.com/mention-runner/mention-runner/internal/runner/render"
)

// Rules of a push publish refuses from what it finds on GitHub.
const (
	// RuleBranchMoved: the pull request's branch is no longer at the head
	// the run started from; the commit would undo or race someone's work.
	RuleBranchMoved = "branch-moved"
	// RulePushFork: a fork's pull request that does not allow maintainer
	// edits, or whose fork the bot cannot push to.
	RulePushFork = "push-fork"
	// RulePushRefused: GitHub refused the ref update (a protected branch).
	RulePushRefused = "push-refused"
)

// movedHint ends a branch-moved refusal: the person who asked can act on it.
const movedHint = "; mention the bot again to have the change made on the branch as it is now"

// push puts the bundle's one commit onto the pull request's own branch
// through the git data API: a tree and a commit on top of the head the
// context recorded, then a non-forced ref update, which GitHub refuses
// unless it is a fast-forward from where the branch is: a compare-and-swap
// on the recorded head. A retry finds the commit by its marker at the
// branch's tip.
func (p *publisher) push(ctx context.Context, e outputs.Entry) ([]Written, *render.Refusal, error) {
	what := fmt.Sprintf("output %d: push to %s#%d", e.Index, e.Repo, e.Number)
	reject := func(rule, format string, a ...any) ([]Written, *render.Refusal, error) {
		r := refusal(e, rule, "denied: "+fmt.Sprintf(format, a...))
		return nil, &r, nil
	}
	t, err := checkout.FromContext(p.o.Context)
	if err != nil || !t.IsPR() || t.PullNumber != e.Number || !strings.EqualFold(t.Repo, e.Repo) || !isHexSHA(t.HeadSHA) || t.HeadRef == "" {
		return reject(outputs.RulePushNotPR, "the trusted context records no head of %s#%d to push onto", e.Repo, e.Number)
	}
	owner, name := splitRepo(e.Repo)
	pr, _, err := p.o.Bot.PullRequests.Get(ctx, owner, name, e.Number)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: read the pull request: %w", what, err)
	}
	headRepo := pr.GetHead().GetRepo().GetFullName()
	if headRepo == "" || !strings.EqualFold(headRepo, t.HeadRepo) || pr.GetHead().GetRef() != t.HeadRef {
		return reject(RuleBranchMoved, "the pull request's head is now %s:%s, not %s:%s as the run recorded%s", headRepo, pr.GetHead().GetRef(), t.HeadRepo, t.HeadRef, movedHint)
	}
	if pr.GetState() != "open" {
		return reject(RuleBranchMoved, "%s#%d is %s", e.Repo, e.Number, pr.GetState())
	}
	if !strings.EqualFold(headRepo, e.Repo) && !pr.GetMaintainerCanModify() {
		return reject(RulePushFork, "%s#%d comes from the fork %s, which does not allow edits from maintainers", e.Repo, e.Number, headRepo)
	}
	hOwner, hName := splitRepo(headRepo)
	hr, _, err := p.o.Bot.Repositories.Get(ctx, hOwner, hName)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: read %s: %w", what, headRepo, err)
	}
	if !canPush(hr.GetPermissions()) {
		// GitHub lets a writer of the base repository push to a fork's
		// branch that allows maintainer edits, which the fork's repository
		// object does not say.
		if strings.EqualFold(headRepo, e.Repo) {
			return reject(RulePushFork, "the bot cannot push to %s", headRepo)
		}
		base, _, err := p.o.Bot.Repositories.Get(ctx, owner, name)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: read %s: %w", what, e.Repo, err)
		}
		if !canPush(base.GetPermissions()) {
			return reject(RulePushFork, "the bot can push neither to the fork %s nor to %s", headRepo, e.Repo)
		}
	}
	ref := "heads/" + t.HeadRef
	cur, err := p.readRef(ctx, hOwner, hName, ref)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", what, err)
	}
	msg := outputs.PushMessage(e.Title, p.job.JobID, e.Index)
	written := func(sha string, existing bool) []Written {
		return []Written{{Index: e.Index, Kind: e.Kind, Repo: e.Repo, Number: e.Number, HeadRepo: headRepo, SHA: sha,
			URL: pr.GetHTMLURL() + "/commits/" + sha, Existing: existing}}
	}
	if !strings.EqualFold(cur, t.HeadSHA) {
		if ok, err := p.ownPush(ctx, hOwner, hName, cur, t.HeadSHA, msg); err != nil {
			return nil, nil, fmt.Errorf("%s: %w", what, err)
		} else if ok {
			return written(cur, true), nil, nil
		}
		return reject(RuleBranchMoved, "the branch %s of %s#%d moved from %s to %s after the mention%s", t.HeadRef, e.Repo, e.Number, short(t.HeadSHA), short(cur), movedHint)
	}
	tree, base, refused := p.pushTree(ctx, e, t, headRepo)
	if refused != nil {
		return nil, refused, nil
	}
	if tree.err != nil {
		return nil, nil, fmt.Errorf("%s: %w", what, tree.err)
	}
	entries := tree.entries
	// A tree and a commit are named by their content: sending one again
	// after a lost answer makes the same object (or a dangling one).
	var newTree *github.Tree
	err = p.repeatIdempotent(ctx, what+": create the tree", func() (err error) {
		newTree, _, err = p.o.Bot.Git.CreateTree(ctx, hOwner, hName, base, entries)
		return err
	})
	if err != nil {
		return nil, nil, fmt.Errorf("%s: create the tree: %w", what, err)
	}
	now := time.Now().UTC()
	id := prbundle.BotIdentity(p.o.BotLogin)
	who := &github.CommitAuthor{Name: github.String(id.Name), Email: github.String(id.Email), Date: &github.Timestamp{Time: now}}
	var c *github.Commit
	err = p.repeatIdempotent(ctx, what+": create the commit", func() (err error) {
		c, _, err = p.o.Bot.Git.CreateCommit(ctx, hOwner, hName, &github.Commit{
			Message: github.String(msg), Tree: &github.Tree{SHA: newTree.SHA},
			Parents: []*github.Commit{{SHA: github.String(t.HeadSHA)}}, Author: who, Committer: who,
		}, nil)
		return err
	})
	if err != nil {
		return nil, nil, fmt.Errorf("%s: create the commit: %w", what, err)
	}
	sha := c.GetSHA()
	// force=false: GitHub moves the branch only as a fast-forward, and the
	// commit's parent is the recorded head, so only from there.
	upd := &github.Reference{Ref: github.String("refs/" + ref), Object: &github.GitObject{SHA: github.String(sha)}}
	for attempt := 1; ; attempt++ {
		_, resp, err := p.o.Bot.Git.UpdateRef(ctx, hOwner, hName, upd, false)
		if err == nil {
			return written(sha, false), nil, nil
		}
		// The answer may be lost after the update applied: the ref says.
		now, rerr := p.readRef(ctx, hOwner, hName, ref)
		switch {
		case rerr == nil && strings.EqualFold(now, sha):
			return written(sha, false), nil, nil
		case rerr == nil && !strings.EqualFold(now, t.HeadSHA):
			return reject(RuleBranchMoved, "the branch %s of %s#%d moved to %s while the commit was being pushed%s", t.HeadRef, e.Repo, e.Number, short(now), movedHint)
		case resp != nil && (resp.StatusCode == http.StatusUnprocessableEntity || resp.StatusCode == http.StatusForbidden):
			if strings.Contains(strings.ToLower(err.Error()), "fast forward") {
				return reject(RuleBranchMoved, "the branch %s of %s#%d moved after the mention (GitHub: not a fast-forward)%s", t.HeadRef, e.Repo, e.Number, movedHint)
			}
			return reject(RulePushRefused, "GitHub refused the update of %s on %s: %s", t.HeadRef, headRepo, firstErrLine(err))
		case ctx.Err() != nil || !ghclient.Ambiguous(err) || attempt >= writeAttempts:
			return nil, nil, fmt.Errorf("%s: update %s: %w", what, ref, err)
		}
		// still at the recorded head: the update did not land; it is a
		// compare-and-swap, so sending it again is safe
		p.logf("%s: update %s: %v; the branch is still at the recorded head, trying again", what, ref, err)
		if serr := p.o.sleep(ctx, p.o.RetryDelay<<(attempt-1)); serr != nil {
			return nil, nil, fmt.Errorf("%s: update %s: %w", what, ref, err)
		}
	}
}

// readRef is the sha a branch ref points at.
func (p *publisher) readRef(ctx context.Context, owner, name, ref string) (string, error) {
	r, _, err := p.o.Bot.Git.GetRef(ctx, owner, name, ref)
	if err != nil {
		return "", fmt.Errorf("read %s/%s %s: %w", owner, name, ref, err)
	}
	return r.GetObject().GetSHA(), nil
}

// ownPush reports whether tip is this output's commit: its message is
// msg (marker included) and its one parent is the recorded head.
func (p *publisher) ownPush(ctx context.Context, owner, name, tip, head, msg string) (bool, error) {
	c, _, err := p.o.Bot.Git.GetCommit(ctx, owner, name, tip)
	if err != nil {
		return false, fmt.Errorf("read commit %s: %w", short(tip), err)
	}
	ps := c.Parents
	return len(ps) == 1 && strings.EqualFold(ps[0].GetSHA(), head) &&
		strings.TrimSpace(c.GetMessage()) == strings.TrimSpace(msg), nil
}

type pushEntries struct {
	entries []*github.TreeEntry
	err     error
}

// pushTree inspects the bundle again on top of the recorded head (the
// same inspection as a pull request's: size, workflows, symlinks and
// submodules) and turns its one commit into tree entries: text files
// inline, others as blobs. base is the recorded head's tree.
func (p *publisher) pushTree(ctx context.Context, e outputs.Entry, t checkout.Target, headRepo string) (pushEntries, string, *render.Refusal) {
	fail := func(err error) (pushEntries, string, *render.Refusal) { return pushEntries{err: err}, "", nil }
	work, err := os.MkdirTemp("", "mention-runner-push-")
	if err != nil {
		return fail(err)
	}
	defer os.RemoveAll(work)
	g := git{token: p.o.Git.Token, base: p.o.Git.BaseURL, home: work}
	repoDir := filepath.Join(work, "repo.git")
	if _, err := g.run(ctx, work, false, "init", "--quiet", "--bare", repoDir); err != nil {
		return fail(fmt.Errorf("scratch repository: %w", err))
	}
	if _, err := g.run(ctx, repoDir, true, "fetch", "--quiet", "--no-tags", p.repoURL(headRepo), "+refs/heads/"+t.HeadRef+":refs/remotes/target/head"); err != nil {
		return fail(fmt.Errorf("fetch %s of %s: %w", t.HeadRef, headRepo, err))
	}
	bundle, err := filepath.Abs(filepath.Join(p.o.RunDir, e.Bundle))
	if err != nil {
		return fail(err)
	}
	info, refused := p.inspect(ctx, e, repoDir, bundle)
	if refused != nil {
		return pushEntries{}, "", refused
	}
	rej := func(format string, a ...any) (pushEntries, string, *render.Refusal) {
		r := refusal(e, RuleBundleRejected, "denied: "+fmt.Sprintf(format, a...))
		return pushEntries{}, "", &r
	}
	parents, err := g.run(ctx, repoDir, false, "rev-list", "--parents", "-n", "1", info.HeadSHA)
	if err != nil {
		return fail(fmt.Errorf("read the bundle's commit: %w", err))
	}
	if f := strings.Fields(parents); len(info.Commits) != 1 || len(f) != 2 || !strings.EqualFold(f[1], t.HeadSHA) {
		return rej("the bundle must hold one commit on top of %s, the head the run recorded", short(t.HeadSHA))
	}
	baseTree, err := g.run(ctx, repoDir, false, "rev-parse", t.HeadSHA+"^{tree}")
	if err != nil {
		return fail(err)
	}
	out, err := g.run(ctx, repoDir, false, "diff-tree", "-r", "-z", "--no-renames", "--no-ext-diff", t.HeadSHA, info.HeadSHA)
	if err != nil {
		return fail(fmt.Errorf("list the commit's changes: %w", err))
	}
	var entries []*github.TreeEntry
	fields := strings.Split(out, "\x00")
	for i := 0; i+1 < len(fields); i += 2 {
		meta, path := strings.Fields(strings.TrimPrefix(fields[i], ":")), fields[i+1]
		if len(meta) != 5 {
			return fail(fmt.Errorf("diff-tree line %q", fields[i]))
		}
		mode, sha, status := meta[1], meta[3], meta[4]
		if status == "D" {
			entries = append(entries, &github.TreeEntry{Path: github.String(path), Mode: github.String(meta[0]), Type: github.String("blob")})
			continue
		}
		if mode != "100644" && mode != "100755" {
			return rej("the commit changes %s to mode %s; only regular files may be pushed", path, mode)
		}
		data, err := g.run(ctx, repoDir, false, "cat-file", "blob", sha)
		if err != nil {
			return fail(err)
		}
		te := &github.TreeEntry{Path: github.String(path), Mode: github.String(mode), Type: github.String("blob")}
		if utf8.ValidString(data) && !strings.ContainsRune(data, 0) {
			te.Content = github.String(data)
		} else {
			owner, name := splitRepo(headRepo)
			b, _, err := p.o.Bot.Git.CreateBlob(ctx, owner, name, &github.Blob{Content: github.String(encodeBase64(data)), Encoding: github.String("base64")})
			if err != nil {
				return fail(fmt.Errorf("create a blob for %s: %w", path, err))
			}
			te.SHA = b.SHA
		}
		entries = append(entries, te)
	}
	if len(entries) == 0 {
		return rej("the commit changes nothing")
	}
	return pushEntries{entries: entries}, strings.TrimSpace(baseTree), nil
}

func isHexSHA(s string) bool {
	if len(s) != 40 {
		return false
	}
	for _, c := range s {
		if !strings.ContainsRune("0123456789abcdefABCDEF", c) {
			return false
		}
	}
	return true
}

func firstErrLine(err error) string {
	var ge *github.ErrorResponse
	if errors.As(err, &ge) {
		return ge.Message
	}
	l, _, _ := strings.Cut(err.Error(), "\n")
	return l
}

func short(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}

func encodeBase64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

// moved reports a push refused because the branch moved.
func moved(refused []render.Refusal) bool {
	for _, r := range refused {
		if r.Rule == RuleBranchMoved {
			return true
		}
	}
	return false
}

// canPush reads a repository object's permissions (as the token's account
// sees them).
func canPush(perms map[string]bool) bool { return perms["push"] || perms["maintain"] || perms["admin"] }
