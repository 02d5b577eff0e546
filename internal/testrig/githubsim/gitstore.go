package githubsim

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"context"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// gitObject is one git object: its type and its content (without header).
type gitObject struct {
	typ  string // blob, tree, commit, tag
	data []byte
}

// gitStore holds one repository's objects and refs in memory, in git's own
// formats and with git's hashes, so the REST API never forks git. The bare
// repository on disk is brought up to date only when git itself must see it
// (smart HTTP, diffs), and refs a push changed are read back afterwards.
type gitStore struct {
	s      *Sim
	path   string    // the bare repository on disk
	branch string    // HEAD's branch
	parent *gitStore // fork network: objects missing here are looked up there

	mu       sync.Mutex
	objs     map[string]gitObject
	refs     map[string]string // full ref name → sha
	unsynced []string          // objects not yet on disk
	onDisk   bool              // the bare repository exists
	diskRefs map[string]string // refs as last written to or read from disk
	diffs    map[string]string // "base...head" → git diff output

	diskMu sync.Mutex // serialises syncs and pushes

	// pushed are tips a push brought that memory lacked: the first read
	// that misses memory loads what they reach in one git process
	// (loadPushed) instead of one per object. Guarded by mu.
	pushed   []string
	pushedMu sync.Mutex // serialises loadPushed
}

// emptyTree is git's empty tree, which every repository has without
// storing it (GitHub accepts commits of it, as git does).
var emptyTree = hashObject("tree", nil)

func newGitStore(s *Sim, path, branch string, parent *gitStore) *gitStore {
	return &gitStore{s: s, path: path, branch: branch, parent: parent,
		objs: map[string]gitObject{emptyTree: {typ: "tree", data: []byte{}}}, refs: map[string]string{}, diskRefs: map[string]string{}, diffs: map[string]string{}}
}

// errNoObject means an object or path is absent.
var errNoObject = errors.New("no such object")

func hashObject(typ string, data []byte) string {
	h := sha1.New()
	fmt.Fprintf(h, "%s %d\x00", typ, len(data))
	h.Write(data)
	return hex.EncodeToString(h.Sum(nil))
}

// put stores an object and returns its sha.
func (g *gitStore) put(typ string, data []byte) string {
	sha := hashObject(typ, data)
	g.mu.Lock()
	defer g.mu.Unlock()
	if _, ok := g.objs[sha]; !ok {
		g.objs[sha] = gitObject{typ: typ, data: data}
		g.unsynced = append(g.unsynced, sha)
	}
	return sha
}

// get returns an object from memory, the fork network, or (for objects a
// push brought) the disk.
func (g *gitStore) get(ctx context.Context, sha string) (gitObject, bool) {
	if !isSHA(sha) {
		return gitObject{}, false
	}
	g.mu.Lock()
	o, ok := g.objs[sha]
	onDisk := g.onDisk
	g.mu.Unlock()
	if ok {
		return o, true
	}
	if g.parent != nil {
		if o, ok := g.parent.get(ctx, sha); ok {
			return o, true
		}
	}
	if !onDisk {
		return gitObject{}, false
	}
	if g.loadPushed(ctx) {
		g.mu.Lock()
		o, ok = g.objs[sha]
		g.mu.Unlock()
		if ok {
			return o, true
		}
	}
	out, err := g.s.runGit(ctx, g.path, []byte(sha+"\n"), nil, "cat-file", "--batch")
	if err != nil {
		return gitObject{}, false
	}
	head, rest, ok := bytes.Cut(out, []byte("\n"))
	f := strings.Fields(string(head))
	if !ok || len(f) != 3 || f[1] == "missing" {
		return gitObject{}, false
	}
	n, err := strconv.Atoi(f[2])
	if err != nil || n > len(rest) {
		return gitObject{}, false
	}
	o = gitObject{typ: f[1], data: rest[:n:n]}
	g.mu.Lock()
	g.objs[sha] = o // already on disk: not unsynced
	g.mu.Unlock()
	return o, true
}

// objectType returns the type of sha, "" when absent.
func (g *gitStore) objectType(ctx context.Context, sha string) string {
	o, ok := g.get(ctx, sha)
	if !ok {
		return ""
	}
	return o.typ
}

// --- refs -------------------------------------------------------------------

func (g *gitStore) ref(name string) string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.refs[name]
}

// listRefs returns the refs whose full name starts with prefix, sorted.
func (g *gitStore) listRefs(ctx context.Context, prefix string) []refInfo {
	g.mu.Lock()
	var out []refInfo
	for name, sha := range g.refs {
		if strings.HasPrefix(name, prefix) {
			out = append(out, refInfo{name: name, sha: sha})
		}
	}
	g.mu.Unlock()
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	for i := range out {
		out[i].typ = g.objectType(ctx, out[i].sha)
	}
	return out
}

// errRefExists and errRefMoved are the outcomes of a refused ref write.
var (
	errRefExists   = errors.New("reference already exists")
	errRefMissing  = errors.New("reference does not exist")
	errRefMoved    = errors.New("reference was updated concurrently")
	errRefConflict = errors.New("a reference with a conflicting name exists")
)

// createRef creates name at sha unless it (or a name it would nest in or
// under, as git refuses "refs/a" next to "refs/a/b") exists.
func (g *gitStore) createRef(name, sha string) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if _, ok := g.refs[name]; ok {
		return errRefExists
	}
	for other := range g.refs {
		if strings.HasPrefix(other, name+"/") || strings.HasPrefix(name, other+"/") {
			return errRefConflict
		}
	}
	g.refs[name] = sha
	return nil
}

// casRef moves an existing ref from old to sha ("" sha deletes it).
func (g *gitStore) casRef(name, old, sha string) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	cur, ok := g.refs[name]
	switch {
	case !ok:
		return errRefMissing
	case cur != old:
		return errRefMoved
	case sha == "":
		delete(g.refs, name)
	default:
		g.refs[name] = sha
	}
	return nil
}

// setRef points name at sha whatever it held.
func (g *gitStore) setRef(name, sha string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.refs[name] = sha
}

// validRefName applies GitHub's rule (refs/ and at least two slashes) and
// git's check-ref-format rules.
func validRefName(ref string) bool {
	if !strings.HasPrefix(ref, "refs/") || strings.Count(ref, "/") < 2 {
		return false
	}
	if strings.HasSuffix(ref, "/") || strings.HasSuffix(ref, ".") || strings.Contains(ref, "..") ||
		strings.Contains(ref, "@{") || strings.Contains(ref, "//") {
		return false
	}
	for _, r := range ref {
		if r < 0x20 || r == 0x7f || strings.ContainsRune(" ~^:?*[\\", r) {
			return false
		}
	}
	for _, comp := range strings.Split(ref, "/") {
		if comp == "" || strings.HasPrefix(comp, ".") || strings.HasSuffix(comp, ".lock") {
			return false
		}
	}
	return true
}

// --- revisions --------------------------------------------------------------

// peelCommit returns sha's commit: sha itself or a tag's target.
func (g *gitStore) peelCommit(ctx context.Context, sha string) string {
	for range 10 {
		o, ok := g.get(ctx, sha)
		switch {
		case !ok:
			return ""
		case o.typ == "commit":
			return sha
		case o.typ == "tag":
			target, _, _ := strings.Cut(strings.TrimPrefix(string(o.data), "object "), "\n")
			sha = target
		default:
			return ""
		}
	}
	return ""
}

// resolveRef returns the commit a ref points at, or "".
func (g *gitStore) resolveRef(ctx context.Context, ref string) string {
	sha := g.ref(ref)
	if sha == "" {
		return ""
	}
	if c := g.peelCommit(ctx, sha); c != "" {
		return c
	}
	return sha
}

// resolveRev resolves a branch, tag or commit sha for the contents API.
func (g *gitStore) resolveRev(ctx context.Context, rev string) string {
	for _, cand := range []string{"refs/heads/" + rev, "refs/tags/" + rev} {
		if sha := g.resolveRef(ctx, cand); sha != "" {
			return sha
		}
	}
	if g.objectType(ctx, rev) == "commit" {
		return rev
	}
	return ""
}

// commitInfo is the part of a commit object the simulator reads.
type commitInfo struct {
	tree    string
	parents []string
}

func parseCommit(data []byte) commitInfo {
	var ci commitInfo
	head, _, _ := strings.Cut(string(data), "\n\n")
	for _, line := range strings.Split(head, "\n") {
		k, v, _ := strings.Cut(line, " ")
		switch k {
		case "tree":
			ci.tree = v
		case "parent":
			ci.parents = append(ci.parents, v)
		}
	}
	return ci
}

func (g *gitStore) commit(ctx context.Context, sha string) (commitInfo, bool) {
	o, ok := g.get(ctx, sha)
	if !ok || o.typ != "commit" {
		return commitInfo{}, false
	}
	return parseCommit(o.data), true
}

// treeOf returns the tree of a commit or tree sha, "" when neither.
func (g *gitStore) treeOf(ctx context.Context, sha string) string {
	o, ok := g.get(ctx, sha)
	switch {
	case !ok:
		return ""
	case o.typ == "tree":
		return sha
	case o.typ == "commit":
		return parseCommit(o.data).tree
	}
	return ""
}

// ancestors returns every commit reachable from tips.
func (g *gitStore) ancestors(ctx context.Context, tips ...string) map[string]bool {
	seen := map[string]bool{}
	stack := append([]string(nil), tips...)
	for len(stack) > 0 {
		sha := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if sha == "" || seen[sha] {
			continue
		}
		seen[sha] = true
		if ci, ok := g.commit(ctx, sha); ok {
			stack = append(stack, ci.parents...)
		}
	}
	return seen
}

// isAncestor reports whether anc is reachable from desc (or equal to it).
func (g *gitStore) isAncestor(ctx context.Context, anc, desc string) bool {
	return g.ancestors(ctx, desc)[anc]
}

// countCommits counts commits reachable from head but not from base.
func (g *gitStore) countCommits(ctx context.Context, base, head string) int {
	from := g.ancestors(ctx, base)
	n := 0
	for sha := range g.ancestors(ctx, head) {
		if !from[sha] {
			n++
		}
	}
	return n
}

// copyReachable copies the objects reachable from sha in src into g (a
// fetch between repositories of one network).
func (g *gitStore) copyReachable(ctx context.Context, src *gitStore, sha string) {
	stack := []string{sha}
	for len(stack) > 0 {
		cur := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		g.mu.Lock()
		_, have := g.objs[cur]
		g.mu.Unlock()
		if have {
			continue
		}
		o, ok := src.get(ctx, cur)
		if !ok {
			continue
		}
		g.put(o.typ, o.data)
		switch o.typ {
		case "commit":
			ci := parseCommit(o.data)
			stack = append(append(stack, ci.tree), ci.parents...)
		case "tree":
			for _, e := range parseTree(o.data) {
				if e.typ() != "commit" {
					stack = append(stack, e.sha)
				}
			}
		}
	}
}

// --- trees and commits ------------------------------------------------------

// treeItem is one entry of a tree object.
type treeItem struct {
	mode string // as git stores it: 100644, 100755, 120000, 40000, 160000
	name string
	sha  string
}

// apiMode is the mode as the API and ls-tree show it (040000 for trees).
func (e treeItem) apiMode() string {
	if e.mode == "40000" {
		return "040000"
	}
	return e.mode
}

func (e treeItem) typ() string {
	switch e.mode {
	case "40000":
		return "tree"
	case "160000":
		return "commit"
	}
	return "blob"
}

func parseTree(data []byte) []treeItem {
	var out []treeItem
	for len(data) > 0 {
		sp := bytes.IndexByte(data, ' ')
		nul := bytes.IndexByte(data, 0)
		if sp < 0 || nul < sp || len(data) < nul+21 {
			break
		}
		out = append(out, treeItem{mode: string(data[:sp]), name: string(data[sp+1 : nul]), sha: hex.EncodeToString(data[nul+1 : nul+21])})
		data = data[nul+21:]
	}
	return out
}

// putTree writes a tree object with its entries in git's order (a tree's
// name sorts as if it ended in "/").
func (g *gitStore) putTree(items []treeItem) string {
	key := func(e treeItem) string {
		if e.mode == "40000" {
			return e.name + "/"
		}
		return e.name
	}
	sort.Slice(items, func(i, j int) bool { return key(items[i]) < key(items[j]) })
	var b bytes.Buffer
	for _, e := range items {
		raw, _ := hex.DecodeString(e.sha)
		b.WriteString(e.mode + " " + e.name + "\x00")
		b.Write(raw)
	}
	return g.put("tree", b.Bytes())
}

// flatEntry is one file (or gitlink) of a flattened tree, like an index entry.
type flatEntry struct{ mode, sha string }

// flatten adds every non-tree entry under tree to out, keyed by path.
func (g *gitStore) flatten(ctx context.Context, tree, prefix string, out map[string]flatEntry) error {
	o, ok := g.get(ctx, tree)
	if !ok || o.typ != "tree" {
		return fmt.Errorf("tree %s: %w", tree, errNoObject)
	}
	for _, e := range parseTree(o.data) {
		p := prefix + e.name
		if e.mode == "40000" {
			if err := g.flatten(ctx, e.sha, p+"/", out); err != nil {
				return err
			}
			continue
		}
		out[p] = flatEntry{mode: e.mode, sha: e.sha}
	}
	return nil
}

// writeFlat writes the trees for a flattened tree and returns the root.
func (g *gitStore) writeFlat(files map[string]flatEntry) string {
	type dir struct {
		items []treeItem
		subs  map[string]*dir
	}
	root := &dir{subs: map[string]*dir{}}
	for p, e := range files {
		d := root
		parts := strings.Split(p, "/")
		for _, seg := range parts[:len(parts)-1] {
			sub := d.subs[seg]
			if sub == nil {
				sub = &dir{subs: map[string]*dir{}}
				d.subs[seg] = sub
			}
			d = sub
		}
		d.items = append(d.items, treeItem{mode: e.mode, name: parts[len(parts)-1], sha: e.sha})
	}
	var write func(d *dir) string
	write = func(d *dir) string {
		items := d.items
		for name, sub := range d.subs {
			items = append(items, treeItem{mode: "40000", name: name, sha: write(sub)})
		}
		return g.putTree(items)
	}
	return write(root)
}

// removeUnder drops p and everything below it.
func removeUnder(files map[string]flatEntry, p string) {
	delete(files, p)
	for k := range files {
		if strings.HasPrefix(k, p+"/") {
			delete(files, k)
		}
	}
}

// setFile puts a file at p, replacing a directory there or a file where one
// of its parent directories would be.
func setFile(files map[string]flatEntry, p string, e flatEntry) {
	removeUnder(files, p)
	for dir := pathDir(p); dir != ""; dir = pathDir(dir) {
		delete(files, dir)
	}
	files[p] = e
}

func pathDir(p string) string {
	i := strings.LastIndexByte(p, '/')
	if i < 0 {
		return ""
	}
	return p[:i]
}

// lookupPath finds p (slash-separated, "" = the tree itself) under tree.
func (g *gitStore) lookupPath(ctx context.Context, tree, p string) (treeItem, bool) {
	cur := treeItem{mode: "40000", sha: tree}
	if p == "" {
		return cur, true
	}
	for _, seg := range strings.Split(p, "/") {
		o, ok := g.get(ctx, cur.sha)
		if !ok || o.typ != "tree" {
			return treeItem{}, false
		}
		found := false
		for _, e := range parseTree(o.data) {
			if e.name == seg {
				cur, found = e, true
				break
			}
		}
		if !found {
			return treeItem{}, false
		}
	}
	return cur, true
}

// putCommit writes a commit object.
func (g *gitStore) putCommit(tree string, parents []string, msg string, author, committer signature) string {
	var b strings.Builder
	b.WriteString("tree " + tree + "\n")
	for _, p := range parents {
		b.WriteString("parent " + p + "\n")
	}
	fmt.Fprintf(&b, "author %s <%s> %d +0000\n", author.Name, author.Email, author.Date.Unix())
	fmt.Fprintf(&b, "committer %s <%s> %d +0000\n", committer.Name, committer.Email, committer.Date.Unix())
	b.WriteString("\n" + msg)
	return g.put("commit", []byte(b.String()))
}

// --- disk -------------------------------------------------------------------

// sync brings the bare repository on disk up to date with memory: it
// creates it if needed, writes the new objects as loose objects and the
// refs as loose ref files. Callers hold diskMu.
func (g *gitStore) sync() error {
	if g.parent != nil {
		g.parent.diskMu.Lock()
		err := g.parent.sync()
		g.parent.diskMu.Unlock()
		if err != nil {
			return err
		}
	}
	g.mu.Lock()
	onDisk := g.onDisk
	pending := g.unsynced
	g.unsynced = nil
	objs := make([]gitObject, len(pending))
	for i, sha := range pending {
		objs[i] = g.objs[sha]
	}
	refs := make(map[string]string, len(g.refs))
	for k, v := range g.refs {
		refs[k] = v
	}
	old := g.diskRefs
	g.mu.Unlock()

	fail := func(err error) error {
		g.mu.Lock()
		g.unsynced = append(g.unsynced, pending...)
		g.mu.Unlock()
		return fmt.Errorf("githubsim: write %s: %w", g.path, err)
	}
	if !onDisk {
		if err := g.initDisk(); err != nil {
			return fail(err)
		}
	}
	for i, sha := range pending {
		if err := g.writeLoose(sha, objs[i]); err != nil {
			return fail(err)
		}
	}
	for name, sha := range refs {
		if old[name] != sha {
			if err := writeFileAtomic(filepath.Join(g.path, filepath.FromSlash(name)), []byte(sha+"\n")); err != nil {
				return fail(err)
			}
		}
	}
	for name := range old {
		if _, ok := refs[name]; !ok {
			g.removeRefFile(name)
		}
	}
	g.mu.Lock()
	g.onDisk, g.diskRefs = true, refs
	g.mu.Unlock()
	return nil
}

// initDisk lays out an empty bare repository (what git init --bare makes),
// borrowing the parent's objects as a fork does.
func (g *gitStore) initDisk() error {
	for _, d := range []string{"objects/info", "objects/pack", "refs/heads", "refs/tags"} {
		if err := os.MkdirAll(filepath.Join(g.path, d), 0o755); err != nil {
			return err
		}
	}
	config := "[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = true\n" +
		"[http]\n\treceivepack = true\n[receive]\n\tautogc = false\n[gc]\n\tauto = 0\n"
	files := map[string]string{"HEAD": "ref: refs/heads/" + g.branch + "\n", "config": config}
	if g.parent != nil {
		files["objects/info/alternates"] = filepath.Join(g.parent.path, "objects") + "\n"
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(g.path, name), []byte(content), 0o644); err != nil {
			return err
		}
	}
	return nil
}

func (g *gitStore) writeLoose(sha string, o gitObject) error {
	p := filepath.Join(g.path, "objects", sha[:2], sha[2:])
	if _, err := os.Stat(p); err == nil {
		return nil
	}
	var b bytes.Buffer
	zw := zlibWriters.Get().(*zlib.Writer)
	defer zlibWriters.Put(zw)
	zw.Reset(&b)
	fmt.Fprintf(zw, "%s %d\x00", o.typ, len(o.data))
	_, _ = zw.Write(o.data)
	if err := zw.Close(); err != nil {
		return err
	}
	return writeFileAtomic(p, b.Bytes())
}

// zlibWriters keeps compressors between loose objects: a new one allocates
// and clears its tables (most of writeLoose's CPU for small objects);
// Reset reuses them and writes the same stream.
var zlibWriters = sync.Pool{New: func() any { return zlib.NewWriter(nil) }}

// removeRefFile deletes a loose ref and the directories it leaves empty.
func (g *gitStore) removeRefFile(name string) {
	p := filepath.Join(g.path, filepath.FromSlash(name))
	_ = os.Remove(p)
	stop := filepath.Join(g.path, "refs")
	for d := filepath.Dir(p); d != stop && strings.HasPrefix(d, stop); d = filepath.Dir(d) {
		if os.Remove(d) != nil {
			break
		}
	}
}

func writeFileAtomic(p string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(p), ".tmp-*")
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), p)
	}
	if err != nil {
		_ = os.Remove(f.Name())
	}
	return err
}

// readBack takes the refs a push changed on disk into memory. Callers hold
// diskMu and ran sync before the push.
func (g *gitStore) readBack(ctx context.Context) error {
	out, err := g.s.runGit(ctx, g.path, nil, nil, "for-each-ref", "--format=%(objectname) %(refname)")
	if err != nil {
		return err
	}
	now := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		sha, name, ok := strings.Cut(sc.Text(), " ")
		if ok {
			now[name] = sha
		}
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	for name, sha := range now {
		if g.diskRefs[name] != sha {
			g.refs[name] = sha
			if _, ok := g.objs[sha]; !ok {
				g.pushed = append(g.pushed, sha)
			}
		}
	}
	for name := range g.diskRefs {
		if _, ok := now[name]; !ok {
			delete(g.refs, name)
		}
	}
	g.diskRefs = now
	return nil
}

// inMemory says whether sha is in memory here or in the fork network.
func (g *gitStore) inMemory(sha string) bool {
	for ; g != nil; g = g.parent {
		g.mu.Lock()
		_, ok := g.objs[sha]
		g.mu.Unlock()
		if ok {
			return true
		}
	}
	return false
}

// loadPushed takes the objects the pushed tips reach, down to what memory
// holds, into memory through one git cat-file --batch, and reports whether
// there were tips to load. Reads after a push then cost no git process
// each; what it does not reach (or a failed load) is still read one object
// at a time by get.
func (g *gitStore) loadPushed(ctx context.Context) bool {
	g.pushedMu.Lock()
	defer g.pushedMu.Unlock()
	g.mu.Lock()
	todo := g.pushed
	g.pushed = nil
	g.mu.Unlock()
	if len(todo) == 0 {
		return false
	}
	ctx, cancel := context.WithTimeout(ctx, gitTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, g.s.gitBin, "cat-file", "--batch")
	cmd.Dir = g.path
	cmd.Env = append(append([]string{}, g.s.gitEnv...), "GIT_DIR="+g.path)
	in, err := cmd.StdinPipe()
	if err != nil {
		return true
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return true
	}
	if cmd.Start() != nil {
		return true
	}
	clean := false
	defer func() {
		_ = in.Close() // cat-file ends at the end of its input
		if !clean {
			cancel() // or it could be stuck writing an answer no one reads
		}
		_ = cmd.Wait()
	}()
	br := bufio.NewReader(out)
	seen := map[string]bool{}
	for len(todo) > 0 {
		sha := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		if seen[sha] || !isSHA(sha) || g.inMemory(sha) {
			continue
		}
		seen[sha] = true
		if _, err := io.WriteString(in, sha+"\n"); err != nil {
			return true
		}
		head, err := br.ReadString('\n')
		if err != nil {
			return true
		}
		f := strings.Fields(head)
		if len(f) != 3 || f[0] != sha {
			continue // "<sha> missing": beyond a shallow push, say
		}
		n, err := strconv.Atoi(f[2])
		if err != nil || n < 0 {
			return true
		}
		data := make([]byte, n+1)
		if _, err := io.ReadFull(br, data); err != nil {
			return true
		}
		o := gitObject{typ: f[1], data: data[:n:n]}
		g.mu.Lock()
		g.objs[sha] = o // already on disk: not unsynced
		g.mu.Unlock()
		switch o.typ {
		case "commit":
			ci := parseCommit(o.data)
			todo = append(append(todo, ci.parents...), ci.tree)
		case "tree":
			for _, e := range parseTree(o.data) {
				if e.mode != "160000" { // a submodule's commit is not in this repository
					todo = append(todo, e.sha)
				}
			}
		case "tag":
			target, _, _ := strings.Cut(strings.TrimPrefix(string(o.data), "object "), "\n")
			todo = append(todo, target)
		}
	}
	clean = true
	return true
}

// diff is `git diff base...head` (three dots), computed by git on disk once
// per pair.
func (g *gitStore) diff(ctx context.Context, base, head string) (string, error) {
	key := base + "..." + head
	g.mu.Lock()
	d, ok := g.diffs[key]
	g.mu.Unlock()
	if ok {
		return d, nil
	}
	g.diskMu.Lock()
	err := g.sync()
	g.diskMu.Unlock()
	if err != nil {
		return "", err
	}
	out, err := g.s.runGit(ctx, g.path, nil, nil, "diff", "--no-color", "--no-ext-diff", key)
	if err != nil {
		return "", err
	}
	g.mu.Lock()
	g.diffs[key] = string(out)
	g.mu.Unlock()
	return string(out), nil
}
