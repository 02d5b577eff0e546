package repofile

import (
	"context"
	"testing"

	"github.com/google/go-github/v62/github"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/testrig/githubsim"

	"github.com/mention-runner/mention-runner/internal/testrig/simfixture"
)

func newFile(t *testing.T) File {
	t.Helper()
	sim, _ := simfixture.Start(t, githubsim.Options{Seed: 1})
	simfixture.Writer(t, sim, "acme/control", "bot", "tok", true)
	return File{Client: sim.Client("tok"), Repo: "acme/control", Path: "state/x.json"}
}

func TestReadWrite(t *testing.T) {
	f := newFile(t)
	ctx := context.Background()
	var v map[string]int
	sha, err := f.Read(ctx, &v)
	require.NoError(t, err)
	assert.Empty(t, sha, "missing file")
	assert.Nil(t, v)

	sha1, err := f.Write(ctx, "create", map[string]int{"a": 1}, "")
	require.NoError(t, err)
	require.NotEmpty(t, sha1)

	_, err = f.Write(ctx, "create again", map[string]int{"a": 2}, "")
	assert.ErrorIs(t, err, ErrConflict, "creating over an existing file conflicts")

	sha2, err := f.Write(ctx, "update", map[string]int{"a": 3}, sha1)
	require.NoError(t, err)
	_, err = f.Write(ctx, "stale", map[string]int{"a": 4}, sha1)
	assert.ErrorIs(t, err, ErrConflict, "a stale sha conflicts")

	got, err := f.Read(ctx, &v)
	require.NoError(t, err)
	assert.Equal(t, sha2, got)
	assert.Equal(t, map[string]int{"a": 3}, v)
}

func TestBadInput(t *testing.T) {
	f := newFile(t)
	ctx := context.Background()
	_, _, err := f.Client.Repositories.CreateFile(ctx, "acme", "control", f.Path, &github.RepositoryContentFileOptions{Message: github.String("x"), Content: []byte("{oops")})
	require.NoError(t, err)
	var v map[string]any
	_, err = f.Read(ctx, &v)
	assert.ErrorContains(t, err, "not valid JSON")

	bad := File{Client: f.Client, Repo: "nope", Path: "x"}
	_, err = bad.Read(ctx, &v)
	assert.ErrorContains(t, err, "not owner/name")
	_, err = bad.Write(ctx, "m", v, "")
	assert.ErrorContains(t, err, "not owner/name")
}

// A state file that exists but says null, nothing, or something of
// another shape stops the reader with the file's name and the fix: read
// as "no entries" it would lift opt-outs or rate limits.
func TestFailClosedOnEmptyOrWrongShape(t *testing.T) {
	type state struct {
		Runs []string `json:"runs"`
	}
	for _, tc := range []struct{ content, want string }{
		{"null", "is null"},
		{"  \n", "is empty"},
		{"[]", "not a JSON object"},
		{`"x"`, "not a JSON object"},
		{`{"runz": []}`, "expected shape"},
		{`{"runs": 3}`, "expected shape"},
	} {
		t.Run(tc.content, func(t *testing.T) {
			f := newFile(t)
			ctx := context.Background()
			_, _, err := f.Client.Repositories.CreateFile(ctx, "acme", "control", f.Path, &github.RepositoryContentFileOptions{Message: github.String("x"), Content: []byte(tc.content)})
			require.NoError(t, err)
			var v state
			_, err = f.Read(ctx, &v)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			assert.Contains(t, err.Error(), f.Path)
			assert.Contains(t, err.Error(), "delete the file")
		})
	}
}
