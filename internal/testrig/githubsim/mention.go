package githubsim

import "strings"

// mentions returns the logins @-mentioned in a Markdown body, in order and
// without duplicates. It is deliberately simple (GitHub's own rules are
// richer): fenced code blocks and inline code spans are skipped, and a
// mention must not follow a word character (e-mail addresses) or be a team
// (@org/team).
func mentions(body string) []string {
	var out []string
	seen := map[string]bool{}
	inFence := false
	for _, line := range strings.Split(body, "\n") {
		t := strings.TrimSpace(line)
		if strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~") {
			inFence = !inFence
			continue
		}
		if inFence {
			continue
		}
		for _, m := range lineMentions(stripInlineCode(line)) {
			if !seen[lower(m)] {
				seen[lower(m)] = true
				out = append(out, m)
			}
		}
	}
	return out
}

func stripInlineCode(line string) string {
	var b strings.Builder
	in := false
	for _, r := range line {
		if r == '`' {
			in = !in
			b.WriteRune(' ')
			continue
		}
		if in {
			b.WriteRune(' ')
		} else {
			b.WriteRune(r)
		}
	}
	return b.String()
}

func isLoginByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-'
}

func lineMentions(line string) []string {
	var out []string
	for i := 0; i < len(line); i++ {
		if line[i] != '@' {
			continue
		}
		if i > 0 {
			p := line[i-1]
			if isLoginByte(p) || p == '_' || p == '.' || p == '/' || p == '@' {
				continue
			}
		}
		j := i + 1
		for j < len(line) && isLoginByte(line[j]) && j-i <= 39 {
			j++
		}
		login := strings.TrimRight(line[i+1:j], "-")
		if login == "" || strings.HasPrefix(login, "-") {
			continue
		}
		if j < len(line) && (line[j] == '/' || line[j] == '_') {
			continue
		}
		out = append(out, login)
		i = j - 1
	}
	return out
}
