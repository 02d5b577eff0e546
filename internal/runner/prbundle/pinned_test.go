package prbundle

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/testrig/gittemplate"
)

// configPlaces are the files of a checkout git reads config from: the
// repository's own config, a file it includes, and the worktree config
// (extensions.worktreeConfig). Each row of TestHostileConfigSeesTruePaths
// writes its settings into one of them in turn, so every place is read.
var configPlaces = []func(t *testing.T, gitDir, cfg string){
	func(t *testing.T, gitDir, cfg string) { gittemplate.Append(t, filepath.Join(gitDir, "config"), cfg) },
	func(t *testing.T, gitDir, cfg string) {
		gittemplate.Append(t, filepath.Join(gitDir, "hostile.inc"), cfg)
		gittemplate.Append(t, filepath.Join(gitDir, "config"), "[include]\n\tpath = hostile.inc\n")
	},
	func(t *testing.T, gitDir, cfg string) {
		gittemplate.Append(t, filepath.Join(gitDir, "config.worktree"), cfg)
		gittemplate.Append(t, filepath.Join(gitDir, "config"), "[extensions]\n\tworktreeConfig = true\n")
	},
}

// configText is settings ("section.key=value", the section may have a
// subsection: "a.b.c=v") as config file text.
func configText(settings []string) string {
	var b strings.Builder
	for _, s := range settings {
		kv := strings.SplitN(s, "=", 2)
		i, j := strings.Index(kv[0], "."), strings.LastIndex(kv[0], ".")
		sec := kv[0][:i]
		if i != j {
			sec = fmt.Sprintf("%s %q", sec, kv[0][i+1:j])
		}
		fmt.Fprintf(&b, "[%s]\n\t%s = %s\n", sec, kv[0][j+1:], kv[1])
	}
	return b.String()
}

// canaryProgram is a program a hostile config names (a signature
// verifier, a diff driver): it leaves canary behind when it runs and
// prints what a verifier would.
func canaryProgram(t *testing.T, canary string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "prog")
	require.NoError(t, os.WriteFile(p, []byte("#!/bin/sh\necho ran >> '"+canary+"'\necho 'gpg: Good signature'\n"), 0o755))
	return p
}

// setHead points HEAD at commit, detached, without a git process.
func (r *repo) setHead(commit string) {
	r.t.Helper()
	require.NoError(r.t, os.WriteFile(filepath.Join(r.dir, ".git", "HEAD"), []byte(commit+"\n"), 0o644))
}

// TestHostileConfigSeesTruePaths: whatever a checkout's own config (or
// state under its git directory, or a .gitmodules in it) says, Capture —
// the gate — and InspectInto — publish — see exactly the paths the range
// touches. Each row is a setting that, without what git.go pins, makes
// git log report other paths, run a program, or fail; the note of
// session 11 (pins) lists which pin each row fails without.
func TestHostileConfigSeesTruePaths(t *testing.T) {
	const wf = ".github/workflows/x.yml"
	rows := []struct {
		name string
		// build makes the range on a copy of initialRepo (HEAD: main,
		// README.md) and returns its base and the paths it touches.
		build    func(t *testing.T, r *repo) (base string, want []string)
		config   func(prog string) []string // settings for the checkout's config; prog leaves the canary
		noShared bool                       // HEAD is a root commit: publish refuses it outright
		special  bool                       // want names a submodule: both refuse it (*SpecialEntryError)
	}{
		{
			// A root commit's files are its whole diff: showRoot=false
			// hides them, and a gate counting from an unrelated base sees
			// a commit that changes nothing.
			name: "log.showRoot=false, a root commit",
			build: func(t *testing.T, r *repo) (string, []string) {
				base := gittemplate.Head(t, r.dir)
				r.git("checkout", "--quiet", "--orphan", "other")
				r.commit("root", map[string]string{wf: "on: push\n"})
				return base, []string{wf, "README.md"}
			},
			config:   func(string) []string { return []string{"log.showRoot=false"} },
			noShared: true,
		},
		{
			// M's first parent I is older than the base B, which hardened
			// the workflow; M keeps I's tree, so it reverts the workflow,
			// which only its diff against its second parent B shows.
			name: "log.diffMerges=first-parent, a merge reverting a workflow",
			build: func(t *testing.T, r *repo) (string, []string) {
				i := r.commit("v1", map[string]string{wf: "permissions: write-all\n"})
				b := r.commit("v2", map[string]string{wf: "permissions: {}\n"})
				m := r.git("commit-tree", "-p", i, "-p", b, "-m", "merge", i+"^{tree}")
				r.setHead(m)
				return b, []string{wf}
			},
			config: func(string) []string { return []string{"log.diffMerges=first-parent"} },
		},
		{
			// Verifying a signature runs the checkout's gpg.program.
			name: "log.showSignature=true, a signed commit",
			build: func(t *testing.T, r *repo) (string, []string) {
				base := gittemplate.Head(t, r.dir)
				r.write(wf, "on: push\n")
				r.git("add", "-A")
				tree := r.git("write-tree")
				obj := filepath.Join(t.TempDir(), "commit")
				require.NoError(t, os.WriteFile(obj, []byte("tree "+tree+"\nparent "+base+
					"\nauthor T <t@example.com> 1700000000 +0000\ncommitter T <t@example.com> 1700000000 +0000\n"+
					"gpgsig -----BEGIN PGP SIGNATURE-----\n \n iQEz\n -----END PGP SIGNATURE-----\n\nsigned\n"), 0o644))
				r.setHead(r.git("hash-object", "-t", "commit", "-w", obj))
				return base, []string{wf}
			},
			config: func(prog string) []string {
				return []string{"log.showSignature=true", "gpg.program=" + prog}
			},
		},
		{
			// core.worktree above the checkout puts git's working directory
			// in a subdirectory ("<dir>/") of the work tree: diff.relative
			// then shows only paths under it, none of the repository's.
			name: "diff.relative=true, core.worktree above the checkout",
			build: func(t *testing.T, r *repo) (string, []string) {
				base := gittemplate.Head(t, r.dir)
				r.commit("ci", map[string]string{wf: "on: push\n"})
				return base, []string{wf}
			},
			config: func(string) []string { return []string{"diff.relative=true", "core.worktree=../.."} },
		},
		{
			// A replace ref makes git log show another commit's tree and
			// parents in place of the real commit's.
			name: "refs/replace, the workflow change replaced by a no-op",
			build: func(t *testing.T, r *repo) (string, []string) {
				base := gittemplate.Head(t, r.dir)
				e := r.commit("ci", map[string]string{wf: "on: push\n"})
				f := r.git("commit-tree", "-p", base, "-m", "nothing", base+"^{tree}")
				r.write(filepath.Join(".git", "refs", "replace", e), f+"\n")
				return base, []string{wf}
			},
			config: func(string) []string { return []string{"core.useReplaceRefs=true"} },
		},
		{
			// A graft gives E a parent P that already has the workflow, so
			// E's diff is empty; P is in the base's history, out of range.
			name: "info/grafts, a commit grafted onto one with the workflow",
			build: func(t *testing.T, r *repo) (string, []string) {
				p := r.commit("add", map[string]string{wf: "on: push\n"})
				require.NoError(t, os.Remove(filepath.Join(r.dir, wf)))
				base := r.commit("remove", nil)
				e := r.commit("add again", map[string]string{wf: "on: push\n"})
				r.write(filepath.Join(".git", "info", "grafts"), e+" "+p+"\n")
				return base, []string{wf}
			},
			config: func(string) []string { return []string{"advice.graftFileDeprecated=false"} },
		},
		{
			// The checkout's own .gitmodules (not config: no -c overrides
			// it) says a submodule's changes are not shown, as can config.
			name: ".gitmodules ignore=all, diff.ignoreSubmodules=all, a submodule under .github",
			build: func(t *testing.T, r *repo) (string, []string) {
				base := gittemplate.Head(t, r.dir)
				r.write(".gitmodules", "[submodule \"b\"]\n\tpath = .github/actions/build\n\turl = https://example.com/b\n\tignore = all\n")
				r.git("add", ".gitmodules")
				r.git("update-index", "--add", "--cacheinfo", "160000,"+base+",.github/actions/build")
				r.git("commit", "--quiet", "-m", "submodule")
				return base, []string{".github/actions/build", ".gitmodules"}
			},
			config:  func(string) []string { return []string{"diff.ignoreSubmodules=all"} },
			special: true,
		},
		{
			// Settings the command line already overrides (-z writes names
			// verbatim, --no-renames, --no-abbrev, --format, no pathspec to
			// follow, --raw runs no diff program): pinned or not, they
			// change nothing; core.quotePath is pinned for output without -z.
			name: "core.quotePath=true and settings the flags override, a workflow renamed away",
			build: func(t *testing.T, r *repo) (string, []string) {
				r.commit("ci", map[string]string{wf: "on: push\n"})
				base := gittemplate.Head(t, r.dir)
				name := "caf\u00e9 \"q\"\ttab\\.txt"
				r.write(name, "x\n")
				r.write(".gitattributes", "* diff=x\n")
				require.NoError(t, os.Rename(filepath.Join(r.dir, wf), filepath.Join(r.dir, "ci.yml")))
				r.commit("move", nil)
				return base, []string{".gitattributes", wf, name, "ci.yml"}
			},
			config: func(prog string) []string {
				return []string{"core.quotePath=true", "diff.renames=copies", "color.ui=always", "core.abbrev=7", "log.follow=true",
					"format.pretty=oneline", "log.decorate=full", "diff.noprefix=true",
					"diff.external=" + prog, "diff.x.textconv=" + prog}
			},
		},
	}
	for i, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			r := newRepo(t)
			canary := filepath.Join(t.TempDir(), "canary")
			base, want := row.build(t, r)
			configPlaces[i%len(configPlaces)](t, filepath.Join(r.dir, ".git"), configText(row.config(canaryProgram(t, canary))))

			ctx := context.Background()
			out := filepath.Join(t.TempDir(), "b")
			b, err := Capture(ctx, r.dir, base, Options{Out: out, AllowWorkflowChanges: true})
			if row.special {
				var se *SpecialEntryError
				require.ErrorAs(t, err, &se, "the gate")
				assert.Equal(t, want[:1], se.Paths, "the gate")
				// a bundle made by git itself reaches publish
				r.git("bundle", "create", "--quiet", out, "HEAD", "^"+base)
				_, err = InspectInto(ctx, r.dir, out)
				require.ErrorAs(t, err, &se, "publish")
				assert.Equal(t, want[:1], se.Paths, "publish")
				assert.NoFileExists(t, canary, "no program of the checkout's ran")
				return
			}
			require.NoError(t, err, "the gate")
			assert.Equal(t, want, b.Paths, "the gate")

			// publish's scratch repository has the checkout's config too
			info, err := InspectInto(ctx, r.dir, out)
			if row.noShared {
				assert.ErrorIs(t, err, ErrNoSharedHistory, "publish")
			} else {
				require.NoError(t, err, "publish")
				assert.Equal(t, want, info.Paths, "publish")
			}
			assert.NoFileExists(t, canary, "no program of the checkout's ran")
		})
	}
}
