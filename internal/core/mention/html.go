package mention

import "strings"

// HTML as CommonMark reads it: block starts (html blocks are skipped
// whole) and inline tags (skipped; text inside an inline element does not
// count, since GitHub links no mention inside <a>, <code> or <pre>, and
// telling elements apart is not worth a mention).

// rawTextTags start HTML blocks of type 1, which end at their closing tag.
var rawTextTags = []string{"pre", "script", "style", "textarea"}

// blockTags start HTML blocks of type 6 (CommonMark 0.31.2).
var blockTags = map[string]bool{}

func init() {
	for _, t := range strings.Fields(`address article aside base basefont blockquote body caption
		center col colgroup dd details dialog dir div dl dt fieldset figcaption figure footer form
		frame frameset h1 h2 h3 h4 h5 h6 head header hr html iframe legend li link main menu
		menuitem nav noframes ol optgroup option p param search section summary table tbody td
		tfoot th thead title tr track ul`) {
		blockTags[t] = true
	}
}

// htmlStart recognises the start of an HTML block at rest (a line from its
// first non-blank character). Type 7 cannot interrupt a paragraph.
func htmlStart(rest string, inPara bool) (htmlBlock, bool) {
	if len(rest) < 2 || rest[0] != '<' {
		return htmlBlock{}, false
	}
	for _, t := range rawTextTags {
		if hasFoldPrefix(rest[1:], t) && tagNameEnds(rest, 1+len(t), false) {
			return htmlBlock{end: "</" + t + ">", fold: true}, true
		}
	}
	switch {
	case strings.HasPrefix(rest, "<!--"):
		return htmlBlock{end: "-->"}, true
	case strings.HasPrefix(rest, "<?"):
		return htmlBlock{end: "?>"}, true
	case strings.HasPrefix(rest, "<![CDATA["):
		return htmlBlock{end: "]]>"}, true
	case rest[1] == '!' && len(rest) > 2 && isASCIIAlpha(rest[2]):
		return htmlBlock{end: ">"}, true
	}
	p := 1
	if rest[p] == '/' {
		p++
	}
	n := tagNameLen(rest[p:])
	if n > 0 && blockTags[strings.ToLower(rest[p:p+n])] && tagNameEnds(rest, p+n, true) {
		return htmlBlock{blank: true}, true
	}
	if inPara {
		return htmlBlock{}, false
	}
	if e, _, ok := parseTag(rest, 0, len(rest), nil); ok && !strings.HasPrefix(rest, "<!") && !strings.HasPrefix(rest, "<?") {
		if o, _ := indent(rest, e, 0); o == len(rest) {
			return htmlBlock{blank: true}, true
		}
	}
	return htmlBlock{}, false
}

// tagNameEnds reports whether a tag name may end at rest[i]: end of line,
// space, tab or '>' (or "/>" when slash).
func tagNameEnds(rest string, i int, slash bool) bool {
	if i >= len(rest) {
		return true
	}
	switch rest[i] {
	case ' ', '\t', '>':
		return true
	case '/':
		return slash && strings.HasPrefix(rest[i:], "/>")
	}
	return false
}

func hasFoldPrefix(s, lowerWord string) bool { return foldPrefix(s, lowerWord) }

func isASCIIAlpha(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

func tagNameLen(s string) int {
	if s == "" || !isASCIIAlpha(s[0]) {
		return 0
	}
	n := 1
	for n < len(s) && (isASCIIAlnum(s[n]) || s[n] == '-') {
		n++
	}
	return n
}

// tagKind says how an inline HTML token changes element depth.
type tagKind int

const (
	tagOther tagKind = iota // processing instruction, declaration, CDATA, void or self-closing tag
	tagOpen
	tagClose
)

// tagMemo remembers, within one paragraph, searches that found nothing,
// so that adversarial input ("<?<?<?…", "<a b='<a b='…") stays linear:
// a search from a later offset cannot find what an earlier one did not.
type tagMemo struct {
	noEnd map[string]bool // terminators ("?>", "]]>", ">", "'", "\"") absent from here on
}

func (m *tagMemo) find(b string, from, end int, term string, steps *int) int {
	if m != nil && m.noEnd[term] {
		return -1
	}
	j := strings.Index(b[from:end], term)
	if j < 0 {
		*steps += end - from
		if m != nil {
			if m.noEnd == nil {
				m.noEnd = map[string]bool{}
			}
			m.noEnd[term] = true
		}
		return -1
	}
	*steps += j + len(term)
	return from + j + len(term)
}

// parseTag reads an inline HTML token (CommonMark "raw HTML" other than a
// comment) at b[i] == '<' within b[:end]. It returns the offset just past
// it, its kind, and whether there was one.
func parseTag(b string, i, end int, m *tagMemo) (int, tagKind, bool) {
	var steps int
	return parseTagSteps(b, i, end, m, &steps)
}

func parseTagSteps(b string, i, end int, m *tagMemo, steps *int) (int, tagKind, bool) {
	rest := b[i:end]
	switch {
	case strings.HasPrefix(rest, "<?"):
		e := m.find(b, i+2, end, "?>", steps)
		return e, tagOther, e >= 0
	case strings.HasPrefix(rest, "<![CDATA["):
		e := m.find(b, i+9, end, "]]>", steps)
		return e, tagOther, e >= 0
	case len(rest) > 2 && rest[1] == '!' && isASCIIAlpha(rest[2]):
		e := m.find(b, i+2, end, ">", steps)
		return e, tagOther, e >= 0
	case strings.HasPrefix(rest, "</"):
		n := tagNameLen(rest[2:])
		if n == 0 {
			return 0, 0, false
		}
		p := skipTagSpace(b, i+2+n, end)
		*steps += p - i
		if p < end && b[p] == '>' {
			return p + 1, tagClose, true
		}
		return 0, 0, false
	}
	n := tagNameLen(rest[1:])
	if n == 0 {
		return 0, 0, false
	}
	name := strings.ToLower(rest[1 : 1+n])
	p := i + 1 + n
	for {
		q := skipTagSpace(b, p, end)
		*steps += q - p
		if q >= end {
			return 0, 0, false
		}
		switch b[q] {
		case '>':
			kind := tagOpen
			if voidTags[name] {
				kind = tagOther
			}
			return q + 1, kind, true
		case '/':
			if q+1 < end && b[q+1] == '>' {
				return q + 2, tagOther, true
			}
			return 0, 0, false
		}
		if q == p { // attributes need whitespace before them
			return 0, 0, false
		}
		a := attrNameLen(b[q:end])
		if a == 0 {
			return 0, 0, false
		}
		p = q + a
		*steps += a
		r := skipTagSpace(b, p, end)
		if r < end && b[r] == '=' {
			v := skipTagSpace(b, r+1, end)
			*steps += v - p
			if v >= end {
				return 0, 0, false
			}
			switch c := b[v]; c {
			case '"', '\'':
				e := m.find(b, v+1, end, string(c), steps)
				if e < 0 {
					return 0, 0, false
				}
				p = e
			default:
				u := v
				for u < end && strings.IndexByte(" \t\r\n\"'=<>`", b[u]) < 0 {
					u++
				}
				*steps += u - v
				if u == v {
					return 0, 0, false
				}
				p = u
			}
		}
	}
}

var voidTags = map[string]bool{"area": true, "base": true, "br": true, "col": true, "embed": true, "hr": true,
	"img": true, "input": true, "link": true, "meta": true, "source": true, "track": true, "wbr": true}

// skipTagSpace skips spaces, tabs and line endings (CommonMark allows at
// most one line ending there; more is rare and only hides more).
func skipTagSpace(b string, p, end int) int {
	for p < end && (b[p] == ' ' || b[p] == '\t' || b[p] == '\n' || b[p] == '\r') {
		p++
	}
	return p
}

func attrNameLen(s string) int {
	if s == "" || !(isASCIIAlpha(s[0]) || s[0] == '_' || s[0] == ':') {
		return 0
	}
	n := 1
	for n < len(s) && (isASCIIAlnum(s[n]) || strings.IndexByte("_.:-", s[n]) >= 0) {
		n++
	}
	return n
}
