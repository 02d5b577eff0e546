// Package threadctx builds the context JSON of one mention (SPEC §4) from raw
// GitHub API responses: the repository, the issue or pull request, its
// comments, and for pull requests its reviews and review comments (the
// diff is read by the runner's fetch step at the recorded head: prdiff).
// Every object is kept exactly as GitHub sent it (json.RawMessage), items
// created after the trigger are dropped and the rest is fitted to a byte
// budget, with a record of what was cut.
package threadctx
