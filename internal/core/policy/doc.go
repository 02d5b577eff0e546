// Package policy parses the `!cfg` permission flags of a mention (SPEC §3)
// and decides every write the agent asks for.
//
// The same code runs twice: in the gate, so the agent sees a denial at once
// and can adapt, and in the publish job, against a policy rebuilt from
// trusted data, before anything reaches GitHub. Flags only ever restrict:
// the effective policy is the tighter of the operator's ceilings and the
// user's flags, and anything that cannot be parsed stops the run instead of
// being guessed at.
package policy
