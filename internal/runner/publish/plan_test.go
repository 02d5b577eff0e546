package publish

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/core/contract"
	"github.com/mention-runner/mention-runner/internal/core/policy"
	"github.com/mention-runner/mention-runner/internal/runner/outputs"
)

func TestPlannedWrites(t *testing.T) {
	comment := outputs.Entry{Kind: policy.KindComment, Repo: "o/r", Number: 1, Body: "hi"}
	cases := []struct {
		name    string
		entries []outputs.Entry
		noFile  bool
		want    int
	}{
		{"one comment: the answer, no reaction", []outputs.Entry{comment}, false, 1},
		{"two comments", []outputs.Entry{comment, comment}, false, 2},
		{"a review: no reaction", []outputs.Entry{{Kind: policy.KindReview, Repo: "o/r", Number: 1, Body: "ok"}}, false, 1},
		{"nothing queued: a notice and the reaction", nil, false, 2},
		{"a noop: a notice and the reaction", []outputs.Entry{{Kind: outputs.KindNoop, Reason: "nothing to do"}}, false, 2},
		{"labels removed one by one", []outputs.Entry{{Kind: policy.KindLabels, Repo: "o/r", Number: 1, Labels: []string{"a", "b", "c"}, Remove: true}}, false, 4},
		{"labels added at once", []outputs.Entry{{Kind: policy.KindLabels, Repo: "o/r", Number: 1, Labels: []string{"a", "b"}}}, false, 2},
		{"many: capped", []outputs.Entry{comment, comment, comment, comment, comment, comment, comment, comment, comment}, false, 8},
		{"no outputs file: the default grant", nil, true, 8},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if !tc.noFile {
				q, err := outputs.OpenQueue(filepath.Join(dir, contract.OutputsFile))
				require.NoError(t, err)
				for _, e := range tc.entries {
					_, err := q.Append(e)
					require.NoError(t, err)
				}
				if len(tc.entries) == 0 {
					require.NoError(t, os.WriteFile(filepath.Join(dir, contract.OutputsFile), nil, 0o644))
				}
			}
			assert.Equal(t, tc.want, PlannedWrites(dir, false))
			assert.Equal(t, min(tc.want+controlWrites, maxPlannedBlock), PlannedWrites(dir, true), "the bot writes CONTROL too")
		})
	}
}
