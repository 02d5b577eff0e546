package policy

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/testrig/golden"
)

func TestWordsGolden(t *testing.T) {
	tests := []struct {
		name    string
		line    string
		blocker Blocker
	}{
		{"defaults", "issue-limit=1000", nil},
		{"here_only", "comment-only here-only", fakeBlocker{}},
		{"comment_only", "comment-only deny=Foo/Secret comment-limit=1", nil},
		{"repos", "repo=foo/bar repo=foo/baz pr-limit=0 issue-limit=2", fakeBlocker{}},
		{"one_repo_nothing", "repo=foo/bar no-issue no-pr comment-limit=0", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := mustPolicy(t, tt.line, Ceilings{CommentLimit: 3, IssueLimit: 3, PRLimit: 1, MaxWrites: 10}, tt.blocker)
			golden.CheckString(t, filepath.Join("testdata", "golden", "words_"+tt.name+".golden"), p.Words()+"\n")
		})
	}
}

func TestValidFlagsHelpGolden(t *testing.T) {
	golden.CheckString(t, filepath.Join("testdata", "golden", "help"+".golden"), ValidFlagsHelp())
}

// The messages the bot replies with, one per bad !cfg line.
func TestFlagErrorsGolden(t *testing.T) {
	var b strings.Builder
	for _, line := range []string{"", "comment-onyl", "nope", "repo=", "repo=foo", "issue-limit=x", "issue-limit=01",
		"comment-only=1", "pr-limit=1001", "repo=-foo/bar", "deny=foo/.."} {
		_, err := ParseFlagLine(line)
		require.Error(t, err)
		b.WriteString("!cfg " + line + "\n  " + err.Error() + "\n")
	}
	golden.CheckString(t, filepath.Join("testdata", "golden", "flag_errors"+".golden"), b.String())
}
