package prdiff

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Sides of a diff, as GitHub's review comments name them: RIGHT is the
// head's lines (added and unchanged), LEFT the base's (removed and
// unchanged).
const (
	SideRight = "RIGHT"
	SideLeft  = "LEFT"
)

// Hunk is the lines one hunk of a diff shows on each side, inclusive; a
// side with End < Start shows no line (a hunk that only adds or removes).
type Hunk struct {
	OldStart, OldEnd int
	NewStart, NewEnd int
}

func (h Hunk) has(side string, line int) bool {
	if side == SideLeft {
		return line >= h.OldStart && line <= h.OldEnd
	}
	return line >= h.NewStart && line <= h.NewEnd
}

// File is one file of a diff: its path on the head (the base's path for a
// deleted file) and its hunks.
type File struct {
	Path  string
	Hunks []Hunk
}

// Files is a parsed diff: what a review comment may be placed on.
type Files struct {
	byPath map[string]*File
	paths  []string // sorted
}

// Parse reads a unified diff in git's format (the compare API's diff media
// type). It never fails: lines it does not understand are skipped, and a
// diff cut short (Cut) keeps the lines it has, so a comment may only go
// on a line the diff text actually shows. Hunk ranges come from the lines
// seen, not from the headers' counts.
func Parse(text string) *Files {
	fs := &Files{byPath: map[string]*File{}}
	var cur *File
	var oldPath string
	var h *Hunk
	oldLine, newLine, oldLeft, newLeft := 0, 0, 0, 0
	finish := func() {
		if cur != nil && h != nil {
			cur.Hunks = append(cur.Hunks, *h)
		}
		h = nil
	}
	for _, l := range strings.Split(text, "\n") {
		l = strings.TrimSuffix(l, "\r")
		if h != nil && (oldLeft > 0 || newLeft > 0) {
			switch {
			case strings.HasPrefix(l, " "):
				h.OldEnd, h.NewEnd = oldLine, newLine
				oldLine, newLine, oldLeft, newLeft = oldLine+1, newLine+1, oldLeft-1, newLeft-1
				continue
			case strings.HasPrefix(l, "-"):
				h.OldEnd = oldLine
				oldLine, oldLeft = oldLine+1, oldLeft-1
				continue
			case strings.HasPrefix(l, "+"):
				h.NewEnd = newLine
				newLine, newLeft = newLine+1, newLeft-1
				continue
			case strings.HasPrefix(l, `\`):
				continue
			}
			// anything else ends the hunk early
		}
		switch {
		case strings.HasPrefix(l, "diff --git "):
			finish()
			cur, oldPath = nil, ""
		case strings.HasPrefix(l, "--- "):
			finish()
			oldPath = diffPath(strings.TrimPrefix(l, "--- "), "a/")
		case strings.HasPrefix(l, "+++ "):
			finish()
			p := diffPath(strings.TrimPrefix(l, "+++ "), "b/")
			if p == "" {
				p = oldPath // a deleted file is commented on by its old path
			}
			cur = nil
			if p != "" {
				if cur = fs.byPath[p]; cur == nil {
					cur = &File{Path: p}
					fs.byPath[p] = cur
					fs.paths = append(fs.paths, p)
				}
			}
		case strings.HasPrefix(l, "@@ ") && cur != nil:
			finish()
			a, b, c, d, ok := hunkHeader(l)
			if !ok {
				continue
			}
			h = &Hunk{OldStart: a, OldEnd: a - 1, NewStart: c, NewEnd: c - 1}
			oldLine, newLine, oldLeft, newLeft = a, c, b, d
		}
	}
	finish()
	sort.Strings(fs.paths)
	return fs
}

// diffPath reads a --- or +++ line's path: "/dev/null" is none, a quoted
// name is unquoted (git quotes names with unusual bytes), the a/ or b/
// prefix is dropped.
func diffPath(s, prefix string) string {
	s = strings.TrimRight(s, "\t")
	if s == "/dev/null" {
		return ""
	}
	if strings.HasPrefix(s, `"`) {
		u, err := strconv.Unquote(s)
		if err != nil {
			return ""
		}
		s = u
	}
	return strings.TrimPrefix(s, prefix)
}

// hunkHeader reads "@@ -a[,b] +c[,d] @@ …".
func hunkHeader(l string) (a, b, c, d int, ok bool) {
	f := strings.Fields(l)
	if len(f) < 4 || f[0] != "@@" || f[3] != "@@" || !strings.HasPrefix(f[1], "-") || !strings.HasPrefix(f[2], "+") {
		return 0, 0, 0, 0, false
	}
	a, b, ok1 := rangeOf(f[1][1:])
	c, d, ok2 := rangeOf(f[2][1:])
	return a, b, c, d, ok1 && ok2
}

func rangeOf(s string) (start, n int, ok bool) {
	st, cnt, has := strings.Cut(s, ",")
	start, err := strconv.Atoi(st)
	if err != nil || start < 0 {
		return 0, 0, false
	}
	n = 1
	if has {
		if n, err = strconv.Atoi(cnt); err != nil || n < 0 {
			return 0, 0, false
		}
	}
	return start, n, true
}

// Paths lists the diff's files, sorted.
func (fs *Files) Paths() []string { return fs.paths }

// File returns the diff's file at path (nil: not in the diff).
func (fs *Files) File(path string) *File { return fs.byPath[path] }

// PositionError says why a review comment's place is not in the diff, in
// words a model and a person can act on.
type PositionError struct{ Msg string }

func (e *PositionError) Error() string { return e.Msg }

// Check reports whether a review comment may be placed on path at line
// (and, for a range, from startLine) on side ("" = RIGHT) and startSide
// ("" = side): the file must be in the diff and the lines in one hunk on
// that side, as GitHub requires. The error names the bad place and the
// hunks that exist.
func (fs *Files) Check(path string, line, startLine int, side, startSide string) error {
	if err := CheckPath(path); err != nil {
		return err
	}
	if side == "" {
		side = SideRight
	}
	if startSide == "" {
		startSide = side
	}
	if side != SideRight && side != SideLeft || startSide != SideRight && startSide != SideLeft {
		return &PositionError{fmt.Sprintf("side must be RIGHT (the pull request's lines) or LEFT (the base's), got %q", side+"/"+startSide)}
	}
	if line < 1 || startLine < 0 {
		return &PositionError{fmt.Sprintf("%s: line must be 1 or more, got %d", path, line)}
	}
	f := fs.byPath[path]
	if f == nil {
		return &PositionError{fmt.Sprintf("%s is not in the pull request's diff (a file the pull request does not change cannot get a review comment); the diff changes %s", path, listPaths(fs.paths))}
	}
	for _, h := range f.Hunks {
		if !h.has(side, line) {
			continue
		}
		if startLine == 0 {
			return nil
		}
		if startLine >= line && startSide == side {
			return &PositionError{fmt.Sprintf("%s: start_line %d must come before line %d", path, startLine, line)}
		}
		if h.has(startSide, startLine) {
			return nil
		}
		return &PositionError{fmt.Sprintf("%s lines %d–%d (%s) are not in one hunk of the pull request's diff; %s", path, startLine, line, side, hunkList(f, side))}
	}
	return &PositionError{fmt.Sprintf("%s line %d (%s) is not in the pull request's diff; %s", path, line, side, hunkList(f, side))}
}

// CheckPath refuses a path no diff can hold: empty, absolute, with a ".."
// or "." segment, a backslash or a control character.
func CheckPath(path string) error {
	bad := path == "" || len(path) > 4096 || strings.HasPrefix(path, "/") || strings.ContainsAny(path, "\\\x00")
	for _, seg := range strings.Split(path, "/") {
		if seg == ".." || seg == "." || seg == "" {
			bad = true
		}
	}
	for _, r := range path {
		if r < 0x20 || r == 0x7f {
			bad = true
		}
	}
	if bad {
		return &PositionError{fmt.Sprintf("%q is not a file path of the repository (relative, no \"..\" or \".\" segments, no backslash)", clip(path, 80))}
	}
	return nil
}

func hunkList(f *File, side string) string {
	var rs []string
	for _, h := range f.Hunks {
		s, e := h.NewStart, h.NewEnd
		if side == SideLeft {
			s, e = h.OldStart, h.OldEnd
		}
		switch {
		case e < s:
			continue
		case e == s:
			rs = append(rs, strconv.Itoa(s))
		default:
			rs = append(rs, fmt.Sprintf("%d–%d", s, e))
		}
	}
	if len(rs) == 0 {
		return fmt.Sprintf("its hunks show no %s lines", side)
	}
	if len(rs) > 20 {
		rs = append(rs[:20], fmt.Sprintf("and %d more", len(rs)-20))
	}
	return fmt.Sprintf("its hunks show %s lines %s", side, strings.Join(rs, ", "))
}

func listPaths(paths []string) string {
	switch {
	case len(paths) == 0:
		return "no file this run can see"
	case len(paths) > 20:
		return strings.Join(paths[:20], ", ") + fmt.Sprintf(" and %d more", len(paths)-20)
	}
	return strings.Join(paths, ", ")
}

func clip(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}
