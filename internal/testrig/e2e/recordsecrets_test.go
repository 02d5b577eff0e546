package e2e

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/testrig/demo"
)

// TestRunRecordArtifactsHoldNoSecret: a thread holding a GitHub token and
// an Anthropic key runs the whole flow; every file of every run record
// artifact that leaves a job (the agent job's run-*, publish's final
// run-record-*: prompt.md, context.agent.json, outputs.jsonl, events,
// transcript, session) holds neither. The context artifact's context.json
// is the trusted, hashed input publish re-checks and is not a record.
func TestRunRecordArtifactsHoldNoSecret(t *testing.T) {
	t.Parallel()
	gh := "ghp_" + strings.Repeat("R4nd0mT0k3n", 3) + "XyZ"
	ant := "sk-ant-api03-" + strings.Repeat("Abc-12_xyZ", 4) + "QwEr"
	require.Len(t, gh[4:], 36)
	require.Len(t, ant[len("sk-ant-api03-"):], 44)
	out := t.TempDir()
	comment := "@" + demo.BotLogin + " !cfg here-only\nplease use " + gh + " and " + ant + "\n" + demo.DefaultTask
	runFlow(t, flowCase{engine: demo.EngineReplay, script: demoScript(t), comment: comment, outDir: out})

	arts := filepath.Join(out, "artifacts")
	names, err := os.ReadDir(arts)
	require.NoError(t, err)
	records := 0
	for _, a := range names {
		if !strings.HasPrefix(a.Name(), "run-") {
			continue
		}
		records++
		files := 0
		require.NoError(t, filepath.WalkDir(filepath.Join(arts, a.Name()), func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			raw, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			files++
			rel, _ := filepath.Rel(arts, p)
			for _, sec := range []string{gh[4:], ant[7:]} {
				if strings.Contains(string(raw), sec) {
					t.Errorf("%s holds the secret %s…", rel, sec[:6])
				}
			}
			return nil
		}))
		assert.NotZero(t, files, a.Name())
	}
	assert.GreaterOrEqual(t, records, 2, "the agent job's run-* and publish's run-record-*")
}
