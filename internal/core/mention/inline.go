package mention

import "strings"

// inline scans body[start:end] (a paragraph or a heading) for mentions,
// skipping backslash escapes, code spans, HTML comments and inline HTML
// tags. A mention does not count inside an inline HTML element, or inside
// brackets that close later in the paragraph (link text and image
// descriptions: GitHub links no mention inside a link). It returns the
// offset just past an HTML comment that closes beyond end, or -1. An
// unclosed comment hides the rest of the body (s.stop).
func (s *scanner) inline(start, end int) int {
	b := s.body
	var runs *runIndex // built on the first backtick
	var memo tagMemo
	depth := 0      // open inline HTML elements
	brackets := 0   // unclosed '['
	lastClose := -1 // last ']' of the paragraph, found on the first '['
	i := start
	for i < end {
		j := strings.IndexAny(b[i:end], "\\`<@[]")
		if j < 0 {
			s.steps += end - i
			return -1
		}
		s.steps += j + 1
		i += j
		switch b[i] {
		case '\\':
			i++
			if i < end && isASCIIPunct(b[i]) { // an escaped special is literal
				i++
			}
		case '[':
			if lastClose < 0 {
				lastClose = strings.LastIndexByte(b[i:end], ']') + i
				s.steps += end - i
			}
			brackets++
			i++
		case ']':
			if brackets > 0 {
				brackets--
			}
			i++
		case '`':
			n := runLen(b[i:end], '`')
			s.steps += n
			if runs == nil {
				runs = collectRuns(b, start, end)
				s.steps += end - start
			}
			// A run opens a code span only if a run of the same length
			// follows in the same paragraph; otherwise it is literal.
			c, skipped := runs.closer(n, i+n)
			s.steps += skipped
			if c >= 0 {
				s.code = append(s.code, span{i, c + n})
				i = c + n
			} else {
				i += n
			}
		case '<':
			if !strings.HasPrefix(b[i:], "<!--") {
				e, kind, ok := parseTagSteps(b, i, end, &memo, &s.steps)
				switch {
				case !ok:
					i++
				case kind == tagOpen:
					depth++
					i = e
				case kind == tagClose:
					depth = max(0, depth-1)
					i = e
				default:
					i = e
				}
				continue
			}
			// Searching from "<!" lets "<!-->" and "<!--->" close at once,
			// as browsers do.
			c := strings.Index(b[i+2:], "-->")
			if c < 0 {
				s.steps += len(b) - i
				s.stop = true
				return -1
			}
			s.steps += c + 5
			i += 2 + c + 3
			if i > end {
				return i
			}
		case '@':
			if depth > 0 || brackets > 0 && lastClose > i {
				i++
				continue
			}
			i = s.at(i, end)
		}
	}
	return -1
}

// runIndex lists a paragraph's maximal backtick runs by length so that each
// code-span closer is found in amortised O(1): queries come with increasing
// offsets, so each per-length cursor only moves forward.
type runIndex struct {
	byLen map[int][]int // run length → start offsets, ascending
	next  map[int]int   // run length → first index not yet passed
}

func collectRuns(b string, start, end int) *runIndex {
	r := &runIndex{byLen: map[int][]int{}, next: map[int]int{}}
	for i := start; i < end; {
		j := strings.IndexByte(b[i:end], '`')
		if j < 0 {
			break
		}
		i += j
		n := runLen(b[i:end], '`')
		r.byLen[n] = append(r.byLen[n], i)
		i += n
	}
	return r
}

// closer returns the start of the first run of exactly n backticks at or
// after from, or -1, and how many runs it passed over.
func (r *runIndex) closer(n, from int) (int, int) {
	list := r.byLen[n]
	p0 := r.next[n]
	p := p0
	for p < len(list) && list[p] < from {
		p++
	}
	r.next[n] = p
	if p < len(list) {
		return list[p], p - p0
	}
	return -1, p - p0
}

// at checks for a mention at the '@' at b[i] and returns where to go on.
func (s *scanner) at(i, end int) int {
	b := s.body
	e := i + 1 + len(s.bot)
	if i < s.cfgLineEnd || e > end || !precededOK(b, i) ||
		!foldPrefix(b[i+1:], s.bot) || !boundaryAt(b, e) {
		return i + 1
	}
	m := Mention{Command: CommandTask, Offset: i, Line: s.lineOf(i)}
	s.command(&m, e)
	s.out = append(s.out, m)
	return e
}

// lineOf returns the 1-based line of offset i; offsets come in increasing
// order, so counting newlines from the last answer keeps the total linear.
func (s *scanner) lineOf(i int) int {
	s.lineNo += strings.Count(s.body[s.lineOff:i], "\n")
	s.steps += i - s.lineOff
	s.lineOff = i
	return s.lineNo
}
