package mention

import "strings"

// maxListDepth caps list nesting; deeper markers are read as text. It keeps
// memory bounded on adversarial input like "- - - - …".
const maxListDepth = 64

// scanner holds the state of one Find call.
type scanner struct {
	body  string
	bot   string
	out   []Mention
	steps int // bytes examined, for the linearity test

	lists []int // content columns of the open list items, innermost last
	// emptyItem: the innermost item began with an empty line; a blank line
	// right after closes it (CommonMark).
	emptyItem bool
	fence     fence

	paraStart, paraEnd int // open paragraph; paraStart < 0 when none

	cfgLineEnd int  // '@'s before this offset are flag words of a !cfg mention
	stop       bool // an unclosed HTML comment hides the rest of the body

	html htmlBlock // an open HTML block: its lines are skipped whole
	// quoteLazy: the last non-blank line was in a block quote, so a line
	// that would continue a paragraph continues the quote's (CommonMark's
	// lazy continuation: "> **Note**\n@bot" is all quoted).
	quoteLazy bool

	code []span // code blocks and spans, in order: !cfg there is not stray

	lineOff, lineNo int // last offset whose line number is known
}

// fence is an open fenced code block.
type fence struct {
	open bool
	char byte // '`' or '~'
	n    int  // length of the opening run
	base int  // content column of the list item holding it (0 at top level)
}

// span is a byte range [start, end) of the body.
type span struct{ start, end int }

// htmlBlock is an open CommonMark HTML block and its end condition: a line
// containing end (ASCII case-insensitive when fold), or a blank line.
type htmlBlock struct {
	open  bool
	base  int // content column of the list item holding it (0 at top level)
	end   string
	fold  bool
	blank bool
}

// done reports whether line ends the block (for blank-ended blocks the
// caller checks blankness).
func (h htmlBlock) done(line string) bool {
	if h.blank {
		return false
	}
	if h.fold {
		return strings.Contains(strings.ToLower(line), h.end)
	}
	return strings.Contains(line, h.end)
}

type kind int

const (
	kindText     kind = iota // paragraph text (or a paragraph continuation)
	kindHTML                 // an HTML block start (CommonMark types 1–7)
	kindIndented             // indented code
	kindQuote                // a '>' line
	kindFence                // opening code fence
	kindHeading              // ATX heading
	kindBreak                // thematic break or setext underline: ends a paragraph
	kindList                 // list item marker
)

type block struct {
	kind  kind
	width int       // fence run length or list marker width
	html  htmlBlock // for kindHTML
}

// run walks the body line by line. Only paragraphs and headings reach the
// inline scan; code, quotes (with their lazy lines) and HTML blocks are
// skipped whole.
func (s *scanner) run() {
	pos := 0
	for pos < len(s.body) && !s.stop {
		eol := lineEnd(s.body, pos)
		s.steps += eol - pos + 1
		if s.fence.open && s.fenceLine(trimCR(s.body[pos:eol])) {
			s.code = append(s.code, span{pos, eol})
			pos = eol + 1
			continue
		}
		if s.html.open && s.htmlLine(trimCR(s.body[pos:eol])) {
			pos = eol + 1
			continue
		}
		pos = s.blockLine(pos, eol)
	}
	if r := s.flush(); r >= 0 && !s.stop {
		s.skipRestOfLine(r)
	}
}

// htmlLine reads a line inside an open HTML block. It returns false for
// the blank line that ends a blank-ended block, which is read again as a
// block line.
func (s *scanner) htmlLine(line string) bool {
	o, col := indent(line, 0, 0)
	if o == len(line) {
		if s.html.blank {
			s.html.open = false
			return false
		}
		return true
	}
	if col < s.html.base { // the list item ends, and the block with it
		s.html.open = false
		return false
	}
	if s.html.blank {
		return true
	}
	s.steps += len(line)
	if s.html.done(line) {
		s.html.open = false
	}
	return true
}

func trimCR(line string) string {
	return strings.TrimSuffix(line, "\r")
}

// fenceLine reads a line inside an open fence. It returns false when the
// line ends the fence's list item and must be read again as a block line.
func (s *scanner) fenceLine(line string) bool {
	off, col := indent(line, 0, 0)
	if off == len(line) {
		return true
	}
	if col < s.fence.base {
		s.fence.open = false
		return false
	}
	if col-s.fence.base > 3 {
		return true
	}
	n := runLen(line[off:], s.fence.char)
	if n >= s.fence.n {
		if o, _ := indent(line, off+n, 0); o == len(line) {
			s.fence.open = false
		}
	}
	return true
}

// blockLine reads the line body[pos:eol] outside any fence and returns the
// offset to continue from.
func (s *scanner) blockLine(pos, eol int) int {
	next := eol + 1
	line := trimCR(s.body[pos:eol])
	off, col := indent(line, 0, 0)
	if off == len(line) { // blank: ends a paragraph, lists stay open
		s.quoteLazy = false
		if s.emptyItem {
			s.lists = s.lists[:len(s.lists)-1]
			s.emptyItem = false
		}
		if r := s.flush(); r >= 0 {
			return s.skipRestOfLine(r)
		}
		return next
	}
	s.emptyItem = false
	tail := breakTail(line)
	s.steps += len(line) - tail
	if s.quoteLazy {
		if lazyQuoted(line, off, tail) {
			return next
		}
		s.quoteLazy = false
	}
	d := 0
	for d < len(s.lists) && s.lists[d] <= col {
		d++
	}
	base := 0
	if d > 0 {
		base = s.lists[d-1]
	}
	inPara := s.paraStart >= 0
	// A line not indented enough for the paragraph's list item can only be
	// a lazy continuation; list markers there start new items freely.
	lazy := d < len(s.lists)
	blk := classify(line, off, col-base, tail, inPara, lazy)
	if inPara && blk.kind == kindText {
		s.paraEnd = eol
		return next
	}
	if r := s.flush(); r >= 0 {
		return s.skipRestOfLine(r)
	}
	s.lists = s.lists[:d]
	for {
		switch blk.kind {
		case kindQuote:
			s.quoteLazy = true
			return next
		case kindBreak:
			return next
		case kindIndented:
			s.code = append(s.code, span{pos, eol})
			return next
		case kindFence:
			s.fence = fence{open: true, char: line[off], n: blk.width, base: base}
			s.code = append(s.code, span{pos, eol})
			return next
		case kindHeading:
			return s.resume(pos + off)
		case kindHTML:
			s.html = blk.html
			s.html.base = base
			s.html.open = s.html.blank || !s.html.done(line[off:])
			return next
		case kindText:
			s.paraStart, s.paraEnd = pos+off, eol
			return next
		case kindList:
			if len(s.lists) >= maxListDepth {
				s.paraStart, s.paraEnd = pos+off, eol
				return next
			}
			markEnd, markCol := off+blk.width, col+blk.width
			o, c := indent(line, markEnd, markCol)
			if o == len(line) {
				s.lists = append(s.lists, markCol+1)
				s.emptyItem = true
				return next
			}
			content := c
			if c-markCol > 4 { // the item starts with indented code
				content = markCol + 1
			}
			s.lists = append(s.lists, content)
			base, off, col = content, o, c
			blk = classify(line, off, col-base, tail, false, false)
		}
	}
}

// flush scans the open paragraph, if any. It returns the offset just past an
// HTML comment that closed beyond the paragraph, or -1. A paragraph that
// starts like a link reference definition ("[x]: …") is not scanned: a
// definition is not rendered, and telling where it ends is not worth a
// mention.
func (s *scanner) flush() int {
	if s.paraStart < 0 {
		return -1
	}
	start, end := s.paraStart, s.paraEnd
	s.paraStart = -1
	if s.body[start] == '[' {
		s.steps += end - start
		if strings.Contains(s.body[start:end], "]:") {
			return -1
		}
	}
	return s.inline(start, end)
}

// resume scans a single-line leaf (a heading) from r to the end of its line
// and returns the start of the next line.
func (s *scanner) resume(r int) int {
	eol := lineEnd(s.body, r)
	if r2 := s.inline(r, eol); r2 >= 0 {
		return s.skipRestOfLine(r2)
	}
	return eol + 1
}

// skipRestOfLine goes on after an HTML comment that ran past its paragraph
// and closed at r: the rest of that line is skipped (what CommonMark makes
// of it depends on blocks the comment hid), and the list items the line is
// not indented enough for are closed.
func (s *scanner) skipRestOfLine(r int) int {
	s.closeListsAt(r)
	eol := lineEnd(s.body, r)
	s.steps += eol - r
	return eol + 1
}

// closeListsAt closes the list items that the line holding offset r, where a
// multi-line comment ended, is not indented enough to belong to.
func (s *scanner) closeListsAt(r int) {
	if len(s.lists) == 0 {
		return
	}
	start := strings.LastIndexByte(s.body[:r], '\n') + 1
	s.steps += r - start
	_, col := indent(s.body[start:r], 0, 0)
	d := 0
	for d < len(s.lists) && s.lists[d] <= col {
		d++
	}
	s.lists = s.lists[:d]
	s.emptyItem = false
}

// classify says what block the text at line[off:] starts; rel is its
// indentation relative to the enclosing list item, tail is breakTail(line).
// lazy means a paragraph is open but the line is outside its list item.
func classify(line string, off, rel, tail int, inPara, lazy bool) block {
	if rel >= 4 {
		if inPara { // indented code cannot interrupt a paragraph
			return block{kind: kindText}
		}
		return block{kind: kindIndented}
	}
	rest := line[off:]
	switch c := rest[0]; c {
	case '>':
		return block{kind: kindQuote}
	case '`', '~':
		n := runLen(rest, c)
		if n >= 3 && (c == '~' || strings.IndexByte(rest[n:], '`') < 0) {
			return block{kind: kindFence, width: n}
		}
	case '#':
		n := runLen(rest, '#')
		if n <= 6 && (n == len(rest) || rest[n] == ' ' || rest[n] == '\t') {
			return block{kind: kindHeading}
		}
	case '<':
		if h, ok := htmlStart(rest, inPara); ok {
			return block{kind: kindHTML, html: h}
		}
	}
	if off >= tail && isBreak(rest) {
		return block{kind: kindBreak}
	}
	if inPara && !lazy && isSetextUnderline(rest) {
		return block{kind: kindBreak} // ends the paragraph as a heading
	}
	if w, one, ok := listMarker(rest); ok {
		o, _ := indent(rest, w, 0)
		empty := o == len(rest)
		// Within a paragraph's own container only a non-empty item, ordered
		// ones starting at 1, may start a list (CommonMark).
		if !inPara || lazy || (!empty && one) {
			return block{kind: kindList, width: w}
		}
	}
	return block{kind: kindText}
}

func runLen(s string, c byte) int {
	n := 0
	for n < len(s) && s[n] == c {
		n++
	}
	return n
}

// breakTail returns where the longest suffix of line made of one of "-*_"
// and spaces or tabs starts. Only text from there on can be a thematic
// break, which spares rescanning the line after each nested list marker.
func breakTail(line string) int {
	i := len(line)
	var c byte
	for i > 0 {
		switch b := line[i-1]; {
		case b == ' ' || b == '\t':
		case c == 0 && (b == '-' || b == '*' || b == '_'):
			c = b
		case b != c:
			return i
		}
		i--
	}
	return 0
}

// isBreak reports a thematic break: three or more of one of "-*_", with
// optional spaces and tabs.
func isBreak(s string) bool {
	c := s[0]
	if c != '-' && c != '*' && c != '_' {
		return false
	}
	n := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case c:
			n++
		case ' ', '\t':
		default:
			return false
		}
	}
	return n >= 3
}

// isSetextUnderline reports a run of '=' or '-' with optional trailing
// spaces and tabs.
func isSetextUnderline(s string) bool {
	c := s[0]
	if c != '=' && c != '-' {
		return false
	}
	o, _ := indent(s, runLen(s, c), 0)
	return o == len(s)
}

// listMarker recognises "-", "+", "*", "1." or "1)" (up to 9 digits)
// followed by a space, a tab or the end of the line. one is true for bullets
// and for ordered items numbered 1.
func listMarker(s string) (width int, one, ok bool) {
	switch s[0] {
	case '-', '+', '*':
		width, one = 1, true
	default:
		d := 0
		for d < len(s) && d < 10 && s[d] >= '0' && s[d] <= '9' {
			d++
		}
		if d == 0 || d > 9 || d == len(s) || (s[d] != '.' && s[d] != ')') {
			return 0, false, false
		}
		width = d + 1
		one = strings.TrimLeft(s[:d], "0") == "1"
	}
	if width < len(s) && s[width] != ' ' && s[width] != '\t' {
		return 0, false, false
	}
	return width, one, true
}

// lazyQuoted reports whether a non-blank line right after a block-quote
// line continues that quote lazily: it would be paragraph continuation
// text. It errs towards "quoted" (a mention there is dropped): the quote is
// assumed to end in an open paragraph, and only a non-empty bullet or "1."
// item counts as interrupting it.
func lazyQuoted(line string, off, tail int) bool {
	blk := classify(line, off, 0, tail, true, true)
	switch blk.kind {
	case kindText:
		return true
	case kindList:
		rest := line[off:]
		_, one, _ := listMarker(rest)
		o, _ := indent(rest, blk.width, 0)
		return o == len(rest) || !one
	}
	return false
}
