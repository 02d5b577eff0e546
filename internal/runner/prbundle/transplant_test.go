package prbundle

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/testrig/gittemplate"
)

// forkSetup is a pull request from a fork as the agent job sees it: a
// shallow checkout of the fork's head, beside the default branch's tip
// (which moved on after the fork branched off) as origin/main. Each test
// gets its own copy of forkTemplate.
func forkSetup(t *testing.T) (origin, agent *repo, forkHead, mainTip string) {
	dir := forkTemplate.Copy(t, "agent/.git/config")
	return &repo{t: t, dir: filepath.Join(dir, "origin")}, &repo{t: t, dir: filepath.Join(dir, "agent")},
		forkTemplateHeads[0], forkTemplateHeads[1]
}

// forkTemplateHeads are forkTemplate's fork head and main tip, set while
// it builds.
var forkTemplateHeads [2]string

var forkTemplate = gittemplate.New(func(t testing.TB, dir string) {
	origin := &repo{t: t, dir: filepath.Join(dir, "origin")}
	require.NoError(t, os.CopyFS(origin.dir, os.DirFS(newRepo(t).dir)))
	origin.git("checkout", "--quiet", "-b", "fork")
	forkTemplateHeads[0] = origin.commit("fork work", map[string]string{"fork-only.txt": "from the fork\n"})
	origin.git("checkout", "--quiet", "main")
	forkTemplateHeads[1] = origin.commit("main moved on", map[string]string{"later.txt": "later\n"})
	agent := &repo{t: t, dir: filepath.Join(dir, "agent")}
	origin.git("clone", "--quiet", "--depth=1", "--branch", "fork", "file://"+origin.dir, agent.dir)
	agent.git("fetch", "--quiet", "--depth=1", "origin", "+main:refs/remotes/origin/main")
})

// originMain is the agent checkout's origin/main as the gate resolves it.
func originMain(t *testing.T, agent *repo) Base {
	t.Helper()
	b, err := ResolveBase(context.Background(), agent.dir, "main", "")
	require.NoError(t, err)
	require.Equal(t, "refs/remotes/origin/main", b.Name)
	return b
}

func TestCaptureOntoForkPRCarriesOnlyTheAgentsChange(t *testing.T) {
	ctx := context.Background()
	origin, agent, forkHead, mainTip := forkSetup(t)
	agent.write("README.md", "hello, fixed\n")
	agent.write("new.txt", "new\n")
	r := Repo{WorkTree: agent.dir}
	id := BotIdentity("bot")
	_, err := CommitWorkTree(ctx, r, id, "fix readme")
	require.NoError(t, err)

	out := filepath.Join(t.TempDir(), "pr-0.bundle")
	b, err := CaptureOnto(ctx, r, originMain(t, agent), forkHead, id, "fix readme", Options{Out: out})
	require.NoError(t, err)
	assert.Equal(t, mainTip, b.BaseSHA)
	assert.Equal(t, 1, b.Commits)
	assert.Equal(t, []string{"README.md", "new.txt"}, b.Paths)
	assert.Equal(t, "fork", agent.git("symbolic-ref", "--short", "HEAD"), "the agent's branch is left alone")
	assert.NotEqual(t, b.HeadSHA, gittemplate.Head(agent.t, agent.dir))

	// the publish side: a clone of the target's default branch
	pub := &repo{t: t, dir: filepath.Join(t.TempDir(), "pub")}
	origin.git("clone", "--quiet", "--bare", "--branch", "main", origin.dir, pub.dir)
	info, err := InspectInto(ctx, pub.dir, out)
	require.NoError(t, err)
	assert.Equal(t, []string{mainTip}, info.Prerequisites)
	require.Len(t, info.Commits, 1)
	assert.Equal(t, "fix readme", info.Commits[0].Subject)
	assert.Equal(t, "bot <bot@users.noreply.github.com>", info.Commits[0].Author)
	pub.git("fetch", "--quiet", out, "HEAD:refs/heads/agent")
	assert.Equal(t, "README.md\nnew.txt", pub.git("diff", "--name-only", "main...agent"))
	assert.Equal(t, "later\n", pub.git("show", "agent:later.txt")+"\n", "built on the default branch's tip")
	assert.Equal(t, "1", pub.git("rev-list", "--count", "main..agent"))
}

func TestCaptureOntoSameBaseBundlesAsIs(t *testing.T) {
	ctx := context.Background()
	r := newRepo(t)
	start := gittemplate.Head(r.t, r.dir)
	head := r.commit("one", map[string]string{"a.txt": "a\n"})
	base, err := ResolveBase(ctx, r.dir, "", start)
	require.NoError(t, err)
	b, err := CaptureOnto(ctx, Repo{WorkTree: r.dir}, base, start, BotIdentity("bot"), "x", Options{Out: filepath.Join(t.TempDir(), "b")})
	require.NoError(t, err)
	assert.Equal(t, head, b.HeadSHA, "the agent's own commits, unchanged")
}

func TestCaptureOntoRefusals(t *testing.T) {
	ctx := context.Background()
	_, agent, forkHead, _ := forkSetup(t)
	r := Repo{WorkTree: agent.dir}
	id := BotIdentity("bot")
	out := filepath.Join(t.TempDir(), "b")

	// nothing changed since the start
	_, err := CaptureOnto(ctx, r, originMain(t, agent), forkHead, id, "x", Options{Out: out})
	assert.ErrorIs(t, err, ErrNoCommits)

	// a change to a file only the fork has cannot go into main
	agent.write("fork-only.txt", "from the fork, edited\n")
	_, err = CommitWorkTree(ctx, r, id, "edit")
	require.NoError(t, err)
	_, err = CaptureOnto(ctx, r, originMain(t, agent), forkHead, id, "x", Options{Out: out})
	var conflict *ConflictError
	require.True(t, errors.As(err, &conflict), "%v", err)
	assert.Contains(t, err.Error(), "do not apply")
	_, statErr := os.Stat(out)
	assert.True(t, os.IsNotExist(statErr), "no bundle left behind")

	// workflow changes are refused on this path too
	agent.git("reset", "--quiet", "--hard", forkHead)
	agent.write(".github/workflows/x.yml", "on: push\n")
	_, err = CommitWorkTree(ctx, r, id, "wf")
	require.NoError(t, err)
	_, err = CaptureOnto(ctx, r, originMain(t, agent), forkHead, id, "x", Options{Out: out})
	var wf *WorkflowError
	require.True(t, errors.As(err, &wf), "%v", err)
	assert.True(t, strings.Contains(err.Error(), ".github/workflows/x.yml"))
}

// TestTransplantHostileConfig: the checkout's own config cannot change
// what Transplant carries. Put back on the commit it started from, the
// agent's change must give exactly the agent's tree, whatever the config
// says of the patch's form (color, prefixes, context, submodules) or of
// applying it (whitespace). Each setting fails this without the flag of
// Transplant's that pins it (the note of session 11, pins).
func TestTransplantHostileConfig(t *testing.T) {
	ctx := context.Background()
	r := newRepo(t)
	start := gittemplate.Head(t, r.dir)
	r.write(".gitmodules", "[submodule \"b\"]\n\tpath = .github/actions/build\n\turl = https://example.com/b\n\tignore = all\n")
	r.write("README.md", "hello\nworld\n")      // context=0: a hunk apply refuses
	r.write("src/a.txt", "trailing blanks  \n") // noprefix: would land as a.txt
	r.git("add", "-A")
	r.git("update-index", "--add", "--cacheinfo", "160000,"+start+",.github/actions/build")
	r.git("commit", "--quiet", "-m", "agent's change")
	gittemplate.Append(t, filepath.Join(r.dir, ".git", "config"), configText([]string{
		"color.ui=always", "color.diff=always", "diff.noprefix=true", "diff.context=0",
		"diff.ignoreSubmodules=all", "apply.whitespace=fix"}))

	head, err := Transplant(ctx, Repo{WorkTree: r.dir}, BotIdentity("bot"), "msg", start, "HEAD", start)
	require.NoError(t, err)
	trees := strings.Fields(r.git("rev-parse", "HEAD^{tree}", head+"^{tree}"))
	require.Len(t, trees, 2)
	assert.Equal(t, trees[0], trees[1], "the agent's tree, exactly")
}
