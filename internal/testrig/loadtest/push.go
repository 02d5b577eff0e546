package loadtest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/mention-runner/mention-runner/internal/core/contract"
	"github.com/mention-runner/mention-runner/internal/core/policy"
	"github.com/mention-runner/mention-runner/internal/runner/outputs"
	"github.com/mention-runner/mention-runner/internal/runner/prbundle"
)

// PushFile is the file each pull request job's push adds on its branch.
const PushFile = "pushed.txt"

// QueuePush adds to the run in dir a push_to_pull_request as the gate
// makes it on m's pull request: one commit adding PushFile on top of the
// branch's head, bundled. The clone goes through the simulator, whose
// faults it tries again.
func (w *World) QueuePush(ctx context.Context, dir string, m Mention, branch string, at time.Time) error {
	work, err := os.MkdirTemp("", "loadtest-push-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	clone := filepath.Join(work, "c")
	gitCmd := func(d string, args ...string) (string, error) {
		cmd := exec.CommandContext(ctx, "git", args...)
		cmd.Dir = d
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+os.DevNull, "GIT_TERMINAL_PROMPT=0",
			"GIT_AUTHOR_NAME=agent", "GIT_AUTHOR_EMAIL=agent@example.com", "GIT_COMMITTER_NAME=agent", "GIT_COMMITTER_EMAIL=agent@example.com")
		out, err := cmd.CombinedOutput()
		if err != nil {
			return "", fmt.Errorf("git %v: %w: %s", args, err, out)
		}
		return strings.TrimSpace(string(out)), nil
	}
	for attempt := 1; ; attempt++ {
		_ = os.RemoveAll(clone)
		if _, err = gitCmd(work, "clone", "--quiet", "--branch", branch, w.Base+m.Repo+".git", clone); err == nil || attempt == 8 {
			break
		}
	}
	if err != nil {
		return err
	}
	start, err := gitCmd(clone, "rev-parse", "HEAD")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(clone, PushFile), []byte("pushed for job "+m.JobID+"\n"), 0o644); err != nil {
		return err
	}
	q, err := outputs.OpenQueue(filepath.Join(dir, contract.OutputsFile))
	if err != nil {
		return err
	}
	es, err := outputs.ReadFile(filepath.Join(dir, contract.OutputsFile))
	if err != nil {
		return err
	}
	index := len(es)
	const title = "Add the pushed file"
	// as the gate: its own commit of the edits, then the one commit
	if _, err := prbundle.CommitWorkTree(ctx, prbundle.Repo{WorkTree: clone}, prbundle.BotIdentity(Bot), title); err != nil {
		return err
	}
	b, err := prbundle.CaptureSquash(ctx, prbundle.Repo{WorkTree: clone}, start, prbundle.BotIdentity(Bot),
		outputs.PushMessage(title, m.JobID, index), prbundle.Options{Out: filepath.Join(dir, contract.BundleFile(index))})
	if err != nil {
		return err
	}
	_, err = q.Append(outputs.Entry{Kind: policy.KindPush, Repo: m.Repo, Number: m.Number, Title: title, At: at,
		Bundle: contract.BundleFile(index), HeadSHA: b.HeadSHA, Commits: b.Commits})
	return err
}
