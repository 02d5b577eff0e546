package render

import (
	"strings"
	"unicode/utf8"

	"github.com/mention-runner/mention-runner/internal/core/redact"
	"github.com/mention-runner/mention-runner/internal/core/sanitize"
)

// Fenced is content in a code fence nothing inside can close, redacted.
func Fenced(lang, content string) string { return fenced(lang, redact.String(content)) }

// Inline is s redacted, folded to one line and safe inside HTML.
func Inline(s string) string { return escapeHTML(oneLine(redact.String(s))) }

// fenced wraps content in a code fence longer than any backtick run inside
// it, so nothing in the content can close the block early.
func fenced(lang, content string) string {
	f := sanitize.Fence(content)
	var b strings.Builder
	b.Grow(len(content) + 2*len(f) + len(lang) + 3)
	b.WriteString(f)
	b.WriteString(lang)
	b.WriteByte('\n')
	b.WriteString(content)
	if !strings.HasSuffix(content, "\n") {
		b.WriteByte('\n')
	}
	b.WriteString(f)
	b.WriteByte('\n')
	return b.String()
}

// balance closes what free markdown (an agent's reply, a prompt, a body
// cut short) left open and would otherwise swallow everything after it (the
// NOTE block, the next turn): a code fence, an HTML comment, and HTML
// elements (an unclosed <details> folds away all that follows). Openers
// whose content runs to a closer that cannot be supplied reliably
// (<script>, <style>, <textarea>, <plaintext>, processing instructions,
// CDATA, declarations …) are neutralised: they show as text.
func balance(s string) string {
	s = neutraliseRawOpeners(s)
	if fence := openFence(s); fence != "" {
		if !strings.HasSuffix(s, "\n") {
			s += "\n"
		}
		s += fence + "\n"
	}
	if i := strings.LastIndex(s, "<!--"); i >= 0 && !strings.Contains(s[i+4:], "-->") {
		s += " -->"
	}
	open, overflow := openElements(s)
	if overflow {
		s = strings.ReplaceAll(s, "<", "<"+zwsp)
	}
	if len(open) > 0 {
		s = strings.TrimRight(s, "\n") + "\n\n"
		for i := len(open) - 1; i >= 0; i-- {
			s += "</" + open[i] + ">\n"
		}
	}
	return s
}

// openFence returns the fence that closes a code block still open at the
// end of s, or "" (CommonMark: a fence of 3+ backticks or tildes, indented
// at most 3 spaces, closed by a run of the same character at least as long).
func openFence(s string) string {
	var open string // the opening fence run, "" when outside a block
	for line := range strings.Lines(s) {
		t := strings.TrimRight(line, "\r\n")
		ind := len(t) - len(strings.TrimLeft(t, " "))
		if ind > 3 {
			continue
		}
		t = t[ind:]
		if len(t) < 3 || (t[0] != '`' && t[0] != '~') {
			continue
		}
		n := 0
		for n < len(t) && t[n] == t[0] {
			n++
		}
		if n < 3 {
			continue
		}
		if open == "" {
			if t[0] == '`' && strings.Contains(t[n:], "`") {
				continue // a backtick fence's info string may not hold backticks
			}
			open = t[:n]
			continue
		}
		if t[0] == open[0] && n >= len(open) && strings.TrimSpace(t[n:]) == "" {
			open = ""
		}
	}
	return open
}

// cutRunes keeps the first n characters of s and says how many it removed.
func cutRunes(s string, n int) (string, int) {
	if n < 0 {
		n = 0
	}
	if len(s) <= n { // bytes >= runes, so it fits
		return s, 0
	}
	i, count := 0, 0
	for i < len(s) && count < n {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
		count++
	}
	if i >= len(s) {
		return s, 0
	}
	return s[:i], utf8.RuneCountInString(s[i:])
}

// cutBytes keeps at most n bytes of s without splitting a character,
// preferring to end at a line break in the last quarter.
func cutBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	if n <= 0 {
		return ""
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	s = s[:n]
	if i := strings.LastIndexByte(s, '\n'); i >= 0 && i >= n*3/4 {
		s = s[:i+1]
	}
	return s
}

// oneLine folds whitespace runs (newlines included) into single spaces.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// escapeHTML makes text safe inside an HTML element such as <summary>.
var escapeHTML = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace
