// Package render writes every piece of markdown the runner puts on GitHub or
// in the run record: the NOTE block and hidden marker on each write, the
// session (SPEC §6) in parts that fit a comment, the error sections, the
// run-log issue body with its tracking lists, and the step summary.
//
// All functions are pure and deterministic, and everything they return has
// passed through redact.String: this package is the render boundary.
package render
