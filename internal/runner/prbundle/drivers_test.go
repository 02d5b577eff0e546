package prbundle

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/testrig/gittemplate"
)

// driverTemplateHeads are driverTemplate's start (main, README.md
// "hello") and origin/main (README.md "hello\nmain"), set while it builds.
var driverTemplateHeads [2]string

// driverTemplate is the gate's checkout of a pull request whose base
// moved on: HEAD at start, origin/main one commit ahead, so the agent's
// change to README.md needs a 3-way apply onto it.
var driverTemplate = gittemplate.New(func(t testing.TB, dir string) {
	r := &repo{t: t, dir: dir}
	require.NoError(t, os.CopyFS(dir, os.DirFS(newRepo(t).dir)))
	driverTemplateHeads[0] = gittemplate.Head(t, dir)
	driverTemplateHeads[1] = r.commit("main moved on", map[string]string{"README.md": "hello\nmain\n"})
	r.git("update-ref", "refs/remotes/origin/main", "HEAD")
	r.git("reset", "--quiet", "--hard", "HEAD~1")
})

// TestHostileDriversNeverRun: a driver program the checkout's config
// defines (in its config, an included file or the worktree config) never
// runs when an attribute picks it — in the agent's .gitattributes, in
// <git dir>/info/attributes, or by merge.default — on the gate's path:
// CommitWorkTree's git add, and CaptureOnto's 3-way apply onto a base
// that moved on. A filter is skipped (the file is committed as the agent
// wrote it); a merge driver fails, so the change is refused as a
// conflict. gitexec.WithoutDrivers does it; the note of session 11
// (gitcfg) lists what each row fails without.
func TestHostileDriversNeverRun(t *testing.T) {
	rows := []struct {
		name       string
		config     func(prog string) []string
		attributes string // the agent's .gitattributes
		info       string // <git dir>/info/attributes
		place      int    // configPlaces index
		capture    bool   // go on to CaptureOnto (a 3-way apply)
	}{
		{name: "filter clean", config: func(p string) []string { return []string{"filter.evil.clean=" + p, "filter.evil.smudge=" + p} },
			attributes: "*.txt filter=evil\n", place: 0},
		{name: "filter process", config: func(p string) []string { return []string{"filter.proc.process=" + p} },
			attributes: "*.txt filter=proc\n", place: 1},
		{name: "required filter", config: func(p string) []string { return []string{"filter.req.clean=" + p, "filter.req.required=true"} },
			attributes: "*.txt filter=req\n", place: 2},
		{name: "merge driver by attribute", config: func(p string) []string { return []string{"merge.evil.driver=" + p} },
			info: "README.md merge=evil\n", place: 1, capture: true},
		{name: "merge.default naming the builtin's name", config: func(p string) []string { return []string{"merge.default=text", "merge.text.driver=" + p} },
			place: 2, capture: true},
	}
	ctx := context.Background()
	for _, tt := range rows {
		t.Run(tt.name, func(t *testing.T) {
			dir := driverTemplate.Copy(t)
			r := &repo{t: t, dir: dir}
			gitDir := filepath.Join(t.TempDir(), "target.git")
			require.NoError(t, os.Rename(filepath.Join(dir, ".git"), gitDir))
			canary := filepath.Join(t.TempDir(), "canary")
			configPlaces[tt.place](t, gitDir, configText(tt.config(canaryProgram(t, canary))))
			if tt.info != "" {
				gittemplate.Append(t, filepath.Join(gitDir, "info", "attributes"), tt.info)
			}
			if tt.attributes != "" {
				r.write(".gitattributes", tt.attributes)
			}
			r.write("README.md", "hi\n")
			r.write("new.txt", "new\n")
			rp := Repo{WorkTree: dir, GitDir: gitDir}
			id := BotIdentity("bot")

			committed, err := CommitWorkTree(ctx, rp, id, "agent's change")
			require.NoError(t, err)
			require.True(t, committed)
			if tt.capture {
				_, err = CaptureOnto(ctx, rp, Base{Name: "refs/remotes/origin/main", SHA: driverTemplateHeads[1]},
					driverTemplateHeads[0], id, "agent's change", Options{Out: filepath.Join(t.TempDir(), "b.bundle")})
				var conflict *ConflictError
				assert.True(t, err == nil || errors.As(err, &conflict), "%v", err)
			} else {
				got := (&repo{t: t, dir: gitDir}).git("cat-file", "blob", "HEAD:new.txt")
				assert.Equal(t, "new", got, "the file as the agent wrote it")
			}
			assert.NoFileExists(t, canary, "the checkout's driver program ran")
		})
	}
}
