package record

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/mention-runner/mention-runner/internal/runner/localfs"
	"github.com/mention-runner/mention-runner/internal/runner/render/redactjson"
)

// WriteJSON writes v to path as redacted, indented JSON ending in a
// newline, replacing the file whole: a reader (or the next job) never sees
// half a record file, nor a secret the engine echoed.
func WriteJSON(path string, v any) error { return WriteJSONFS(nil, path, v) }

// WriteJSONFS is WriteJSON through fsys (nil = the OS), the agent stage's
// view of its disk.
func WriteJSONFS(fsys localfs.FS, path string, v any) error {
	raw, err := redactjson.Marshal(v)
	if err != nil {
		return fmt.Errorf("record: encode %s: %w", filepath.Base(path), err)
	}
	var out bytes.Buffer
	if err := json.Indent(&out, raw, "", "  "); err != nil {
		return fmt.Errorf("record: indent %s: %w", filepath.Base(path), err)
	}
	out.WriteByte('\n')
	return writeFileFS(fsys, path, out.Bytes())
}

// writeFileFS replaces path with data: atomically on the OS; an injected
// file system (tests: a full disk, a read-only directory) writes through
// its own WriteFile, which fails as the OS would.
func writeFileFS(fsys localfs.FS, path string, data []byte) error {
	if _, real := localfs.Or(fsys).(localfs.OS); real {
		return writeFileAtomic(path, data)
	}
	if err := fsys.WriteFile(path, data, 0o644); err != nil {
		return fmt.Errorf("record: write %s: %w", path, err)
	}
	return nil
}

// decodeStrict decodes data, the content of record file name, into v,
// refusing fields v's schema does not have.
func decodeStrict(name string, data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("read %s: %w", name, err)
	}
	return nil
}

// writeFileAtomic replaces path with data so readers never see half a file.
func writeFileAtomic(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("record: write %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("record: write %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("record: write %s: %w", path, err)
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return fmt.Errorf("record: write %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("record: write %s: %w", path, err)
	}
	return nil
}
