package record

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strings"
)

// RunID names the run directory: GITHUB_RUN_ID-GITHUB_RUN_ATTEMPT in
// Actions (a re-run gets its own directory), "local-<random>" elsewhere.
// The assemble and agent jobs of one workflow run get the same id, so the
// agent continues the record assemble started.
func RunID(getenv func(string) string) (string, error) {
	id := strings.TrimSpace(getenv("GITHUB_RUN_ID"))
	if id == "" {
		var b [6]byte
		if _, err := rand.Read(b[:]); err != nil {
			return "", fmt.Errorf("run id: %w", err)
		}
		return "local-" + hex.EncodeToString(b[:]), nil
	}
	attempt := strings.TrimSpace(getenv("GITHUB_RUN_ATTEMPT"))
	if attempt == "" {
		attempt = "1"
	}
	if !digits(id) || !digits(attempt) {
		return "", fmt.Errorf("run id: GITHUB_RUN_ID=%q and GITHUB_RUN_ATTEMPT=%q must be numbers", id, attempt)
	}
	return id + "-" + attempt, nil
}

func digits(s string) bool {
	if s == "" || len(s) > 20 {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
