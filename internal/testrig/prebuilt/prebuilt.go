// Package prebuilt finds the dispatcher and runner binaries `make test`
// builds once (into bin/test/cmd, relinked only when their inputs change)
// for every test package that starts them, instead of each package
// linking its own (seconds of CPU per build).
package prebuilt

import (
	"fmt"
	"os"
	"path/filepath"
)

// Env names the directory holding the prebuilt commands.
const Env = "MENTION_RUNNER_TEST_BINS"

// Commands returns the paths of the named commands (dispatcher, runner) in
// $MENTION_RUNNER_TEST_BINS, or ok=false when the variable is unset: the
// test builds them itself. A directory that is set but lacks one is an
// error, never a silent rebuild: the Makefile's build step and the tests
// disagree.
func Commands(names ...string) (paths []string, ok bool, err error) {
	if os.Getenv(Env) == "" {
		return nil, false, nil
	}
	for _, n := range names {
		p, err := command(os.Getenv, n)
		if err != nil {
			return nil, false, err
		}
		paths = append(paths, p)
	}
	return paths, true, nil
}

func command(getenv func(string) string, name string) (string, error) {
	dir := getenv(Env)
	if dir == "" {
		return "", nil
	}
	p, err := filepath.Abs(filepath.Join(dir, name))
	if err != nil {
		return "", fmt.Errorf("%s=%s: %w", Env, dir, err)
	}
	fi, err := os.Stat(p)
	if err != nil {
		return "", fmt.Errorf("%s=%s: %w (unset it and the test builds %s itself)", Env, dir, err, name)
	}
	if !fi.Mode().IsRegular() || fi.Mode().Perm()&0o111 == 0 {
		return "", fmt.Errorf("%s=%s: %s is not an executable file", Env, dir, p)
	}
	return p, nil
}
