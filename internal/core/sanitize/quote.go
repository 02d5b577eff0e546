package sanitize

import (
	"strings"
)

// Marker prefixes a quoted line that looks like something only the system
// writes: a !cfg line, a NOTE block, an alert header.
const Marker = "[quoted] "

// QuoteUntrusted makes untrusted text safe to embed in the agent's prompt as
// data: it is cleaned with Text, line endings become "\n", lines that imitate
// a !cfg line or our NOTE block get Marker in front, and the whole is put in
// a backtick fence longer than any backtick run inside, so it cannot close
// the fence and continue as prompt text.
func QuoteUntrusted(s string) string {
	s = Text(s)
	s = strings.ReplaceAll(s, "\r\n", "\n")
	s = strings.ReplaceAll(s, "\r", "\n")
	s = strings.TrimSuffix(s, "\n")

	var b strings.Builder
	b.Grow(len(s) + 32)
	fence := Fence(s)
	b.WriteString(fence)
	b.WriteString("text\n")
	for line := range strings.Lines(s) {
		if impostor(line) {
			b.WriteString(Marker)
		}
		b.WriteString(line)
	}
	if s != "" {
		b.WriteByte('\n')
	}
	b.WriteString(fence)
	b.WriteByte('\n')
	return b.String()
}

// impostor reports a line that, read as instructions, could pass for the
// system's own: a permission line, or part of the NOTE block the bot puts
// under everything it writes. Quote markers and spaces in front are ignored.
func impostor(line string) bool {
	t := strings.ToLower(strings.TrimLeft(line, " \t>"))
	switch {
	case strings.Contains(t, "!cfg"):
		return true
	case strings.HasPrefix(t, "[!"): // [!NOTE], [!WARNING] … alert headers
		return true
	case strings.HasPrefix(t, "created from "):
		return true
	case strings.Contains(t, "go away`"), strings.Contains(t, "come back`"):
		return true
	}
	return false
}

// Fence is the backtick fence to quote s in: three backticks, or one more
// than the longest backtick run in s, so nothing inside can close it.
func Fence(s string) string { return strings.Repeat("`", max(3, longestRun(s, '`')+1)) }

func longestRun(s string, c byte) int {
	best, cur := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			cur++
			best = max(best, cur)
		} else {
			cur = 0
		}
	}
	return best
}
