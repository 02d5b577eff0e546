// Package assemble is the runner's first, trusted stage (SPEC §4): it reads
// the repository_dispatch event, reassembles the context (directly for
// agent_small; through shard refs in the control repo for agent_shard),
// validates it, writes it with its SHA-256 for the next jobs, opens the
// run-log issue and sets the step outputs. Shard runs that are not the one
// to proceed end cleanly with ready=false.
package assemble
