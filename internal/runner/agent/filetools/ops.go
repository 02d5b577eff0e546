package filetools

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
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
	b, err := f.root.ReadFile(rel)
	if err != nil {
		return "", outside(p, err)
	}
	if !utf8.Valid(b[:min(len(b), 8192)]) || bytes.IndexByte(b[:min(len(b), 8192)], 0) >= 0 {
		return fmt.Sprintf("(%s is a binary file of %d bytes)", rel, len(b)), nil
	}
	if offset < 1 {
		offset = 1
	}
	var out strings.Builder
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 64<<10), MaxReadBytes)
	n := 0
	for sc.Scan() {
		n++
		if n < offset {
			continue
		}
		if limit > 0 && n >= offset+limit {
			fmt.Fprintf(&out, "(more lines follow; read on with offset %d)\n", n)
			break
		}
		if out.Len()+len(sc.Bytes()) > MaxReadBytes {
			fmt.Fprintf(&out, "(output cut at %d bytes; read on with offset %d)\n", MaxReadBytes, n)
			break
		}
		fmt.Fprintf(&out, "%6d\t%s\n", n, sc.Text())
	}
	if err := sc.Err(); err != nil {
		return "", fmt.Errorf("read %s: %w", rel, err)
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
		b, err := f.root.ReadFile(p)
		if err != nil || bytes.IndexByte(b[:min(len(b), 8192)], 0) >= 0 {
			continue
		}
		for i, line := range strings.Split(string(b), "\n") {
			if !re.MatchString(line) {
				continue
			}
			if n == MaxMatches {
				fmt.Fprintf(&out, "(cut at %d matches; narrow the search)\n", MaxMatches)
				return out.String(), nil
			}
			n++
			if len(line) > 500 {
				line = line[:500] + "…"
			}
			fmt.Fprintf(&out, "%s:%d: %s\n", p, i+1, line)
		}
	}
	if n == 0 {
		return "(no matches)", nil
	}
	return out.String(), nil
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
