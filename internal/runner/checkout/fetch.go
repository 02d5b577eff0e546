package checkout

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/mention-runner/mention-runner/internal/core/redact"
	"github.com/mention-runner/mention-runner/internal/runner/gitexec"
)

// DefaultMaxBytes caps a fetch when FetchOptions.MaxBytes is 0.
const DefaultMaxBytes = 200 << 20

// gitTimeout bounds one git command; a fetch of a capped shallow pack
// never needs longer, and a hung remote must not hang the job.
const gitTimeout = 10 * time.Minute

// TooLargeError means the fetched code is bigger than the cap.
type TooLargeError struct{ Size, Max int64 }

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("checkout: the target's code at this commit is over the %d-byte cap (%d bytes fetched so far); raise max-checkout-bytes or mention the bot on a smaller repository", e.Max, e.Size)
}

// DefaultMaxTreeBytes caps the checked-out size when
// FetchOptions.MaxTreeBytes is 0.
const DefaultMaxTreeBytes = 1 << 30

// TreeTooLargeError means the files of the fetched commit add up to more
// than the cap: a small pack can hold a tree that would fill the disk
// when checked out (compressible or repeated content).
type TreeTooLargeError struct{ Size, Max int64 }

func (e *TreeTooLargeError) Error() string {
	return fmt.Sprintf("checkout: the target's files at this commit add up to %d bytes, over the %d-byte cap on a checkout; raise max-tree-bytes or mention the bot on a smaller repository", e.Size, e.Max)
}

// FetchOptions configure Fetch.
type FetchOptions struct {
	ServerURL string // web base URL, e.g. https://github.com (clone URLs are <ServerURL>/<owner>/<name>.git)
	Token     string // the bot's token; "" fetches anonymously
	MaxBytes  int64  // cap on the fetched objects; 0 = DefaultMaxBytes
	// MaxTreeBytes caps the sum of the commit's file sizes, what a
	// checkout writes; 0 = DefaultMaxTreeBytes.
	MaxTreeBytes int64
	OutDir       string // where PackFile and ManifestFile are written
	// Poll is how often the size of the fetch is checked; 0 = 100ms.
	Poll time.Duration
}

// Fetch fetches t's code — the recorded PR head commit (and, for a pull
// request from a fork, the default branch's tip), or the default branch's
// tip — at depth 1 with opts.Token, and writes the pack and the
// manifest into opts.OutDir. The fetch stops with a *TooLargeError as soon
// as it grows past the cap, and a commit whose files add up to more than
// opts.MaxTreeBytes is refused (*TreeTooLargeError) before anything is
// written there: the agent job would check them all out.
func Fetch(ctx context.Context, t Target, opts FetchOptions) (Manifest, error) {
	if opts.OutDir == "" || opts.ServerURL == "" {
		return Manifest{}, errors.New("checkout: fetch needs an output directory and a server URL")
	}
	max := opts.MaxBytes
	if max <= 0 {
		max = DefaultMaxBytes
	}
	work, err := os.MkdirTemp("", "mr-fetch-")
	if err != nil {
		return Manifest{}, fmt.Errorf("checkout: %w", err)
	}
	defer os.RemoveAll(work)
	bare := filepath.Join(work, "repo.git")
	local := gitexec.Isolated(work, "", gitTimeout)
	if _, err := local.Run(ctx, "init", "--quiet", "--bare", bare); err != nil {
		return Manifest{}, fmt.Errorf("checkout: %w", err)
	}
	remote := gitexec.Isolated(bare, "", gitTimeout, gitexec.AuthEnv(opts.Token, opts.ServerURL)...)
	remote.Scrub = func(s string) string { return scrub(s, opts.Token) }
	url := strings.TrimSuffix(opts.ServerURL, "/") + "/" + t.Repo + ".git"
	const ref, baseRef = "refs/mention-runner/target", "refs/mention-runner/base"
	if t.DefaultBranch == "" {
		if t.DefaultBranch, err = remoteDefaultBranch(ctx, remote, url); err != nil {
			return Manifest{}, err
		}
	}
	// A pull request from a fork: a pull request the agent opens from it
	// cannot stack on a branch of another repository, so it goes into the
	// default branch. Its tip comes along (in the same fetch, so in the
	// same pack) for the agent's change to be put on top of.
	var extra []string
	if t.FromFork() {
		extra = []string{"+refs/heads/" + t.DefaultBranch + ":" + baseRef}
	}
	// fetch.unpackLimit=1 keeps what arrives as one pack, which is what we hand on.
	fetch := func(want string) error {
		return watchSize(ctx, bare, max, opts.Poll, func(ctx context.Context) error {
			args := append([]string{"-c", "fetch.unpackLimit=1", "fetch", "--quiet", "--no-tags", "--no-write-fetch-head",
				"--depth=1", "--end-of-options", url, "+" + want + ":" + ref}, extra...)
			_, err := remote.Run(ctx, args...)
			return err
		})
	}
	var errFetch error
	if t.IsPR() {
		// The recorded commit itself; GitHub serves any reachable commit.
		// If the server will not, the PR's ref, which must still point at it.
		if errFetch = fetch(t.HeadSHA); errFetch != nil && !isTooLarge(errFetch) {
			errFetch = fetch(fmt.Sprintf("refs/pull/%d/head", t.PullNumber))
		}
	} else {
		errFetch = fetch("refs/heads/" + t.DefaultBranch)
	}
	if errFetch != nil {
		if isTooLarge(errFetch) {
			return Manifest{}, errFetch
		}
		return Manifest{}, fmt.Errorf("checkout: fetch %s: %w", t.Repo, errFetch)
	}
	out, err := remote.Run(ctx, "rev-parse", "--verify", "--end-of-options", ref+"^{commit}")
	if err != nil {
		return Manifest{}, fmt.Errorf("checkout: %w", err)
	}
	commit := strings.TrimSpace(string(out))
	if t.IsPR() && commit != t.HeadSHA {
		return Manifest{}, fmt.Errorf("checkout: %s#%d's head is now %s, not %s as when the bot was mentioned; mention the bot again to work on the new head", t.Repo, t.PullNumber, short(commit), short(t.HeadSHA))
	}
	maxTree := opts.MaxTreeBytes
	if maxTree <= 0 {
		maxTree = DefaultMaxTreeBytes
	}
	if n, err := treeBytes(ctx, remote, commit); err != nil {
		return Manifest{}, err
	} else if n > maxTree {
		return Manifest{}, &TreeTooLargeError{Size: n, Max: maxTree}
	}
	m := Manifest{Target: t, Commit: commit}
	if t.FromFork() {
		out, err := remote.Run(ctx, "rev-parse", "--verify", "--end-of-options", baseRef+"^{commit}")
		if err != nil {
			return Manifest{}, fmt.Errorf("checkout: the default branch %s of %s: %w", t.DefaultBranch, t.Repo, err)
		}
		m.BaseCommit = strings.TrimSpace(string(out))
	}
	// The commits whose parents were cut off: the agent job's git must be
	// told, or it would find the pack incomplete.
	if b, err := os.ReadFile(filepath.Join(bare, "shallow")); err == nil {
		m.Shallow = strings.Fields(string(b))
	}
	packs, _ := filepath.Glob(filepath.Join(bare, "objects", "pack", "*.pack"))
	if len(packs) != 1 {
		return Manifest{}, fmt.Errorf("checkout: expected one pack after the fetch, found %d", len(packs))
	}
	if err := os.MkdirAll(opts.OutDir, 0o755); err != nil {
		return Manifest{}, fmt.Errorf("checkout: %w", err)
	}
	size, err := copyFile(packs[0], filepath.Join(opts.OutDir, PackFile))
	if err != nil {
		return Manifest{}, fmt.Errorf("checkout: %w", err)
	}
	if size > max {
		return Manifest{}, &TooLargeError{Size: size, Max: max}
	}
	m.PackBytes = size
	if err := writeManifest(opts.OutDir, m); err != nil {
		return Manifest{}, err
	}
	return m, nil
}

// treeBytes sums the sizes of the blobs in commit's tree, read from the
// object headers (ls-tree's objectsize: no blob is inflated); a submodule
// entry ("-") adds nothing, as no file is written for it.
func treeBytes(ctx context.Context, g gitexec.Command, commit string) (int64, error) {
	out, err := g.Run(ctx, "ls-tree", "-r", "--format=%(objectsize)", "--end-of-options", commit)
	if err != nil {
		return 0, fmt.Errorf("checkout: size the tree of %s: %w", short(commit), err)
	}
	var n int64
	for _, f := range strings.Fields(string(out)) {
		if f == "-" {
			continue
		}
		size, err := strconv.ParseInt(f, 10, 64)
		if err != nil || size < 0 {
			return 0, fmt.Errorf("checkout: size the tree of %s: git listed a size %q", short(commit), f)
		}
		n += size
	}
	return n, nil
}

func writeManifest(dir string, m Manifest) error {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return fmt.Errorf("checkout: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, ManifestFile), append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("checkout: %w", err)
	}
	return nil
}

// remoteDefaultBranch asks the server which branch its HEAD names.
func remoteDefaultBranch(ctx context.Context, remote gitexec.Command, url string) (string, error) {
	out, err := remote.Run(ctx, "ls-remote", "--symref", "--end-of-options", url, "HEAD")
	if err != nil {
		return "", fmt.Errorf("checkout: find the default branch: %w", err)
	}
	for _, line := range strings.Split(string(out), "\n") {
		if rest, ok := strings.CutPrefix(line, "ref: refs/heads/"); ok {
			b, _, _ := strings.Cut(rest, "\t")
			if ValidBranch(b) {
				return b, nil
			}
		}
	}
	return "", fmt.Errorf("checkout: the server did not say which branch is the default of the repository")
}

func isTooLarge(err error) bool {
	var tl *TooLargeError
	return errors.As(err, &tl)
}

// watchSize runs fn and cancels it with a *TooLargeError when dir grows
// past max while it runs.
func watchSize(ctx context.Context, dir string, max int64, poll time.Duration, fn func(context.Context) error) error {
	if poll <= 0 {
		poll = 100 * time.Millisecond
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(poll)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				if n := dirSize(dir); n > max {
					cancel(&TooLargeError{Size: n, Max: max})
					return
				}
			}
		}
	}()
	err := fn(ctx)
	close(done)
	if cause := context.Cause(ctx); isTooLarge(cause) {
		return cause
	}
	if err == nil {
		if n := dirSize(dir); n > max {
			return &TooLargeError{Size: n, Max: max}
		}
	}
	return err
}

func dirSize(dir string) int64 {
	var n int64
	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if info, err := d.Info(); err == nil {
				n += info.Size()
			}
		}
		return nil
	})
	return n
}

func copyFile(src, dst string) (int64, error) {
	in, err := os.Open(src)
	if err != nil {
		return 0, err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return 0, err
	}
	n, err := io.Copy(out, in)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	return n, err
}

func scrub(s, token string) string {
	if token != "" {
		s = strings.ReplaceAll(s, token, "[REDACTED]")
	}
	return redact.String(s)
}

func short(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}
