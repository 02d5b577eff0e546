package agent

import "github.com/mention-runner/mention-runner/internal/runner/record"

// RunID names the run directory (record.RunID).
func RunID(getenv func(string) string) (string, error) { return record.RunID(getenv) }
