// Package loadtest drives the real dispatcher and publish stage, in
// process, against the GitHub simulator under injected faults, restarts
// and bursts, and measures the dispatcher's cost per mention
// for `make bench`. The harness here is shared by this package's tests
// and benchmarks; nothing in production imports it.
package loadtest
