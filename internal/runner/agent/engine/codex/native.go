package codex

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
)

// nativeTargets are the platform packages of the npm package @openai/codex
// and the target triple each vendors, by GOOS/GOARCH (the table of the
// package's launcher, bin/codex.js).
var nativeTargets = map[string]struct{ pkg, triple string }{
	"linux/amd64":  {"codex-linux-x64", "x86_64-unknown-linux-musl"},
	"linux/arm64":  {"codex-linux-arm64", "aarch64-unknown-linux-musl"},
	"darwin/amd64": {"codex-darwin-x64", "x86_64-apple-darwin"},
	"darwin/arm64": {"codex-darwin-arm64", "aarch64-apple-darwin"},
}

// NativeBin is the executable to start for bin. When bin is the npm
// package's launcher (a Node script that finds the platform's native
// Codex in its vendor directory, then runs it with the same arguments),
// it is that native executable: starting it directly saves a Node start
// per run (≈ 0.2 s CPU) and a process that would otherwise stay between
// the runner and Codex forwarding signals. It is only used when its
// package manifest names the launcher's version, so a stale platform
// package is never picked; in every other case (a native binary or
// wrapper already, another layout, an unknown platform) bin is returned
// unchanged.
func NativeBin(bin string) string {
	launcher, err := exec.LookPath(bin)
	if err != nil {
		return bin
	}
	launcher, err = filepath.EvalSymlinks(launcher)
	if err != nil || filepath.Base(launcher) != "codex.js" || filepath.Base(filepath.Dir(launcher)) != "bin" {
		return bin
	}
	root := filepath.Dir(filepath.Dir(launcher)) // …/node_modules/@openai/codex
	var pkg struct{ Name, Version string }
	if readJSON(filepath.Join(root, "package.json"), &pkg) != nil || pkg.Name != "@openai/codex" || pkg.Version == "" {
		return bin
	}
	target, ok := nativeTargets[runtime.GOOS+"/"+runtime.GOARCH]
	if !ok {
		return bin
	}
	// where the launcher looks: the platform package (nested or hoisted
	// next to @openai/codex), then the package's own vendor directory
	for _, vendor := range []string{
		filepath.Join(root, "node_modules", "@openai", target.pkg, "vendor"),
		filepath.Join(filepath.Dir(root), target.pkg, "vendor"),
		filepath.Join(root, "vendor"),
	} {
		dir := filepath.Join(vendor, target.triple)
		var manifest struct{ Version, Target, Entrypoint string }
		if readJSON(filepath.Join(dir, "codex-package.json"), &manifest) != nil ||
			manifest.Version != pkg.Version || manifest.Target != target.triple || manifest.Entrypoint != "bin/codex" {
			continue
		}
		native := filepath.Join(dir, "bin", "codex")
		if fi, err := os.Stat(native); err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0 {
			return native
		}
	}
	return bin
}

func readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}
