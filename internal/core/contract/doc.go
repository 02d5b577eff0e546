// Package contract is the one place for everything two jobs or two
// processes of mention-runner must agree on: the hidden markers written to
// GitHub, ref names in the control repo, record and artifact file names,
// event types, run statuses and failure causes, GitHub's size limits, the
// gate's tool names, the context's top-level keys and the jobid's form.
//
// A value that more than one package reads or writes is defined here and
// nowhere else, so a job that writes it and a job that looks for it cannot
// drift apart. The package depends only on the standard library and uuid.
package contract
