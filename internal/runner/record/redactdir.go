package record

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/mention-runner/mention-runner/internal/core/redact"
)

// RedactDir redacts every text file under dir in place by redact's rules
// (JSON and JSON-lines files string by string, so they stay readable), so
// nothing of the record that leaves the job (uploaded as an artifact)
// holds a secret, whichever step wrote it. Binary files (a git bundle)
// and symbolic links are left as they are.
func RedactDir(dir string) error {
	return filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if os.IsNotExist(err) && path == dir {
				return nil
			}
			return err
		}
		if !d.Type().IsRegular() {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return fmt.Errorf("redact the record: %w", err)
		}
		if !utf8.Valid(data) || bytes.IndexByte(data, 0) >= 0 {
			return nil
		}
		var out []byte
		switch {
		case strings.HasSuffix(path, ".jsonl"):
			out = redact.JSONLines(data)
		case strings.HasSuffix(path, ".json"):
			out = redact.JSON(data)
		default:
			out = []byte(redact.String(string(data)))
		}
		if bytes.Equal(out, data) {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return fmt.Errorf("redact the record: %w", err)
		}
		if err := os.WriteFile(path, out, info.Mode().Perm()); err != nil {
			return fmt.Errorf("redact the record: %w", err)
		}
		return nil
	})
}
