package render

import (
	"fmt"
	"strings"

	"github.com/mention-runner/mention-runner/internal/core/redact"
)

// maxErrorBytes keeps an error comment under GitHub's body limit.
const maxErrorBytes = 60000

// engineTitles name the engines (MR_ENGINE) in error headings.
var engineTitles = map[string]string{"claude": "Claude Code", "codex": "Codex", "gemini": "Gemini CLI", "replay": "Replay"}

// EngineTitle is the engine's name as people know it ("Claude Code" when
// the record names none).
func EngineTitle(engine string) string {
	if t, ok := engineTitles[engine]; ok {
		return t
	}
	if engine == "" {
		return engineTitles["claude"]
	}
	return engine
}

// ErrorRuntimeFor is the comment for an engine failure: the heading
// naming the engine ("## Error: Codex Runtime Error"), then the engine's
// original text in a text fence, so nothing in it can break the markdown
// (or ping anyone); text too long for a comment is cut with a note.
func ErrorRuntimeFor(engine, text string) string {
	text = redact.String(strings.TrimRight(text, "\n"))
	kept := cutBytes(text, maxErrorBytes)
	out := "## Error: " + EngineTitle(engine) + " Runtime Error\n\n" + fenced("text", kept)
	if n := len([]rune(text[len(kept):])); n > 0 {
		out += "\n" + CutNote(n) + "\n"
	}
	return out
}

// LoopCall is one repeated tool call of a detected loop.
type LoopCall struct {
	Tool  string
	Args  string // JSON text, as the engine sent it
	Count int    // identical consecutive calls
}

// maxLoopArgsChars cuts the arguments shown for each repeated call.
const maxLoopArgsChars = 2000

// ErrorLoop is the comment for a stopped loop: an excerpt of the repeated
// calls (tool, arguments, count) folded in a details block.
func ErrorLoop(calls []LoopCall) string {
	var b strings.Builder
	b.WriteString("## Error: Loop Detected\n\n<details><summary>Repeated identical tool calls detected</summary>\n\n")
	if len(calls) == 0 {
		b.WriteString("(no calls recorded)\n\n")
	}
	for _, c := range calls {
		fmt.Fprintf(&b, "`%s` called %d times in a row with the same arguments:\n\n", inlineCode(c.Tool), c.Count)
		b.WriteString(payload(c.Args, maxLoopArgsChars, 0))
		b.WriteString("\n")
	}
	b.WriteString("</details>\n")
	return redact.String(b.String())
}

// inlineCode makes s safe between single backticks on one line.
func inlineCode(s string) string {
	return strings.ReplaceAll(oneLine(redact.String(s)), "`", "'")
}
