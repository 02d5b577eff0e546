// Package sanitize cleans untrusted thread content before it reaches the
// agent (SPEC §9): HTML comments, invisible and bidi control characters and
// invalid UTF-8 go; comments posted or edited after the trigger are dropped or
// withheld; text quoted into the prompt is fenced so it cannot pose as ours.
package sanitize

import (
	"strings"
	"unicode/utf8"
)

// Counts says what Text removed from one or more strings.
type Counts struct {
	HTMLComments   int // comments removed; an unclosed "<!--" counts once
	InvisibleChars int // zero-width, bidi, other default-ignorable and control characters
	InvalidBytes   int // bytes that were not UTF-8, each replaced by U+FFFD
}

func (c *Counts) add(o Counts) {
	c.HTMLComments += o.HTMLComments
	c.InvisibleChars += o.InvisibleChars
	c.InvalidBytes += o.InvalidBytes
}

// Text returns s without HTML comments, invisible characters (see
// isInvisible) and invalid UTF-8. It runs in one linear pass and is
// idempotent: Text(Text(s)) == Text(s).
func Text(s string) string {
	out, _ := TextCounts(s)
	return out
}

// TextCounts is Text that also reports what it removed.
//
// A comment runs from "<!--" to the first "-->" after it, or to the end of
// the text. Browsers end comments earlier in a few odd forms ("<!-->",
// "--!>"); ending later only ever removes text a reader could see, never
// lets hidden text through. The check for "<!--" runs on the output, so
// removing an invisible character or a comment cannot splice a new opener
// together ("<!\u200b--" or "<!<!--x-->--"); the closer is matched on the
// raw text, so an invisible character inside "-->" keeps the comment open.
// Everything inside a comment is counted only as the comment.
func TextCounts(s string) (string, Counts) {
	var c Counts
	if plain(s) {
		return s, c
	}
	buf := make([]byte, 0, len(s))
	inComment := false
	for i := 0; i < len(s); {
		if inComment {
			// Matched on the raw text: "-\u200b->" does not close a comment
			// in a browser, so it must not end ours and show hidden text.
			// The search starts after the opener, so "<!-->" stays open.
			end := strings.Index(s[i:], "-->")
			if end < 0 {
				break
			}
			i += end + 3
			inComment = false
			continue
		}
		if b := s[i]; b >= 0x20 && b < 0x7f && b != '-' {
			buf = append(buf, b) // printable ASCII other than '-' needs no checks
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		switch {
		case r == utf8.RuneError && size == 1:
			c.InvalidBytes++
		case isInvisible(r):
			c.InvisibleChars++
			continue
		}
		buf = utf8.AppendRune(buf, r)
		if r == '-' && len(buf) >= 4 && string(buf[len(buf)-4:]) == "<!--" {
			buf = buf[:len(buf)-4]
			inComment = true
			c.HTMLComments++
		}
	}
	return string(buf), c
}

// plain reports whether s is printable ASCII (plus tab and newlines) with no
// comment opener, so Text can return it without copying.
func plain(s string) bool { return plainCode(s) && !strings.Contains(s, "<!--") }

// isInvisible reports characters that render as nothing or reorder text:
// Unicode's Default_Ignorable_Code_Point set (zero-width, bidi controls,
// variation selectors, tag characters used for "ASCII smuggling", Hangul
// fillers, soft hyphen…), interlinear annotation controls, and C0/C1 control
// characters other than tab, LF and CR.
func isInvisible(r rune) bool {
	if r < 0x80 {
		return (r < 0x20 && r != '\t' && r != '\n' && r != '\r') || r == 0x7f
	}
	switch {
	case r <= 0x9f: // C1 controls
		return true
	case r == 0x00ad, r == 0x034f, r == 0x061c:
		return true
	case r == 0x115f, r == 0x1160, r == 0x17b4, r == 0x17b5:
		return true
	case r >= 0x180b && r <= 0x180f: // Mongolian variation selectors, vowel separator
		return true
	case r >= 0x200b && r <= 0x200f: // zero-width space/joiners, LRM, RLM
		return true
	case r >= 0x202a && r <= 0x202e: // bidi embeddings and overrides
		return true
	case r >= 0x2060 && r <= 0x206f: // word joiner, invisible operators, bidi isolates, deprecated format
		return true
	case r == 0x3164, r == 0xffa0, r == 0xfeff:
		return true
	case r >= 0xfe00 && r <= 0xfe0f: // variation selectors
		return true
	case r >= 0xfff0 && r <= 0xfffb: // unassigned specials, interlinear annotation
		return true
	case r >= 0x1bca0 && r <= 0x1bca3, r >= 0x1d173 && r <= 0x1d17a:
		return true
	case r >= 0xe0000 && r <= 0xe0fff: // tags, variation selectors supplement
		return true
	}
	return false
}
