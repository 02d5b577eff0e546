package publish

import (
	"fmt"

	"github.com/mention-runner/mention-runner/internal/core/policy"
	"github.com/mention-runner/mention-runner/internal/runner/outputs"
	"github.com/mention-runner/mention-runner/internal/runner/prbundle"
	"github.com/mention-runner/mention-runner/internal/runner/render"
)

// Rules publish adds to the policy's own when it refuses a write.
const (
	RuleOutputsUnreadable = "outputs-unreadable"
	RulePolicyUnavailable = "policy-unavailable"
	RuleForgedMarker      = outputs.RuleForgedMarker
	RuleInvalidBundle     = outputs.RuleInvalidBundle
	RuleBundleRejected    = "bundle-rejected"
	RuleWorkflowChanges   = "workflow-changes"
	RuleBundleTooLarge    = "bundle-too-large"
	RuleSpecialEntry      = prbundle.RuleSpecialEntry
	RulePRWrongRepo       = outputs.RulePRWrongRepo
	RulePRWrongBase       = outputs.RulePRWrongBase
	RuleNotInDiff         = outputs.RuleNotInDiff
	RuleNoSuchLabel       = outputs.RuleNoSuchLabel
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
	return RecheckFacts(entries, readErr, policyErr, p, outputs.Facts{Here: p.Here})
}

// RecheckFacts is Recheck with the run's trusted facts, which reviews and
// label changes are judged by (outputs.CheckFacts, after the policy, as
// the gate does).
func RecheckFacts(entries []outputs.Entry, readErr, policyErr error, p policy.Policy, f outputs.Facts) Plan {
	var plan Plan
	if readErr != nil {
		reason := fmt.Sprintf("outputs.jsonl failed strict parsing (%v); every write of this run is refused rather than guessing which entries are genuine", readErr)
		for _, e := range entries {
			plan.Refused = append(plan.Refused, refusal(e, RuleOutputsUnreadable, reason))
		}
		plan.Refused = append(plan.Refused, render.Refusal{Index: len(entries), Kind: "(unreadable)", Repo: "(unknown)", Rule: RuleOutputsUnreadable, Reason: reason})
		return plan
	}
	ledger := policy.NewLedgerIDs(p.IDs)
	for _, e := range entries {
		if e.Kind == outputs.KindNoop {
			plan.Noops = append(plan.Noops, e)
			continue
		}
		if policyErr != nil {
			plan.Refused = append(plan.Refused, refusal(e, RulePolicyUnavailable, fmt.Sprintf("the policy could not be rebuilt from trusted data (%v)", policyErr)))
			continue
		}
		// the gate's own validation, again: it must not use up a policy slot
		if inv := outputs.Check(e, p.Here.Repo); inv != nil {
			plan.Refused = append(plan.Refused, refusal(e, inv.Rule, inv.Reason))
			continue
		}
		a, _ := e.Action()
		if d := p.Decide(a, ledger); !d.Allowed {
			plan.Refused = append(plan.Refused, refusal(e, d.Rule, d.Reason))
			continue
		}
		if inv := outputs.CheckFacts(e, f, p); inv != nil {
			plan.Refused = append(plan.Refused, refusal(e, inv.Rule, inv.Reason))
			continue
		}
		ledger.Record(a)
		plan.Writes = append(plan.Writes, e)
	}
	return plan
}

func refusal(e outputs.Entry, rule, reason string) render.Refusal {
	kind := string(e.Kind)
	if e.Kind == policy.KindComment {
		kind = fmt.Sprintf("comment (#%d)", e.Number)
	}
	return render.Refusal{Index: e.Index, Kind: kind, Repo: e.Repo, Rule: rule, Reason: reason}
}
