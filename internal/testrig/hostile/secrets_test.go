package hostile

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/core/contract"
	"github.com/mention-runner/mention-runner/internal/runner/record"
	"github.com/mention-runner/mention-runner/internal/runner/render"
	"github.com/mention-runner/mention-runner/internal/runner/session"
)

// secrets holds one made-up value of every shape SPEC §9 lists.
var secrets = []struct{ kind, value string }{
	{"ghp", "ghp_" + strings.Repeat("A1b2C3d4E5", 3) + "f6G7h8"},
	{"gho", "gho_" + strings.Repeat("Z9y8X7w6V5", 3) + "u4T3s2"},
	{"ghs", "ghs_" + strings.Repeat("q1W2e3R4t5", 3) + "Y6u7I8"},
	{"github_pat", "github_pat_11ABCDEFG0" + strings.Repeat("abcdEFGH12", 8)},
	{"sk-ant", "sk-ant-api03-" + strings.Repeat("Xy_Z-0123456789", 6) + "AA"},
	{"aws access key", "AKIAIOSFODNN7EXAMPLE"},
	{"aws secret key", "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"},
	{"jwt", "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIn0.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"},
}

// leakedPart is the part of a secret that must never appear: for the AWS
// secret key the key material itself (the name stays, so the text reads).
func leakedPart(kind, value string) string {
	if kind == "aws secret key" {
		return value[strings.LastIndex(value, " ")+1:]
	}
	return value
}

func assertNoSecret(t *testing.T, where, out string) {
	t.Helper()
	for _, s := range secrets {
		v := leakedPart(s.kind, s.value)
		if strings.Contains(out, v) {
			t.Errorf("%s: %s secret leaked", where, s.kind)
		}
		// a JSON-escaped copy must not leak either ("/" may be "\/")
		esc, _ := json.Marshal(v)
		if strings.Contains(out, strings.Trim(string(esc), `"`)) {
			t.Errorf("%s: %s secret leaked JSON-escaped", where, s.kind)
		}
	}
}

// allSecrets is one text carrying every secret.
func allSecrets() string {
	var b strings.Builder
	for _, s := range secrets {
		fmt.Fprintf(&b, "%s: %s\n", s.kind, s.value)
	}
	return b.String()
}

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// sessionEvents is an engine session whose every field carries secrets.
func sessionEvents() []session.Event {
	all := allSecrets()
	input, _ := json.Marshal(map[string]string{"body": "posting " + all, "repo": "alice/proj"})
	return []session.Event{
		{Kind: session.EventInit, Time: t0, Init: &session.Init{SessionID: "s1", Model: "m", Tools: []string{"Bash"}}},
		{Kind: session.EventUserText, Time: t0, Text: "please use " + all},
		{Kind: session.EventText, Time: t0, MessageID: "m1", Text: "I found " + all},
		{Kind: session.EventToolUse, Time: t0, MessageID: "m1", ToolCallID: "toolu_1", ToolName: "mcp__gate__add_comment", Input: input},
		{Kind: session.EventToolResult, Time: t0, ToolCallID: "toolu_1", Output: "env dump: " + all, IsError: true},
		{Kind: session.EventText, Time: t0, MessageID: "m2", Text: "done " + all},
		{Kind: session.EventResult, Time: t0, Result: &session.Result{Subtype: "success", IsError: true, NumTurns: 2, Text: "result " + all}},
	}
}

// Every file of the run record (events.jsonl, logs, session.json, run.json,
// transcript.md) is free of secrets.
func TestSecretsRedactedFromRunRecord(t *testing.T) {
	dir := t.TempDir()
	rec, err := record.Open(dir, record.Meta{RunID: "1-1", SessionID: "s1", TaskID: "job"}, func() time.Time { return t0 })
	require.NoError(t, err)
	b := record.NewBuilder(rec, session.Session{ID: "s1", CreatedAt: t0})
	for _, ev := range sessionEvents() {
		require.NoError(t, b.Add(ev))
	}
	require.NoError(t, b.Finish())
	require.NoError(t, b.WriteSessionJSON(filepath.Join(dir, contract.SessionFile)))
	require.NoError(t, rec.Error(record.ErrorRecord{Kind: "engine", Message: "crashed: " + allSecrets(), Recoverable: false}))
	_, err = rec.Emit("run.failed", "runner", "error", "failed with "+allSecrets(), map[string]string{"stderr": allSecrets()})
	require.NoError(t, err)
	require.NoError(t, rec.Close())
	require.NoError(t, record.WriteMeta(dir, record.RunMeta{RunID: "1-1", JobID: "job", SessionID: "s1", Prompt: "prompt " + allSecrets(),
		Status: "failed", TriggerURL: "https://github.com/alice/proj/issues/3#issuecomment-1"}))

	run, err := record.LoadRun(dir)
	require.NoError(t, err)
	require.NoError(t, record.WriteTranscript(dir, run.Transcript()))

	n := 0
	require.NoError(t, filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		raw, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		n++
		assertNoSecret(t, filepath.Base(path), string(raw))
		return nil
	}))
	assert.GreaterOrEqual(t, n, 6, "events, tools, errors, session, run.json, transcript")
	tr, err := os.ReadFile(filepath.Join(dir, contract.TranscriptFile))
	require.NoError(t, err)
	assert.Contains(t, string(tr), "[REDACTED:github-token]")
}

// What is posted to GitHub is free of secrets: session comments (whole and
// streamed), the log issue body, comments with the NOTE block, the error
// sections and the step summary.
func TestSecretsRedactedFromGitHubWrites(t *testing.T) {
	var s session.Session
	dir := t.TempDir()
	rec, err := record.Open(dir, record.Meta{RunID: "1-1", SessionID: "s1", TaskID: "job"}, func() time.Time { return t0 })
	require.NoError(t, err)
	b := record.NewBuilder(rec, session.Session{ID: "s1", CreatedAt: t0})
	var streamed bytes.Buffer
	stream := render.NewSessionStream(&streamed, render.SessionOptions{})
	for _, ev := range sessionEvents() {
		require.NoError(t, b.Add(ev))
		require.NoError(t, stream.Add(ev))
	}
	require.NoError(t, b.Finish())
	require.NoError(t, stream.Close())
	require.NoError(t, rec.Close())
	s = b.Session()
	parts := render.SessionMarkdown(s, render.SessionOptions{})
	require.NotEmpty(t, parts)

	all := allSecrets()
	rep := render.Report{
		Target: "alice/proj#3", TargetURL: "https://github.com/alice/proj/issues/3", TriggerAuthor: "alice",
		Engine: "claude", Model: all, Status: "failed " + all, PolicyWords: "comment-only",
		Comments: []string{"https://github.com/alice/proj/issues/3#issuecomment-1"},
		Refused:  []render.Refusal{{Index: 0, Kind: "comment", Repo: "alice/proj", Rule: "here-only", Reason: all}},
	}
	cases := map[string]string{
		"session markdown":  strings.Join(parts, "\n"),
		"session stream":    streamed.String(),
		"log issue body":    render.LogIssueBody(rep),
		"comment with NOTE": render.WithNote("here you go: "+all, "ops/control", 7, Bot, "job", 0),
		"runtime error":     render.ErrorRuntimeFor("claude", "claude exited: "+all),
		"loop error":        render.ErrorLoop([]render.LoopCall{{Tool: "Bash", Args: `{"command":"echo ` + all + `"}`, Count: 6}}),
		"step summary":      render.StepSummary(rep, parts),
		"fenced":            render.Fenced("text", all),
		"inline":            render.Inline(all),
	}
	for where, out := range cases {
		t.Run(where, func(t *testing.T) {
			assertNoSecret(t, where, out)
			assert.Contains(t, out, "[REDACTED:", "%s shows no redaction mark", where)
		})
	}
}

// A secret split by an invisible character still reads (and copies) as
// the secret; what we post must not carry it in that form either.
func TestSecretSplitByInvisibleCharacter(t *testing.T) {
	for _, sec := range secrets {
		v := leakedPart(sec.kind, sec.value)
		for _, c := range []string{"\u200b", "\u2060", "\u00ad"} {
			hidden := strings.Replace(sec.value, v, v[:len(v)/2]+c+v[len(v)/2:], 1)
			out := render.WithNote("here: "+hidden, "ops/control", 7, Bot, "job", 0)
			visible := strings.ReplaceAll(stripInvisible(out), "\u00ad", "")
			assert.NotContains(t, visible, v, "%s split by %U", sec.kind, []rune(c)[0])
		}
	}
}

func stripInvisible(s string) string {
	for _, c := range Invisible {
		s = strings.ReplaceAll(s, c, "")
	}
	return s
}
