// Package refpush sets git refs of a repository, with the commits they
// point at, in one request: a git push over smart HTTP (receive-pack)
// carrying the new commits and the ref updates. Each update names the
// value the ref must have now (none, for a create), and the server applies
// it only if so: a compare-and-swap, which the REST API offers for a
// create but not for an update, and one write where the REST API takes
// two (POST git/commits, then the ref).
//
// Commits are made here, byte for byte, so their ids are known before the
// request: after a lost answer a caller reads the ref and knows whether it
// holds its own commit.
//
// A client made by ForAPI falls back to the REST API, for the rest of the
// process, when the server refuses a push as such (no right to push, a
// rule against it): the state is written as it was before pushes, at two
// writes a state, rather than not at all.
package refpush

import (
	"bytes"
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"time"
)

// EmptyTree is git's empty tree, the tree of every commit made here unless
// it names another.
const EmptyTree = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"

// zeroID is git's "no object": the old value of a create, the new value of
// a delete.
const zeroID = "0000000000000000000000000000000000000000"

// Signature is a commit's author and committer.
type Signature struct {
	Name, Email string
	At          time.Time // kept to the second, in UTC
}

// Commit is a commit to make: its tree (EmptyTree when empty), parents,
// signature and message, exactly as git stores them.
type Commit struct {
	Tree    string
	Parents []string
	Sig     Signature
	Message string
}

// Encode is the commit object's content, canonical as git writes it.
func (c Commit) Encode() []byte {
	tree := c.Tree
	if tree == "" {
		tree = EmptyTree
	}
	var b bytes.Buffer
	b.WriteString("tree " + tree + "\n")
	for _, p := range c.Parents {
		b.WriteString("parent " + p + "\n")
	}
	sig := fmt.Sprintf("%s <%s> %d +0000\n", c.Sig.Name, c.Sig.Email, c.Sig.At.Unix())
	b.WriteString("author " + sig + "committer " + sig + "\n" + c.Message)
	return b.Bytes()
}

// SHA is the commit's object id.
func (c Commit) SHA() string { return objectID("commit", c.Encode()) }

// Object is a blob or a tree to send with a push, its content exactly as
// git stores it: what a commit of the push names and the repository may
// lack.
type Object struct {
	Tree bool // a tree; else a blob
	Data []byte
}

// Blob is a blob holding data.
func Blob(data []byte) Object { return Object{Data: data} }

// TreeEntry is one file of a tree: a blob with mode 100644.
type TreeEntry struct {
	Name, Blob string // Blob: the blob's object id
}

// Tree is a tree of files (no directories), its entries sorted by name as
// git requires.
func Tree(entries ...TreeEntry) (Object, error) {
	sorted := slices.Clone(entries)
	slices.SortFunc(sorted, func(a, b TreeEntry) int { return strings.Compare(a.Name, b.Name) })
	var b bytes.Buffer
	for i, e := range sorted {
		raw, err := hex.DecodeString(e.Blob)
		if err != nil || !isID(e.Blob) || e.Name == "" || strings.ContainsAny(e.Name, "/\x00") ||
			(i > 0 && sorted[i-1].Name == e.Name) {
			return Object{}, fmt.Errorf("refpush: tree entry %q → %q: want a distinct file name and a blob id", e.Name, e.Blob)
		}
		b.WriteString("100644 " + e.Name + "\x00")
		b.Write(raw)
	}
	return Object{Tree: true, Data: b.Bytes()}, nil
}

// SHA is the object's id.
func (o Object) SHA() string { return objectID(o.typeName(), o.Data) }

func (o Object) typeName() string {
	if o.Tree {
		return "tree"
	}
	return "blob"
}

func objectID(typ string, data []byte) string {
	h := sha1.New()
	fmt.Fprintf(h, "%s %d\x00", typ, len(data))
	h.Write(data)
	return hex.EncodeToString(h.Sum(nil))
}

// validate refuses what git would refuse or store differently than
// Encode says: a name, e-mail or id that breaks the header lines.
func (c Commit) validate() error {
	for _, id := range append([]string{c.Tree}, c.Parents...) {
		if id != "" && !isID(id) {
			return fmt.Errorf("refpush: %q is not an object id: %w", id, ErrInvalid)
		}
	}
	if strings.ContainsAny(c.Sig.Name, "<>\n") || strings.ContainsAny(c.Sig.Email, "<>\n") {
		return fmt.Errorf("refpush: signature %q <%s> holds <, > or a newline: %w", c.Sig.Name, c.Sig.Email, ErrInvalid)
	}
	return nil
}

func isID(s string) bool {
	if len(s) != 40 {
		return false
	}
	for _, r := range s {
		if (r < '0' || r > '9') && (r < 'a' || r > 'f') {
			return false
		}
	}
	return true
}
