// Package publish is the runner's last job: the only one that holds the
// bot's write token and the one where no agent code runs. It rebuilds the
// effective policy from trusted data (the verified context, the operator's
// ceilings and a fresh read of the blocklist), decides every entry of the
// agent's outputs.jsonl again with a fresh ledger, applies the allowed ones
// (comments, issues, pull requests pushed with real git) exactly once thanks
// to hidden markers, and writes the report: the run-log issue body, the
// session and error comments, labels, reactions and the step summary.
package publish
