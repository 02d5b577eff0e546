package publish

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-github/v62/github"
	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/core/contract"
	"github.com/mention-runner/mention-runner/internal/core/ghclient"
	"github.com/mention-runner/mention-runner/internal/core/policy"
	"github.com/mention-runner/mention-runner/internal/runner/outputs"
	"github.com/mention-runner/mention-runner/internal/runner/render"
	"github.com/mention-runner/mention-runner/internal/testrig/githubsim"

	"github.com/mention-runner/mention-runner/internal/testrig/fakeclock"

	"github.com/mention-runner/mention-runner/internal/testrig/simfixture"
)

const (
	testBot     = "mrbot"
	testToken   = "bot-token-1"
	testControl = "ops/control"
	testTarget  = "acme/widgets"
	testOther   = "acme/other"
)

// fixture is a simulated GitHub with a target thread, a trigger comment, a
// control repo with a log issue, and an agent run directory.
type fixture struct {
	t        *testing.T
	sim      *githubsim.Sim
	base     string
	clock    *fakeclock.Clock
	bot      *github.Client
	issue    int // the target thread
	trigger  *github.IssueComment
	logIssue int
	context  []byte
	runDir   string
	queue    *outputs.Queue
}

func newFixture(t *testing.T, cfg string) *fixture {
	t.Helper()
	clk := fakeclock.New(time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC))
	sim, base := simfixture.Start(t, githubsim.Options{Seed: 1, Now: clk.Now})
	for _, u := range []string{"acme", "ops", "alice", testBot, "upstream"} {
		sim.AddUser(u)
	}
	sim.AddToken(testToken, testBot)
	for _, r := range []string{testTarget, testOther, testControl} {
		_, err := sim.AddRepo(r, false)
		require.NoError(t, err)
		sim.SetPermission(r, testBot, "write")
	}
	_, err := sim.AddRepo("upstream/lib", false) // the bot may not push here
	require.NoError(t, err)

	f := &fixture{t: t, sim: sim, base: base, clock: clk}
	f.issue, err = sim.CreateIssue(testTarget, "alice", "Widgets break", "They break.")
	require.NoError(t, err)
	f.logIssue, err = sim.CreateIssue(testControl, testBot, "mention-runner log", "assembling…")
	require.NoError(t, err)
	clk.Advance(time.Minute)
	body := "@" + testBot + " please fix"
	if cfg != "" {
		body = "@" + testBot + " !cfg " + cfg + "\nplease fix"
	}
	f.trigger, err = sim.Comment(testTarget, f.issue, "alice", body)
	require.NoError(t, err)
	clk.Advance(time.Minute)
	f.context = f.contextFor(testTarget, f.issue, f.trigger)
	f.bot, err = ghclient.New(ghclient.Options{BaseURL: base, Token: testToken, Sleep: clk.Sleep, Now: clk.Now,
		Pacer: ghclient.NewPacer(0, 0, 0, clk.Now, clk.Sleep)})
	require.NoError(t, err)
	f.runDir = filepath.Join(t.TempDir(), "run-1")
	require.NoError(t, os.MkdirAll(f.runDir, 0o755))
	f.queue, err = outputs.OpenQueue(filepath.Join(f.runDir, contract.OutputsFile))
	require.NoError(t, err)
	f.writeRun(`{"run_id":"run-1","engine":"claude","model":"claude-test","status":"completed","turns":3,"cost_usd":0.0123}`)
	return f
}

// contextFor is the trusted context the dispatcher would have built.
func (f *fixture) contextFor(repo string, number int, trigger any) []byte {
	ctx := map[string]any{
		"repository":      map[string]any{"full_name": repo},
		"issue":           map[string]any{"number": number},
		"trigger_comment": trigger,
	}
	data, err := json.Marshal(ctx)
	require.NoError(f.t, err)
	return data
}

// writeRun writes the agent stage's outcome.json (record.Outcome's schema).
func (f *fixture) writeRun(runJSON string) {
	require.NoError(f.t, os.WriteFile(filepath.Join(f.runDir, contract.OutcomeFile), []byte(runJSON), 0o644))
}

// queue adds an outputs entry as the gate would.
func (f *fixture) add(e outputs.Entry) {
	e.At = f.clock.Now()
	_, err := f.queue.Append(e)
	require.NoError(f.t, err)
}

func (f *fixture) comment(repo string, number int, body string) outputs.Entry {
	return outputs.Entry{Kind: policy.KindComment, Repo: repo, Number: number, Body: body}
}

func (f *fixture) newIssue(repo, title string) outputs.Entry {
	return outputs.Entry{Kind: policy.KindIssue, Repo: repo, Title: title, Body: "details of " + title}
}

func (f *fixture) options() Options {
	return Options{
		Bot: f.bot, BotLogin: testBot, ControlRepo: testControl, LogIssue: f.logIssue,
		Context: f.context, RunDir: f.runDir,
		Ceilings:  policy.Ceilings{CommentLimit: 5, IssueLimit: 2, PRLimit: 1, MaxWrites: 10, ControlRepo: testControl},
		Git:       GitOptions{BaseURL: f.base, Token: testToken, ForkPoll: time.Millisecond},
		ServerURL: "https://github.com", WorkflowRunURL: "https://github.com/ops/control/actions/runs/42",
		Sleep: f.clock.Sleep, RetryDelay: time.Millisecond,
		Logf: f.t.Logf,
	}
}

func (f *fixture) run(o Options) *Result {
	f.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := Run(ctx, o)
	require.NoError(f.t, err)
	return res
}

// botComments are the comments on repo#n written by the bot.
func (f *fixture) botComments(repo string, n int) []*github.IssueComment {
	var out []*github.IssueComment
	for _, c := range f.sim.Comments(repo, n) {
		if strings.EqualFold(c.GetUser().GetLogin(), testBot) {
			out = append(out, c)
		}
	}
	return out
}

// botIssues are the issues and PRs the bot created in repo.
func (f *fixture) botIssues(repo string) []*github.Issue {
	var out []*github.Issue
	for _, is := range f.sim.Issues(repo) {
		if strings.EqualFold(is.GetUser().GetLogin(), testBot) {
			out = append(out, is)
		}
	}
	return out
}

func (f *fixture) log() *github.Issue {
	is, ok := f.sim.Issue(testControl, f.logIssue)
	require.True(f.t, ok)
	return is
}

// tracking is the log issue's tracking lists, parsed strictly.
func (f *fixture) tracking() render.Tracking {
	f.t.Helper()
	tr, err := render.ParseTrackingLists(f.log().GetBody())
	require.NoError(f.t, err, f.log().GetBody())
	return tr
}

func labelNames(is *github.Issue) []string {
	var out []string
	for _, l := range is.Labels {
		out = append(out, l.GetName())
	}
	return out
}
