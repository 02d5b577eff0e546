package mention

import "strings"

// command reads what follows the mention ending at e.
//
//   - "go away" / "come back": words matched ignoring case, any spaces or
//     tabs between them, ending at a word boundary.
//   - "!cfg": matched ignoring case, so "!CFG here-only" still restricts the
//     run. A "!cfg" glued to more text ("!cfgcomment-only") is kept whole as
//     the first flag word, so the policy rejects it by name instead of the run
//     silently going ahead with default permissions.
//   - anything else: a task.
//
// One ',' or ':' right after the login is skipped ("@bot, go away").
func (s *scanner) command(m *Mention, e int) {
	b := s.body
	p := e
	if p < len(b) && (b[p] == ',' || b[p] == ':') {
		p++
	}
	p = skipSpace(b, p)
	switch {
	case words(b, p, "go", "away"):
		m.Command = CommandGoAway
	case words(b, p, "come", "back"):
		m.Command = CommandComeBack
	case foldPrefix(b[p:], "!cfg"):
		eol := lineEnd(b, p)
		q := p + len("!cfg")
		if q < len(b) && !spaceOrBreakAt(b, q) {
			q = p // glued: keep "!cfg…" as a word the policy will reject
		}
		m.HasCfg, m.CfgOffset = true, p
		m.Flags = strings.Fields(b[q:eol])
		if m.Flags == nil {
			m.Flags = []string{}
		}
		s.steps += eol - p
		// Later '@'s on this line are flag words, not new mentions.
		s.cfgLineEnd = eol
	}
}

// words reports whether b[p:] starts with w1, horizontal space, w2 and a
// word boundary.
func words(b string, p int, w1, w2 string) bool {
	if !foldPrefix(b[p:], w1) {
		return false
	}
	q := p + len(w1)
	r := skipSpace(b, q)
	if r == q || !foldPrefix(b[r:], w2) {
		return false
	}
	return boundaryAt(b, r+len(w2))
}
