package policy

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Flags renders the effective policy as the !cfg flags that produce it,
// and those flags parse back to the same policy.
func TestPolicyFlagsRender(t *testing.T) {
	tests := []struct{ flags, want string }{
		{"issue-limit=1", "issue-limit=1 pr-limit=1 comment-limit=3"},
		{"here-only", "here-only issue-limit=0 pr-limit=0 comment-limit=3"},
		{"comment-only comment-limit=9", "comment-only issue-limit=0 pr-limit=0 comment-limit=3"},
		{"repo=a/b deny=c/d comment-limit=1 no-pr", "repo=a/b deny=c/d issue-limit=1 pr-limit=0 comment-limit=1"},
	}
	for _, tt := range tests {
		t.Run(tt.flags, func(t *testing.T) {
			p := effectiveOf(t, tt.flags)
			assert.Equal(t, tt.want, p.Flags())
			again := effectiveOf(t, p.Flags())
			assert.Equal(t, p.Flags(), again.Flags())
		})
	}
}

func effectiveOf(t *testing.T, flags string) Policy {
	t.Helper()
	f, err := ParseFlags(strings.Fields(flags))
	require.NoError(t, err)
	return Effective(f, DefaultCeilings(), Thread{Repo: "a/b", Number: 1}, nil)
}
