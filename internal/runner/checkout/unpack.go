package checkout

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/mention-runner/mention-runner/internal/runner/gitexec"
)

// Repo is a checkout whose git directory is kept apart from its working
// tree: the agent edits the tree, only runner code touches GitDir, and
// every git command names both explicitly, so nothing the agent or the
// target writes into the tree (a .git file or directory included) can
// change which repository or configuration git uses.
type Repo struct {
	WorkTree string
	GitDir   string
}

// Git is an isolated git command on r (gitexec.Isolated with GIT_DIR and
// GIT_WORK_TREE set).
func (r Repo) Git() gitexec.Command {
	return gitexec.Isolated(r.WorkTree, "", gitTimeout, "GIT_DIR="+r.GitDir, "GIT_WORK_TREE="+r.WorkTree)
}

// Unpack reads the manifest and pack Fetch wrote in artifactDir, checks
// that the commit is the one want names (want.HeadSHA for a pull request;
// the repository must match), and checks it out into workTree (which must
// be empty or absent) with its git directory at gitDir. Symlinks are
// checked out as plain files holding the link text, so no path in the
// tree leads outside it. The branch is refs/heads/<Branch>, also as
// refs/remotes/origin/<Branch> when that branch belongs to the target
// repository, so a pull request's base resolves; for a pull request from
// a fork, refs/remotes/origin/<default branch> is the default branch's
// fetched tip instead.
func Unpack(ctx context.Context, artifactDir, workTree, gitDir string, want Target) (Manifest, error) {
	b, err := os.ReadFile(filepath.Join(artifactDir, ManifestFile))
	if err != nil {
		return Manifest{}, fmt.Errorf("checkout: read the fetched code's manifest: %w", err)
	}
	m, err := ParseManifest(b, want)
	if err != nil {
		return Manifest{}, err
	}
	want = m.Target
	branch := want.Branch()
	shallow := m.Shallow
	if len(shallow) == 0 {
		shallow = []string{m.Commit}
	}
	if err := emptyDir(workTree); err != nil {
		return Manifest{}, err
	}
	if err := os.MkdirAll(filepath.Dir(gitDir), 0o755); err != nil {
		return Manifest{}, fmt.Errorf("checkout: %w", err)
	}
	r := Repo{WorkTree: workTree, GitDir: gitDir}
	g := r.Git()
	// --initial-branch points HEAD at the branch (git checks the name, as
	// symbolic-ref would) without a process of its own.
	if _, err := gitexec.Isolated(workTree, "", gitTimeout).Run(ctx, "init", "--quiet", "--bare", "--initial-branch="+branch, gitDir); err != nil {
		return Manifest{}, fmt.Errorf("checkout: %w", err)
	}
	pack := filepath.Join(gitDir, "objects", "pack", "pack-target.pack")
	if _, err := copyFile(filepath.Join(artifactDir, PackFile), pack); err != nil {
		return Manifest{}, fmt.Errorf("checkout: %w", err)
	}
	// The commit's parents are not in a depth-1 pack: say so before
	// index-pack checks every object against its id and the commit's
	// connectivity.
	if err := os.WriteFile(filepath.Join(gitDir, "shallow"), []byte(strings.Join(shallow, "\n")+"\n"), 0o644); err != nil {
		return Manifest{}, fmt.Errorf("checkout: %w", err)
	}
	if _, err := g.Run(ctx, "index-pack", "--strict", pack); err != nil {
		return Manifest{}, fmt.Errorf("checkout: the fetched pack is damaged: %w", err)
	}
	// Both refs in one update-ref transaction (NUL-separated: names and
	// ids are checked above, and -z leaves nothing to parse): git still
	// refuses a branch that would not point at a commit.
	remote, remoteCommit := "refs/remotes/origin/"+branch, m.Commit
	if want.FromFork() {
		remote, remoteCommit = "refs/remotes/origin/"+want.DefaultBranch, m.BaseCommit
	}
	refs := "update refs/heads/" + branch + "\x00" + m.Commit + "\x00\x00" +
		"update " + remote + "\x00" + remoteCommit + "\x00\x00"
	if err := setWorkTreeConfig(ctx, g, gitDir); err != nil {
		return Manifest{}, fmt.Errorf("checkout: %w", err)
	}
	if _, err := g.RunInput(ctx, []byte(refs), "update-ref", "--stdin", "-z"); err != nil {
		return Manifest{}, fmt.Errorf("checkout: %w", err)
	}
	if _, err := g.Run(ctx, "read-tree", "--reset", "-u", "HEAD"); err != nil {
		return Manifest{}, fmt.Errorf("checkout: %w", err)
	}
	return m, nil
}

// The config lines `git config core.bare false` and `git config
// core.symlinks false` change in the config `git init --bare` writes: not
// bare (the tree is GIT_WORK_TREE), and symlinks checked out as plain
// files holding the link text.
const (
	bareLine       = "\tbare = true\n"
	notBareLine    = "\tbare = false\n"
	noSymlinksLine = "\tsymlinks = false\n" // git config appends it to [core]
)

// setWorkTreeConfig sets core.bare=false and core.symlinks=false in the
// fresh repository at gitDir. When its config is the single [core] section
// git init writes (bare = true, no symlinks key), the file is rewritten
// directly into the bytes the two git config commands would write (two
// processes fewer per checkout; TestWorkTreeConfigAsGitWritesIt compares
// them); any other shape is left to git config.
func setWorkTreeConfig(ctx context.Context, g gitexec.Command, gitDir string) error {
	p := filepath.Join(gitDir, "config")
	b, err := os.ReadFile(p)
	if err != nil {
		return err
	}
	if out, ok := workTreeConfigOf(string(b)); ok {
		tmp := p + ".lock" // git's own lock name: a concurrent git config waits or fails
		f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err != nil {
			return err
		}
		_, err = f.WriteString(out)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err == nil {
			err = os.Rename(tmp, p)
		}
		if err != nil {
			_ = os.Remove(tmp)
		}
		return err
	}
	for _, kv := range [][]string{{"core.bare", "false"}, {"core.symlinks", "false"}} {
		if _, err := g.Run(ctx, "config", kv[0], kv[1]); err != nil {
			return err
		}
	}
	return nil
}

// workTreeConfigOf is cfg with core.bare=false and core.symlinks=false, as
// git config writes them, when cfg is one [core] section of tab-indented
// "key = value" lines that git reads one way (a key as git spells keys, a
// value with no quote or backslash: a trailing backslash would continue
// the value onto the next line), with exactly one "bare = true" and no
// symlinks key; ok is false for anything else (FuzzWorkTreeConfigOf).
func workTreeConfigOf(cfg string) (string, bool) {
	body, ok := strings.CutPrefix(cfg, "[core]\n")
	if !ok || !strings.HasSuffix(body, "\n") {
		return "", false
	}
	lines := strings.Split(strings.TrimSuffix(body, "\n"), "\n")
	bare := -1
	for i, line := range lines {
		k, v, ok := strings.Cut(line, " = ")
		k, tab := strings.CutPrefix(k, "\t")
		if !tab || !ok || !configKey(k) || strings.ContainsAny(v, "\\\"\r\x00") || strings.EqualFold(k, "symlinks") {
			return "", false
		}
		if strings.EqualFold(k, "bare") {
			if bare >= 0 || line+"\n" != bareLine {
				return "", false
			}
			bare = i
		}
	}
	if bare < 0 {
		return "", false
	}
	lines[bare] = strings.TrimSuffix(notBareLine, "\n")
	return "[core]\n" + strings.Join(lines, "\n") + "\n" + noSymlinksLine, true
}

// configKey reports a variable name as git spells one: a letter, then
// letters, digits and '-'; git config refuses a file with any other.
func configKey(k string) bool {
	for i, r := range k {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && (r >= '0' && r <= '9' || r == '-')) {
			return false
		}
	}
	return k != ""
}

// emptyDir creates dir, or accepts it when it exists and is empty.
func emptyDir(dir string) error {
	ents, err := os.ReadDir(dir)
	switch {
	case os.IsNotExist(err):
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("checkout: %w", err)
		}
		return nil
	case err != nil:
		return fmt.Errorf("checkout: %w", err)
	case len(ents) > 0:
		return fmt.Errorf("checkout: the workspace %s is not empty; the fetched code is checked out only into an empty directory", dir)
	}
	return nil
}

// ParseManifest reads the manifest Fetch wrote (strictly: an unknown field
// is an error) and checks it against want, the target read from the
// trusted context: same repository, well-formed commit ids, the pull
// request's recorded head, a default-branch tip exactly when the pull
// request comes from a fork. The result carries want's branch names (the
// default branch from the manifest only when want lacks it).
func ParseManifest(b []byte, want Target) (Manifest, error) {
	var m Manifest
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		return Manifest{}, fmt.Errorf("checkout: manifest %s: %w", ManifestFile, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return Manifest{}, fmt.Errorf("checkout: manifest %s: more than one JSON value", ManifestFile)
	}
	switch {
	case !strings.EqualFold(m.Repo, want.Repo):
		return Manifest{}, fmt.Errorf("checkout: the fetched code is %s, the thread is in %s", m.Repo, want.Repo)
	case !shaRe().MatchString(m.Commit):
		return Manifest{}, fmt.Errorf("checkout: manifest commit %q is not a commit id", m.Commit)
	case want.IsPR() && m.Commit != want.HeadSHA:
		return Manifest{}, fmt.Errorf("checkout: the fetched code is commit %s, the pull request's recorded head is %s", short(m.Commit), short(want.HeadSHA))
	case want.FromFork() && !shaRe().MatchString(m.BaseCommit):
		return Manifest{}, fmt.Errorf("checkout: the pull request comes from a fork, but the fetched code lacks the default branch's tip (base_commit %q) its follow-up pull requests build on", m.BaseCommit)
	case !want.FromFork() && m.BaseCommit != "":
		return Manifest{}, fmt.Errorf("checkout: the manifest names a base commit, but the thread is not a pull request from a fork")
	}
	for _, s := range m.Shallow {
		if !shaRe().MatchString(s) {
			return Manifest{}, fmt.Errorf("checkout: manifest shallow commit %q is not a commit id", s)
		}
	}
	// The branch names come from the trusted context; the default branch
	// from the (trusted) fetch step when the context did not record it.
	def := m.DefaultBranch
	m.Target = want
	if m.DefaultBranch == "" && ValidBranch(def) {
		m.DefaultBranch = def
	}
	if branch := m.Branch(); !ValidBranch(branch) {
		return Manifest{}, fmt.Errorf("checkout: branch %q is not a branch name", branch)
	}
	if m.FromFork() && !ValidBranch(m.DefaultBranch) {
		return Manifest{}, fmt.Errorf("checkout: default branch %q is not a branch name", m.DefaultBranch)
	}
	return m, nil
}
