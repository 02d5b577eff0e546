// Package gate is the permission gate: the MCP server (`runner mcp`) through
// which the agent asks for every write to GitHub. Each call is decided at
// once against the run's policy and what the run already queued, so the
// agent sees a denial and can adapt; allowed writes are queued in
// outputs.jsonl for the publish job, which decides them again. Every
// decision is logged to logs/gate.jsonl.
package gate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mention-runner/mention-runner/internal/core/contract"
	"github.com/mention-runner/mention-runner/internal/core/policy"
	"github.com/mention-runner/mention-runner/internal/runner/outputs"
	"github.com/mention-runner/mention-runner/internal/runner/prbundle"
)

// denialHint follows every denial: the policy was set by the person who
// asked, and the loop detector stops a run that keeps asking.
const denialHint = "\nThis limit comes from the run's permission policy and cannot be changed from here. Do not retry this call; continue within the policy or explain in your final answer what you could not do."

// Gate decides and queues the agent's writes. Safe for concurrent calls:
// one mutex covers decide → queue → record, so two calls can never both
// take the last slot.
type Gate struct {
	cfg   Config
	pol   policy.Policy
	facts outputs.Facts
	now   func() time.Time

	mu     sync.Mutex
	ledger *policy.Ledger
	queue  *outputs.Queue
	next   int // index the next queued entry gets
}

// New builds the gate for cfg. The ledger is rebuilt from the run's
// existing outputs.jsonl, so a restarted gate continues the same counts; an
// unreadable queue stops the gate rather than starting from zero.
func New(cfg Config) (*Gate, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("gate: config: %w", err)
	}
	if err := os.MkdirAll(filepath.Join(cfg.RunDir, "logs"), 0o755); err != nil {
		return nil, fmt.Errorf("gate: run dir: %w", err)
	}
	path := filepath.Join(cfg.RunDir, contract.OutputsFile)
	entries, err := outputs.ReadFile(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("gate: rebuild ledger from %s: %w", path, err)
	}
	var done []policy.Action
	for _, e := range entries {
		if a, ok := e.Action(); ok {
			done = append(done, a)
		}
	}
	q, err := outputs.OpenQueue(path)
	if err != nil {
		return nil, fmt.Errorf("gate: open queue: %w", err)
	}
	// The policy publish will apply, from the same inputs by the same
	// function (Validate has parsed the flags already).
	f, _ := cfg.flags()
	var b policy.Blocker
	if cfg.Blocklist != nil {
		b = cfg.Blocklist // never a typed nil in the interface
	}
	pol := policy.Effective(f, *cfg.Ceilings, policy.Thread{Repo: cfg.Here.Repo, Number: cfg.Here.Number}, b)
	pol.IDs = cfg.RepoIDs
	facts, err := cfg.facts()
	if err != nil {
		return nil, err
	}
	return &Gate{cfg: cfg, pol: pol, facts: facts, now: time.Now, ledger: policy.ReplayIDs(pol.IDs, done), queue: q, next: len(entries)}, nil
}

// Policy is the policy the gate enforces.
func (g *Gate) Policy() policy.Policy { return g.pol }

// Server returns a new MCP server named "gate" serving the tools.
func (g *Gate) Server(version string) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: contract.GateServer, Version: version}, &mcp.ServerOptions{
		Instructions: "Every write to GitHub goes through these tools. Writes are checked against this run's permission policy and carried out after the run.",
	})
	parsers := map[string]func(json.RawMessage) (request, error){
		contract.ToolAddComment: parseAddComment, contract.ToolCreateIssue: parseCreateIssue,
		contract.ToolCreatePullRequest: parseCreatePullRequest, contract.ToolNoop: parseNoop,
		contract.ToolCreateReview:      parseCreateReview,
		contract.ToolPushToPullRequest: parsePush,
		contract.ToolAddLabels:         parseLabels(contract.ToolAddLabels, false),
		contract.ToolRemoveLabels:      parseLabels(contract.ToolRemoveLabels, true),
	}
	for _, t := range toolDefs {
		parse := parsers[t.Name]
		tool := t.Name
		s.AddTool(t, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var raw json.RawMessage
			if req != nil && req.Params != nil {
				raw = req.Params.Arguments
			}
			return g.handle(ctx, tool, raw, parse), nil
		})
	}
	return s
}

// Serve runs the gate for cfg on t until the client disconnects or ctx ends.
func Serve(ctx context.Context, cfg Config, version string, t mcp.Transport) error {
	g, err := New(cfg)
	if err != nil {
		return err
	}
	if err := g.Server(version).Run(ctx, t); err != nil && ctx.Err() == nil {
		return fmt.Errorf("gate: serve: %w", err)
	}
	return nil
}

// outcome is what one call came to, before it is logged and answered.
type outcome struct {
	decision, rule, text string
	index                *int
}

// handle answers one tool call: parse, decide, queue, log, answer.
func (g *Gate) handle(ctx context.Context, tool string, raw json.RawMessage, parse func(json.RawMessage) (request, error)) *mcp.CallToolResult {
	g.mu.Lock()
	defer g.mu.Unlock()
	o := g.decide(ctx, tool, raw, parse)
	rec := Record{Time: g.now().UTC(), Tool: tool, Args: redactArgs(raw), Decision: o.decision, Rule: o.rule,
		Reason: firstLine(o.text), OutputIndex: o.index}
	if err := appendRecord(filepath.Join(g.cfg.RunDir, contract.GateLogFile), rec); err != nil && o.decision == DecisionAllowed {
		// The write is already queued; the agent must still learn it was.
		o.text += "\n(warning: the gate could not write its decision log: " + err.Error() + ")"
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: o.text}}, IsError: o.decision != DecisionAllowed}
}

func (g *Gate) decide(ctx context.Context, tool string, raw json.RawMessage, parse func(json.RawMessage) (request, error)) outcome {
	req, err := parse(raw)
	if err != nil {
		return outcome{decision: DecisionInvalid, rule: RuleInvalidArgs, text: err.Error()}
	}
	e := req.entry
	e.At, e.Index = g.now().UTC(), g.next
	if e.Kind == policy.KindPullRequest || e.Kind == policy.KindPush {
		e.Bundle = contract.BundleFile(e.Index)
	}
	// the same validation publish repeats; it must not use up a policy slot
	if inv := outputs.Check(e, g.cfg.Here.Repo); inv != nil {
		dec := DecisionDenied
		if inv.Rule == policy.RuleInvalidAction {
			dec = DecisionInvalid
		}
		return outcome{decision: dec, rule: inv.Rule, text: inv.Reason + denialHint}
	}
	if e.Kind != outputs.KindNoop {
		d := g.pol.Decide(req.action, g.ledger)
		if !d.Allowed {
			dec := DecisionDenied
			if d.Rule == policy.RuleInvalidAction {
				dec = DecisionInvalid
			}
			return outcome{decision: dec, rule: d.Rule, text: d.Reason + denialHint}
		}
		// the policy first, so a flag's denial names the flag
		if inv := outputs.CheckFacts(e, g.facts, g.pol); inv != nil {
			return outcome{decision: DecisionDenied, rule: inv.Rule, text: inv.Reason + factsHint(inv.Rule)}
		}
		if e.Kind == policy.KindPullRequest {
			if o, refused := g.capture(ctx, &e); refused {
				return o
			}
		}
		if e.Kind == policy.KindPush {
			if o, refused := g.capturePush(ctx, &e); refused {
				return o
			}
		}
	}
	queued, err := g.queue.Append(e)
	if err == nil && queued.Index != g.next {
		err = fmt.Errorf("outputs.jsonl index %d, gate expected %d (another writer?)", queued.Index, g.next)
	}
	if err != nil {
		return outcome{decision: DecisionError, text: "the gate could not queue this request: " + err.Error()}
	}
	g.next++
	if a, ok := queued.Action(); ok {
		g.ledger.Record(a)
	}
	idx := queued.Index
	return outcome{decision: DecisionAllowed, text: queuedText(queued), index: &idx}
}

// capture bundles the agent's commits for a pull request entry.
func (g *Gate) capture(ctx context.Context, e *outputs.Entry) (outcome, bool) {
	refuse := func(dec, rule, msg string) (outcome, bool) {
		return outcome{decision: dec, rule: rule, text: msg}, true
	}
	if g.cfg.WorkDir == "" {
		return refuse(DecisionInvalid, RuleNoCheckout, "this run has no checked-out repository, so no pull request can be made from it")
	}
	if g.cfg.CheckoutRepo != "" && !strings.EqualFold(e.Repo, g.cfg.CheckoutRepo) {
		return refuse(DecisionInvalid, RuleWrongRepo, fmt.Sprintf("pull requests can only be opened on %s, the repository checked out in the working directory, not on %s", g.cfg.CheckoutRepo, e.Repo))
	}
	// The base comes from the thread's trusted facts, as publish derives it
	// again: the agent may leave it out or name that branch, nothing else.
	if inv := outputs.CheckBase(*e, g.cfg.DefaultBase); inv != nil {
		return refuse(DecisionInvalid, inv.Rule, inv.Reason)
	}
	e.Base = g.cfg.DefaultBase
	repo := prbundle.Repo{WorkTree: g.cfg.WorkDir, GitDir: g.cfg.GitDir}
	base, err := prbundle.ResolveBase(ctx, repo.Dir(), e.Base, g.cfg.StartCommit)
	if err != nil {
		return refuse(DecisionInvalid, RuleUnknownBase, fmt.Sprintf("base branch %q is not known in the working directory (%v)", e.Base, err))
	}
	// The runner commits the agent's edits itself (fixed identity, isolated
	// git): the agent needs no shell to make a pull request.
	id := prbundle.BotIdentity(g.cfg.Bot)
	if _, err := prbundle.CommitWorkTree(ctx, repo, id, e.Title); err != nil {
		return refuse(DecisionError, "", "the gate could not commit the changes in the working directory: "+err.Error())
	}
	name := e.Bundle
	// From a fork's pull request the base is the default branch, not where
	// the agent started: CaptureOnto puts the agent's change alone on it.
	// It counts from the commit ResolveBase found, not resolving it again.
	b, err := prbundle.CaptureOnto(ctx, repo, base, g.cfg.StartCommit, id, e.Title, prbundle.Options{
		Out: filepath.Join(g.cfg.RunDir, name), AllowWorkflowChanges: g.cfg.AllowWorkflowChanges, MaxBytes: g.cfg.MaxBundleBytes,
	})
	var wf *prbundle.WorkflowError
	var big *prbundle.TooLargeError
	var conflict *prbundle.ConflictError
	var special *prbundle.SpecialEntryError
	switch {
	case errors.Is(err, prbundle.ErrNoCommits):
		return refuse(DecisionInvalid, RuleNoCommits, fmt.Sprintf("there are no changes to propose against %s: edit the files in the working directory first (the gate commits them for you)", e.Base))
	case errors.As(err, &wf):
		return refuse(DecisionDenied, RuleWorkflowChange, "denied: "+wf.Error()+denialHint)
	case errors.As(err, &big):
		return refuse(DecisionDenied, RuleBundleTooLarge, "denied: "+big.Error())
	case errors.As(err, &special):
		return refuse(DecisionDenied, RuleSpecialEntry, "denied: "+special.Error()+denialHint)
	case errors.As(err, &conflict):
		return refuse(DecisionInvalid, RuleBaseConflict, conflict.Error())
	case err != nil:
		return refuse(DecisionError, "", "the gate could not bundle the commits: "+err.Error())
	}
	e.Bundle, e.HeadSHA, e.Commits = name, b.HeadSHA, b.Commits
	return outcome{}, false
}

// capturePush bundles the agent's changes as one commit on top of the
// commit the run started from (the pull request's recorded head): publish
// puts exactly that commit on the branch, or nothing.
func (g *Gate) capturePush(ctx context.Context, e *outputs.Entry) (outcome, bool) {
	refuse := func(dec, rule, msg string) (outcome, bool) {
		return outcome{decision: dec, rule: rule, text: msg}, true
	}
	if g.cfg.WorkDir == "" || g.cfg.StartCommit == "" {
		return refuse(DecisionInvalid, RuleNoCheckout, "this run has no checked-out pull request, so nothing can be pushed from it")
	}
	if g.cfg.CheckoutRepo != "" && !strings.EqualFold(e.Repo, g.cfg.CheckoutRepo) {
		return refuse(DecisionInvalid, RuleWrongRepo, fmt.Sprintf("a push can go only to %s, the repository checked out in the working directory, not to %s", g.cfg.CheckoutRepo, e.Repo))
	}
	repo := prbundle.Repo{WorkTree: g.cfg.WorkDir, GitDir: g.cfg.GitDir}
	id := prbundle.BotIdentity(g.cfg.Bot)
	if _, err := prbundle.CommitWorkTree(ctx, repo, id, e.Title); err != nil {
		return refuse(DecisionError, "", "the gate could not commit the changes in the working directory: "+err.Error())
	}
	b, err := prbundle.CaptureSquash(ctx, repo, g.cfg.StartCommit, id, outputs.PushMessage(e.Title, g.cfg.JobID, e.Index), prbundle.Options{
		Out: filepath.Join(g.cfg.RunDir, e.Bundle), AllowWorkflowChanges: g.cfg.AllowWorkflowChanges, MaxBytes: g.cfg.MaxBundleBytes,
	})
	var wf *prbundle.WorkflowError
	var big *prbundle.TooLargeError
	var special *prbundle.SpecialEntryError
	switch {
	case errors.Is(err, prbundle.ErrNoCommits):
		return refuse(DecisionInvalid, RuleNoCommits, "there are no changes to push: edit the files in the working directory first (the gate commits them for you)")
	case errors.As(err, &wf):
		return refuse(DecisionDenied, RuleWorkflowChange, "denied: "+wf.Error()+denialHint)
	case errors.As(err, &big):
		return refuse(DecisionDenied, RuleBundleTooLarge, "denied: "+big.Error())
	case errors.As(err, &special):
		return refuse(DecisionDenied, RuleSpecialEntry, "denied: "+special.Error()+denialHint)
	case err != nil:
		return refuse(DecisionError, "", "the gate could not bundle the commit: "+err.Error())
	}
	e.HeadSHA, e.Commits = b.HeadSHA, b.Commits
	return outcome{}, false
}

func queuedText(e outputs.Entry) string {
	switch e.Kind {
	case policy.KindComment:
		return fmt.Sprintf("queued (output #%d): the comment on %s#%d will be posted after review.", e.Index, e.Repo, e.Number)
	case policy.KindIssue:
		return fmt.Sprintf("queued (output #%d): the issue %q in %s will be created after review.", e.Index, e.Title, e.Repo)
	case policy.KindPullRequest:
		return fmt.Sprintf("queued (output #%d): the pull request %q in %s (%d commit(s), head %s, into %s) will be opened after review.",
			e.Index, e.Title, e.Repo, e.Commits, short(e.HeadSHA), e.Base)
	case policy.KindPush:
		return fmt.Sprintf("queued (output #%d): the commit %s (%q) will be pushed onto the branch of %s#%d after review.", e.Index, short(e.HeadSHA), e.Title, e.Repo, e.Number)
	case policy.KindReview:
		return fmt.Sprintf("queued (output #%d): the review of %s#%d with %d inline comment(s) will be posted after review.", e.Index, e.Repo, e.Number, len(e.Comments))
	case policy.KindLabels:
		verb := "added to"
		if e.Remove {
			verb = "removed from"
		}
		return fmt.Sprintf("queued (output #%d): the label(s) %s will be %s %s#%d after review.", e.Index, strings.Join(e.Labels, ", "), verb, e.Repo, e.Number)
	}
	return fmt.Sprintf("recorded (output #%d): nothing will be written.", e.Index)
}

// factsHint follows a denial on the run's facts: unlike a policy limit,
// the agent can fix the call (another line, an existing label).
func factsHint(rule string) string {
	switch rule {
	case outputs.RuleNotInDiff:
		return "\nPlace each inline comment on a line the diff shows (added or unchanged lines on RIGHT, removed ones on LEFT), or say it in the review's summary."
	case outputs.RuleNoSuchLabel:
		return "\nUse only labels the repository has; this run cannot create labels."
	}
	return denialHint
}

func short(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}
