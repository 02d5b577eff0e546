package record

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/mention-runner/mention-runner/internal/core/contract"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestWriteJSON(t *testing.T) {
	tests := []struct {
		name    string
		v       any
		old     string // existing file content ("" = none)
		want    string
		wantErr string
	}{
		{"indented with newline", map[string]int{"a": 1}, "", "{\n  \"a\": 1\n}\n", ""},
		{"secret redacted", map[string]string{"t": ghToken}, "", "{\n  \"t\": \"[REDACTED:github-token]\"\n}\n", ""},
		{"replaces whole", []int{}, "{\"long\": \"old content\"}\n", "[]\n", ""},
		{"unencodable", map[string]any{"f": func() {}}, "keep\n", "keep\n", "record: encode out.json"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "out.json")
			if tt.old != "" {
				require.NoError(t, os.WriteFile(path, []byte(tt.old), 0o600))
			}
			err := WriteJSON(path, tt.v)
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
			} else {
				require.NoError(t, err)
				info, err := os.Stat(path)
				require.NoError(t, err)
				assert.Equal(t, os.FileMode(0o644), info.Mode().Perm())
			}
			got, err := os.ReadFile(path)
			require.NoError(t, err)
			assert.Equal(t, tt.want, string(got))
			entries, err := os.ReadDir(dir)
			require.NoError(t, err)
			assert.Len(t, entries, 1, "no temporary file left behind")
		})
	}
}

func TestWriteJSONMissingDir(t *testing.T) {
	err := WriteJSON(filepath.Join(t.TempDir(), "absent", "out.json"), 1)
	require.ErrorContains(t, err, "record: write")
	assert.ErrorIs(t, err, os.ErrNotExist)
}

// TestReadRecordFiles: run.json and outcome.json are read strictly,
// session.json leniently, and a missing file is not an error where the
// record may lack it.
func TestReadRecordFiles(t *testing.T) {
	tests := []struct {
		name, file, content string
		read                func(dir string) (found bool, err error)
		wantFound           bool
		wantErr             string
	}{
		{"meta ok", contract.MetaFile, `{"run_id":"r1","status":"running"}`, readMeta, true, ""},
		{"meta missing", "", "", readMeta, false, ""},
		{"meta unknown field", contract.MetaFile, `{"run_id":"r1","runid":"x"}`, readMeta, false, `read run.json: json: unknown field "runid"`},
		{"meta not json", contract.MetaFile, `run`, readMeta, false, "read run.json: "},
		{"outcome ok", contract.OutcomeFile, `{"status":"failed","failure":"timeout"}`, readOutcome, true, ""},
		{"outcome missing", "", "", readOutcome, false, "read outcome: "},
		{"outcome unknown field", contract.OutcomeFile, `{"status":"failed","num_turns":2}`, readOutcome, false, `read outcome.json: json: unknown field "num_turns"`},
		{"outcome bad status", contract.OutcomeFile, `{"status":"running"}`, readOutcome, false, "status must be completed or failed"},
		{"session ok", contract.SessionFile, `{"status":"completed","extra":1}`, readSession, true, ""},
		{"session missing", "", "", readSession, false, ""},
		{"session not json", contract.SessionFile, `{`, readSession, false, "read session.json: "},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if tc.file != "" {
				require.NoError(t, os.WriteFile(filepath.Join(dir, tc.file), []byte(tc.content), 0o600))
			}
			found, err := tc.read(dir)
			if tc.wantErr != "" {
				require.ErrorContains(t, err, tc.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.wantFound, found)
		})
	}
}

func readMeta(dir string) (bool, error) {
	m, ok, err := ReadMeta(dir)
	return ok && m.RunID == "r1", err
}

func readOutcome(dir string) (bool, error) {
	o, err := ReadOutcome(dir)
	return err == nil && o.Failure == "timeout", err
}

func readSession(dir string) (bool, error) {
	s, err := ReadSession(dir)
	return s != nil && s.Status == "completed", err
}
