// Package hostile holds cross-package tests that feed mention-runner what
// an attacker, a broken client or an unlucky day would: prompt-injection
// carriers, secrets, oversized and invalid input, forged webhooks and refs
// left by a crashed run. Each test drives the packages the way
// the dispatcher and runner chain them, so a gap between two packages
// shows up here even when each one's own tests pass.
//
// The package has no code of its own beyond the fixtures below.
package hostile

// Bot is the bot login the fixtures mention.
const Bot = "mrbot"

// Invisible carriers of hidden instructions: zero-width and bidi controls.
var Invisible = []string{
	"\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", // zero-width
	"\u202a", "\u202b", "\u202c", "\u202d", "\u202e", // bidi embeddings and overrides
	"\u2066", "\u2067", "\u2068", "\u2069", // bidi isolates
	"\u200e", "\u200f", "\u061c", // marks
}
