package agent

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/core/policy"
)

// TestLoadRepoIDs: the gate gets the deny= ids assemble resolved plus the
// thread's repository ids from the context; a missing file is no ids, a
// malformed one stops the run.
func TestLoadRepoIDs(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "repo-ids.json")
	ctx := []byte(`{"repository":{"full_name":"Octo/App","id":70,"owner":{"id":5}}}`)

	ids, err := LoadRepoIDs(path, ctx)
	require.NoError(t, err)
	assert.Equal(t, policy.IDs{"octo/app": {Repo: 70, Owner: 5}}, ids)

	require.NoError(t, os.WriteFile(path, []byte(`{"octo/was":{"repo":71,"owner":5}}`), 0o644))
	ids, err = LoadRepoIDs(path, ctx)
	require.NoError(t, err)
	assert.Equal(t, policy.IDs{"octo/app": {Repo: 70, Owner: 5}, "octo/was": {Repo: 71, Owner: 5}}, ids)

	require.NoError(t, os.WriteFile(path, []byte(`{"octo/was":{"repo":71,"oops":1}}`), 0o644))
	_, err = LoadRepoIDs(path, ctx)
	assert.Error(t, err)
}
