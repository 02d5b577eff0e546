package githubsim

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"time"
)

// gitTimeout bounds every git command the simulator runs.
const gitTimeout = 30 * time.Second

// errGit marks failures of the git binary (as opposed to bad input).
var errGit = errors.New("git failed")

// runGit runs git in dir (a bare repository) and returns stdout.
func (s *Sim) runGit(ctx context.Context, dir string, stdin []byte, env []string, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, gitTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, s.gitBin, args...)
	cmd.Dir = dir
	cmd.Env = append(append([]string{}, s.gitEnv...), env...)
	if dir != "" {
		cmd.Env = append(cmd.Env, "GIT_DIR="+dir)
	}
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return out.Bytes(), fmt.Errorf("%w: git %s: %v: %s", errGit, strings.Join(args, " "), err, strings.TrimSpace(errb.String()))
	}
	return out.Bytes(), nil
}

// gitLine runs git and returns its trimmed output.
func (s *Sim) gitLine(ctx context.Context, dir string, args ...string) (string, error) {
	out, err := s.runGit(ctx, dir, nil, nil, args...)
	return strings.TrimSpace(string(out)), err
}

// signature is a git author or committer.
type signature struct {
	Name  string    `json:"name"`
	Email string    `json:"email"`
	Date  time.Time `json:"date"`
}

func (s *Sim) defaultSig(login string) signature {
	return signature{Name: login, Email: login + "@users.noreply.githubsim.invalid", Date: s.now().UTC().Truncate(time.Second)}
}

func sigEnv(prefix string, sig signature) []string {
	return []string{
		"GIT_" + prefix + "_NAME=" + sig.Name,
		"GIT_" + prefix + "_EMAIL=" + sig.Email,
		"GIT_" + prefix + "_DATE=" + fmt.Sprintf("%d +0000", sig.Date.Unix()),
	}
}

// commitTree creates a commit object and returns its sha.
func (s *Sim) commitTree(ctx context.Context, dir, tree string, parents []string, msg string, author, committer signature) (string, error) {
	args := []string{"commit-tree", tree}
	for _, p := range parents {
		args = append(args, "-p", p)
	}
	env := append(sigEnv("AUTHOR", author), sigEnv("COMMITTER", committer)...)
	out, err := s.runGit(ctx, dir, []byte(msg), env, args...)
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}

// objectType returns "blob", "tree", "commit", "tag" or "" when absent.
func (s *Sim) objectType(ctx context.Context, dir, sha string) string {
	if !isSHA(sha) {
		return ""
	}
	t, err := s.gitLine(ctx, dir, "cat-file", "-t", sha)
	if err != nil {
		return ""
	}
	return t
}

// resolveRef returns the sha a ref (full name) points at, or "".
func (s *Sim) resolveRef(ctx context.Context, dir, ref string) string {
	sha, err := s.gitLine(ctx, dir, "rev-parse", "-q", "--verify", ref+"^{}")
	if err != nil {
		return ""
	}
	return sha
}

// resolveRev resolves a branch, tag or sha for the contents API.
func (s *Sim) resolveRev(ctx context.Context, dir, rev string) string {
	for _, cand := range []string{"refs/heads/" + rev, "refs/tags/" + rev} {
		if sha := s.resolveRef(ctx, dir, cand); sha != "" {
			return sha
		}
	}
	if isSHA(rev) && s.objectType(ctx, dir, rev) == "commit" {
		return rev
	}
	return ""
}

func isSHA(v string) bool {
	if len(v) != 40 {
		return false
	}
	for _, c := range v {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// initBareRepo creates a bare repository with one commit on branch.
func (s *Sim) initBareRepo(ctx context.Context, dir, branch, readme, owner string) error {
	if _, err := s.runGit(ctx, "", nil, nil, "init", "--bare", "--quiet", "--initial-branch="+branch, dir); err != nil {
		return err
	}
	if _, err := s.runGit(ctx, dir, nil, nil, "config", "http.receivepack", "true"); err != nil {
		return err
	}
	blob, err := s.runGit(ctx, dir, []byte(readme), nil, "hash-object", "-w", "--stdin")
	if err != nil {
		return err
	}
	tree, err := s.runGit(ctx, dir, []byte("100644 blob "+strings.TrimSpace(string(blob))+"\tREADME.md\n"), nil, "mktree")
	if err != nil {
		return err
	}
	sig := s.defaultSig(owner)
	commit, err := s.commitTree(ctx, dir, strings.TrimSpace(string(tree)), nil, "Initial commit\n", sig, sig)
	if err != nil {
		return err
	}
	_, err = s.runGit(ctx, dir, nil, nil, "update-ref", "refs/heads/"+branch, commit, "")
	return err
}
