// Package checkout hands the target repository's code from a trusted job
// to the agent job without a token or a program from the target ever
// reaching the agent job. Fetch (trusted, with the bot's token) fetches
// exactly the commit the agent must work on — a pull request's head at the
// commit the context recorded, an issue's default branch — shallow and
// size-capped, into a pack file plus a manifest. Unpack (agent job) turns
// that pack into a working tree whose git directory lives outside the
// tree, written by our own isolated git: no config, hook or attribute
// driver of the target is ever installed, and symlinks arrive as plain
// files.
package checkout

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/mention-runner/mention-runner/internal/core/contract"
)

// Artifact file names, shared by the fetch step and the agent job.
const (
	PackFile     = contract.TargetPackFile
	ManifestFile = contract.TargetManifestFile
	DiffFile     = contract.TargetDiffFile
)

// Target is what the agent job must work on, read from the trusted context.
type Target struct {
	Repo          string `json:"repo"`           // owner/name of the thread's repository
	DefaultBranch string `json:"default_branch"` // the repository's default branch ("" = unknown until fetched)
	// PullNumber is the thread's number when it is a pull request.
	PullNumber int `json:"pull_number,omitempty"`
	// HeadSHA, HeadRef and HeadRepo are the pull request's head as the
	// context recorded it (the commit the mention was made on).
	HeadSHA  string `json:"head_sha,omitempty"`
	HeadRef  string `json:"head_ref,omitempty"`
	HeadRepo string `json:"head_repo,omitempty"`
	// BaseRef is the pull request's base branch: its diff is HeadSHA's
	// changes since the merge base with it ("" = not recorded: no diff).
	BaseRef string `json:"base_ref,omitempty"`
}

// IsPR reports a pull request thread.
func (t Target) IsPR() bool { return t.PullNumber > 0 }

// Branch is the local branch name the checkout is on: the PR's head
// branch, or the default branch.
func (t Target) Branch() string {
	if t.IsPR() {
		return t.HeadRef
	}
	return t.DefaultBranch
}

// FromFork reports a pull request whose head branch is not in the target
// repository (a fork's, or a deleted fork's).
func (t Target) FromFork() bool {
	return t.IsPR() && !strings.EqualFold(t.HeadRepo, t.Repo)
}

// StackedBase is the branch a pull request the agent opens from this
// thread merges into by default: the PR's own head branch when that branch
// lives in the target repository (a stacked PR), else the default branch.
func (t Target) StackedBase() string {
	if t.IsPR() && t.HeadRef != "" && !t.FromFork() {
		return t.HeadRef
	}
	return t.DefaultBranch
}

// Manifest describes a fetched pack: the target and the commit it holds.
type Manifest struct {
	Target
	Commit    string `json:"commit"`     // the commit the pack holds (HEAD of the checkout)
	PackBytes int64  `json:"pack_bytes"` // size of the pack file
	// BaseCommit is the default branch's tip, fetched too for a pull
	// request from a fork (FromFork): what the agent's own pull request
	// builds on.
	BaseCommit string `json:"base_commit,omitempty"`
	// Shallow lists the commits of the pack whose parents are not in it.
	Shallow []string `json:"shallow,omitempty"`
	// Diff describes DiffFile, the pull request's diff at Commit (nil: none
	// was fetched).
	Diff *DiffInfo `json:"diff,omitempty"`
}

// DiffInfo describes the diff file the fetch step wrote.
type DiffInfo struct {
	Bytes      int   `json:"bytes"`       // size of DiffFile
	BytesTotal int64 `json:"bytes_total"` // size of the whole diff on the server
	Truncated  bool  `json:"truncated"`   // DiffFile is a prefix of it, cut at a line end
	// Unavailable is the server's reason when it would not send the diff
	// (too large for it, say); the code is fetched all the same.
	Unavailable string `json:"unavailable,omitempty"`
}

// Compiled on first use: the counted repeats expand to thousands of
// allocations that every runner process paid at start-up.
var (
	shaRe  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[0-9a-f]{40}([0-9a-f]{24})?$`) })
	repoRe = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})/[A-Za-z0-9._-]{1,100}$`)
	})
	branchRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9._/+-]{1,255}$`) })
)

// ValidBranch reports a branch name git and GitHub both accept and that
// cannot be read as an option or a revision range.
func ValidBranch(b string) bool {
	return branchRe().MatchString(b) && !strings.HasPrefix(b, "-") && !strings.HasPrefix(b, "/") &&
		!strings.HasSuffix(b, "/") && !strings.HasSuffix(b, ".lock") && !strings.HasSuffix(b, ".") &&
		!strings.Contains(b, "..") && !strings.Contains(b, "//") && !strings.Contains(b, "/.") && !strings.HasPrefix(b, ".")
}

// ErrNoTarget means the context does not say which code to fetch.
var ErrNoTarget = errors.New("checkout: the context does not name the code to fetch")

// FromContext reads the target from the (trusted, verified) context.
func FromContext(raw []byte) (Target, error) {
	var c struct {
		Repository *struct {
			FullName      string `json:"full_name"`
			DefaultBranch string `json:"default_branch"`
		} `json:"repository"`
		Issue *struct {
			Number      int             `json:"number"`
			PullRequest json.RawMessage `json:"pull_request"`
		} `json:"issue"`
		PullRequest *struct {
			Number int `json:"number"`
			Head   *struct {
				SHA  string `json:"sha"`
				Ref  string `json:"ref"`
				Repo *struct {
					FullName string `json:"full_name"`
				} `json:"repo"`
			} `json:"head"`
			Base *struct {
				Ref string `json:"ref"`
			} `json:"base"`
		} `json:"pull_request"`
	}
	if err := json.Unmarshal(raw, &c); err != nil {
		return Target{}, fmt.Errorf("%w: %v", ErrNoTarget, err)
	}
	if c.Repository == nil || !repoRe().MatchString(c.Repository.FullName) {
		return Target{}, fmt.Errorf("%w: repository.full_name is missing or not owner/name", ErrNoTarget)
	}
	t := Target{Repo: c.Repository.FullName, DefaultBranch: c.Repository.DefaultBranch}
	// A repository object from a notification has no default_branch: the
	// fetch step asks the server for it then.
	if t.DefaultBranch != "" && !ValidBranch(t.DefaultBranch) {
		return Target{}, fmt.Errorf("%w: repository.default_branch %q is not a branch name", ErrNoTarget, t.DefaultBranch)
	}
	isPR := c.PullRequest != nil || (c.Issue != nil && len(c.Issue.PullRequest) > 0 && string(c.Issue.PullRequest) != "null")
	if !isPR {
		return t, nil
	}
	if c.PullRequest == nil || c.PullRequest.Head == nil {
		return Target{}, fmt.Errorf("%w: a pull request thread without pull_request.head", ErrNoTarget)
	}
	h := c.PullRequest.Head
	t.PullNumber = c.PullRequest.Number
	if t.PullNumber <= 0 && c.Issue != nil {
		t.PullNumber = c.Issue.Number
	}
	t.HeadSHA, t.HeadRef = strings.ToLower(h.SHA), h.Ref
	if h.Repo != nil {
		t.HeadRepo = h.Repo.FullName // nil when the fork was deleted
	}
	if b := c.PullRequest.Base; b != nil {
		t.BaseRef = b.Ref
	}
	switch {
	case t.PullNumber <= 0:
		return Target{}, fmt.Errorf("%w: pull_request.number is missing", ErrNoTarget)
	case !shaRe().MatchString(t.HeadSHA):
		return Target{}, fmt.Errorf("%w: pull_request.head.sha %q is not a commit id", ErrNoTarget, h.SHA)
	case !ValidBranch(t.HeadRef):
		return Target{}, fmt.Errorf("%w: pull_request.head.ref %q is not a branch name", ErrNoTarget, h.Ref)
	case t.BaseRef != "" && !ValidBranch(t.BaseRef):
		return Target{}, fmt.Errorf("%w: pull_request.base.ref %q is not a branch name", ErrNoTarget, t.BaseRef)
	}
	return t, nil
}
