package assemble

import (
	"fmt"
	"io"
	"os"
)

// maxEventBytes bounds the event file: a dispatch body is under 64,000
// bytes; the webhook adds repository, sender and installation objects.
const maxEventBytes = 1 << 20

// readEvent reads $GITHUB_EVENT_PATH without trusting its size.
func readEvent(path string) ([]byte, error) {
	if path == "" {
		return nil, fmt.Errorf("GITHUB_EVENT_PATH is not set: assemble reads the repository_dispatch event from it")
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read event: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxEventBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read event %s: %w", path, err)
	}
	if len(data) > maxEventBytes {
		return nil, &inputError{err: fmt.Errorf("event file %s is larger than %d bytes; a repository_dispatch event is far smaller", path, maxEventBytes)}
	}
	return data, nil
}
