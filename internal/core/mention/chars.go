package mention

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// closers may directly follow a mention (besides whitespace and end of text).
const closers = ".,:;!?)]"

func isASCIIAlnum(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// isASCIIPunct is CommonMark's set of backslash-escapable characters.
func isASCIIPunct(c byte) bool {
	return c >= '!' && c <= '/' || c >= ':' && c <= '@' || c >= '[' && c <= '`' || c >= '{' && c <= '~'
}

// foldPrefix reports whether s starts with word, ignoring ASCII case.
func foldPrefix(s, word string) bool {
	if len(s) < len(word) {
		return false
	}
	for i := 0; i < len(word); i++ {
		if lower(s[i]) != lower(word[i]) {
			return false
		}
	}
	return true
}

func lower(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// precededOK reports whether a mention may start at body[i] as far as the
// character before it goes; this is what rules out e-mail addresses.
func precededOK(body string, i int) bool {
	if i == 0 {
		return true
	}
	r, _ := utf8.DecodeLastRuneInString(body[:i])
	return r == '(' || r == '[' || unicode.IsSpace(r)
}

// boundaryAt reports whether a word may end at body[i]: end of text,
// whitespace (Unicode, so U+00A0 counts) or closing punctuation. This is
// what rules out longer logins such as "@bot-fan".
func boundaryAt(body string, i int) bool {
	if i >= len(body) {
		return true
	}
	if strings.IndexByte(closers, body[i]) >= 0 {
		return true
	}
	r, _ := utf8.DecodeRuneInString(body[i:])
	return unicode.IsSpace(r)
}

// spaceOrBreakAt reports whether the rune at body[i] is whitespace,
// line breaks included.
func spaceOrBreakAt(body string, i int) bool {
	r, _ := utf8.DecodeRuneInString(body[i:])
	return unicode.IsSpace(r)
}

// spaceAt returns the width of the horizontal whitespace rune at body[i], or
// 0. Line breaks do not count: commands must be on the mention's line.
func spaceAt(body string, i int) int {
	if i >= len(body) {
		return 0
	}
	switch body[i] {
	case ' ', '\t':
		return 1
	case '\n', '\r', '\v', '\f':
		return 0
	}
	if body[i] < utf8.RuneSelf {
		return 0
	}
	r, n := utf8.DecodeRuneInString(body[i:])
	if r == '\u0085' || r == '\u2028' || r == '\u2029' || !unicode.IsSpace(r) {
		return 0
	}
	return n
}

// skipSpace skips horizontal whitespace from body[i].
func skipSpace(body string, i int) int {
	for {
		n := spaceAt(body, i)
		if n == 0 {
			return i
		}
		i += n
	}
}

// indent skips spaces and tabs from line[off:], whose first byte sits at
// column col; a tab advances to the next multiple of 4 (CommonMark).
func indent(line string, off, col int) (int, int) {
	for off < len(line) {
		switch line[off] {
		case ' ':
			col++
		case '\t':
			col += 4 - col%4
		default:
			return off, col
		}
		off++
	}
	return off, col
}

// lineEnd returns the offset of the '\n' ending the line at pos, or len(body).
func lineEnd(body string, pos int) int {
	if i := strings.IndexByte(body[pos:], '\n'); i >= 0 {
		return pos + i
	}
	return len(body)
}
