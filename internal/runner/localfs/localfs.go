// Package localfs is the agent job's view of its local file system for
// writes (the run record, outputs.jsonl, the prompt), so a full disk, a
// read-only run directory or an unwritable file can be injected in tests
// and is reported as what it is (Classify), not as the engine's error.
package localfs

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
)

// File is an open file the stage writes to.
type File interface {
	io.Writer
	io.Closer
}

// FS is the writes the agent stage makes.
type FS interface {
	MkdirAll(path string, perm fs.FileMode) error
	OpenFile(name string, flag int, perm fs.FileMode) (File, error)
	WriteFile(name string, data []byte, perm fs.FileMode) error
}

// OS is the real file system.
type OS struct{}

// MkdirAll is os.MkdirAll.
func (OS) MkdirAll(path string, perm fs.FileMode) error { return os.MkdirAll(path, perm) }

// OpenFile is os.OpenFile.
func (OS) OpenFile(name string, flag int, perm fs.FileMode) (File, error) {
	return os.OpenFile(name, flag, perm)
}

// WriteFile is os.WriteFile.
func (OS) WriteFile(name string, data []byte, perm fs.FileMode) error {
	return os.WriteFile(name, data, perm)
}

// Or returns f, or OS when f is nil.
func Or(f FS) FS {
	if f == nil {
		return OS{}
	}
	return f
}

// Failure is a local write that failed for a reason a person fixes on the
// machine (space, permissions, a missing file), not in the engine.
type Failure struct {
	What string `json:"what"` // "the disk is full", "the file system is read-only", …
	Path string `json:"path"`
	Op   string `json:"op"`    // mkdir, open, write, …
	Err  string `json:"error"` // the system's text
}

func (f *Failure) String() string {
	return fmt.Sprintf("%s: %s (%s: %s)", f.What, f.Path, f.Op, f.Err)
}

// reasons maps the errors a local write can end with to what they mean.
var reasons = []struct {
	errno syscall.Errno
	what  string
}{
	{syscall.ENOSPC, "the disk is full"},
	{syscall.EDQUOT, "the disk quota is used up"},
	{syscall.EROFS, "the file system is read-only"},
	{syscall.EACCES, "the path is not writable (permission denied)"},
	{syscall.EPERM, "the path is not writable (operation not permitted)"},
	{syscall.ENOENT, "the file or its directory is missing"},
}

// Classify returns the local failure err is, nil when it is none: only a
// path error (open, write, mkdir, rename…) with one of the errors above.
func Classify(err error) *Failure {
	if err == nil {
		return nil
	}
	op, path := "", ""
	var pe *fs.PathError
	var le *os.LinkError
	switch {
	case errors.As(err, &pe):
		op, path = pe.Op, pe.Path
	case errors.As(err, &le):
		op, path = le.Op, le.New
	default:
		return nil
	}
	var errno syscall.Errno
	if !errors.As(err, &errno) {
		return nil
	}
	for _, r := range reasons {
		if errno == r.errno {
			return &Failure{What: r.what, Path: path, Op: op, Err: errno.Error()}
		}
	}
	return nil
}

// Fault makes the matching calls of Inject fail with Err.
type Fault struct {
	Op   string        // "mkdir", "open", "write" (writes through an opened file and WriteFile); "" = any
	Path string        // a path.Match pattern on the base name, or a suffix of the path
	Err  syscall.Errno // e.g. syscall.ENOSPC
	// After lets that many matching calls through first.
	After int
}

// Inject wraps an FS and fails the calls its faults match, as a full
// disk, a read-only directory or a removed file would, with the same
// *fs.PathError the OS gives.
type Inject struct {
	Base   FS
	Faults []Fault

	mu   sync.Mutex
	seen map[int]int
}

func (in *Inject) fail(op, path string) error {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.seen == nil {
		in.seen = map[int]int{}
	}
	for i, f := range in.Faults {
		if f.Op != "" && f.Op != op {
			continue
		}
		if ok, _ := filepath.Match(f.Path, filepath.Base(path)); !ok && !strings.HasSuffix(path, f.Path) {
			continue
		}
		in.seen[i]++
		if in.seen[i] > f.After {
			return &fs.PathError{Op: op, Path: path, Err: f.Err}
		}
	}
	return nil
}

// MkdirAll fails a matching "mkdir".
func (in *Inject) MkdirAll(path string, perm fs.FileMode) error {
	if err := in.fail("mkdir", path); err != nil {
		return err
	}
	return Or(in.Base).MkdirAll(path, perm)
}

// OpenFile fails a matching "open"; the file's writes are matched as "write".
func (in *Inject) OpenFile(name string, flag int, perm fs.FileMode) (File, error) {
	if err := in.fail("open", name); err != nil {
		return nil, err
	}
	f, err := Or(in.Base).OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return &injectFile{File: f, in: in, name: name}, nil
}

// WriteFile fails a matching "write".
func (in *Inject) WriteFile(name string, data []byte, perm fs.FileMode) error {
	if err := in.fail("write", name); err != nil {
		return err
	}
	return Or(in.Base).WriteFile(name, data, perm)
}

type injectFile struct {
	File
	in   *Inject
	name string
}

func (f *injectFile) Write(p []byte) (int, error) {
	if err := f.in.fail("write", f.name); err != nil {
		return 0, err
	}
	return f.File.Write(p)
}
