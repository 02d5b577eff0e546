// Package demo runs one mention through mention-runner the way GitHub runs
// it, on the in-process simulator: `dispatcher once` as the bot, then one
// `runner assemble` workflow run per repository_dispatch event, `runner
// agent` with no token in its environment, and `runner publish` with the
// bot's token. Every job is a separate process with its own environment
// and working directory; the context and the run record pass between jobs
// only as copied artifacts. cmd/demo (make demo) and the end-to-end tests
// in internal/testrig/e2e share it.
package demo
