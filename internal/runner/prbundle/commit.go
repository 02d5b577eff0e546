package prbundle

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/mention-runner/mention-runner/internal/runner/gitexec"
)

// Identity is the fixed author and committer of the commits the runner
// makes for the agent.
type Identity struct{ Name, Email string }

// BotIdentity is the bot's identity with GitHub's no-reply address.
func BotIdentity(login string) Identity {
	return Identity{Name: login, Email: login + "@users.noreply.github.com"}
}

// Repo names a checkout: its working tree and, when kept apart from it,
// its git directory ("" = workTree/.git).
type Repo struct{ WorkTree, GitDir string }

// Dir is where commands that need no working tree run: the git directory
// when it is separate, else the working tree.
func (r Repo) Dir() string {
	if r.GitDir != "" {
		return r.GitDir
	}
	return r.WorkTree
}

// git is an isolated git command in r's working tree.
func (r Repo) git() gitexec.Command {
	var extra []string
	if r.GitDir != "" {
		extra = []string{"GIT_DIR=" + r.GitDir, "GIT_WORK_TREE=" + r.WorkTree}
	}
	return gitexec.Isolated(r.WorkTree, "", gitTimeout, extra...)
}

// CommitWorkTree commits every change in r's working tree (new, changed and
// deleted files, .gitignore respected) on the current branch as id, with
// msg, and reports whether there was anything to commit. It is how a pull
// request is made without giving the agent a shell: the agent edits files,
// the runner's own isolated git commits them (no hook, no signing program,
// no filter program the checkout's config names, no config of the target
// or the user).
func CommitWorkTree(ctx context.Context, r Repo, id Identity, msg string) (bool, error) {
	if id.Name == "" || id.Email == "" {
		return false, errors.New("prbundle: commit: no identity")
	}
	if strings.TrimSpace(msg) == "" {
		msg = "Changes by " + id.Name
	}
	// git add runs the clean filter a .gitattributes in the tree picks
	// (the agent writes those) when the config defines it.
	g, err := r.git().WithoutDrivers(ctx)
	if err != nil {
		return false, fmt.Errorf("prbundle: commit: %w", err)
	}
	if _, err := g.Run(ctx, "add", "--all", "--", "."); err != nil {
		return false, fmt.Errorf("prbundle: stage the changes: %w", err)
	}
	out, err := g.Run(ctx, "diff", "--cached", "--name-only", "-z")
	if err != nil {
		return false, fmt.Errorf("prbundle: list the staged changes: %w", err)
	}
	if len(out) == 0 {
		return false, nil
	}
	who := []string{"-c", "user.name=" + id.Name, "-c", "user.email=" + id.Email, "-c", "commit.gpgsign=false"}
	args := append(who, "commit", "--quiet", "--no-verify", "--no-edit", "--cleanup=verbatim", "-m", msg)
	if _, err := g.Run(ctx, args...); err != nil {
		return false, fmt.Errorf("prbundle: commit: %w", err)
	}
	return true, nil
}
