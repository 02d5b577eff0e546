package render

import (
	"strings"

	"github.com/mention-runner/mention-runner/internal/core/mention"
)

// zwsp is inserted after a '<' or '@' to make markup or a mention show as
// text: it renders as nothing, and neither a tag name nor a login can start
// with it.
const zwsp = "\u200b"

// rawOpeners start HTML whose content runs to a closer we do not supply,
// or that browsers and GitHub's sanitiser treat as raw text; none has a
// use in a bot's comment. Matched ASCII case-insensitively after '<'.
var rawOpeners = []string{"script", "style", "textarea", "plaintext", "xmp", "noscript", "noembed",
	"noframes", "iframe", "title", "template", "select", "math", "svg", "?", "!["}

// neutraliseRawOpeners puts zwsp after the '<' of every raw opener
// (and of "<!" followed by a letter: a declaration).
func neutraliseRawOpeners(s string) string {
	if !strings.Contains(s, "<") {
		return s
	}
	var b strings.Builder
	prev := 0
	for i := 0; i < len(s); i++ {
		if s[i] != '<' || !isRawOpener(s[i+1:]) {
			continue
		}
		b.WriteString(s[prev : i+1])
		b.WriteString(zwsp)
		prev = i + 1
	}
	if prev == 0 {
		return s
	}
	b.WriteString(s[prev:])
	return b.String()
}

func isRawOpener(rest string) bool {
	if len(rest) >= 2 && rest[0] == '!' && isLetter(rest[1]) {
		return true // a declaration, "<!DOCTYPE" and the like
	}
	for _, o := range rawOpeners {
		if len(rest) >= len(o) && strings.EqualFold(rest[:len(o)], o) {
			if o == "?" || o == "![" || len(rest) == len(o) || !isNameChar(rest[len(o)]) {
				return true
			}
		}
	}
	return false
}

func isLetter(c byte) bool   { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isNameChar(c byte) bool { return isLetter(c) || c >= '0' && c <= '9' || c == '-' }

// voidElements never take a closing tag.
var voidElements = map[string]bool{"area": true, "base": true, "br": true, "col": true, "embed": true, "hr": true,
	"img": true, "input": true, "link": true, "meta": true, "source": true, "track": true, "wbr": true, "p": true, "li": true}

// maxOpenElements bounds the closers balance appends; a body that leaves
// more open is shown with every tag neutralised instead.
const maxOpenElements = 64

// openElements returns the HTML elements s leaves open, outermost first,
// or overflow when there are more than maxOpenElements.
// Every "<name" counts, in code too: closing an element that was only
// code costs a stray closing tag, which renders as nothing, while missing
// a real one would let it swallow what follows.
func openElements(s string) (_ []string, overflow bool) {
	var stack []string
	for i := 0; i < len(s); i++ {
		if s[i] != '<' || i+1 >= len(s) {
			continue
		}
		closing := s[i+1] == '/'
		p := i + 1
		if closing {
			p++
		}
		q := p
		for q < len(s) && isNameChar(s[q]) {
			q++
		}
		if q == p || !isLetter(s[p]) {
			continue
		}
		name := strings.ToLower(s[p:q])
		if closing {
			for k := len(stack) - 1; k >= 0; k-- {
				if stack[k] == name {
					stack = stack[:k]
					break
				}
			}
			continue
		}
		if voidElements[name] {
			continue
		}
		if e := strings.IndexByte(s[q:], '>'); e >= 0 && e > 0 && s[q+e-1] == '/' {
			continue // self-closing
		}
		stack = append(stack, name)
		if len(stack) > maxOpenElements {
			return nil, true
		}
	}
	return stack, false
}

// mediaTags load something when rendered.
var mediaTags = []string{"img", "picture", "video", "audio", "source", "object", "embed", "image", "input", "track"}

// Inert makes text safe to post where it must neither ping anyone nor load
// anything (agent text on the control repo's log issue), keeping it
// readable: mentions are neutralised (mention.Neutralize), each "!["
// becomes "!"+zwsp+"[" (a link, not an image) and each media tag ("<img",
// "<video" …) gets zwsp after its '<' (shown as text). Inside code the
// inserted characters are invisible too.
func Inert(s string) string {
	s = mention.Neutralize(s)
	if !strings.ContainsAny(s, "!<") {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	prev := 0
	for i := 0; i < len(s)-1; i++ {
		var cut int // insert zwsp after s[:cut]
		switch s[i] {
		case '!':
			if s[i+1] == '[' {
				cut = i + 1
			}
		case '<':
			rest := s[i+1:]
			for _, t := range mediaTags {
				if len(rest) >= len(t) && strings.EqualFold(rest[:len(t)], t) && (len(rest) == len(t) || !isNameChar(rest[len(t)])) {
					cut = i + 1
					break
				}
			}
		}
		if cut > 0 {
			b.WriteString(s[prev:cut])
			b.WriteString(zwsp)
			prev = cut
		}
	}
	if prev == 0 {
		return s
	}
	b.WriteString(s[prev:])
	return b.String()
}
