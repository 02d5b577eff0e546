package demo

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-github/v62/github"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/testrig/golden"
)

func TestSummaryWrite(t *testing.T) {
	body := "### mention-runner run\n\nCreated Comments:\n- https://example.test/acme/widgets/issues/1#issuecomment-9\n"
	full := &Summary{
		JobID: "0f41aabb-5d80-58bf-8978-bc4b171fa19f", EventType: "agent_shard", DispatchBytes: []int{63000, 63000, 1200}, AssembleRuns: 3,
		Policy: "Only comments may be written.", AgentStatus: "completed",
		Denials:     []Denial{{Tool: "create_issue", Rule: "here-only", Reason: "denied: here-only allows comments only"}},
		LogIssue:    &github.Issue{Number: github.Int(1), Title: github.String("mention-runner: acme/widgets#1"), State: github.String("closed"), StateReason: github.String("completed"), HTMLURL: github.String("https://example.test/acme/control/issues/1"), Body: github.String(body)},
		LogComments: 1,
		BotComments: []*github.IssueComment{{HTMLURL: github.String("https://example.test/acme/widgets/issues/1#issuecomment-9"), Body: github.String("Hello.\n\n> [!NOTE]\n> Created from acme/control#1  \n")}},
		Reactions:   []string{"eyes"},
		RecordDir:   "demo-out/artifacts/run-record/7001-1", Events: "demo-out/artifacts/run-record/7001-1/events.jsonl", Transcript: "demo-out/artifacts/run-record/7001-1/transcript.md",
		PublishOutput: "job 0f41…: completed; 1 written, 0 refused",
	}
	cases := []struct {
		name string
		s    *Summary
	}{
		{"summary_full.golden", full},
		{"summary_small.golden", &Summary{EventType: "agent_small", DispatchBytes: []int{14000}, AssembleRuns: 1}},
		{"summary_empty.golden", &Summary{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var b bytes.Buffer
			c.s.Write(&b)
			golden.Check(t, filepath.Join("testdata", c.name), b.Bytes())
		})
	}
}

func TestCopyTreeAndFiles(t *testing.T) {
	src := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(src, "7001-1", "logs"), 0o755))
	files := map[string]string{
		"context.json":            "{}",
		"7001-1/events.jsonl":     "{\"type\":\"run.created\"}\n",
		"7001-1/transcript.md":    "# Run Transcript\n",
		"7001-1/logs/tools.jsonl": "",
	}
	for p, c := range files {
		require.NoError(t, os.WriteFile(filepath.Join(src, p), []byte(c), 0o644))
	}
	require.NoError(t, os.Symlink("/etc/passwd", filepath.Join(src, "7001-1", "link")))

	tree := filepath.Join(t.TempDir(), "tree")
	require.NoError(t, copyTree(src, tree))
	for p, c := range files {
		got, err := os.ReadFile(filepath.Join(tree, p))
		require.NoError(t, err, p)
		assert.Equal(t, c, string(got), p)
	}
	_, err := os.Lstat(filepath.Join(tree, "7001-1", "link"))
	assert.True(t, os.IsNotExist(err), "symlinks are not uploaded")

	flat := filepath.Join(t.TempDir(), "flat")
	require.NoError(t, copyFiles(src, flat))
	ents, err := os.ReadDir(flat)
	require.NoError(t, err)
	require.Len(t, ents, 1, "only the files directly in the directory")
	assert.Equal(t, "context.json", ents[0].Name())

	assert.Error(t, copyFiles(filepath.Join(src, "missing"), flat))
}

func TestNewRefusesBadOptions(t *testing.T) {
	w := &World{}
	used := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(used, "jobs"), 0o755))
	cases := []struct {
		name string
		o    Options
		want string
	}{
		{"no world", Options{}, "World is required"},
		{"replay without script", Options{World: w, OutDir: t.TempDir()}, "needs a script"},
		{"claude without binary", Options{World: w, Engine: EngineClaude, OutDir: t.TempDir()}, "Claude Code executable"},
		{"unknown engine", Options{World: w, Engine: "gpt", OutDir: t.TempDir()}, `unknown engine "gpt"`},
		{"used out dir", Options{World: w, ReplayScript: "x.jsonl", OutDir: used}, "already holds"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := New(c.o)
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
		})
	}
}

func TestRunGivesExactlyTheEnvironment(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		name     string
		env      []string
		args     []string
		wantExit int
		wantOut  string
	}{
		{"only what was given", []string{"PATH=" + os.Getenv("PATH"), "ONLY=this"}, []string{"-c", "env | grep -v '^PWD=' | grep -v '^SHLVL=' | grep -v '^_=' | sort"}, 0, "ONLY=this\nPATH="},
		{"exit code kept", []string{"PATH=" + os.Getenv("PATH")}, []string{"-c", "exit 3"}, 3, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			st, err := run(context.Background(), c.name, dir, time.Minute, c.env, "/bin/sh", c.args...)
			require.NoError(t, err)
			assert.Equal(t, c.wantExit, st.ExitCode)
			assert.True(t, strings.HasPrefix(st.Stdout, c.wantOut), st.Stdout)
			v, ok := st.Getenv("PATH")
			assert.True(t, ok)
			assert.Equal(t, os.Getenv("PATH"), v)
			_, ok = st.Getenv("HOME")
			assert.False(t, ok, "nothing is inherited")
		})
	}
}

func TestRunTimeoutIsAStageError(t *testing.T) {
	st, err := run(context.Background(), "sleeper", t.TempDir(), 100*time.Millisecond, nil, "/bin/sh", "-c", "sleep 5")
	var se *StageError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, st, se.Stage)
	assert.Contains(t, err.Error(), "did not finish within 100ms")
}
