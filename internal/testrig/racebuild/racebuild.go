// Package racebuild sizes scenario tests by how the test binary was built.
//
// A race detector finds races in code paths that run concurrently;
// replaying the same pipeline hundreds of times under -race finds little
// that a few dozen do not, at 5-10 times the CPU. So a heavy scenario runs
// small in a race build and at full size in a normal one, and `make test`
// runs it both ways: small under -race with everything else, full-size
// without -race beside it (the Makefile's NORACE_RUN and NORACE_PKGS).
//
// Scale refuses to run small a test that the Makefile does not also run
// without -race: otherwise a test could silently never run at full size.
package racebuild

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/mention-runner/mention-runner/internal/testrig/demo"
)

// Scale returns race in a race build and full otherwise. In a race build
// it fails t unless the Makefile's no-race run covers t's package and
// top-level test, so the full size still runs in `make test`.
func Scale(t testing.TB, race, full int) int {
	t.Helper()
	if !Enabled {
		return full
	}
	if err := covered(t.Name()); err != nil {
		t.Fatalf("racebuild: %v", err)
	}
	return race
}

// noRace is what the Makefile says runs without -race.
type noRace struct {
	run  *regexp.Regexp // NORACE_RUN
	pkgs []string       // NORACE_PKGS, module-relative directories
	root string
}

var (
	makefileOnce sync.Once
	makefile     noRace
	makefileErr  error
)

// covered says whether the no-race run includes test name (its top-level
// part) in the package whose directory is the working directory (go test
// runs each test binary in its package's directory).
func covered(name string) error {
	makefileOnce.Do(func() { makefile, makefileErr = readMakefile() })
	if makefileErr != nil {
		return makefileErr
	}
	return makefile.covers(name)
}

func (n noRace) covers(name string) error {
	wd, err := os.Getwd()
	if err != nil {
		return fmt.Errorf("working directory: %w", err)
	}
	rel, err := filepath.Rel(n.root, wd)
	if err != nil {
		return fmt.Errorf("package directory: %w", err)
	}
	pkg := "./" + filepath.ToSlash(rel)
	top, _, _ := strings.Cut(name, "/")
	inPkgs := false
	for _, p := range n.pkgs {
		inPkgs = inPkgs || p == pkg
	}
	if !inPkgs || !n.run.MatchString(top) {
		return fmt.Errorf("%s runs small under -race but the Makefile never runs it at full size: add %s to NORACE_PKGS and %s to NORACE_RUN", top, pkg, top)
	}
	return nil
}

func readMakefile() (noRace, error) {
	root, err := demo.ModuleRoot(".")
	if err != nil {
		return noRace{}, err
	}
	b, err := os.ReadFile(filepath.Join(root, "Makefile"))
	if err != nil {
		return noRace{}, fmt.Errorf("read Makefile: %w", err)
	}
	n, err := parseMakefile(b)
	n.root = root
	return n, err
}

// parseMakefile reads the simple `NAME := value` assignments of NORACE_RUN
// and NORACE_PKGS ($$ is make's escaped $).
func parseMakefile(b []byte) (noRace, error) {
	vars := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		name, value, ok := strings.Cut(sc.Text(), ":=")
		if !ok {
			continue
		}
		name = strings.TrimSpace(name)
		if name == "NORACE_RUN" || name == "NORACE_PKGS" {
			vars[name] = strings.ReplaceAll(strings.TrimSpace(value), "$$", "$")
		}
	}
	if err := sc.Err(); err != nil {
		return noRace{}, fmt.Errorf("read Makefile: %w", err)
	}
	for _, v := range []string{"NORACE_RUN", "NORACE_PKGS"} {
		if vars[v] == "" {
			return noRace{}, fmt.Errorf("the Makefile sets no %s", v)
		}
	}
	re, err := regexp.Compile(vars["NORACE_RUN"])
	if err != nil {
		return noRace{}, fmt.Errorf("Makefile NORACE_RUN: %w", err)
	}
	return noRace{run: re, pkgs: strings.Fields(vars["NORACE_PKGS"])}, nil
}
