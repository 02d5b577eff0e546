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

// runGit runs git in dir (a bare repository) and returns stdout. The
// simulator forks git only where git itself must answer: smart HTTP, diffs
// and objects a push brought.
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

// signature is a git author or committer.
type signature struct {
	Name  string    `json:"name"`
	Email string    `json:"email"`
	Date  time.Time `json:"date"`
}

func (s *Sim) defaultSig(login string) signature {
	return signature{Name: login, Email: login + "@users.noreply.githubsim.invalid", Date: s.now().UTC().Truncate(time.Second)}
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

// initRepo gives a new repository one commit on branch holding README.md.
func (s *Sim) initRepo(g *gitStore, branch, readme, owner string) {
	blob := g.put("blob", []byte(readme))
	tree := g.putTree([]treeItem{{mode: "100644", name: "README.md", sha: blob}})
	sig := s.defaultSig(owner)
	g.setRef("refs/heads/"+branch, g.putCommit(tree, nil, "Initial commit\n", sig, sig))
}
