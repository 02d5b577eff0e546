package contract

import (
	"fmt"
	"strings"

	"github.com/google/uuid"
)

// JobIDField is the jobid's one spelling wherever it is a field name: the
// dispatch payload, the record files, step outputs, log fields.
const JobIDField = "jobid"

// ParseJobID reads a jobid someone typed (any form uuid.Parse accepts)
// and returns its canonical form: lower case, with hyphens.
func ParseJobID(s string) (string, error) {
	u, err := uuid.Parse(s)
	if err != nil {
		return "", fmt.Errorf("jobid %q is not a UUID: %w", clip(s), err)
	}
	return u.String(), nil
}

// CheckJobID accepts a jobid that arrives from another job or process only
// in its canonical form. Every other spelling is refused rather than
// normalised, so one job cannot appear under two names.
func CheckJobID(s string) error {
	if c, err := ParseJobID(s); err != nil || c != s {
		return fmt.Errorf("jobid %q is not a lowercase canonical UUID (8-4-4-4-12 hex digits)", clip(s))
	}
	return nil
}

// ValidJobID reports whether s is a jobid in canonical form.
func ValidJobID(s string) bool { return CheckJobID(s) == nil }

func clip(s string) string {
	if len(s) > 60 {
		s = s[:60] + "…"
	}
	return strings.ToValidUTF8(s, "?")
}
