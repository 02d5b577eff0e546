// Package prbundle turns the commits an agent made in its checkout into a
// git bundle the publish job can open as a pull request, and inspects such a
// bundle again on the publish side. The agent job cannot push (it holds no
// write token), so the bundle is how its commits leave the sandbox.
package prbundle

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// DefaultMaxBytes caps a bundle when Options.MaxBytes is 0.
const DefaultMaxBytes = 10 << 20

// ErrNoCommits means HEAD has nothing that the base lacks.
var ErrNoCommits = errors.New("no commits on HEAD that are not already on the base")

// WorkflowError means the commits touch .github/workflows/, which could
// make the publish job's token run code the operator did not review.
type WorkflowError struct{ Paths []string }

func (e *WorkflowError) Error() string {
	return fmt.Sprintf("the commits change GitHub Actions workflows (%s); workflow changes are not allowed in this run", strings.Join(e.Paths, ", "))
}

// SpecialEntryError means the commits add, change, delete or change the
// mode of a symbolic link (mode 120000) or a submodule (gitlink, mode
// 160000). The checkout holds a symlink as a plain file with its target as
// text, so an agent editing that text points the link anywhere
// (/proc/self/environ, another user's key) once GitHub serves it; a gitlink
// names code from another repository. Neither is ever written.
type SpecialEntryError struct{ Paths []string }

// RuleSpecialEntry is the rule the gate and publish record when they refuse
// a *SpecialEntryError.
const RuleSpecialEntry = "symlink-or-submodule"

func (e *SpecialEntryError) Error() string {
	return fmt.Sprintf("the commits change symbolic links or submodules (%s); such entries are never changed by this bot: leave them as they are and edit regular files only", strings.Join(e.Paths, ", "))
}

// TooLargeError means the bundle is bigger than the cap.
type TooLargeError struct{ Size, Max int64 }

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("the bundle of the commits is %d bytes, over the %d-byte limit; make smaller commits (no generated or binary files)", e.Size, e.Max)
}

// Options tune Capture.
type Options struct {
	Out                  string // bundle file to write (required)
	AllowWorkflowChanges bool
	MaxBytes             int64 // 0 = DefaultMaxBytes
}

// Bundle describes a written bundle.
type Bundle struct {
	Path    string   `json:"path"`
	Base    string   `json:"base"`     // the base as given (e.g. origin/main)
	BaseSHA string   `json:"base_sha"` // the prerequisite commit
	HeadSHA string   `json:"head_sha"`
	Commits int      `json:"commits"`
	Paths   []string `json:"paths"` // every path any commit touched, sorted
	Size    int64    `json:"size"`
}

// Capture bundles base..HEAD of the repository at workdir into opts.Out.
// It refuses (typed errors) when there are no commits, when any commit
// touches .github/workflows/ unless allowed, when any commit changes a
// symlink or submodule entry (*SpecialEntryError, always), and when the
// bundle is over the cap; on refusal no file is left behind.
func Capture(ctx context.Context, workdir, base string, opts Options) (Bundle, error) {
	if base == "" || strings.HasPrefix(base, "-") {
		return Bundle{}, fmt.Errorf("prbundle: invalid base %q", base)
	}
	baseSHA, err := resolve(ctx, workdir, base)
	if err != nil {
		return Bundle{}, fmt.Errorf("prbundle: base %s: %w", base, err)
	}
	return capture(ctx, workdir, base, baseSHA, opts)
}

// capture is Capture once base is resolved (baseSHA, a commit of workdir's
// object store): a caller that has just resolved it does not run git again
// for it, and the range is counted from the commit it decided on.
func capture(ctx context.Context, workdir, base, baseSHA string, opts Options) (Bundle, error) {
	if opts.Out == "" {
		return Bundle{}, errors.New("prbundle: no output path")
	}
	max := opts.MaxBytes
	if max <= 0 {
		max = DefaultMaxBytes
	}
	commits, paths, special, err := touchedPaths(ctx, workdir, baseSHA+"..HEAD")
	if err != nil {
		return Bundle{}, fmt.Errorf("prbundle: list commits and changed paths: %w", err)
	}
	if len(commits) == 0 {
		return Bundle{}, ErrNoCommits
	}
	if len(special) > 0 {
		return Bundle{}, &SpecialEntryError{Paths: special}
	}
	// HEAD is the walk's only starting point, so git log lists it first:
	// no rev-parse of its own.
	headSHA := commits[0]
	if wf := WorkflowPaths(paths); len(wf) > 0 && !opts.AllowWorkflowChanges {
		return Bundle{}, &WorkflowError{Paths: wf}
	}
	out, err := filepath.Abs(opts.Out)
	if err != nil {
		return Bundle{}, fmt.Errorf("prbundle: output path: %w", err)
	}
	// Write beside the target and rename, so a half-written or oversized
	// bundle never sits under the name the outputs entry points at.
	tmp := out + ".tmp"
	defer os.Remove(tmp)
	// The bundle's only ref is HEAD and its only prerequisite the base.
	if _, err := git(ctx, workdir, "bundle", "create", "--quiet", tmp, "HEAD", "^"+baseSHA); err != nil {
		return Bundle{}, fmt.Errorf("prbundle: create bundle: %w", err)
	}
	st, err := os.Stat(tmp)
	if err != nil {
		return Bundle{}, fmt.Errorf("prbundle: stat bundle: %w", err)
	}
	if st.Size() > max {
		return Bundle{}, &TooLargeError{Size: st.Size(), Max: max}
	}
	if _, err := git(ctx, workdir, "bundle", "verify", "--quiet", tmp); err != nil {
		return Bundle{}, fmt.Errorf("prbundle: verify new bundle: %w", err)
	}
	if err := os.Rename(tmp, out); err != nil {
		return Bundle{}, fmt.Errorf("prbundle: %w", err)
	}
	return Bundle{Path: out, Base: base, BaseSHA: baseSHA, HeadSHA: headSHA,
		Commits: len(commits), Paths: paths, Size: st.Size()}, nil
}

// WorkflowPaths returns the paths under .github/ (or .github itself), in
// any case: workflows, but also the local actions, CODEOWNERS and settings
// a workflow reads (a changed .github/actions/build/action.yml runs with
// the workflow's permissions). Renames are seen under both names (the
// paths come from --no-renames). It errs on refusing.
func WorkflowPaths(paths []string) []string {
	var out []string
	for _, p := range paths {
		l := strings.ToLower(strings.TrimPrefix(p, "./"))
		if l == ".github" || strings.HasPrefix(l, ".github/") {
			out = append(out, p)
		}
	}
	return out
}

func resolve(ctx context.Context, dir, rev string) (string, error) {
	out, err := git(ctx, dir, "rev-parse", "--verify", "--quiet", "--end-of-options", rev+"^{commit}")
	if err != nil {
		return "", fmt.Errorf("not a commit in %s: %w", dir, err)
	}
	return strings.TrimSpace(string(out)), nil
}

// touchedPaths lists the commits of the range and every path any of them
// changed, merges included (-m diffs them against each parent), renames as
// delete+add so both names are seen, in one git log. --raw puts a status
// record (":<modes> <ids> <status>") before each path, so every path is
// read by its position after one, never by its look: no file name can pass
// for a commit line or hide the path after it. Output of any other shape
// is an error, not a guess. --ignore-submodules=none: a submodule's
// change is a path too, whatever diff.ignoreSubmodules or the checkout's
// .gitmodules ("ignore = all", which no -c overrides) say. special lists
// the paths whose record names mode 120000 (symlink) or 160000 (gitlink)
// on either side: added, deleted, modified or changed to or from one.
func touchedPaths(ctx context.Context, dir string, rng ...string) (commits, paths, special []string, err error) {
	args := append([]string{"log", "--no-renames", "--ignore-submodules=none", "-m", "--raw", "--no-abbrev", "--format=%x01%H", "-z"}, rng...)
	out, err := git(ctx, dir, args...)
	if err != nil {
		return nil, nil, nil, err
	}
	seenCommit, seenPath, seenSpecial := map[string]bool{}, map[string]bool{}, map[string]bool{}
	f := bytes.Split(out, []byte{0})
	if len(f) > 0 && len(f[len(f)-1]) == 0 {
		f = f[:len(f)-1] // the terminator of the last path or commit line
	}
	for i := 0; i < len(f); i++ {
		tok := string(f[i])
		switch {
		case strings.HasPrefix(strings.TrimPrefix(tok, "\n"), ":"):
			if i+1 >= len(f) || len(f[i+1]) == 0 {
				return nil, nil, nil, fmt.Errorf("git log: status record %q without its path", tok)
			}
			sp, err := specialMode(tok)
			if err != nil {
				return nil, nil, nil, err
			}
			i++
			p := string(f[i])
			if !seenPath[p] {
				seenPath[p] = true
				paths = append(paths, p)
			}
			if sp && !seenSpecial[p] {
				seenSpecial[p] = true
				special = append(special, p)
			}
		case strings.HasPrefix(tok, "\x01") && isHex(tok[1:]):
			if !seenCommit[tok[1:]] { // a merge comes once per parent
				seenCommit[tok[1:]] = true
				commits = append(commits, tok[1:])
			}
		default:
			return nil, nil, nil, fmt.Errorf("git log: unexpected output %q", tok)
		}
	}
	sort.Strings(paths)
	sort.Strings(special)
	return commits, paths, special, nil
}

// specialMode reads a --raw status record (":<src mode> <dst mode> <src id>
// <dst id> <status>") and says whether either mode is a symlink (120000) or
// a gitlink (160000). A record of another shape is an error, not a guess.
func specialMode(rec string) (bool, error) {
	f := strings.Fields(strings.TrimPrefix(strings.TrimPrefix(rec, "\n"), ":"))
	if len(f) != 5 || len(f[0]) != 6 || len(f[1]) != 6 {
		return false, fmt.Errorf("git log: status record %q is not :<mode> <mode> <id> <id> <status>", rec)
	}
	for _, m := range f[:2] {
		if m == "120000" || m == "160000" {
			return true, nil
		}
	}
	return false, nil
}

// ErrNoBase means neither origin/<branch> nor the fallback commit exists.
var ErrNoBase = errors.New("base not found in the checkout")

// Base is a base as named (a ref or a commit id) and the commit it
// resolved to, once: what CaptureOnto counts the commits from.
type Base struct{ Name, SHA string }

// ResolveBase picks the base a pull request's commits are counted from:
// the remote-tracking branch origin/<branch> when the checkout has it, else
// fallback (the commit the agent started from) when that is a commit.
func ResolveBase(ctx context.Context, workdir, branch, fallback string) (Base, error) {
	if branch != "" && !strings.HasPrefix(branch, "-") {
		ref := "refs/remotes/origin/" + branch
		if sha, err := resolve(ctx, workdir, ref); err == nil {
			return Base{Name: ref, SHA: sha}, nil
		}
	}
	if fallback != "" && !strings.HasPrefix(fallback, "-") {
		if sha, err := resolve(ctx, workdir, fallback); err == nil {
			return Base{Name: fallback, SHA: sha}, nil
		}
	}
	return Base{}, fmt.Errorf("%w: no origin/%s and no usable starting commit", ErrNoBase, branch)
}
