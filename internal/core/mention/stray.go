package mention

import (
	"sort"
	"strings"
	"unicode/utf8"
)

// StrayCfg is a "!cfg" outside code that is not the deciding mention's own:
// one after a later mention, after other words, on a line with no mention,
// or written with a look-alike ("！cfg", "¡cfg", "&#33;cfg", "!ｃｆｇ"). A
// restriction the person wrote must never be silently dropped, so the
// caller refuses to run and names it.
type StrayCfg struct {
	Line   int
	Offset int
	Text   string // as written, up to the end of the "cfg"
}

// Read returns the mentions of bot in body (as Find) and the stray !cfg
// words: every !cfg or look-alike outside code blocks and code spans except
// the first mention's own. Inside block quotes and HTML blocks code is not
// told apart, so a !cfg there counts as stray (refusing is the safe side).
func Read(body, bot string) ([]Mention, []StrayCfg) {
	bot = strings.TrimPrefix(bot, "@")
	if ValidBot(bot) != nil {
		return nil, nil
	}
	s := scanner{body: body, bot: bot, paraStart: -1, lineNo: 1}
	s.run()
	own := -1
	if len(s.out) > 0 && s.out[0].HasCfg {
		own = s.out[0].CfgOffset
	}
	return s.out, strays(body, s.code, own)
}

// bangs are what a reader takes for '!' in front of "cfg".
var bangs = []string{"!", "！", "¡", "ǃ", "‼", "❗", "❕", "﹗", "︕", "ꜝ",
	"&#33;", "&#x21;", "&excl;", "&#65281;", "&#xff01;", "&iexcl;", "&#161;", "&#xa1;"}

// cfgLetters are what a reader takes for each letter of "cfg".
var cfgLetters = [3][]rune{
	{'c', 'C', 'ｃ', 'Ｃ', 'с', 'С', 'ϲ', 'Ϲ'},
	{'f', 'F', 'ｆ', 'Ｆ'},
	{'g', 'G', 'ｇ', 'Ｇ', 'ɡ'},
}

// invisible runes a reader does not see between the letters.
func invisible(r rune) bool {
	switch r {
	case '\u00ad', '\u180e', '\u200b', '\u200c', '\u200d', '\u2060', '\ufeff':
		return true
	}
	return false
}

func strays(body string, code []span, own int) []StrayCfg {
	sort.Slice(code, func(i, j int) bool { return code[i].start < code[j].start })
	var out []StrayCfg
	c, line, lineOff := 0, 1, 0
	for i := 0; i < len(body); {
		n := bangAt(body, i)
		if n == 0 {
			_, w := utf8.DecodeRuneInString(body[i:])
			i += w
			continue
		}
		e, ok := cfgAfter(body, i+n)
		if !ok || i == own {
			i += n
			continue
		}
		for c < len(code) && code[c].end <= i {
			c++
		}
		if c < len(code) && code[c].start <= i {
			i = e
			continue
		}
		line += strings.Count(body[lineOff:i], "\n")
		lineOff = i
		out = append(out, StrayCfg{Line: line, Offset: i, Text: body[i:e]})
		i = e
	}
	return out
}

// bangAt returns the width of a '!' look-alike at body[i], or 0.
func bangAt(body string, i int) int {
	switch body[i] {
	case '!':
		return 1
	case '&':
		for _, b := range bangs[10:] {
			if foldPrefix(body[i:], b) {
				return len(b)
			}
		}
		return 0
	}
	if body[i] < utf8.RuneSelf {
		return 0
	}
	for _, b := range bangs[1:10] {
		if strings.HasPrefix(body[i:], b) {
			return len(b)
		}
	}
	return 0
}

// cfgAfter reports whether body[i:] reads as "cfg" (look-alike letters,
// invisible characters and markdown emphasis or escapes before the first
// letter allowed) and returns the offset just past it.
func cfgAfter(body string, i int) (int, bool) {
	for i < len(body) && strings.IndexByte("*_~\\", body[i]) >= 0 {
		i++
	}
	for k := 0; k < 3; k++ {
		for {
			r, w := utf8.DecodeRuneInString(body[i:])
			if w == 0 || !invisible(r) {
				break
			}
			i += w
		}
		r, w := utf8.DecodeRuneInString(body[i:])
		if w == 0 || !hasRune(cfgLetters[k], r) {
			return 0, false
		}
		i += w
	}
	return i, true
}

func hasRune(rs []rune, r rune) bool {
	for _, x := range rs {
		if x == r {
			return true
		}
	}
	return false
}
