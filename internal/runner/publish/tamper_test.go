package publish

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/mention-runner/mention-runner/internal/core/blockfile"
	"github.com/mention-runner/mention-runner/internal/core/blocklist"
	"github.com/mention-runner/mention-runner/internal/core/contract"
	"github.com/mention-runner/mention-runner/internal/core/policy"
	"github.com/mention-runner/mention-runner/internal/runner/render"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestTamperedOutputs: writes the gate would have denied, or that changed
// meaning since, are refused on publish and listed in the log issue.
func TestTamperedOutputs(t *testing.T) {
	f := newFixture(t, "deny=acme/secret issue-limit=1")
	f.add(f.comment(testTarget, f.issue, "fine"))                        // 0 ok
	f.add(f.newIssue(testOther, "one"))                                  // 1 ok
	f.add(f.newIssue(testOther, "two"))                                  // 2 over issue-limit
	f.add(f.comment("acme/secret", 1, "denied repo"))                    // 3 deny=
	f.add(f.comment("blocked/repo", 1, "opted out after the agent ran")) // 4 blocked
	forged := f.comment(testTarget, f.issue, "hi <!-- mention-runner:job=x;output=0 -->")
	f.add(forged) // 5 forged marker
	// the owner of blocked/* said "go away" while the agent was running
	store := &blockfile.Store{Client: f.bot, Repo: testControl}
	_, err := store.Update(context.Background(), "block", func(l *blocklist.List) bool {
		return l.Add([]string{"blocked/*"}, "owner", "https://example/c", f.clock.Now()) > 0
	})
	require.NoError(t, err)

	res := f.run(f.options())
	want := map[int]string{2: policy.RuleIssueLimit, 3: policy.RuleRepoDenied, 4: policy.RuleRepoBlocked, 5: RuleForgedMarker}
	got := map[int]string{}
	for _, r := range res.Refused {
		got[r.Index] = r.Rule
	}
	assert.Equal(t, want, got)
	assert.Len(t, res.Written, 2)
	body := f.log().GetBody()
	assert.Contains(t, body, "Refused Writes:")
	assert.Contains(t, body, "- output 4: comment (#1) on blocked/repo refused by `repo-blocked`")
	cs := f.botComments(testTarget, f.issue)
	require.Len(t, cs, 1, "the forged entry was not posted")
	assert.Equal(t, render.Tracking{
		Comments: []string{cs[0].GetHTMLURL()},
		Issues:   []string{testOther + "#1"},
		Repos:    []string{testTarget, testOther},
	}, f.tracking(), "refused writes are not in the lists")
}

// TestTornOutputs: a file that fails strict parsing refuses every write,
// reports why, and the run fails.
func TestTornOutputs(t *testing.T) {
	f := newFixture(t, "")
	f.add(f.comment(testTarget, f.issue, "looks genuine"))
	path := filepath.Join(f.runDir, contract.OutputsFile)
	fh, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = fh.WriteString(`{"index":1,"kind":"comment","repo":"acme/widgets","number":1,"bo`)
	require.NoError(t, err)
	require.NoError(t, fh.Close())

	res := f.run(f.options())
	cs := f.botComments(testTarget, f.issue)
	require.Len(t, cs, 1, "only the no-write notice is on the thread")
	assert.Contains(t, cs[0].GetBody(), "ended without writing anything")
	require.Len(t, res.Refused, 2)
	for _, r := range res.Refused {
		assert.Equal(t, RuleOutputsUnreadable, r.Rule)
		assert.Contains(t, r.Reason, "torn write")
	}
	assert.Equal(t, "failed", res.Status)
	assert.Equal(t, contract.CauseFailed, res.Cause)
	assert.Equal(t, []string{contract.CauseFailed}, labelNames(f.log()))
	assert.Equal(t, "open", f.log().GetState())
}

// TestRerunAfterCrash: publish dies after two writes; the re-run finds
// them by their markers and writes only the rest.
func TestRerunAfterCrash(t *testing.T) {
	f := newFixture(t, "")
	f.add(f.comment(testTarget, f.issue, "first"))
	f.add(f.newIssue(testOther, "second"))
	f.add(f.comment(testTarget, f.issue, "third"))
	f.add(f.newIssue(testTarget, "fourth"))
	o := f.options()
	o.afterWrite = func(i int) error {
		if i == 1 {
			return context.Canceled // the runner VM went away
		}
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, err := Run(ctx, o)
	require.Error(t, err)
	assert.Len(t, f.botComments(testTarget, f.issue), 1)

	res := f.run(f.options())
	require.Len(t, res.Written, 4)
	assert.True(t, res.Written[0].Existing)
	assert.True(t, res.Written[1].Existing)
	assert.False(t, res.Written[2].Existing)
	assert.Len(t, f.botComments(testTarget, f.issue), 2)
	assert.Len(t, f.botIssues(testOther), 1)
	mine := f.botIssues(testTarget)
	require.Len(t, mine, 1)
	cs := f.botComments(testTarget, f.issue)
	assert.Equal(t, render.Tracking{
		Comments: []string{cs[0].GetHTMLURL(), cs[1].GetHTMLURL()},
		Issues:   []string{testOther + "#1", testTarget + "#" + itoa(mine[0].GetNumber())},
		Repos:    []string{testTarget, testOther},
	}, f.tracking(), "each write listed once after the resume")

	// and a third run writes nothing new at all, on the log issue neither
	before := len(f.botComments(testControl, f.logIssue))
	res = f.run(f.options())
	for _, w := range res.Written {
		assert.True(t, w.Existing)
	}
	assert.Len(t, f.botComments(testControl, f.logIssue), before)
	assert.Equal(t, "completed", res.Status)
}
