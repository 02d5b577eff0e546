package mention

import "strings"

// wordJoiner follows the @ of a neutralised mention: invisible, and GitHub
// (like the simulator) no longer reads "@login" there, so nobody is pinged.
const wordJoiner = "\u2060"

// Neutralize keeps every @login in s from notifying anyone when s is posted
// on GitHub (the task shown on the run-log issue quotes the trigger
// comment, which may mention people), leaving the text as a reader sees it.
// E-mail addresses and mentions already neutralised are left alone.
func Neutralize(s string) string {
	if !strings.Contains(s, "@") {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); i++ {
		c := s[i]
		b.WriteByte(c)
		if c != '@' || i+1 >= len(s) || !isLoginStart(s[i+1]) {
			continue
		}
		if i > 0 && (isASCIIAlnum(s[i-1]) || s[i-1] == '_' || s[i-1] == '.' || s[i-1] == '-') {
			continue // an e-mail address or a longer word
		}
		b.WriteString(wordJoiner)
	}
	return b.String()
}

func isLoginStart(c byte) bool { return isASCIIAlnum(c) }
