package prbundle

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// ConflictError means the agent's changes do not apply on the base they
// must go into (a pull request from a fork changed the same lines).
type ConflictError struct {
	Base   string
	Detail string
}

func (e *ConflictError) Error() string {
	return fmt.Sprintf("the changes do not apply on %s, the branch the pull request goes into (%s); change only what the base branch has as well, or describe the change in a comment", e.Base, e.Detail)
}

// CaptureOnto bundles the agent's work in r for a pull request into base.
// When base is where the agent started (start), the commits since then
// are bundled as they are (Capture). Otherwise — a pull request opened
// from a pull request of a fork: the agent worked on the fork's code, its
// pull request goes into the target's default branch — the changes from
// start to HEAD are put on top of base as one commit by id with msg, so
// the pull request carries the agent's change and none of the fork's
// commits. The working tree and its branch are left as they are. base
// comes from ResolveBase: the commit it names is not resolved again.
func CaptureOnto(ctx context.Context, r Repo, base Base, start string, id Identity, msg string, opts Options) (Bundle, error) {
	if base.Name == "" || strings.HasPrefix(base.Name, "-") || !isHex(base.SHA) {
		return Bundle{}, fmt.Errorf("prbundle: invalid base %q (%q)", base.Name, base.SHA)
	}
	if start == "" || start == base.SHA {
		return capture(ctx, r.Dir(), base.Name, base.SHA, opts)
	}
	head, err := Transplant(ctx, r, id, msg, start, "HEAD", base.SHA)
	if err != nil {
		return Bundle{}, err
	}
	b, err := captureCommit(ctx, r, base.SHA, head, opts)
	b.Base = base.Name
	return b, err
}

// Transplant makes one commit on top of onto holding the changes from..to
// of r, authored and committed by id with msg, and returns its id. It works
// on a temporary index: r's working tree, index and branches are not
// touched. ErrNoCommits: from..to changes nothing; *ConflictError: the
// changes do not apply on onto.
func Transplant(ctx context.Context, r Repo, id Identity, msg, from, to, onto string) (string, error) {
	if id.Name == "" || id.Email == "" {
		return "", errors.New("prbundle: transplant: no identity")
	}
	for _, rev := range []string{from, to, onto} {
		if rev == "" || strings.HasPrefix(rev, "-") {
			return "", fmt.Errorf("prbundle: transplant: invalid revision %q", rev)
		}
	}
	tmp, err := os.MkdirTemp("", "prbundle-transplant-")
	if err != nil {
		return "", fmt.Errorf("prbundle: %w", err)
	}
	defer os.RemoveAll(tmp)
	index, patch := filepath.Join(tmp, "index"), filepath.Join(tmp, "change.patch")
	// --no-ext-diff/--no-textconv: no diff program runs, whatever an
	// attribute names; --full-index lets apply fall back to a 3-way merge.
	// The rest pin the patch's form against the checkout's config (color,
	// diff.noprefix, diff.context, diff.ignoreSubmodules and .gitmodules
	// "ignore"), so it is the whole change as apply reads it
	// (TestTransplantHostileConfig).
	diff, err := git(ctx, r.Dir(), "diff", "--binary", "--full-index", "--no-ext-diff", "--no-textconv", "--no-renames",
		"--no-color", "--src-prefix=a/", "--dst-prefix=b/", "--unified=3", "--ignore-submodules=none",
		"--end-of-options", from, to)
	if err != nil {
		return "", fmt.Errorf("prbundle: transplant: diff the changes: %w", err)
	}
	if len(diff) == 0 {
		return "", ErrNoCommits
	}
	if err := os.WriteFile(patch, diff, 0o600); err != nil {
		return "", fmt.Errorf("prbundle: %w", err)
	}
	// GIT_INDEX_FILE and no work tree: only the temporary index changes.
	ix := func(args ...string) ([]byte, error) {
		return gitIn(ctx, r.Dir(), []string{"GIT_INDEX_FILE=" + index}, args...)
	}
	if _, err := ix("read-tree", onto); err != nil {
		return "", fmt.Errorf("prbundle: transplant: read %s: %w", onto, err)
	}
	// --whitespace=nowarn: apply.whitespace=fix would change the lines
	// the agent wrote, =error refuse them.
	if _, err := ix("apply", "--cached", "--whitespace=nowarn", patch); err != nil {
		// A 3-way merge runs the merge driver the checkout's config names
		// for a path's merge attribute (or merge.default): none of them.
		c, derr := command(r.Dir(), []string{"GIT_INDEX_FILE=" + index}).WithoutDrivers(ctx)
		if derr != nil {
			return "", fmt.Errorf("prbundle: transplant: %w", derr)
		}
		if _, err3 := c.Run(ctx, "apply", "--cached", "--whitespace=nowarn", "--3way", patch); err3 != nil {
			return "", &ConflictError{Base: onto, Detail: firstLine(err.Error())}
		}
	}
	tree, err := ix("write-tree")
	if err != nil {
		return "", fmt.Errorf("prbundle: transplant: %w", err)
	}
	if strings.TrimSpace(msg) == "" {
		msg = "Changes by " + id.Name
	}
	who := []string{"GIT_AUTHOR_NAME=" + id.Name, "GIT_AUTHOR_EMAIL=" + id.Email,
		"GIT_COMMITTER_NAME=" + id.Name, "GIT_COMMITTER_EMAIL=" + id.Email}
	out, err := gitIn(ctx, r.Dir(), who, "-c", "commit.gpgsign=false", "commit-tree", strings.TrimSpace(string(tree)), "-p", onto, "-m", msg)
	if err != nil {
		return "", fmt.Errorf("prbundle: transplant: commit: %w", err)
	}
	return strings.TrimSpace(string(out)), nil
}

// captureCommit bundles base..head like Capture, head being a commit that
// no branch names: a scratch repository borrowing r's objects (and its
// shallow list) has HEAD detached there, as the bundle's only ref must be
// HEAD.
func captureCommit(ctx context.Context, r Repo, base, head string, opts Options) (Bundle, error) {
	paths, err := git(ctx, r.Dir(), "rev-parse", "--path-format=absolute", "--git-path", "objects", "--git-path", "shallow")
	if err != nil {
		return Bundle{}, fmt.Errorf("prbundle: %w", err)
	}
	objects, shallow, ok := strings.Cut(strings.TrimSpace(string(paths)), "\n")
	if !ok || objects == "" || shallow == "" || strings.Contains(shallow, "\n") {
		return Bundle{}, fmt.Errorf("prbundle: git named the object store and shallow file as %q", paths)
	}
	tmp, err := os.MkdirTemp("", "prbundle-head-")
	if err != nil {
		return Bundle{}, fmt.Errorf("prbundle: %w", err)
	}
	defer os.RemoveAll(tmp)
	if _, err := git(ctx, tmp, "init", "--quiet", "--bare"); err != nil {
		return Bundle{}, fmt.Errorf("prbundle: scratch repo: %w", err)
	}
	alt := objects + "\n"
	if err := os.WriteFile(filepath.Join(tmp, "objects", "info", "alternates"), []byte(alt), 0o644); err != nil {
		return Bundle{}, fmt.Errorf("prbundle: %w", err)
	}
	if b, err := os.ReadFile(shallow); err == nil {
		if err := os.WriteFile(filepath.Join(tmp, "shallow"), b, 0o644); err != nil {
			return Bundle{}, fmt.Errorf("prbundle: %w", err)
		}
	}
	if _, err := git(ctx, tmp, "update-ref", "--no-deref", "HEAD", head); err != nil {
		return Bundle{}, fmt.Errorf("prbundle: %w", err)
	}
	// base was resolved in r, whose objects tmp borrows
	return capture(ctx, tmp, base, base, opts)
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return l
}

// CaptureSquash bundles the changes start..HEAD of r as one commit on top
// of start (authored and committed by id with msg): a push onto a pull
// request's branch adds exactly one commit whose parent is the head the
// run started from. ErrNoCommits: HEAD changes nothing since start.
func CaptureSquash(ctx context.Context, r Repo, start string, id Identity, msg string, opts Options) (Bundle, error) {
	if !isHex(start) {
		return Bundle{}, fmt.Errorf("prbundle: invalid start commit %q", start)
	}
	head, err := Transplant(ctx, r, id, msg, start, "HEAD", start)
	if err != nil {
		return Bundle{}, err
	}
	return captureCommit(ctx, r, start, head, opts)
}
