package e2e

import (
	"context"
	"net/http"
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/testrig/actionwiring"
	"github.com/mention-runner/mention-runner/internal/testrig/demo"
	"github.com/mention-runner/mention-runner/internal/testrig/githubsim"
)

// permissionOf names the GITHUB_TOKEN permission a request to the control
// repo needs ("metadata" is granted to every token). Unknown requests
// fail the test, so a new kind of call has to be placed here.
func permissionOf(r githubsim.LoggedRequest) (scope, level string, ok bool) {
	level = "write"
	if r.Method == http.MethodGet || r.Method == http.MethodHead {
		level = "read"
	}
	if r.Path == "/"+demo.ControlRepo+".git/git-receive-pack" {
		// a push (the write ledger's commit and ref) needs contents: write
		return "contents", "write", r.Method == http.MethodPost
	}
	rest := strings.TrimPrefix(r.Path, "/repos/"+demo.ControlRepo)
	seg, _, _ := strings.Cut(strings.TrimPrefix(rest, "/"), "/")
	switch seg {
	case "":
		return "metadata", "read", r.Method == http.MethodGet
	case "issues", "labels":
		return "issues", level, true
	case "git", "contents", "commits":
		// GET commits/{ref} (the write ledger's read) needs contents: read
		return "contents", level, true
	}
	return "", "", false
}

// repoOf returns owner/name for a repository request (REST or git smart
// HTTP), "" for an account-level one (/user, /users/…).
func repoOf(path string) string {
	parts := strings.Split(strings.TrimPrefix(path, "/"), "/")
	switch {
	case len(parts) >= 3 && parts[0] == "repos":
		return parts[1] + "/" + parts[2]
	case len(parts) >= 2 && strings.HasSuffix(parts[1], ".git"):
		return parts[0] + "/" + strings.TrimSuffix(parts[1], ".git")
	}
	return ""
}

// isWrite: a fetch over git smart HTTP is a POST that only reads.
func isWrite(r githubsim.LoggedRequest) bool {
	return r.Method != http.MethodGet && r.Method != http.MethodHead && !strings.HasSuffix(r.Path, "/git-upload-pack")
}

func onControl(path string) bool {
	return path == "/repos/"+demo.ControlRepo || strings.HasPrefix(path, "/repos/"+demo.ControlRepo+"/") ||
		strings.HasPrefix(path, "/"+demo.ControlRepo+".git/")
}

// checkTokensAsWired runs the flow stage by stage with the tokens
// agent-run.yml and action.yml give each stage (the demo reads them from
// there) and checks every request each stage made: the control repo only
// with the workflow's own token, targets only with the bot's, the agent job
// with none, and the workflow token of each job (the prepare job's
// assemble and fetch steps together) using exactly the permissions the
// job declares (each scope at its level, nothing more).
// TestFlowSmall runs it.
func checkTokensAsWired(t *testing.T, ctx context.Context, w *demo.World, f *demo.Flow) {
	t.Helper()
	wd, err := os.Getwd()
	require.NoError(t, err)
	root, err := demo.ModuleRoot(wd)
	require.NoError(t, err)
	wiring, err := actionwiring.Load(root)
	require.NoError(t, err)

	require.NoError(t, f.Dispatch(ctx))
	stages := []struct {
		job    string
		run    func() error
		tokens []string // the tokens the job may use
	}{
		{"assemble", func() error { return f.AssembleAll(ctx) }, []string{demo.ControlToken}},
		{"fetch", func() error { return f.Fetch(ctx) }, []string{demo.BotToken}},
		{"agent", func() error { return f.RunAgent(ctx) }, nil},
		{"publish", func() error { _, err := f.Publish(ctx); return err }, []string{demo.BotToken, demo.ControlToken}},
	}
	usedByJob := map[string]map[string]string{}
	for _, st := range stages {
		w.Sim.ResetRequests()
		require.NoError(t, st.run(), st.job)
		reqs := w.Sim.Requests()
		job, err := wiring.JobOf(st.job)
		require.NoError(t, err)
		if usedByJob[job] == nil {
			usedByJob[job] = map[string]string{}
		}
		used := usedByJob[job]
		writes := map[string]int{} // token → writes
		for _, r := range reqs {
			what := st.job + ": " + r.Method + " " + r.Path
			if r.Token == "" {
				assert.Contains(t, []string{http.MethodGet, http.MethodHead}, r.Method, "%s: a write without a token", what)
				continue
			}
			if !assert.Contains(t, st.tokens, r.Token, "%s: a token this job is not given", what) {
				continue
			}
			if isWrite(r) {
				writes[r.Token]++
			}
			switch repo := repoOf(r.Path); {
			case repo == "":
				// who the token is, the bot's public profile: any token
				assert.False(t, isWrite(r), "%s: an account-level write", what)
				continue
			case r.Method == http.MethodGet && r.Path == "/repos/"+repo && !onControl(r.Path):
				// a repository's public metadata (assemble resolves the
				// thread's and deny= repositories' ids with the token it
				// has; a failure there only warns, publish resolves again)
				continue
			case onControl(r.Path):
				assert.Equal(t, demo.ControlToken, r.Token, "%s: the control repo is written and read with the workflow token only", what)
			default:
				assert.Equal(t, demo.BotToken, r.Token, "%s: a target is written and read with the bot token only", what)
			}
			if r.Token != demo.ControlToken {
				continue
			}
			scope, level, ok := permissionOf(r)
			if !assert.True(t, ok, "%s: which permission does this need? (add it to permissionOf)", what) || scope == "metadata" {
				continue
			}
			if used[scope] != "write" {
				used[scope] = level
			}
		}
		t.Logf("%s: %d requests, writes by token %v, workflow token used %v", st.job, len(reqs), writes, sortedKeys(used))
		for _, r := range reqs {
			t.Logf("  %s %s %s", r.Method, r.Path, strings.TrimSuffix(strings.SplitAfterN(r.Token, "_", 3)[0], "_"))
		}
		switch st.job {
		case "agent":
			assert.Empty(t, writes, "the agent job writes nothing")
		case "publish":
			assert.NotZero(t, writes[demo.BotToken], "publish wrote to the target with the bot token")
			assert.NotZero(t, writes[demo.ControlToken], "publish wrote the log issue with the workflow token")
		}
	}
	assert.Len(t, usedByJob, 3, "the stages run in three jobs")
	jobs, err := f.JobsRun()
	require.NoError(t, err)
	assert.Equal(t, []string{f.RunID + "-agent", f.RunID + "-prepare", f.RunID + "-publish"}, jobs, "a mention on the small path runs three jobs")
	for job, used := range usedByJob {
		declared, err := wiring.Permissions(job)
		require.NoError(t, err)
		assert.Equal(t, declared, used, "job %s: the workflow token's permissions as declared vs as used", job)
	}
	// What the workflow token wrote is authored by github-actions[bot]; the
	// reply on the thread by the bot.
	for _, c := range w.Sim.Comments(demo.ControlRepo, f.LogIssue) {
		assert.Equal(t, demo.ActionsLogin, c.GetUser().GetLogin(), "log issue comment %d", c.GetID())
	}
	var botReplies int
	for _, c := range w.Sim.Comments(demo.TargetRepo, w.Issue) {
		if c.GetUser().GetLogin() == demo.BotLogin {
			botReplies++
		}
	}
	assert.Equal(t, 1, botReplies, "the agent's comment, by the bot")
}

func sortedKeys(m map[string]string) []string {
	var out []string
	for k, v := range m {
		out = append(out, k+":"+v)
	}
	sort.Strings(out)
	return out
}
