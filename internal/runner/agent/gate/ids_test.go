package gate

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/mention-runner/mention-runner/internal/core/blocklist"
	"github.com/mention-runner/mention-runner/internal/core/contract"
	"github.com/mention-runner/mention-runner/internal/core/policy"
)

// TestGateMatchesIDs: with the ids assemble resolved, the gate denies a
// write to a renamed repository whose old name is blocked or named in
// deny=, as publish does.
func TestGateMatchesIDs(t *testing.T) {
	c := withFlags(t, baseConfig(t), "deny=octo/was")
	c.Blocklist = &blocklist.List{Entries: []blocklist.Entry{{Pattern: "octo/before", ID: 70, By: "octo"}}}
	c.RepoIDs = policy.IDs{
		"octo/app":   {Repo: 70, Owner: 5}, // the thread's repository, once "octo/before"
		"octo/other": {Repo: 71, Owner: 5}, // renamed from octo/was
		"octo/was":   {Repo: 71, Owner: 5}, // deny=octo/was, resolved through GitHub's redirect
	}
	cs := connect(t, c)
	for repo, why := range map[string]string{
		"octo/app":   `blocked by the opt-out entry "octo/before" (same repository or owner id`,
		"octo/other": "deny=octo/was forbids writing to octo/other (the same repository under another name)",
	} {
		text, isErr := call(t, cs, contract.ToolAddComment, map[string]any{"repo": repo, "number": 7, "body": "hi"})
		assert.True(t, isErr, text)
		assert.Contains(t, text, why)
	}
	assert.Empty(t, readOutputs(t, c))
}
