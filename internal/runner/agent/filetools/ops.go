package filetools

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"regexp"
	"strings"
	"unicode/utf8"
)

// ReadFile returns lines [offset, offset+limit) of the file (1-based;
// zero values mean from the start, to the end), each prefixed with its
// number, at most MaxReadBytes.
func (f *Files) ReadFile(p string, offset, limit int) (string, error) {
	rel, err := f.Resolve(p)
	if err != nil {
		return "", err
	}
	st, err := f.root.Stat(rel)
	if err != nil {
		return "", outside(p, err)
	}
	if st.IsDir() {
		return "", fmt.Errorf("%q is a directory: use %s", p, "list_files")
	}
	// The file is read as a stream, never whole: a checkout may hold a
	// file of any size, and a call costs at most a buffered line and the
	// MaxReadBytes answer (TestReadHugeFileBoundedMemory).
	fh, err := f.root.Open(rel)
	if err != nil {
		return "", outside(p, err)
	}
	defer fh.Close()
	br := bufio.NewReaderSize(fh, readBuffer)
	if binaryHead(br) {
		return fmt.Sprintf("(%s is a binary file of %d bytes)", rel, st.Size()), nil
	}
	if offset < 1 {
		offset = 1
	}
	var out strings.Builder
	lr := lineReader{br: br, max: MaxReadBytes}
	n := 0
	for {
		line, cut, err := lr.next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return "", fmt.Errorf("read %s: %w", rel, err)
		}
		n++
		if n < offset {
			continue
		}
		if limit > 0 && n >= offset+limit {
			fmt.Fprintf(&out, "(more lines follow; read on with offset %d)\n", n)
			break
		}
		if cut && out.Len() == 0 {
			// one line longer than the cap: its start, and where to go on
			fmt.Fprintf(&out, "%6d\t%s…\n(line %d is longer than %d bytes and is shown cut; read on with offset %d)\n",
				n, line[:MaxReadBytes-longLineNote], n, MaxReadBytes, n+1)
			break
		}
		if out.Len()+len(line) > MaxReadBytes {
			fmt.Fprintf(&out, "(output cut at %d bytes; read on with offset %d)\n", MaxReadBytes, n)
			break
		}
		fmt.Fprintf(&out, "%6d\t%s\n", n, line)
	}
	if out.Len() == 0 {
		return fmt.Sprintf("(%s has %d lines; nothing at offset %d)", rel, n, offset), nil
	}
	return out.String(), nil
}

// ListFiles lists the files under dir (recursively, sorted, .git left
// out) whose path relative to the checkout matches pattern (path.Match
// syntax, matched against the path and against the base name; "" = all).
func (f *Files) ListFiles(dir, pattern string) (string, error) {
	rel, err := f.Resolve(dir)
	if err != nil {
		return "", err
	}
	if pattern != "" {
		if _, err := path.Match(pattern, ""); err != nil {
			return "", fmt.Errorf("pattern %q: %w", pattern, err)
		}
	}
	var out []string
	more := false
	err = fs.WalkDir(f.root.FS(), rel, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return outside(p, err)
		}
		if d.Name() == ".git" {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			return nil
		}
		if pattern != "" && !matches(pattern, p) {
			return nil
		}
		if len(out) == MaxListEntries {
			more = true
			return fs.SkipAll
		}
		out = append(out, p)
		return nil
	})
	if err != nil {
		return "", err
	}
	if len(out) == 0 {
		return "(no files)", nil
	}
	s := strings.Join(out, "\n") + "\n"
	if more {
		s += fmt.Sprintf("(listing cut at %d files; narrow the directory or pattern)\n", MaxListEntries)
	}
	return s, nil
}

func matches(pattern, p string) bool {
	if ok, _ := path.Match(pattern, p); ok {
		return true
	}
	ok, _ := path.Match(pattern, path.Base(p))
	return ok
}

// SearchFiles finds lines matching the regular expression under dir,
// in files matching glob ("" = all), as "path:line: text".
func (f *Files) SearchFiles(expr, dir, glob string) (string, error) {
	re, err := regexp.Compile(expr)
	if err != nil {
		return "", fmt.Errorf("pattern %q is not a valid regular expression: %w", expr, err)
	}
	list, err := f.ListFiles(dir, glob)
	if err != nil {
		return "", err
	}
	var out strings.Builder
	n := 0
	for _, p := range strings.Split(strings.TrimSpace(list), "\n") {
		if strings.HasPrefix(p, "(") {
			continue
		}
		done, err := f.searchFile(re, p, &out, &n)
		if err != nil {
			return "", err
		}
		if done {
			return out.String(), nil
		}
	}
	if n == 0 {
		return "(no matches)", nil
	}
	return out.String(), nil
}

// searchFile adds the lines of p matching re to out, counting them in n,
// reading p line by line (lines longer than maxSearchLine are matched on
// their start); done: MaxMatches was reached. A file that cannot be opened
// or is binary is skipped.
func (f *Files) searchFile(re *regexp.Regexp, p string, out *strings.Builder, n *int) (done bool, err error) {
	fh, err := f.root.Open(p)
	if err != nil {
		return false, nil
	}
	defer fh.Close()
	br := bufio.NewReaderSize(fh, readBuffer)
	if head, _ := br.Peek(binarySniff); bytes.IndexByte(head, 0) >= 0 {
		return false, nil
	}
	lr := lineReader{br: br, max: maxSearchLine}
	for i := 1; ; i++ {
		line, _, err := lr.next()
		if errors.Is(err, io.EOF) {
			return false, nil
		}
		if err != nil {
			return false, fmt.Errorf("search %s: %w", p, err)
		}
		if !re.Match(line) {
			continue
		}
		if *n == MaxMatches {
			fmt.Fprintf(out, "(cut at %d matches; narrow the search)\n", MaxMatches)
			return true, nil
		}
		*n++
		shown := string(line)
		if len(shown) > 500 {
			shown = shown[:500] + "…"
		}
		fmt.Fprintf(out, "%s:%d: %s\n", p, i, shown)
	}
}

const (
	readBuffer    = 64 << 10 // bufio buffer per open file
	binarySniff   = 8192     // bytes looked at to call a file binary
	maxSearchLine = 64 << 10 // bytes of a line search_files matches on
	longLineNote  = 256      // room kept in MaxReadBytes for the note on a cut line
)

// binaryHead says whether the start of br looks binary (a NUL byte or
// invalid UTF-8 in its first binarySniff bytes); it consumes nothing.
func binaryHead(br *bufio.Reader) bool {
	head, _ := br.Peek(binarySniff)
	return !utf8.Valid(head) || bytes.IndexByte(head, 0) >= 0
}

// lineReader reads a stream line by line, holding at most max bytes of a
// line: the rest of a longer line (cut is true) is read past only when the
// next line is asked for, so a caller that stops there reads no further.
// Line ends ("\n", "\r\n") are dropped, as bufio.ScanLines does.
type lineReader struct {
	br   *bufio.Reader
	buf  []byte
	max  int
	skip bool // the last line was cut: its rest comes first
}

func (l *lineReader) next() (line []byte, cut bool, err error) {
	for l.skip {
		_, err := l.br.ReadSlice('\n')
		switch {
		case err == nil:
			l.skip = false
		case !errors.Is(err, bufio.ErrBufferFull):
			return nil, false, err
		}
	}
	l.buf = l.buf[:0]
	read := false
	for {
		frag, err := l.br.ReadSlice('\n')
		read = read || len(frag) > 0
		end := err == nil
		if end {
			frag = frag[:len(frag)-1]
		}
		if room := l.max - len(l.buf); len(frag) > room {
			l.buf = append(l.buf, frag[:room]...)
			l.skip = !end
			return l.buf, true, nil
		}
		l.buf = append(l.buf, frag...)
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case end, errors.Is(err, io.EOF) && read:
			return bytes.TrimSuffix(l.buf, []byte{'\r'}), false, nil
		default:
			return nil, false, err
		}
	}
}

// WriteFile creates or replaces a file in the checkout (parent directories
// made as needed).
func (f *Files) WriteFile(p, content string) (string, error) {
	rel, err := f.writable(p)
	if err != nil {
		return "", err
	}
	if len(content) > MaxWriteBytes {
		return "", fmt.Errorf("%q: content of %d bytes is over the %d-byte limit", p, len(content), MaxWriteBytes)
	}
	if dir := path.Dir(rel); dir != "." {
		if err := f.root.MkdirAll(dir, 0o755); err != nil {
			return "", outside(p, err)
		}
	}
	mode := fs.FileMode(0o644)
	if st, err := f.root.Lstat(rel); err == nil {
		if !st.Mode().IsRegular() {
			return "", fmt.Errorf("%q is not a regular file", p)
		}
		mode = st.Mode().Perm()
	}
	if err := f.root.WriteFile(rel, []byte(content), mode); err != nil {
		return "", outside(p, err)
	}
	return fmt.Sprintf("wrote %s (%d bytes)", rel, len(content)), nil
}

// EditFile replaces old with new in a file: old must occur exactly once,
// or at least once with all set.
func (f *Files) EditFile(p, old, new string, all bool) (string, error) {
	rel, err := f.writable(p)
	if err != nil {
		return "", err
	}
	if old == "" {
		return "", errors.New(`"old_string" is empty: to create a file use write_file`)
	}
	st, err := f.root.Lstat(rel)
	if err != nil {
		return "", outside(p, err)
	}
	if !st.Mode().IsRegular() {
		return "", fmt.Errorf("%q is not a regular file", p)
	}
	if st.Size() > MaxWriteBytes {
		// the edited file could not be written back anyway
		return "", fmt.Errorf("%q is %d bytes, over the %d-byte limit of the file tools: edit a smaller file", p, st.Size(), MaxWriteBytes)
	}
	b, err := f.root.ReadFile(rel)
	if err != nil {
		return "", outside(p, err)
	}
	s := string(b)
	n := strings.Count(s, old)
	switch {
	case n == 0:
		return "", fmt.Errorf("%s: old_string was not found; read the file and copy the text exactly", rel)
	case n > 1 && !all:
		return "", fmt.Errorf("%s: old_string occurs %d times; give more context to make it unique, or set replace_all", rel, n)
	}
	if all {
		s = strings.ReplaceAll(s, old, new)
	} else {
		s = strings.Replace(s, old, new, 1)
	}
	if err := f.root.WriteFile(rel, []byte(s), st.Mode().Perm()); err != nil {
		return "", outside(p, err)
	}
	return fmt.Sprintf("edited %s (%d replacement(s))", rel, max(1, n*btoi(all))), nil
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

func (f *Files) writable(p string) (string, error) {
	rel, err := f.Resolve(p)
	if err != nil {
		return "", err
	}
	if rel == "." {
		return "", fmt.Errorf("%q names the checkout itself, not a file", p)
	}
	return rel, nil
}
