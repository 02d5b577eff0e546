package assemble

import (
	"errors"

	"github.com/mention-runner/mention-runner/internal/core/transport"
	"github.com/mention-runner/mention-runner/internal/runner/shardstore"
)

// inputError marks a failure caused by what was dispatched (as opposed to
// GitHub or the runner), reported on the log issue as an invalid context.
type inputError struct{ err error }

func (e *inputError) Error() string { return e.err.Error() }
func (e *inputError) Unwrap() error { return e.err }

// IsInvalidInput reports whether err was caused by the dispatched data:
// a transport check, a corrupt shard ref or a context without a job.
func IsInvalidInput(err error) bool {
	var ie *inputError
	var te *transport.Error
	var ce *shardstore.CorruptError
	return errors.As(err, &ie) || errors.As(err, &te) || errors.As(err, &ce)
}
