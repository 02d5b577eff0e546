package refstate_test

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-github/v62/github"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/core/contract"
	"github.com/mention-runner/mention-runner/internal/core/refstate"
)

// A ref at a write-budget ledger commit reads as GrantStatus by the
// state's holder, dated by the commit (a dispatcher's claim on its grant's
// commit); a ledger commit without a holder is no state.
func TestGrantCommitReadsAsClaim(t *testing.T) {
	for _, tc := range []struct {
		name, msg, holder string
		corrupt           bool
	}{
		{"grant", contract.PaceMessagePrefix + `{"grants":[{"at_ms":1,"n":3,"by":"x"}],"pause_until_ms":0,"holder":"dispatcher-1"}`, "dispatcher-1", false},
		{"newline in holder", contract.PaceMessagePrefix + `{"holder":"a\nb"}`, "a b", false},
		{"no holder", contract.PaceMessagePrefix + `{"grants":[]}`, "", true},
		{"not json", contract.PaceMessagePrefix + `holder: x`, "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, _, clk := newStore(t)
			ctx := ctxT(t)
			at := clk.Now().Add(-time.Minute).Truncate(time.Second)
			sig := &github.CommitAuthor{Name: github.String("m"), Email: github.String("m@x"), Date: &github.Timestamp{Time: at}}
			c, _, err := st.Client.Git.CreateCommit(ctx, "ops", "control", &github.Commit{Message: github.String(tc.msg),
				Tree: &github.Tree{SHA: github.String(refstate.EmptyTree)}, Author: sig, Committer: sig}, nil)
			require.NoError(t, err)
			_, _, err = st.Client.Git.CreateRef(ctx, "ops", "control", &github.Reference{Ref: github.String(ref), Object: &github.GitObject{SHA: c.SHA}})
			require.NoError(t, err)
			m, err := st.Read(ctx, ref)
			if tc.corrupt {
				var ce *refstate.CorruptError
				require.True(t, errors.As(err, &ce), "%v", err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, refstate.Mark{Commit: c.GetSHA(), Status: refstate.GrantStatus, Holder: tc.holder, At: at}, *m)
		})
	}
}
