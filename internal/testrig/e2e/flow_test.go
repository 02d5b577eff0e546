package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/core/contract"
	"github.com/mention-runner/mention-runner/internal/runner/record"
	"github.com/mention-runner/mention-runner/internal/testrig/demo"
)

// replayComment is the body the replay script (testdata/replay.jsonl) asks
// the gate to post.
const replayComment = "The build fails on Windows because git checks the sources out with CRLF line endings.\n\nFix: add a `.gitattributes` with `* text=auto eol=lf`."

// flowTimeout only catches a hang: a whole flow takes 10-30 s (real Claude
// Code included) on the 2-core development machine under load.
const flowTimeout = 10 * time.Minute

type flowCase struct {
	shard    bool
	parallel bool
	engine   string
	script   string
	claude   string            // claude engine: the executable (a wrapper)
	codex    string            // codex engine: the executable
	gemini   string            // gemini engine: the executable
	extraEnv []string          // agent job
	pr       bool              // the thread is a pull request (demo.SeedOptions.PR)
	private  bool              // the target repository is private
	fork     bool              // with pr: the pull request's head is in a fork (demo.SeedOptions.Fork)
	comment  string            // the trigger comment; "" = demo.DefaultComment
	settings []string          // extra runner settings (MR_*=…) for every job
	prepare  func(*demo.World) // changes the seeded world before the flow runs
	prHead   demo.PRHeadFunc   // with pr: commits onto the head branch before the PR is opened
	outDir   string            // the flow's output directory; "" = a new temporary one
}

// runFlow seeds a fresh simulator and runs the whole flow.
func runFlow(t *testing.T, c flowCase) (*demo.World, *demo.Flow) {
	t.Helper()
	w, f := newFlow(t, c)
	ctx, cancel := context.WithTimeout(context.Background(), flowTimeout)
	defer cancel()
	err := f.Run(ctx)
	for _, st := range f.Stages() {
		t.Logf("%s: exit %d in %s", st.Name, st.ExitCode, st.Duration.Round(time.Millisecond))
	}
	require.NoError(t, err, "the flow")
	return w, f
}

// newFlow seeds a fresh simulator and sets up the flow without running it.
func newFlow(t *testing.T, c flowCase) (*demo.World, *demo.Flow) {
	t.Helper()
	needBins(t)
	w, err := demo.Seed(demo.SeedOptions{Shard: c.shard, PR: c.pr, Private: c.private, Fork: c.fork, PRHead: c.prHead, Comment: c.comment, Logf: t.Logf})
	require.NoError(t, err)
	t.Cleanup(func() { w.Sim.Close() })
	if c.prepare != nil {
		c.prepare(w)
	}
	if c.outDir == "" {
		c.outDir = t.TempDir()
	}
	f, err := demo.New(demo.Options{
		World: w, Bins: bins, OutDir: c.outDir,
		Engine: c.engine, ReplayScript: c.script, ClaudeBin: c.claude, CodexBin: c.codex, GeminiBin: c.gemini, EngineEnv: c.extraEnv,
		ParallelShards: c.parallel,
		Settings:       settings(c.settings...), DispatcherSettings: dispatcherSettings,
	})
	require.NoError(t, err)
	return w, f
}

// TestFlowSmall runs the small flow once, job by job with the tokens
// agent-run.yml and action.yml wire (checkTokensAsWired checks every
// request of every job), then checks the demo's default story (its Want
// and golden file, as TestScenarios checks the others), the final state,
// that the agent had no token, and the re-runs and re-deliveries
// (assertRedeliveredOneLogIssue). One flow carries them all: each flow
// costs its processes' start-ups, and they ran the same one (the default
// scenario: the same seed, script and settings).
func TestFlowSmall(t *testing.T) {
	t.Parallel()
	sc, ok := demo.FindScenario("default")
	require.True(t, ok)
	require.Empty(t, sc.Script, "the default story uses the demo's script")
	require.Empty(t, sc.Settings)
	require.Len(t, sc.Comments, 1)
	script := demoScript(t)
	out := t.TempDir()
	w, f := newFlow(t, flowCase{engine: demo.EngineReplay, script: script, comment: sc.Comments[0], outDir: scenarioOut(out)})
	ctx, cancel := context.WithTimeout(context.Background(), flowTimeout)
	defer cancel()
	checkTokensAsWired(t, ctx, w, f)
	checkScenario(t, demo.Verify(sc, w, f), out)

	ds := f.Dispatches()
	require.Len(t, ds, 1)
	assert.Equal(t, contract.EventAgentSmall, ds[0].EventType)
	assert.Less(t, len(ds[0].Body), contract.DispatchBodyBytes)
	require.Len(t, f.Assembles, 1)

	assertFinalState(t, w, f, scriptComment(t, script))
	assertAgentHasNoToken(t, f)
	assertRedeliveredOneLogIssue(t, ctx, w, f)
}

// demoScript is the replay script of the demo's stories (demo/replay.jsonl).
func demoScript(t *testing.T) string {
	t.Helper()
	root, err := demo.ModuleRoot(".")
	require.NoError(t, err)
	return filepath.Join(root, "demo", "replay.jsonl")
}

// scriptComment is the body of the comment a replay script asks the gate
// to post (its first add_comment).
func scriptComment(t *testing.T, script string) string {
	t.Helper()
	data, err := os.ReadFile(script)
	require.NoError(t, err)
	for _, line := range strings.Split(string(data), "\n") {
		var step struct {
			Tool string `json:"tool"`
			Args struct {
				Body string `json:"body"`
			} `json:"args"`
		}
		if line != "" && json.Unmarshal([]byte(line), &step) == nil && step.Tool == "add_comment" {
			return step.Args.Body
		}
	}
	require.FailNow(t, "no add_comment in "+script)
	return ""
}

func TestFlowSharded(t *testing.T) {
	t.Parallel()
	w, f := runFlow(t, flowCase{shard: true, parallel: true, engine: demo.EngineReplay, script: "testdata/replay.jsonl"})

	ds := f.Dispatches()
	require.Greater(t, len(ds), 1, "a padded thread must not fit one dispatch")
	for i, d := range ds {
		assert.Equal(t, contract.EventAgentShard, d.EventType, "dispatch %d", i)
		assert.Less(t, len(d.Body), contract.DispatchBodyBytes, "dispatch %d", i)
	}
	// one workflow run per shard; exactly one proceeds (AssembleAll checks)
	require.Len(t, f.Assembles, len(ds))
	ready := 0
	for _, st := range f.Assembles {
		if st.Outputs["ready"] == "true" {
			ready++
		}
		assert.Equal(t, f.JobID, st.Outputs["jobid"], st.Name)
	}
	assert.Equal(t, 1, ready)

	// the whole padded thread reached the agent
	raw, err := os.ReadFile(filepath.Join(f.ContextDir, "context.json"))
	require.NoError(t, err)
	var c struct {
		Comments []json.RawMessage `json:"comments"`
	}
	require.NoError(t, json.Unmarshal(raw, &c))
	assert.Len(t, c.Comments, w.Padding+1, "the padding and the trigger comment")

	assertFinalState(t, w, f, replayComment)
	assertAgentHasNoToken(t, f)
	assertRerunPublishWritesNothing(t, w, f)
	// SPEC §4: the job's shard refs and lock are deleted when the job ends
	assert.Empty(t, w.Sim.Refs(demo.ControlRepo, "refs/mention-runner/jobs/"+f.JobID+"/"))
}

// assertFinalState checks the simulator after a completed run: one bot
// comment with the exact NOTE block and marker, the log issue's exact
// tracking lists, closed as completed, no 🚀 (the answer is on the thread), no issue created.
func assertFinalState(t *testing.T, w *demo.World, f *demo.Flow, wantBody string) {
	t.Helper()
	require.NotZero(t, f.LogIssue)
	sum, err := f.Summarize()
	require.NoError(t, err)

	require.Len(t, sum.BotComments, 1, "exactly one comment by the bot on the thread")
	c := sum.BotComments[0]
	note := fmt.Sprintf("> [!NOTE]\n> Created from %s#%d  \n> Type `@%s go away` to block %s from this repository and all repositories under your account.",
		demo.ControlRepo, f.LogIssue, demo.BotLogin, demo.BotLogin)
	marker := fmt.Sprintf("<!-- mention-runner:job=%s;output=0 -->", f.JobID)
	assert.Equal(t, wantBody+"\n\n"+note+"\n"+marker, c.GetBody())

	// only the seeded issue: the denied create_issue never reached GitHub
	assert.Len(t, w.Sim.Issues(demo.TargetRepo), 1)

	li := sum.LogIssue
	require.NotNil(t, li)
	assert.Equal(t, "closed", li.GetState())
	assert.Equal(t, "completed", li.GetStateReason())
	lists := "Created Comments:\n- " + c.GetHTMLURL() + "\n\n" +
		"Created Issues:\n- (none)\n\n" +
		"Created PRs:\n- (none)\n\n" +
		"Affected Repositories:\n" + demo.TargetRepo + "\n"
	assert.Contains(t, li.GetBody(), lists)
	assert.Contains(t, li.GetBody(), "here-only")

	// the summary points at the complete record, whose Deliverables list
	// what publish wrote (the agent job's interim record lists nothing)
	require.NotEmpty(t, f.FinalRecordDir)
	assert.Equal(t, f.FinalRecordDir, sum.RecordDir)
	transcript, err := os.ReadFile(sum.Transcript)
	require.NoError(t, err)
	assert.Contains(t, string(transcript), c.GetHTMLURL(), "the final transcript lists the comment publish wrote")

	assert.Contains(t, sum.Reactions, "eyes", "the dispatcher saw the mention")
	assert.NotContains(t, sum.Reactions, "rocket", "the answer on the thread says the job finished: no reaction write")

	require.Len(t, sum.Denials, 1, "the create_issue call")
	assert.Equal(t, "create_issue", sum.Denials[0].Tool)
	assert.Contains(t, sum.Denials[0].Reason, "here-only")
	assert.Contains(t, sum.Policy, "only on "+demo.TargetRepo+"#1")
	assert.Contains(t, sum.Policy, "At most 2 comments")
	assert.FileExists(t, sum.Events)
	assert.FileExists(t, sum.Transcript)
}

// assertAgentHasNoToken checks the agent job's process environment (built
// by the flow) and the engine's environment the runner recorded.
func assertAgentHasNoToken(t *testing.T, f *demo.Flow) {
	t.Helper()
	require.NotNil(t, f.Agent)
	assertNoToken(t, "agent job", f.Agent.Env)

	evs, err := record.ReadEvents(filepath.Join(f.RecordDir, "events.jsonl"))
	require.NoError(t, err)
	var names []string
	for _, e := range evs {
		if e.Type == "config.loaded" {
			var d struct {
				EngineEnv []string `json:"engine_env"`
			}
			require.NoError(t, json.Unmarshal(e.Data, &d))
			names = d.EngineEnv
		}
	}
	require.NotEmpty(t, names, "config.loaded lists the engine's environment")
	for _, n := range names {
		assert.False(t, strings.HasPrefix(n, "GITHUB_") || strings.HasPrefix(n, "BOT_") || strings.HasPrefix(n, "MR_"),
			"engine environment has %s", n)
	}
}

func assertNoToken(t *testing.T, what string, env []string) {
	t.Helper()
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		assert.NotContains(t, []string{"GITHUB_TOKEN", "BOT_TOKEN", "GH_TOKEN"}, k, "%s environment has %s", what, k)
		for _, tok := range []string{demo.BotToken, demo.ControlToken} {
			assert.NotContains(t, v, tok, "%s environment: %s holds a GitHub token", what, k)
		}
		for _, prefix := range []string{"ghp_", "ghs_", "gho_", "github_pat_"} {
			assert.NotContains(t, v, prefix, "%s environment: %s looks like a GitHub token", what, k)
		}
	}
}

// assertRerunPublishWritesNothing re-runs the publish job: the markers
// find what was written, so nothing is written twice.
func assertRerunPublishWritesNothing(t *testing.T, w *demo.World, f *demo.Flow) {
	t.Helper()
	threadBefore := len(w.Sim.Comments(demo.TargetRepo, w.Issue))
	logBefore := w.Sim.Comments(demo.ControlRepo, f.LogIssue)
	issuesBefore := len(w.Sim.Issues(demo.ControlRepo))
	reactionsBefore := w.Sim.Reactions(demo.TargetRepo, w.TriggerID)
	bodyBefore := logIssueBody(t, w, f)

	ctx, cancel := context.WithTimeout(context.Background(), flowTimeout)
	defer cancel()
	st, err := f.Publish(ctx)
	require.NoError(t, err, "publish re-run")
	assert.Equal(t, 0, st.ExitCode)

	assert.Len(t, w.Sim.Comments(demo.TargetRepo, w.Issue), threadBefore, "no comment written twice")
	assert.Len(t, w.Sim.Comments(demo.ControlRepo, f.LogIssue), len(logBefore), "no session comment written twice")
	assert.Len(t, w.Sim.Issues(demo.ControlRepo), issuesBefore, "no second log issue")
	assert.Equal(t, reactionsBefore, w.Sim.Reactions(demo.TargetRepo, w.TriggerID))
	assert.Equal(t, bodyBefore, logIssueBody(t, w, f), "the log issue says the same")
}

func logIssueBody(t *testing.T, w *demo.World, f *demo.Flow) string {
	is, ok := w.Sim.Issue(demo.ControlRepo, f.LogIssue)
	require.True(t, ok)
	return is.GetBody()
}

// TestFlowBadFlagsDoesNotRun: a typo in !cfg never starts a run; the bot
// replies once on the thread, and a second dispatcher cycle stays quiet.
// Its first cycle is the demo's bad-cfg story (same comment, script and
// settings): checked against its Want and golden file as TestScenarios
// checks the others.
func TestFlowBadFlagsDoesNotRun(t *testing.T) {
	t.Parallel()
	needBins(t)
	sc, ok := demo.FindScenario("bad-cfg")
	require.True(t, ok)
	require.Equal(t, []string{"@" + demo.BotLogin + " !cfg here-onyl\nexplain the failure"}, sc.Comments)
	require.Empty(t, sc.Script)
	require.Empty(t, sc.Settings)
	w, err := demo.Seed(demo.SeedOptions{Comment: sc.Comments[0], Logf: t.Logf})
	require.NoError(t, err)
	t.Cleanup(func() { w.Sim.Close() })
	out := t.TempDir()
	f, err := demo.New(demo.Options{World: w, Bins: bins, OutDir: scenarioOut(out), ReplayScript: demoScript(t),
		Settings: settings(), DispatcherSettings: dispatcherSettings})
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), flowTimeout)
	defer cancel()

	for cycle := 1; cycle <= 2; cycle++ {
		require.ErrorIs(t, f.Dispatch(ctx), demo.ErrNoDispatch, "cycle %d", cycle)
		if cycle == 1 {
			checkScenario(t, demo.Verify(sc, w, nil), out)
		}
	}
	assert.Empty(t, w.Sim.Dispatches(demo.ControlRepo))
	var replies []string
	for _, c := range w.Sim.Comments(demo.TargetRepo, w.Issue) {
		if c.GetUser().GetLogin() == demo.BotLogin {
			replies = append(replies, c.GetBody())
		}
	}
	require.Len(t, replies, 1, "one reply, never two")
	assert.Contains(t, replies[0], `"here-onyl"`)
	assert.Contains(t, replies[0], "here-only")
	assert.Len(t, w.Sim.Issues(demo.ControlRepo), 0, "no run, so no log issue")
}

// assertRedeliveredOneLogIssue: after assemble → agent → publish, publish
// runs twice more (the first time through assertRerunPublishWritesNothing),
// the workflow run is re-run and the same event delivered again (neither
// assemble starts the job twice): the job keeps exactly one run-log issue,
// still carrying the one log-issue marker assemble looks for, and nothing
// is written twice.
func assertRedeliveredOneLogIssue(t *testing.T, ctx context.Context, w *demo.World, f *demo.Flow) {
	t.Helper()
	first, jobID := f.LogIssue, f.JobID
	threadBefore := len(w.Sim.Comments(demo.TargetRepo, w.Issue))
	logIssues := func() []int {
		var out []int
		for _, is := range w.Sim.Issues(demo.ControlRepo) {
			if strings.Contains(is.GetBody(), contract.LogIssueMarker(jobID)) {
				out = append(out, is.GetNumber())
			}
		}
		return out
	}
	assert.Equal(t, []int{first}, logIssues(), "publish keeps assemble's marker")

	assertRerunPublishWritesNothing(t, w, f) // publish re-run 1
	st, err := f.Publish(ctx)
	require.NoError(t, err, "publish re-run 2")
	assert.Equal(t, 0, st.ExitCode)
	// The job ran and was published: its state in CONTROL says done, so a
	// re-run of its assemble and a re-delivered event end without starting
	// the agent again.
	require.Error(t, f.Rerun(ctx), "a re-run of a finished job's assemble does not start it again")
	err = f.Redeliver(ctx)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "none of the 1 runs proceeded")
	require.Len(t, f.Assembles, 1)
	assert.Equal(t, 0, f.Assembles[0].ExitCode)
	assert.Contains(t, f.Assembles[0].Stdout, "this delivery is a duplicate")

	assert.Equal(t, []int{first}, logIssues(), "exactly one log issue for the job")
	var all int
	for _, is := range w.Sim.Issues(demo.ControlRepo) {
		if strings.Contains(is.GetTitle(), jobID) {
			all++
		}
	}
	assert.Equal(t, 1, all, "no other issue names the job")
	assert.Len(t, w.Sim.Comments(demo.TargetRepo, w.Issue), threadBefore, "no comment written twice")
	is, ok := w.Sim.Issue(demo.ControlRepo, first)
	require.True(t, ok)
	assert.Equal(t, "closed", is.GetState(), "the log issue reads completed")
}
