package prbundle

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// Info is what a bundle holds, recomputed from its objects.
type Info struct {
	Prerequisites    []string `json:"prerequisites"` // commits the bundle builds on
	HeadSHA          string   `json:"head_sha"`
	Commits          []Commit `json:"commits"` // newest first
	Paths            []string `json:"paths"`   // every path any commit touched, sorted
	TouchesWorkflows bool     `json:"touches_workflows"`
	Size             int64    `json:"size"`
}

// Commit is one commit of a bundle.
type Commit struct {
	SHA     string `json:"sha"`
	Subject string `json:"subject"`
	Author  string `json:"author"`
}

// ErrBadBundle means the file is not a bundle this package would write:
// not a v2/v3 bundle, no HEAD ref, or more than one ref.
var ErrBadBundle = errors.New("not a single-HEAD git bundle")

// ErrNoSharedHistory means the bundle does not build on any commit of the
// base: it names no prerequisite commits.
var ErrNoSharedHistory = errors.New("the bundle shares no history with the base (it has no prerequisite commits)")

// maxHeader bounds the text header we read before the pack starts.
const maxHeader = 64 << 10

// InspectInto verifies the bundle against scratchDir, a repository that
// must hold its prerequisite commits (the publish job's scratch repository
// holding the base), and lists its commits and changed paths again without
// trusting anything the agent job recorded. The bundle is fetched into
// scratchDir (its head at refs/inspect/head), so the caller can push
// Info.HeadSHA from there without fetching it again: scratchDir must be a
// repository the caller made for this and throws away, never a checkout
// anyone reads afterwards (on refusal it may hold the refused objects).
// A bundle changing a symlink or submodule entry is refused
// (*SpecialEntryError), as Capture refuses to write one.
func InspectInto(ctx context.Context, scratchDir, bundlePath string) (Info, error) {
	st, err := os.Stat(bundlePath)
	if err != nil {
		return Info{}, fmt.Errorf("prbundle: %w", err)
	}
	prereqs, refs, err := readHeader(bundlePath)
	if err != nil {
		return Info{}, fmt.Errorf("prbundle: %s: %w", bundlePath, err)
	}
	if len(refs) != 1 || refs[0][1] != "HEAD" {
		return Info{}, fmt.Errorf("prbundle: %s: %w (refs: %v)", bundlePath, ErrBadBundle, refs)
	}
	if len(prereqs) == 0 {
		// A bundle with no prerequisites carries a whole history of its own:
		// it shares none with the base, so nothing says what it changes.
		return Info{}, fmt.Errorf("prbundle: %s: %w", bundlePath, ErrNoSharedHistory)
	}
	bundleAbs, err := filepath.Abs(bundlePath)
	if err != nil {
		return Info{}, fmt.Errorf("prbundle: %w", err)
	}
	// The fetch verifies the bundle first, as `git bundle verify` would (the
	// same check in git: unbundle runs verify_bundle before index-pack):
	// every prerequisite must be a commit scratchDir has, with its history,
	// or nothing is fetched and git says which commits it lacks.
	if _, err := git(ctx, scratchDir, "fetch", "--quiet", "--no-tags", "--no-write-fetch-head", bundleAbs, "HEAD:refs/inspect/head"); err != nil {
		return Info{}, fmt.Errorf("prbundle: fetch %s: %w", bundlePath, err)
	}
	head, err := resolve(ctx, scratchDir, "refs/inspect/head")
	if err != nil {
		return Info{}, fmt.Errorf("prbundle: %w", err)
	}
	if head != refs[0][0] {
		return Info{}, fmt.Errorf("prbundle: %s: HEAD fetched as %s but the header says %s", bundlePath, head, refs[0][0])
	}
	rng := []string{head}
	for _, p := range prereqs {
		rng = append(rng, "^"+p)
	}
	out, err := git(ctx, scratchDir, append([]string{"log", "--format=%H%x00%an <%ae>%x00%s%x00"}, rng...)...)
	if err != nil {
		return Info{}, fmt.Errorf("prbundle: list commits: %w", err)
	}
	info := Info{Prerequisites: prereqs, HeadSHA: head, Size: st.Size()}
	f := lines(out, 0)
	for i := 0; i+2 < len(f); i += 3 {
		info.Commits = append(info.Commits, Commit{SHA: strings.TrimLeft(f[i], "\n"), Author: f[i+1], Subject: f[i+2]})
	}
	var special []string
	if _, info.Paths, special, err = touchedPaths(ctx, scratchDir, rng...); err != nil {
		return Info{}, fmt.Errorf("prbundle: list changed paths: %w", err)
	}
	if len(special) > 0 {
		// The same rule as Capture's, from the bundle's own objects: every
		// write built from a bundle refuses it, whatever the gate recorded.
		return Info{}, &SpecialEntryError{Paths: special}
	}
	info.TouchesWorkflows = len(WorkflowPaths(info.Paths)) > 0
	return info, nil
}

// readHeader parses the bundle's text header: "-<sha> comment" lines are
// prerequisites, "<sha> <ref>" lines are refs, a blank line ends it.
func readHeader(path string) (prereqs []string, refs [][2]string, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	return parseHeader(io.LimitReader(f, maxHeader))
}

func parseHeader(r io.Reader) (prereqs []string, refs [][2]string, err error) {
	br := bufio.NewReader(r)
	sig, err := br.ReadString('\n')
	if err != nil || (sig != "# v2 git bundle\n" && sig != "# v3 git bundle\n") {
		return nil, nil, fmt.Errorf("%w: missing bundle signature", ErrBadBundle)
	}
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			return nil, nil, fmt.Errorf("%w: header not terminated", ErrBadBundle)
		}
		line = strings.TrimSuffix(line, "\n")
		switch {
		case line == "":
			return prereqs, refs, nil
		case strings.HasPrefix(line, "@"): // v3 capability
		case strings.HasPrefix(line, "-"):
			sha, _, _ := strings.Cut(line[1:], " ")
			if !isHex(sha) {
				return nil, nil, fmt.Errorf("%w: bad prerequisite %q", ErrBadBundle, line)
			}
			prereqs = append(prereqs, sha)
		default:
			sha, ref, ok := strings.Cut(line, " ")
			if !ok || !isHex(sha) || ref == "" {
				return nil, nil, fmt.Errorf("%w: bad ref line %q", ErrBadBundle, line)
			}
			refs = append(refs, [2]string{sha, ref})
		}
	}
}

func isHex(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	return bytes.IndexFunc([]byte(s), func(r rune) bool {
		return !(r >= '0' && r <= '9' || r >= 'a' && r <= 'f')
	}) < 0
}
