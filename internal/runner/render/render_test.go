package render

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/core/contract"
	"github.com/mention-runner/mention-runner/internal/runner/session"
)

var ghToken = "ghp_" + strings.Repeat("a1B2", 9)

func TestWithNote(t *testing.T) {
	cases := []struct{ name, body, wantPrefix string }{
		{"empty body", "", "> [!NOTE]"},
		{"trailing newlines trimmed", "hello\n\n\n", "hello\n\n> [!NOTE]"},
		{"token redacted", "key " + ghToken, "key [REDACTED:github-token]\n\n"},
		{"open comment closed", "a <!-- hidden", "a <!-- hidden -->\n\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := WithNote(c.body, "o/c", 1, "bot", "j", 0)
			assert.True(t, strings.HasPrefix(got, c.wantPrefix), got)
			assert.True(t, strings.HasSuffix(got, contract.OutputMarker("j", 0)))
		})
	}
}

func TestTrackingRoundTrip(t *testing.T) {
	cases := []Tracking{
		{},
		{Comments: []string{"https://github.com/o/n/issues/1#issuecomment-2"}, Issues: []string{"o/n#3"}, PRs: []string{"o/n#4", "a/b.c#5"}, Repos: []string{"o/n", "a/b.c"}},
		{Repos: []string{"one/repo"}},
		{Comments: []string{"https://github.com/o/n/pull/4#pullrequestreview-77"}, Repos: []string{"o/n"},
			Pushed: []string{PushedCommit("o/n", "0123456789abcdef0123", 4)},
			Labels: []string{LabelChange("o/n", 4, []string{"bug", "good first issue"}, []string{"needs-triage", "@alice"})}},
	}
	for _, want := range cases {
		body := LogIssueBody(Report{Comments: want.Comments, Issues: want.Issues, PRs: want.PRs, Repos: want.Repos, Pushed: want.Pushed, Labels: want.Labels})
		got, err := ParseTrackingLists(body)
		require.NoError(t, err, body)
		assert.Equal(t, want, got)
		got, err = ParseTrackingLists(strings.ReplaceAll(body, "\n", "\r\n"))
		require.NoError(t, err, "GitHub may hand the body back with CRLF")
		assert.Equal(t, want, got)
	}
}

func TestParseTrackingListsErrors(t *testing.T) {
	good := TrackingLists(Tracking{Issues: []string{"o/n#1"}})
	cases := []struct {
		name, body string
		line       int
	}{
		{"not an issue ref", strings.Replace(good, "o/n#1", "o/n#x", 1), 5},
		{"missing section", strings.Replace(good, "Created PRs:", "Created Pulls:", 1), 7},
		{"none with items", strings.Replace(good, "- o/n#1", "- o/n#1\n- (none)", 1), 6},
		{"bad repo", strings.Replace(good, "Affected Repositories:\n(none)", "Affected Repositories:\nowner only", 1), 11},
		{"bad pushed commit", strings.Replace(good, "Pushed Commits:\n- (none)", "Pushed Commits:\n- o/n@zz (o/n#1)", 1), 14},
		{"bad label change", strings.Replace(good, "Label Changes:\n- (none)", "Label Changes:\n- o/n#1 bug", 1), 17},
		{"lists out of order", strings.Replace(good, "Pushed Commits:", "Label Changes:", 1), 13},
		{"not a list", strings.Replace(good, "- o/n#1", "o/n#1", 1), 5},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParseTrackingLists(c.body)
			var fe *TrackingFormatError
			require.ErrorAs(t, err, &fe, c.body)
			assert.Equal(t, c.line, fe.Line)
		})
	}
	_, err := ParseTrackingLists("nothing")
	assert.ErrorIs(t, err, ErrNoTrackingLists)
}

func TestParseTrackingCommentURLs(t *testing.T) {
	cases := []struct {
		url string
		ok  bool
	}{
		{"https://github.com/o/n/issues/1#issuecomment-2", true},
		{"https://github.com/o/n.go/pull/12#issuecomment-9007199254740993", true},
		{"https://github.com/o/n/pull/3#discussion_r45", true},
		{"http://127.0.0.1:41234/alice/app/issues/1#issuecomment-7", true},
		{"https://ghe.example.com/Org-1/re_po/issues/5#issuecomment-6", true},
		{"ftp://github.com/o/n/issues/1#issuecomment-2", false},
		{"https://github.com/o/n/issues/1", false},
		{"https://github.com/o/n/issues/1#issuecomment-", false},
		{"https://github.com/o/n/issues/0#issuecomment-2", false},
		{"https://github.com/o/n/commits/1#issuecomment-2", false},
		{"https://github.com/o/issues/1#issuecomment-2", false},
		{"https://github.com/o/n/issues/1#issuecomment-2x", false},
		{"https://github.com/o/n/issues/1#pullrequestreview-2", false},
		{"https://github.com/o/n/pull/1#pullrequestreview-2", true},
		{"https://user@github.com/o/n/issues/1#issuecomment-2", false},
		{"https:///o/n/issues/1#issuecomment-2", false},
		{"javascript:alert(1)//o/n/issues/1#issuecomment-2", false},
	}
	for _, c := range cases {
		t.Run(c.url, func(t *testing.T) {
			body := TrackingLists(Tracking{Comments: []string{c.url}})
			got, err := ParseTrackingLists(body)
			if !c.ok {
				var fe *TrackingFormatError
				require.ErrorAs(t, err, &fe)
				assert.Equal(t, 2, fe.Line)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, []string{c.url}, got.Comments)
		})
	}
}

func FuzzParseTrackingLists(f *testing.F) {
	f.Add(LogIssueBody(sampleReport()))
	f.Add(TrackingLists(Tracking{Comments: []string{"http://127.0.0.1:8080/o/n/pull/2#issuecomment-3"}}))
	f.Add(TrackingLists(Tracking{}))
	f.Add("Created Comments:\n- (none)\n\nCreated Issues:\n")
	f.Fuzz(func(t *testing.T, body string) {
		tr, err := ParseTrackingLists(body)
		if err != nil {
			return
		}
		// what parses renders back to the same lists
		again, err := ParseTrackingLists(TrackingLists(tr))
		require.NoError(t, err)
		assert.Equal(t, normalise(tr), normalise(again))
	})
}

// normalise drops repos that differ only in case, as TrackingLists does.
func normalise(t Tracking) Tracking {
	seen := map[string]bool{}
	var repos []string
	for _, r := range t.Repos {
		if !seen[strings.ToLower(r)] {
			seen[strings.ToLower(r)] = true
			repos = append(repos, r)
		}
	}
	t.Repos = repos
	return t
}

func TestSessionRedacts(t *testing.T) {
	evs := []session.Event{
		{Kind: session.EventUserText, Text: "use " + ghToken},
		{Kind: session.EventToolUse, MessageID: "m", ToolCallID: "c", ToolName: "Bash", Input: json.RawMessage(`{"command":"echo x\n` + ghToken + `"}`)},
		{Kind: session.EventToolResult, ToolCallID: "c", Output: `{"env":"A\n` + ghToken + `"}`},
		{Kind: session.EventToolUse, MessageID: "m", ToolCallID: "d", ToolName: "Bash", Input: json.RawMessage(`{"token":"` + ghToken + `"}`)},
		{Kind: session.EventToolResult, ToolCallID: "d", Output: "TOKEN=" + ghToken},
	}
	out := strings.Join(SessionMarkdown(assemble(evs), SessionOptions{}), "")
	assert.NotContains(t, out, "a1B2a1B2")
	assert.Contains(t, out, "[REDACTED:github-token]")
	var buf bytes.Buffer
	s := NewSessionStream(&buf, SessionOptions{})
	for _, ev := range evs {
		require.NoError(t, s.Add(ev))
	}
	require.NoError(t, s.Close())
	assert.NotContains(t, buf.String(), "a1B2a1B2")
}

func TestSessionOversizeTurn(t *testing.T) {
	// one assistant turn with many tool calls: split between calls
	evs := []session.Event{{Kind: session.EventUserText, Text: "go"}}
	for i := range 12 {
		id := "c" + strings.Repeat("x", i)
		evs = append(evs,
			session.Event{Kind: session.EventToolUse, MessageID: "m", ToolCallID: id, ToolName: "Read", Input: json.RawMessage(`{"n":1}`)},
			session.Event{Kind: session.EventToolResult, ToolCallID: id, Output: strings.Repeat("r", 300)},
		)
	}
	// …and one text block too big for any part
	evs = append(evs, session.Event{Kind: session.EventText, MessageID: "m2", Text: "```\n" + strings.Repeat("é long line\n", 400)})
	parts := SessionMarkdown(assemble(evs), SessionOptions{MaxPartBytes: 2000})
	require.Greater(t, len(parts), 3)
	for i, p := range parts {
		assert.LessOrEqual(t, len(p), 2000, "part %d", i)
		assert.True(t, utf8.ValidString(p))
		assert.Equal(t, "", openFence(p), "part %d leaves a fence open", i)
		assert.Equal(t, strings.Count(p, "<details>"), strings.Count(p, "</details>"), "part %d", i)
	}
	assert.Contains(t, strings.Join(parts, ""), "[Assistant] (continued)")
	last := parts[len(parts)-1]
	assert.Contains(t, last, "the full record is in the run artifact (GitHub's size limit)")
}

func TestSessionDefaultPartsFitGitHub(t *testing.T) {
	parts := SessionMarkdown(assemble(bigSession(400, 3000)), SessionOptions{})
	require.Greater(t, len(parts), 2)
	for _, p := range parts {
		assert.Less(t, len(p), contract.GitHubBodyChars)
		assert.Less(t, utf8.RuneCountInString(p), contract.GitHubBodyChars)
	}
}

func TestStreamMatchesSessionMarkdown(t *testing.T) {
	cases := map[string][]session.Event{
		"scripted": scripted(),
		"big":      bigSession(50, 500),
		"empty":    nil,
		"no ids": {
			{Kind: session.EventUserText, Text: "hi"},
			{Kind: session.EventText, Text: "a"},
			{Kind: session.EventToolUse, ToolCallID: "1", ToolName: "T", Input: json.RawMessage(`{}`)},
			{Kind: session.EventToolResult, ToolCallID: "1", Output: "ok"},
			{Kind: session.EventText, Text: "b"},
			{Kind: session.EventToolUse, ToolCallID: "2", ToolName: "T"},
		},
	}
	for name, evs := range cases {
		for kind, newStream := range streamKinds {
			t.Run(name+"/"+kind, func(t *testing.T) {
				var buf bytes.Buffer
				s := newStream(&buf, SessionOptions{})
				for _, ev := range evs {
					require.NoError(t, s.Add(ev))
				}
				require.NoError(t, s.Close())
				want := SessionMarkdown(assemble(evs), SessionOptions{MaxPartBytes: contract.GitHubBodyChars - 1})
				if len(want) == 1 {
					assert.Equal(t, want[0], buf.String())
				} else {
					assert.Equal(t, "## Session\n\n"+SessionTurns(assemble(evs), SessionOptions{}), buf.String())
				}
			})
		}
	}
}

// streamKinds are the two ways to stream a session; they write the same.
var streamKinds = map[string]func(io.Writer, SessionOptions) *SessionStream{
	"synchronous": NewSessionStream,
	"pipelined":   NewPipelinedSessionStream,
}

// TestPipelinedStreamWritesTheSame: many turns (several batches), giant
// payloads cut early, a stream that never ends its calls.
func TestPipelinedStreamWritesTheSame(t *testing.T) {
	giant := strings.Repeat("y", preCutBytes+3)
	withCuts := bigSession(300, 500)
	withCuts = append(withCuts,
		session.Event{Kind: session.EventToolUse, MessageID: "g", ToolCallID: "g1", ToolName: "Read", Input: json.RawMessage(`{"p":"` + giant + `"}`)},
		session.Event{Kind: session.EventToolResult, ToolCallID: "g1", Output: giant},
		session.Event{Kind: session.EventToolUse, MessageID: "g2", ToolCallID: "g2", ToolName: "Read", Input: json.RawMessage(`{}`)})
	for name, evs := range map[string][]session.Event{"scripted": scripted(), "long": bigSession(2000, 300), "cuts": withCuts} {
		for _, opts := range []SessionOptions{{}, {MaxResultChars: 7}} {
			t.Run(fmt.Sprintf("%s/%d", name, opts.MaxResultChars), func(t *testing.T) {
				var want, got bytes.Buffer
				for buf, newStream := range map[*bytes.Buffer]func(io.Writer, SessionOptions) *SessionStream{&want: NewSessionStream, &got: NewPipelinedSessionStream} {
					s := newStream(buf, opts)
					for _, ev := range evs {
						require.NoError(t, s.Add(ev))
					}
					require.NoError(t, s.Close())
					require.NoError(t, s.Close(), "closing twice is fine")
					assert.Error(t, s.Add(evs[0]), "adding after Close")
				}
				assert.Equal(t, want.String(), got.String())
			})
		}
	}
}

func TestStreamWritesTurnsAsTheyComplete(t *testing.T) {
	var buf bytes.Buffer
	s := NewSessionStream(&buf, SessionOptions{})
	evs := scripted()
	for _, ev := range evs[:7] { // up to both results of msg_1
		require.NoError(t, s.Add(ev))
	}
	require.NoError(t, s.Add(evs[7])) // msg_2 starts: msg_1 is complete
	assert.Contains(t, buf.String(), "File does not exist.")
	assert.NotContains(t, buf.String(), "Done: the README")
}

func TestStreamPreCutsGiantResult(t *testing.T) {
	var buf bytes.Buffer
	s := NewSessionStream(&buf, SessionOptions{MaxResultChars: 10})
	huge := strings.Repeat("x", preCutBytes+5)
	for _, ev := range []session.Event{
		{Kind: session.EventToolUse, MessageID: "m", ToolCallID: "c", ToolName: "Read", Input: json.RawMessage(`{}`)},
		{Kind: session.EventToolResult, ToolCallID: "c", Output: huge},
	} {
		require.NoError(t, s.Add(ev))
	}
	require.NoError(t, s.Close())
	assert.Contains(t, buf.String(), CutNote(len(huge)-10))
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

// TestStreamStop: a stream given up on writes nothing more, and its
// goroutine ends (Stop returns); Close after Stop does nothing.
func TestStreamStop(t *testing.T) {
	for kind, newStream := range streamKinds {
		t.Run(kind, func(t *testing.T) {
			var buf bytes.Buffer
			s := newStream(&buf, SessionOptions{})
			evs := scripted()
			for _, ev := range evs[:3] { // the user turn and an unfinished call
				require.NoError(t, s.Add(ev))
			}
			s.Stop()
			s.Stop()
			n := buf.Len()
			assert.NoError(t, s.Close())
			assert.Error(t, s.Add(evs[3]))
			assert.Equal(t, n, buf.Len(), "nothing written after Stop")
			assert.NotContains(t, buf.String(), "(no messages)")
		})
	}
}

func TestStreamWriteError(t *testing.T) {
	for kind, newStream := range streamKinds {
		t.Run(kind, func(t *testing.T) {
			s := newStream(failWriter{}, SessionOptions{})
			for _, ev := range scripted()[:3] {
				_ = s.Add(ev)
			}
			assert.ErrorContains(t, s.Close(), "disk full")
		})
	}
	t.Run("pipelined: a later Add reports it", func(t *testing.T) {
		s := NewPipelinedSessionStream(failWriter{}, SessionOptions{})
		var err error
		for i := 0; err == nil && i < 1e6; i++ {
			err = s.Add(session.Event{Kind: session.EventText, MessageID: fmt.Sprint(i), Text: "x"})
		}
		assert.ErrorContains(t, err, "disk full")
		assert.ErrorContains(t, s.Close(), "disk full")
	})
}

func TestShortArgs(t *testing.T) {
	cases := []struct{ in, want string }{
		{`{"command":"ls"}`, `command="ls"`},
		{`{"b":1,"a":{"x": [1, 2]}}`, `b=1, a={"x":[1,2]}`},
		{`[1, 2]`, `[1,2]`},
		{"not json\nat all", "not json at all"},
		{`{"s":"` + strings.Repeat("é", 100) + `"}`, `s="` + strings.Repeat("é", 77) + "…"},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, shortArgs(c.in, false), c.in)
	}
}

func FuzzShortArgs(f *testing.F) {
	f.Add(`{"command":"ls"}`)
	f.Add(`{"a":`)
	f.Fuzz(func(t *testing.T, in string) {
		out := shortArgs(in, false)
		assert.LessOrEqual(t, utf8.RuneCountInString(out), maxShortArgs+1)
		assert.NotContains(t, out, "\n")
	})
}

func TestFenced(t *testing.T) {
	assert.Equal(t, "```text\nx\n```\n", fenced("text", "x"))
	assert.Equal(t, "`````text\na ```` b\n`````\n", fenced("text", "a ```` b\n"))
}

func TestOpenFence(t *testing.T) {
	cases := []struct{ in, want string }{
		{"```\ncode\n```\n", ""},
		{"```go\ncode", "```"},
		{"~~~~\n```\n", "~~~~"},
		{"    ```\nindented is code, not a fence", ""},
		{"````\n```\n", "````"},
		{"inline ``` is not a fence", ""},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, openFence(c.in), c.in)
	}
}

func TestStepSummaryLimit(t *testing.T) {
	parts := SessionMarkdown(assemble(bigSession(1000, 3000)), SessionOptions{})
	out := StepSummary(sampleReport(), parts)
	assert.LessOrEqual(t, len(out), MaxStepSummaryBytes)
	assert.Contains(t, out, "a step summary is limited to 1 MiB")
	assert.Equal(t, "", openFence(out))
	assert.Equal(t, strings.Count(out, "<details>"), strings.Count(out, "</details>"))

	small := StepSummary(sampleReport(), []string{"## Session\n\nhi\n"})
	assert.True(t, strings.HasSuffix(small, "\n## Session\n\nhi\n"))
}

func TestErrorRuntimeCut(t *testing.T) {
	out := ErrorRuntimeFor("claude", strings.Repeat("e", maxErrorBytes+10))
	assert.Contains(t, out, CutNote(10))
	assert.Less(t, len(out), contract.GitHubBodyChars)
}

func TestLogIssueTitle(t *testing.T) {
	assert.Equal(t, "mention-runner: acme/app#1 by octo (job j-1)", LogIssueTitle("acme/app#1", "octo\n", "j-1"))
	assert.LessOrEqual(t, utf8.RuneCountInString(LogIssueTitle(strings.Repeat("x", 500), "a", "b")), 256)
}

func TestErrorRuntimeNamesTheEngine(t *testing.T) {
	tests := []struct{ engine, heading string }{
		{"", "## Error: Claude Code Runtime Error"},
		{"claude", "## Error: Claude Code Runtime Error"},
		{"codex", "## Error: Codex Runtime Error"},
		{"gemini", "## Error: Gemini CLI Runtime Error"},
		{"other", "## Error: other Runtime Error"},
	}
	for _, tc := range tests {
		out := ErrorRuntimeFor(tc.engine, "codex exited with status 1: unexpected status 401")
		assert.True(t, strings.HasPrefix(out, tc.heading+"\n\n"), "%q: %s", tc.engine, out)
		assert.Contains(t, out, "unexpected status 401")
	}
}

// Links the log issue builds itself follow the server it runs against, so
// an Enterprise installation links to its own host.
func TestLogIssueAuthorLinkFollowsServerURL(t *testing.T) {
	tests := []struct{ server, want string }{
		{"", "(https://github.com/alice)"},
		{"https://ghe.example.com", "(https://ghe.example.com/alice)"},
		{"https://ghe.example.com/", "(https://ghe.example.com/alice)"},
	}
	for _, tc := range tests {
		body := LogIssueBody(Report{Target: "acme/widgets#1", TriggerAuthor: "alice", ServerURL: tc.server, Status: "completed"})
		assert.Contains(t, body, tc.want, "server %q", tc.server)
		if tc.server != "" {
			assert.NotContains(t, body, "https://github.com/alice")
		}
	}
}
