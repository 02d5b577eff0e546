// Package dispatch is the dispatcher's pipeline (SPEC §2–§4, §7–§9):
// every mode (poll, once, serve, event) turns its input into a Trigger and
// calls Dispatcher.Handle, which decides, in order: ignore (own text, edits,
// no real mention, author not allowed, repo blocked), go away / come back,
// invalid !cfg (reply once), per-user rate limit (reply once), build the
// context, claim the mention with a dedupe ref in CONTROL and send the
// repository_dispatch events, then react with 👀.
//
// Exactly once: a mention is "handled" when the ref
// refs/mention-runner/dispatched/<jobid> exists in CONTROL. Whoever creates
// it acts; everyone else (a second dispatcher, a restarted one) skips. When
// sending fails the ref is deleted again so a later cycle retries.
package dispatch
