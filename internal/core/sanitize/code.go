package sanitize

import (
	"fmt"
	"unicode/utf8"
)

// CodeCounts cleans text that is source code (diffs, patches, diff hunks)
// and reports how many characters it escaped. HTML comments there are
// code, so they stay; invisible and bidi characters are made visible as
// "<U+202E>" instead of removed, so the agent can see and report a Trojan
// Source trick rather than read a silently altered line. Invalid UTF-8
// becomes U+FFFD. Idempotent.
func CodeCounts(s string) (string, int) {
	n := 0
	if plainCode(s) {
		return s, 0
	}
	buf := make([]byte, 0, len(s)+16)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		if isInvisible(r) {
			n++
			buf = fmt.Appendf(buf, "<U+%04X>", r)
			continue
		}
		if r == utf8.RuneError && size == 1 {
			n++
		}
		buf = utf8.AppendRune(buf, r)
	}
	return string(buf), n
}

// plainCode reports whether s is printable ASCII (plus tab and newlines),
// which Code returns without copying.
func plainCode(s string) bool {
	for i := 0; i < len(s); i++ {
		b := s[i]
		if b >= 0x7f || (b < 0x20 && b != '\t' && b != '\n' && b != '\r') {
			return false
		}
	}
	return true
}
