// Package mentioncost measures what one mention costs on GitHub: the
// writes and the REST requests each identity makes, all requests, the
// sequential round trips and the workflow jobs. It runs the real dispatcher and runner jobs as
// processes against the simulator (internal/testrig/demo's flow) and reads
// the simulator's request log, so the figures follow the code: nothing
// here knows which writes a mention makes. `make bench` prints them.
package mentioncost

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/mention-runner/mention-runner/internal/core/contract"
	"github.com/mention-runner/mention-runner/internal/core/refstate"
	"github.com/mention-runner/mention-runner/internal/testrig/demo"
	"github.com/mention-runner/mention-runner/internal/testrig/githubsim"
)

// The dispatcher's CONTROL_TOKEN identity when Case.OwnControl is set: an
// account of its own, as docs/install.md recommends.
const (
	ControlLogin = "mention-control"
	controlToken = "ghp_demoControlAcct00000000000000000004"
)

// DefaultLatency is added to every request of the measured mention, so
// that requests sent together overlap in the request log and
// githubsim.RoundTrips counts them once (the dispatcher's bench uses the
// same 50 ms).
const DefaultLatency = 50 * time.Millisecond

// Case is one kind of mention.
type Case struct {
	Name  string // short, for test names
	Label string // what the table calls it
	PR    bool   // the thread is a pull request
	Shard bool   // the thread is big enough to be sent as agent_shard events
	// OwnControl gives the dispatcher a CONTROL_TOKEN of its own account
	// (ControlLogin); otherwise it does its bookkeeping with the bot's.
	OwnControl bool
}

// Cases are the mentions the bench measures, each answered with one comment.
var Cases = []Case{
	{Name: "issue", Label: "issue mention, one comment", OwnControl: true},
	{Name: "pr", Label: "PR mention, one comment", PR: true, OwnControl: true},
	{Name: "sharded", Label: "issue mention, sharded context, one comment", Shard: true, OwnControl: true},
	{Name: "issue-bot-control", Label: "issue mention, one comment, CONTROL_TOKEN unset (the bot's)"},
}

// Cost is what one mention cost, from the simulator's request log.
type Cost struct {
	Case Case
	// Writes per identity, counted as GitHub's content limits count them
	// (githubsim.Sim.ContentWrites: POST, PATCH, PUT and DELETE under
	// /repos/, whatever the answer).
	Bot      int // BOT_TOKEN's account
	Control  int // the dispatcher's CONTROL_TOKEN account (0 when it is the bot's)
	Workflow int // the runner jobs' workflow token (github-actions[bot])
	Writes   int // all identities together
	// REST requests per identity, all methods and answers, git's smart
	// HTTP and GraphQL left out (githubsim.REST): what GitHub's primary
	// limits count, 5,000 an hour for an account's token and 1,000 an hour
	// for the control repo's workflow token, shared by all its jobs.
	BotREST, ControlREST, WorkflowREST int

	Requests   int // every request, reads and git included
	RoundTrips int // githubsim.RoundTrips over the same requests, at Options.Latency each
	Jobs       int // workflow jobs the mention ran (prepare per dispatch, agent, publish)
	Dispatches int // repository_dispatch events
	// WriteLog lists the writes counted, in the order they arrived.
	WriteLog []Write
	// RESTLog lists the REST requests counted, in the order they arrived.
	RESTLog []Write
}

// Write is one logged request: a write the content limits count, in
// WriteLog, or a REST request, in RESTLog.
type Write struct {
	Login, Method, Path string
	Status              int
}

func (w Write) String() string {
	return fmt.Sprintf("%s %s %s (%d)", w.Login, w.Method, w.Path, w.Status)
}

// Options say what to run with.
type Options struct {
	Bins    demo.Binaries // built cmd/dispatcher and cmd/runner
	WorkDir string        // each case's jobs and artifacts go under it
	Latency time.Duration // 0 = DefaultLatency
	Log     io.Writer     // one progress line per job; nil = silent
}

// script answers with one comment on thread number n of the target.
func script(n int) string {
	return `{"text": "The lint errors are all trailing \\r: the files were checked out with CRLF line endings."}
{"tool": "add_comment", "args": {"repo": "` + demo.TargetRepo + `", "number": ` + strconv.Itoa(n) + `, "body": "git checks the sources out with CRLF line endings on Windows; add a .gitattributes with * text=auto eol=lf."}}
{"text": "I answered on the thread."}
`
}

// The mention measured, the warm-up mention before it (on a thread of
// its own, so the measured dispatcher has no earlier mention to look at
// on its thread), and the seeded thread's last comment, which mentions no
// one.
const (
	comment     = "@" + demo.BotLogin + " !cfg here-only\nWhy does the build fail on Windows?"
	warmComment = "@" + demo.BotLogin + " !cfg here-only\nWhat does the build log say?"
	seedComment = "Same here on Windows 10."
)

// settled is how long after a mention its dispatcher starts. The
// dispatcher leaves a thread updated within 2 s of its listing unread and
// looks at it again next cycle (dispatch's markReadSlack), both times in
// whole seconds; a mention polled later than that is what GitHub usually
// shows, and is marked read at once.
const settled = 3200 * time.Millisecond

// Measure runs c's mention and returns its cost. A first mention, on
// another thread, runs before it, unmeasured: it opens what an
// installation keeps between mentions (the write ledger's generation for
// the hour, the rate state), so the figure is a mention's, not an
// installation's first.
func Measure(ctx context.Context, o Options, c Case) (Cost, error) {
	for attempt := 1; ; attempt++ {
		hour := time.Now().Truncate(time.Hour)
		cost, err := measure(ctx, o, c, attempt)
		if err != nil {
			return Cost{}, fmt.Errorf("%s: %w", c.Name, err)
		}
		// The hour turned during the measurement: the mention may have
		// opened the new hour's windows (GitHub's and the write
		// ledger's), which the hour's later mentions do not pay again.
		if attempt == 1 && !time.Now().Truncate(time.Hour).Equal(hour) {
			continue
		}
		return cost, nil
	}
}

func measure(ctx context.Context, o Options, c Case, attempt int) (Cost, error) {
	if o.Latency <= 0 {
		o.Latency = DefaultLatency
	}
	w, err := demo.Seed(demo.SeedOptions{Comment: seedComment, PR: c.PR, Shard: c.Shard})
	if err != nil {
		return Cost{}, err
	}
	defer w.Sim.Close()
	base := demo.Options{World: w, Bins: o.Bins, Log: o.Log,
		// pacing is for GitHub's limits; it would only make the flow wait
		Settings: []string{"MR_WRITE_GAP=0s"}, DispatcherSettings: []string{"WRITE_GAP=0s"}}
	if c.OwnControl {
		w.Sim.AddUser(ControlLogin)
		w.Sim.AddToken(controlToken, ControlLogin)
		w.Sim.SetPermission(demo.ControlRepo, ControlLogin, "write")
		base.DispatcherSettings = append(base.DispatcherSettings, "CONTROL_TOKEN="+controlToken)
	}
	// A deployment's dispatcher sweeps claims and keeps the sweep marker
	// fresh (one write a day at most when it has nothing to delete): a
	// control repo without it would have the measured `once`, when it
	// draws its sweep, write it, a write no later mention pays.
	markers, err := refstate.New(w.Sim.Client(demo.BotToken), demo.ControlRepo, nil)
	if err != nil {
		return Cost{}, err
	}
	if _, err := markers.SetShared(ctx, contract.SweepMarkerRef, contract.SweepMarkerStatus); err != nil {
		return Cost{}, fmt.Errorf("the sweep marker: %w", err)
	}
	dir := filepath.Join(o.WorkDir, fmt.Sprintf("%s-%d", c.Name, attempt))
	warm, err := w.Sim.CreateIssue(demo.TargetRepo, "bob", "Lint output", "The lint step prints a warning per file.")
	if err != nil {
		return Cost{}, err
	}
	posted, err := mention(w, warm, warmComment)
	if err != nil {
		return Cost{}, err
	}
	wf, err := newFlow(base, filepath.Join(dir, "warm-up"), warm)
	if err != nil {
		return Cost{}, err
	}
	if err := sleepUntil(ctx, posted.Add(settled)); err != nil {
		return Cost{}, err
	}
	if err := wf.Dispatch(ctx); err != nil {
		return Cost{}, fmt.Errorf("the warm-up mention: %w", err)
	}
	// posted now, it settles while the warm-up's jobs run
	if posted, err = mention(w, w.Issue, comment); err != nil {
		return Cost{}, err
	}
	if err := finish(ctx, wf); err != nil {
		return Cost{}, fmt.Errorf("the warm-up mention: %w", err)
	}
	f, err := newFlow(base, filepath.Join(dir, "mention"), w.Issue)
	if err != nil {
		return Cost{}, err
	}
	if err := sleepUntil(ctx, posted.Add(settled)); err != nil {
		return Cost{}, err
	}
	before, replies := countWrites(w.Sim), botComments(w)
	w.Sim.ResetRequests()
	slow := w.Sim.AddFault(githubsim.Fault{Kind: githubsim.FaultSlow, Rate: 1, Delay: o.Latency})
	err = f.Dispatch(ctx)
	if err == nil {
		err = finish(ctx, f)
	}
	w.Sim.RemoveFault(slow)
	if err != nil {
		return Cost{}, err
	}
	if n := botComments(w) - replies; n != 1 {
		return Cost{}, fmt.Errorf("the bot answered with %d comments, want 1", n)
	}
	reqs := w.Sim.Requests()
	// the measured mention's alone: nothing of the warm-up's thread
	warmPath := fmt.Sprintf("/repos/%s/issues/%d", demo.TargetRepo, warm)
	cost := Cost{Case: c, Requests: len(reqs), RoundTrips: githubsim.RoundTrips(reqs), Dispatches: len(f.Dispatches())}
	for _, r := range reqs {
		if r.Path == warmPath || strings.HasPrefix(r.Path, warmPath+"/") {
			return Cost{}, fmt.Errorf("the measured mention's jobs touched the warm-up's thread: %s %s", r.Method, r.Path)
		}
		if r.Login == "" {
			continue
		}
		logged := Write{Login: strings.ToLower(r.Login), Method: r.Method, Path: r.Path, Status: r.Status}
		if githubsim.ContentWrite(r.Method, r.Path) {
			cost.WriteLog = append(cost.WriteLog, logged)
		}
		if githubsim.REST(r) {
			cost.RESTLog = append(cost.RESTLog, logged)
		}
	}
	for login, n := range githubsim.RESTRequests(reqs) {
		if p := byIdentity(login, &cost.BotREST, &cost.ControlREST, &cost.WorkflowREST); p != nil {
			*p = n
		}
	}
	for login, n := range countWrites(w.Sim) {
		n -= before[login]
		if p := byIdentity(login, &cost.Bot, &cost.Control, &cost.Workflow); p != nil {
			*p = n
		}
		cost.Writes += n
	}
	jobs, err := f.JobsRun()
	if err != nil {
		return Cost{}, err
	}
	cost.Jobs = len(jobs)
	return cost, nil
}

// byIdentity is the one of bot, control and workflow that holds login's
// figure (a lower-case login); nil for any other account.
func byIdentity(login string, bot, control, workflow *int) *int {
	switch login {
	case strings.ToLower(demo.BotLogin):
		return bot
	case strings.ToLower(ControlLogin):
		return control
	case strings.ToLower(demo.ActionsLogin):
		return workflow
	}
	return nil
}

// mention posts text on thread n as the author and says when.
func mention(w *demo.World, n int, text string) (time.Time, error) {
	c, err := w.Sim.Comment(demo.TargetRepo, n, demo.Author, text)
	if err != nil {
		return time.Time{}, err
	}
	return c.GetCreatedAt().Time, nil
}

// newFlow sets up the flow of a mention on thread n in out, the agent
// answering with one comment.
func newFlow(base demo.Options, out string, n int) (*demo.Flow, error) {
	base.OutDir = out
	base.ReplayScript = filepath.Join(out, "replay.jsonl")
	if err := os.MkdirAll(out, 0o755); err != nil {
		return nil, err
	}
	if err := os.WriteFile(base.ReplayScript, []byte(script(n)), 0o644); err != nil {
		return nil, err
	}
	return demo.New(base)
}

// finish runs a dispatched flow's jobs, as Flow.Run does after the
// dispatcher, and checks the run completed.
func finish(ctx context.Context, f *demo.Flow) error {
	if err := f.AssembleAll(ctx); err != nil {
		return err
	}
	agentErr := f.RunAgent(ctx)
	if _, err := f.Publish(ctx); err != nil || agentErr != nil {
		return errors.Join(agentErr, err)
	}
	sum, err := f.Summarize()
	if err != nil {
		return err
	}
	if sum.AgentStatus != "completed" {
		return fmt.Errorf("the agent job ended %q, want completed", sum.AgentStatus)
	}
	if sum.LogIssue == nil || sum.LogIssue.GetState() != "closed" {
		return errors.New("the run's log issue is not closed: the run did not complete")
	}
	return nil
}

// sleepUntil waits for t on the machine's clock, which the simulator and
// the dispatcher read.
func sleepUntil(ctx context.Context, t time.Time) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(time.Until(t)):
		return nil
	}
}

// countWrites is each account's writes so far, as the content limits count them.
func countWrites(s *githubsim.Sim) map[string]int {
	out := map[string]int{}
	for login, ts := range s.ContentWrites() {
		out[login] = len(ts)
	}
	return out
}

// botComments counts the bot's comments on the thread.
func botComments(w *demo.World) int {
	n := 0
	for _, c := range w.Sim.Comments(demo.TargetRepo, w.Issue) {
		if strings.EqualFold(c.GetUser().GetLogin(), demo.BotLogin) {
			n++
		}
	}
	return n
}
