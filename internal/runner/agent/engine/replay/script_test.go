package replay

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseScript(t *testing.T) {
	in := `{"text": "Looking."}

{"tool": "add_comment", "args": {"repo": "o/r", "number": 1, "body": "hi"}}
{"tool": "mcp__gate__noop", "args": {"reason": "x"}}
{"tool": "noop"}
{"bash": "git status"}
{"sleep_ms": 5}
{"crash": "boom"}
`
	steps, err := ParseScript(strings.NewReader(in))
	require.NoError(t, err)
	require.Len(t, steps, 7)
	assert.Equal(t, Step{Kind: StepText, Line: 1, Text: "Looking."}, steps[0])
	assert.Equal(t, "add_comment", steps[1].Tool)
	assert.Equal(t, 3, steps[1].Line)
	assert.JSONEq(t, `{"repo":"o/r","number":1,"body":"hi"}`, string(steps[1].Args))
	assert.Equal(t, "noop", steps[2].Tool, "the mcp__gate__ prefix is accepted")
	assert.JSONEq(t, `{}`, string(steps[3].Args))
	assert.Equal(t, StepBash, steps[4].Kind)
	assert.Equal(t, 5, steps[5].SleepMS)
	assert.Equal(t, Step{Kind: StepCrash, Line: 8, Text: "boom"}, steps[6])
}

func TestParseScriptErrors(t *testing.T) {
	cases := []struct{ in, contains string }{
		{`{"text": "a", "tool": "noop"}`, "exactly one of"},
		{`{}`, "exactly one of"},
		{`{"txt": "a"}`, `unknown field "txt"`},
		{`{"tool": "push_code"}`, `unknown tool "push_code"`},
		{`{"tool": "noop", "args": [1]}`, `"args" must be a JSON object`},
		{`{"text": "a", "args": {}}`, `"args" belongs to a "tool" step`},
		{`{"bash": "  "}`, `"bash" must not be empty`},
		{`{"sleep_ms": -1}`, "sleep_ms"},
		{`{"sleep_ms": 9999999}`, "sleep_ms"},
		{`not json`, "not a step object"},
		{`{"text": "a"} {"text": "b"}`, "more than one JSON value"},
	}
	for _, c := range cases {
		_, err := ParseScript(strings.NewReader("{\"text\": \"ok\"}\n" + c.in))
		var se *ScriptError
		require.ErrorAs(t, err, &se, c.in)
		assert.Equal(t, 2, se.Line)
		assert.Contains(t, err.Error(), c.contains, c.in)
	}
}

func TestTurns(t *testing.T) {
	k := func(kinds ...StepKind) []Step {
		var s []Step
		for _, x := range kinds {
			s = append(s, Step{Kind: x})
		}
		return s
	}
	cases := []struct {
		name  string
		steps []Step
		want  []int
	}{
		{"text then tool is one turn", k(StepText, StepTool, StepText), []int{1, 1, 2}},
		{"consecutive tools are separate turns", k(StepTool, StepTool, StepBash), []int{1, 2, 3}},
		{"texts join", k(StepText, StepText, StepTool), []int{1, 1, 1}},
		{"sleep and crash are outside turns", k(StepText, StepSleep, StepTool, StepCrash), []int{1, 0, 1, 0}},
		{"empty", nil, []int{}},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, turns(c.steps), c.name)
	}
}

func TestBashAllowed(t *testing.T) {
	cases := []struct {
		allowed []string
		cmd     string
		want    bool
	}{
		{[]string{"Bash"}, "rm -rf x", true},
		{[]string{"Bash(git commit:*)"}, "git commit -am x", true},
		{[]string{"Bash(git commit:*)"}, "git commit", true},
		{[]string{"Bash(git commit:*)"}, "git commitx", false},
		{[]string{"Bash(git status)"}, "git status", true},
		{[]string{"Bash(git status)"}, "git status; rm x", false},
		{[]string{"Read", "Edit"}, "ls", false},
		{nil, "ls", false},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, bashAllowed(c.allowed, c.cmd), "%v %q", c.allowed, c.cmd)
	}
}

func FuzzParseScript(f *testing.F) {
	f.Add("{\"text\":\"a\"}\n{\"tool\":\"add_comment\",\"args\":{\"repo\":\"o/r\"}}\n")
	f.Add("{\"bash\":\"ls\"}\n\n{\"sleep_ms\":1}\n{\"crash\":\"x\"}")
	f.Add("{\"tool\":\"mcp__gate__noop\",\"args\":null}")
	f.Fuzz(func(t *testing.T, s string) {
		steps, err := ParseScript(strings.NewReader(s))
		if err != nil {
			return
		}
		tn := turns(steps)
		require.Len(t, tn, len(steps))
		for i, st := range steps {
			assert.Positive(t, st.Line)
			if st.Kind == StepTool {
				assert.True(t, isGateTool(st.Tool))
				assert.Equal(t, byte('{'), st.Args[0])
			}
			if st.Kind == StepSleep || st.Kind == StepCrash {
				assert.Zero(t, tn[i])
			} else {
				assert.Positive(t, tn[i])
			}
		}
	})
}
