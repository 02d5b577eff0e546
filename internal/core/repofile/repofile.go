// Package repofile reads and writes a JSON file in a repository through the
// contents API, guarded by the file's blob sha (optimistic concurrency).
// The opt-out list and the dispatcher's rate-limit state both live in the
// control repo this way.
package repofile

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/google/go-github/v62/github"
)

// ErrConflict means the file changed since it was read: read again, merge,
// and write with the new sha.
var ErrConflict = errors.New("the file changed since it was read")

// File is one JSON file in a repository.
type File struct {
	Client *github.Client
	Repo   string // owner/name
	Path   string
}

func (f File) split() (string, string, error) {
	owner, name, ok := strings.Cut(f.Repo, "/")
	if !ok || owner == "" || name == "" || strings.Contains(name, "/") {
		return "", "", fmt.Errorf("repo %q is not owner/name", f.Repo)
	}
	return owner, name, nil
}

// Read decodes the file into v and returns its sha. A missing file leaves v
// untouched and returns sha "". A file that is not valid JSON is an error:
// callers keep security state here and must not read garbage as empty.
func (f File) Read(ctx context.Context, v any) (string, error) {
	owner, name, err := f.split()
	if err != nil {
		return "", err
	}
	fc, _, resp, err := f.Client.Repositories.GetContents(ctx, owner, name, f.Path, nil)
	if err != nil {
		if resp != nil && resp.StatusCode == http.StatusNotFound {
			return "", nil
		}
		return "", fmt.Errorf("read %s from %s: %w", f.Path, f.Repo, err)
	}
	if fc == nil {
		return "", fmt.Errorf("%s in %s is a directory", f.Path, f.Repo)
	}
	raw, err := fc.GetContent()
	if err != nil {
		return "", fmt.Errorf("decode %s from %s: %w", f.Path, f.Repo, err)
	}
	// A state file that exists must say something: null, empty or another
	// shape would silently read as "no entries" (no opt-outs, no rate
	// limit), so it stops the caller instead.
	trimmed := strings.TrimSpace(raw)
	switch {
	case trimmed == "" || trimmed == "null":
		what := "empty"
		if trimmed == "null" {
			what = "null"
		}
		return "", fmt.Errorf("%s in %s is %s: it must be a JSON object; fix it, or delete the file to start with no entries", f.Path, f.Repo, what)
	case !json.Valid([]byte(trimmed)):
		return "", fmt.Errorf("%s in %s is not valid JSON (fix or delete it)", f.Path, f.Repo)
	case !strings.HasPrefix(trimmed, "{"):
		return "", fmt.Errorf("%s in %s is not a JSON object: fix it, or delete the file to start with no entries", f.Path, f.Repo)
	}
	dec := json.NewDecoder(strings.NewReader(trimmed))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return "", fmt.Errorf("%s in %s does not have the expected shape (%v): fix it, or delete the file to start with no entries", f.Path, f.Repo, err)
	}
	return fc.GetSHA(), nil
}

// Write stores v (indented JSON) as the file's new content, provided the
// file is still at sha ("" = it must not exist yet), and returns the new
// sha. ErrConflict (wrapped) when another writer got there first.
func (f File) Write(ctx context.Context, message string, v any, sha string) (string, error) {
	owner, name, err := f.split()
	if err != nil {
		return "", err
	}
	body, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return "", fmt.Errorf("encode %s: %w", f.Path, err)
	}
	opts := &github.RepositoryContentFileOptions{Message: github.String(message), Content: append(body, '\n')}
	if sha != "" {
		opts.SHA = github.String(sha)
	}
	res, resp, err := f.Client.Repositories.UpdateFile(ctx, owner, name, f.Path, opts)
	if err != nil {
		if resp != nil && (resp.StatusCode == http.StatusConflict || resp.StatusCode == http.StatusUnprocessableEntity) {
			return "", fmt.Errorf("write %s to %s: %w", f.Path, f.Repo, ErrConflict)
		}
		return "", fmt.Errorf("write %s to %s: %w", f.Path, f.Repo, err)
	}
	return res.GetContent().GetSHA(), nil
}
