package replay

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/mention-runner/mention-runner/internal/core/contract"
)

// ScriptEnv names the environment variable `runner agent` reads the
// script path from when MR_ENGINE=replay.
const ScriptEnv = "MR_REPLAY_SCRIPT"

// MaxSleepMS bounds one sleep step (10 minutes).
const MaxSleepMS = 600_000

// StepKind says what a script step does.
type StepKind string

const (
	StepText  StepKind = "text"
	StepTool  StepKind = "tool"
	StepBash  StepKind = "bash"
	StepSleep StepKind = "sleep_ms"
	StepCrash StepKind = "crash"
)

// Step is one line of a replay script.
type Step struct {
	Kind    StepKind
	Line    int             // 1-based line in the script
	Text    string          // text, bash command, crash message
	Tool    string          // gate tool name without the mcp__gate__ prefix
	Args    json.RawMessage // tool arguments (a JSON object)
	SleepMS int
}

// ScriptError is a script line that cannot be played.
type ScriptError struct {
	Line int
	Msg  string
}

func (e *ScriptError) Error() string { return fmt.Sprintf("replay script line %d: %s", e.Line, e.Msg) }

// rawStep is the JSON shape of a line; exactly one action key is set.
type rawStep struct {
	Text    *string         `json:"text"`
	Tool    *string         `json:"tool"`
	Args    json.RawMessage `json:"args"`
	Bash    *string         `json:"bash"`
	SleepMS *int            `json:"sleep_ms"`
	Crash   *string         `json:"crash"`
}

// maxLine bounds one script line (a long comment body fits easily).
const maxLine = 4 << 20

// ParseScript reads a JSONL replay script. Blank lines are skipped; every
// other line is one step:
//
//	{"text": "…"}                          assistant text
//	{"tool": "add_comment", "args": {…}}   a gate tool call over MCP
//	{"bash": "git commit -am fix"}         a shell command in the work dir
//	{"sleep_ms": 200}                      wait
//	{"crash": "message"}                   the engine fails with message
func ParseScript(r io.Reader) ([]Step, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), maxLine)
	var steps []Step
	for n := 1; sc.Scan(); n++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		s, err := parseStep(line, n)
		if err != nil {
			return nil, err
		}
		steps = append(steps, s)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("replay script: %w", err)
	}
	return steps, nil
}

func parseStep(line []byte, n int) (Step, error) {
	bad := func(f string, a ...any) (Step, error) {
		return Step{}, &ScriptError{Line: n, Msg: fmt.Sprintf(f, a...)}
	}
	var r rawStep
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		return bad("not a step object: %v", err)
	}
	if dec.More() {
		return bad("more than one JSON value on the line")
	}
	set := 0
	for _, p := range []bool{r.Text != nil, r.Tool != nil, r.Bash != nil, r.SleepMS != nil, r.Crash != nil} {
		if p {
			set++
		}
	}
	if set != 1 {
		return bad("a step needs exactly one of text, tool, bash, sleep_ms, crash (found %d)", set)
	}
	if r.Args != nil && r.Tool == nil {
		return bad(`"args" belongs to a "tool" step`)
	}
	s := Step{Line: n}
	switch {
	case r.Text != nil:
		s.Kind, s.Text = StepText, *r.Text
	case r.Tool != nil:
		name := strings.TrimPrefix(*r.Tool, contract.EngineToolName(""))
		if !isGateTool(name) {
			return bad("unknown tool %q; the gate has %s", *r.Tool, strings.Join(contract.GateTools, ", "))
		}
		args := bytes.TrimSpace(r.Args)
		if len(args) == 0 || string(args) == "null" {
			args = []byte(`{}`)
		}
		if args[0] != '{' {
			return bad(`"args" must be a JSON object`)
		}
		s.Kind, s.Tool, s.Args = StepTool, name, json.RawMessage(args)
	case r.Bash != nil:
		if strings.TrimSpace(*r.Bash) == "" {
			return bad(`"bash" must not be empty`)
		}
		s.Kind, s.Text = StepBash, *r.Bash
	case r.SleepMS != nil:
		if *r.SleepMS < 0 || *r.SleepMS > MaxSleepMS {
			return bad(`"sleep_ms" must be 0…%d`, MaxSleepMS)
		}
		s.Kind, s.SleepMS = StepSleep, *r.SleepMS
	default:
		s.Kind, s.Text = StepCrash, *r.Crash
	}
	return s, nil
}

func isGateTool(name string) bool {
	for _, t := range contract.GateTools {
		if t == name {
			return true
		}
	}
	return false
}

// turns numbers the turn each step belongs to (0 = none: sleep, crash).
// A turn is one model response: text steps followed by at most one tool
// or bash step; a text step after a tool/bash step starts the next turn,
// and so does each further tool/bash step — as Claude Code counts when the
// model calls one tool per response.
func turns(steps []Step) []int {
	out := make([]int, len(steps))
	turn, open := 0, false // open: the current turn can still take a tool call
	for i, s := range steps {
		switch s.Kind {
		case StepText:
			if !open {
				turn++
				open = true
			}
		case StepTool, StepBash:
			if !open {
				turn++
			}
			open = false
		default:
			continue
		}
		out[i] = turn
	}
	return out
}
