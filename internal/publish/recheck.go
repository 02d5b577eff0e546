package publish

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/mention-runner/mention-runner/internal/outputs"
	"github.com/mention-runner/mention-runner/internal/policy"
	"github.com/mention-runner/mention-runner/internal/render"
)

// Rules publish adds to the policy's own when it refuses a write.
const (
	RuleOutputsUnreadable = "outputs-unreadable"
	RulePolicyUnavailable = "policy-unavailable"
	RuleForgedMarker      = "forged-marker"
	RuleInvalidBundle     = "invalid-bundle"
	RuleBundleRejected    = "bundle-rejected"
	RuleWorkflowChanges   = "workflow-changes"
	RuleBundleTooLarge    = "bundle-too-large"
	RulePRWrongRepo       = "pr-wrong-repo"
)

// Plan is the outcome of the re-check: the writes to apply, in order, the
// agent's deliberate no-ops, and what was refused.
type Plan struct {
	Writes  []outputs.Entry
	Noops   []outputs.Entry
	Refused []render.Refusal
}

// Recheck decides every entry again, in order, against p with a fresh
// ledger. readErr is the strict parser's error: a torn or tampered file
// means nothing in it can be told apart from a forgery, so every entry is
// refused. policyErr (context or blocklist unusable) refuses everything
// too. Nothing the agent job wrote about its own decisions is consulted.
func Recheck(entries []outputs.Entry, readErr, policyErr error, p policy.Policy) Plan {
	var plan Plan
	if readErr != nil {
		reason := fmt.Sprintf("outputs.jsonl failed strict parsing (%v); every write of this run is refused rather than guessing which entries are genuine", readErr)
		for _, e := range entries {
			plan.Refused = append(plan.Refused, refusal(e, RuleOutputsUnreadable, reason))
		}
		plan.Refused = append(plan.Refused, render.Refusal{Index: len(entries), Kind: "(unreadable)", Repo: "(unknown)", Rule: RuleOutputsUnreadable, Reason: reason})
		return plan
	}
	ledger := policy.NewLedger()
	for _, e := range entries {
		if e.Kind == outputs.KindNoop {
			plan.Noops = append(plan.Noops, e)
			continue
		}
		if policyErr != nil {
			plan.Refused = append(plan.Refused, refusal(e, RulePolicyUnavailable, fmt.Sprintf("the policy could not be rebuilt from trusted data (%v)", policyErr)))
			continue
		}
		// publish's own checks first: they must not use up a policy slot
		if rule, reason, bad := malformed(e, p.Here.Repo); bad {
			plan.Refused = append(plan.Refused, refusal(e, rule, reason))
			continue
		}
		a, _ := e.Action()
		if d := p.Apply(a, ledger); !d.Allowed {
			plan.Refused = append(plan.Refused, refusal(e, d.Rule, d.Reason))
			continue
		}
		plan.Writes = append(plan.Writes, e)
	}
	return plan
}

// malformed catches entries the policy cannot judge but publish must not
// apply: a body carrying an idempotency marker (it could pass itself off
// as another write), a pull request without a plain bundle file name, or
// one on any repository but the target (here, from trusted data): its
// commits were made on the target's checkout, as the gate also requires.
func malformed(e outputs.Entry, here string) (rule, reason string, bad bool) {
	for _, s := range []string{e.Body, e.Title} {
		if strings.Contains(strings.ToLower(s), "mention-runner:job=") {
			return RuleForgedMarker, "denied: the text carries a mention-runner idempotency marker, which only publish may write", true
		}
	}
	if e.Kind == policy.KindPullRequest {
		if here == "" || !strings.EqualFold(e.Repo, here) {
			return RulePRWrongRepo, fmt.Sprintf("denied: pull requests can only be opened on %s, the repository the agent's commits were made on, not on %s", here, e.Repo), true
		}
		b := e.Bundle
		if b == "" || b != filepath.Base(b) || b == "." || b == ".." || strings.ContainsAny(b, `/\`) {
			return RuleInvalidBundle, fmt.Sprintf("denied: the bundle %q is not a file name inside the run directory", b), true
		}
		if strings.TrimSpace(e.Title) == "" {
			return RuleInvalidBundle, "denied: a pull request needs a title", true
		}
	}
	if e.Kind == policy.KindIssue && strings.TrimSpace(e.Title) == "" {
		return policy.RuleInvalidAction, "denied: an issue needs a title", true
	}
	return "", "", false
}

func refusal(e outputs.Entry, rule, reason string) render.Refusal {
	kind := string(e.Kind)
	if e.Kind == policy.KindComment {
		kind = fmt.Sprintf("comment (#%d)", e.Number)
	}
	return render.Refusal{Index: e.Index, Kind: kind, Repo: e.Repo, Rule: rule, Reason: reason}
}
