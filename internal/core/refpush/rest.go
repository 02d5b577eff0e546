package refpush

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/google/go-github/v62/github"
)

// pushesRefused says the server refused a push as such (no right to push,
// no push over HTTP, a rule against it): not a rate limit's wait, not a
// lost answer, not a refused update.
func pushesRefused(err error) bool {
	var ae *AnswerError
	if !errors.As(err, &ae) || ae.RetryAfter > 0 {
		return false
	}
	switch ae.Status {
	case http.StatusUnauthorized, http.StatusForbidden, http.StatusNotFound, http.StatusMethodNotAllowed,
		http.StatusGone, http.StatusUnsupportedMediaType, http.StatusNotImplemented:
		return true
	}
	return false
}

// viaREST writes a push's objects and updates through the REST API, as
// the state writes did before pushes: each object a request; a create
// refused when the ref exists; an update to a commit made here on top of
// the ref's old value not forced (GitHub then refuses it unless the ref is
// still there: a compare-and-swap of that parent), any other forced; a
// delete whatever the ref holds. Results as PushObjects'.
func (c *Client) viaREST(ctx context.Context, owner, name string, objects []Object, commits []Commit, updates []Update) ([]error, error) {
	gh := c.rest
	for _, o := range objects {
		var got string
		if o.Tree {
			entries, err := treeEntries(o.Data)
			if err != nil {
				return nil, err
			}
			t, _, err := gh.Git.CreateTree(ctx, owner, name, "", entries)
			if err != nil {
				return nil, fmt.Errorf("refpush: create a tree in %s/%s: %w", owner, name, err)
			}
			got = t.GetSHA()
		} else {
			b, _, err := gh.Git.CreateBlob(ctx, owner, name, &github.Blob{Content: github.String(base64.StdEncoding.EncodeToString(o.Data)), Encoding: github.String("base64")})
			if err != nil {
				return nil, fmt.Errorf("refpush: create a blob in %s/%s: %w", owner, name, err)
			}
			got = b.GetSHA()
		}
		if got != o.SHA() {
			return nil, fmt.Errorf("refpush: %s/%s stored %s %s where %s was sent", owner, name, o.typeName(), got, o.SHA())
		}
	}
	parentOf := map[string]string{}
	for _, cm := range commits {
		sig := &github.CommitAuthor{Name: github.String(cm.Sig.Name), Email: github.String(cm.Sig.Email), Date: &github.Timestamp{Time: cm.Sig.At}}
		tree := cm.Tree
		if tree == "" {
			tree = EmptyTree
		}
		rc := &github.Commit{Message: github.String(cm.Message), Tree: &github.Tree{SHA: github.String(tree)}, Author: sig, Committer: sig}
		for _, p := range cm.Parents {
			rc.Parents = append(rc.Parents, &github.Commit{SHA: github.String(p)})
		}
		got, _, err := gh.Git.CreateCommit(ctx, owner, name, rc, nil)
		if err != nil {
			return nil, fmt.Errorf("refpush: create a commit in %s/%s: %w", owner, name, err)
		}
		if got.GetSHA() != cm.SHA() {
			return nil, fmt.Errorf("refpush: %s/%s made commit %s where %s was sent", owner, name, got.GetSHA(), cm.SHA())
		}
		if len(cm.Parents) > 0 {
			parentOf[cm.SHA()] = cm.Parents[0]
		}
	}
	out := make([]error, len(updates))
	for i, up := range updates {
		ref := &github.Reference{Ref: github.String(up.Ref), Object: &github.GitObject{SHA: github.String(up.New)}}
		var err error
		switch {
		case up.Old == "":
			_, _, err = gh.Git.CreateRef(ctx, owner, name, ref)
		case up.New == "":
			_, err = gh.Git.DeleteRef(ctx, owner, name, strings.TrimPrefix(up.Ref, "refs/"))
		default:
			_, _, err = gh.Git.UpdateRef(ctx, owner, name, ref, parentOf[up.New] != up.Old)
		}
		var ge *github.ErrorResponse
		switch {
		case err == nil:
		case errors.As(err, &ge) && ge.Response != nil && (ge.Response.StatusCode == http.StatusUnprocessableEntity || ge.Response.StatusCode == http.StatusNotFound):
			out[i] = &RejectedError{Ref: up.Ref, Reason: ge.Message}
		default:
			// the updates before it are applied, this one perhaps: the
			// caller reads them back
			return nil, fmt.Errorf("refpush: update %s in %s/%s: %w", up.Ref, owner, name, err)
		}
	}
	return out, nil
}

// treeEntries reads back a tree Tree made: "100644 NAME\0" and the blob's
// 20-byte id, for each file.
func treeEntries(data []byte) ([]*github.TreeEntry, error) {
	var out []*github.TreeEntry
	for len(data) > 0 {
		head, rest, ok := bytes.Cut(data, []byte{0})
		mode, fname, okSp := strings.Cut(string(head), " ")
		if !ok || !okSp || len(rest) < 20 {
			return nil, errors.New("refpush: a tree that Tree did not make")
		}
		out = append(out, &github.TreeEntry{Path: github.String(fname), Mode: github.String(mode), Type: github.String("blob"),
			SHA: github.String(hex.EncodeToString(rest[:20]))})
		data = rest[20:]
	}
	return out, nil
}
