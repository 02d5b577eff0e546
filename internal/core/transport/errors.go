package transport

import (
	"errors"
	"fmt"
)

// ErrorKind says which transport check failed, for callers that branch on it.
type ErrorKind string

// Error kinds.
const (
	KindJobIDMismatch        ErrorKind = "jobid_mismatch"
	KindTotalMismatch        ErrorKind = "total_mismatch"
	KindIndexOutOfRange      ErrorKind = "index_out_of_range"
	KindConflictingDuplicate ErrorKind = "conflicting_duplicate"
	KindInvalidBase64        ErrorKind = "invalid_base64"
	KindNotJSONObject        ErrorKind = "not_json_object"
	KindTooLarge             ErrorKind = "too_large"
	KindTooManyShards        ErrorKind = "too_many_shards"
	KindIncomplete           ErrorKind = "incomplete"
	KindBadPayload           ErrorKind = "bad_payload"
	KindEventTypeMismatch    ErrorKind = "event_type_mismatch"
)

// Error is every failure of this package. Use errors.As to get at Kind.
type Error struct {
	Kind ErrorKind
	// JobID is the job the failure concerns, when known.
	JobID string
	// Index is the shard index concerned, or -1.
	Index int
	// Msg says what is wrong in words a person can act on.
	Msg string
	// Err is the underlying cause, if any.
	Err error
}

func (e *Error) Error() string {
	s := "transport: " + string(e.Kind)
	if e.JobID != "" {
		s += " (job " + e.JobID
		if e.Index >= 0 {
			s += fmt.Sprintf(", shard %d", e.Index)
		}
		s += ")"
	} else if e.Index >= 0 {
		s += fmt.Sprintf(" (shard %d)", e.Index)
	}
	s += ": " + e.Msg
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

func (e *Error) Unwrap() error { return e.Err }

// IsKind reports whether err is, or wraps, an *Error of kind k.
func IsKind(err error, k ErrorKind) bool {
	var te *Error
	return errors.As(err, &te) && te.Kind == k
}

func newErr(k ErrorKind, jobID string, index int, format string, a ...any) *Error {
	return &Error{Kind: k, JobID: jobID, Index: index, Msg: fmt.Sprintf(format, a...)}
}
