package redact

import (
	"html"
	"strings"
	"unicode/utf8"
)

// view is a text as a reader sees it once GitHub has rendered it, with
// each byte mapped back to the source bytes it came from: view byte i
// shows source [from[i], to[i]).
type view struct {
	text     string
	from, to []int
}

// maxEntity bounds an HTML entity ("&CounterClockwiseContourIntegral;" is
// the longest named one).
const maxEntity = 40

// hasSplits reports whether s holds a character that can make the source
// differ from what a reader sees: markdown escapes, entities, tags,
// emphasis and code markers, invisible characters.
func hasSplits(s string) bool {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch c {
			case '\\', '&', '<', '*', '~', '`', '[', ']':
				return true
			}
			i++
			continue
		}
		r, w := utf8.DecodeRuneInString(s[i:])
		if invisible(r) {
			return true
		}
		i += w
	}
	return false
}

// viewText is newView(s, false).text: the text a reader sees, unmapped.
// Runs of bytes that show as themselves are copied whole; anything else
// goes through newView's rules one character at a time.
func viewText(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		j := i
		for j < len(s) && s[j] < utf8.RuneSelf && !special[s[j]] {
			j++
		}
		b.WriteString(s[i:j])
		if j == len(s) {
			break
		}
		// one character (or escape, entity, tag) by the general rules
		n := viewStep(s, j, func(text string, _, _ int) { b.WriteString(text) })
		i = j + n
	}
	return b.String()
}

// special marks the ASCII bytes newView does not copy as they are.
var special = [utf8.RuneSelf]bool{'\\': true, '*': true, '~': true, '`': true, '&': true, '<': true, '[': true, ']': true}

// newView builds the view of s; withMap also records where each byte of
// the view came from (16 bytes per byte: only when a match needs mapping).
func newView(s string, withMap bool) *view {
	v := &view{}
	if withMap {
		v.from, v.to = make([]int, 0, len(s)), make([]int, 0, len(s))
	}
	var b strings.Builder
	b.Grow(len(s))
	emit := func(text string, from, to int) {
		b.WriteString(text)
		if !withMap {
			return
		}
		for range len(text) {
			v.from = append(v.from, from)
			v.to = append(v.to, to)
		}
	}
	for i := 0; i < len(s); {
		i += viewStep(s, i, emit)
	}
	v.text = b.String()
	return v
}

// viewStep reads what the reader sees of s at i (an escape, an entity, a
// tag, a marker, an invisible character or one ordinary character), hands
// it to emit with its source range, and returns how many bytes it read.
func viewStep(s string, i int, emit func(text string, from, to int)) int {
	c := s[i]
	switch c {
	case '\\':
		if i+1 < len(s) && isPunct(s[i+1]) {
			emit(s[i+1:i+2], i, i+2)
			return 2
		}
	case '*', '~', '`':
		return 1
	case '&':
		if j := strings.IndexByte(s[i:min(len(s), i+maxEntity)], ';'); j > 1 {
			ent := s[i : i+j+1]
			if dec := html.UnescapeString(ent); dec != ent {
				// an entity for an invisible character ("&#8203;", "&shy;")
				// shows as nothing, like the character itself
				if r, w := utf8.DecodeRuneInString(dec); w != len(dec) || !invisible(r) {
					emit(dec, i, i+j+1)
				}
				return j + 1
			}
		}
	case '<':
		if n := tagLen(s[i:]); n > 0 {
			return n
		}
	case '[':
		// a link's or image's text shows without its brackets
		return 1
	case ']':
		// "](url)" and "][ref]" show as nothing: the text before runs on
		// into the text after
		if n := linkTailLen(s[i:]); n > 0 {
			return n
		}
		return 1
	}
	if c >= utf8.RuneSelf {
		r, w := utf8.DecodeRuneInString(s[i:])
		if !invisible(r) {
			emit(s[i:i+w], i, i+w)
		}
		return w
	}
	emit(s[i:i+1], i, i+1)
	return 1
}

func isPunct(c byte) bool {
	return c >= '!' && c <= '/' || c >= ':' && c <= '@' || c >= '[' && c <= '`' || c >= '{' && c <= '~'
}

// maxTag bounds how far a tag is looked for, keeping the view linear.
const maxTag = 256

// tagLen returns the length of an HTML tag or comment at the start of s
// ("<b>", "</span>", "<a href=x>", "<!-- … -->"), or 0.
func tagLen(s string) int {
	if strings.HasPrefix(s, "<!--") {
		if j := strings.Index(s[4:min(len(s), maxTag)], "-->"); j >= 0 {
			return 4 + j + 3
		}
		return 0
	}
	p := 1
	if p < len(s) && s[p] == '/' {
		p++
	}
	if p >= len(s) || !(s[p] >= 'a' && s[p] <= 'z' || s[p] >= 'A' && s[p] <= 'Z') {
		return 0
	}
	end := min(len(s), maxTag)
	var quote byte // a '>' inside a quoted attribute value does not end the tag
	for q := p; q < end; q++ {
		c := s[q]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'':
			quote = c
		case c == '>':
			return q + 1
		case c == '<' || c == '\n':
			return 0
		}
	}
	return 0
}

// linkTailLen returns the length of a link's destination or reference
// at the start of s ("](https://x)", "][ref]"), or 0.
func linkTailLen(s string) int {
	if len(s) < 2 {
		return 0
	}
	closer := map[byte]byte{'(': ')', '[': ']'}[s[1]]
	if closer == 0 {
		return 0
	}
	end := min(len(s), maxTag)
	for q := 2; q < end; q++ {
		switch s[q] {
		case closer:
			return q + 1
		case '\n':
			return 0
		}
	}
	return 0
}
