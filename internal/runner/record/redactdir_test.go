package record

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRedactDirEveryFile: every text file under the record (any name,
// nested) loses its secrets; JSON and JSON lines stay valid; a binary file
// is left as it is.
func TestRedactDirEveryFile(t *testing.T) {
	gh := "ghp_" + strings.Repeat("Z9y8X7w6V5", 3) + "u4T3s2"
	ant := "sk-ant-api03-" + strings.Repeat("k", 44)
	dir := t.TempDir()
	files := map[string]string{
		"prompt.md":          "use " + gh + " and " + ant,
		"context.agent.json": `{"body":"use ` + gh + `","n":1.50}`,
		"outputs.jsonl":      `{"body":"` + ant + `"}` + "\n" + `{"body":"gh` + `p\u005f` + gh[4:] + `"}` + "\n",
		"sub/anything.txt":   gh,
		"split.md":           "gh<b>p_</b>" + gh[4:],
		"weird.json":         "not json " + gh,
		"bundle.pack":        "\x00\xff" + gh,
	}
	for name, body := range files {
		p := filepath.Join(dir, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(body), 0o644))
	}
	require.NoError(t, RedactDir(dir))
	for name := range files {
		raw, err := os.ReadFile(filepath.Join(dir, name))
		require.NoError(t, err)
		if name == "bundle.pack" {
			assert.Equal(t, files[name], string(raw))
			continue
		}
		assert.NotContains(t, string(raw), gh[4:], name)
		assert.NotContains(t, string(raw), ant[7:], name)
		switch filepath.Ext(name) {
		case ".json":
			if name == "context.agent.json" {
				assert.True(t, json.Valid(raw), name)
				assert.Contains(t, string(raw), `"n":1.50`)
			}
		case ".jsonl":
			for _, l := range strings.Split(strings.TrimSuffix(string(raw), "\n"), "\n") {
				assert.True(t, json.Valid([]byte(l)), l)
			}
		}
	}
	assert.NoError(t, RedactDir(filepath.Join(dir, "absent")))
}
