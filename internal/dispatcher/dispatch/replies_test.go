package dispatch

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/core/policy"
	"github.com/mention-runner/mention-runner/internal/dispatcher/webhook"
	"github.com/mention-runner/mention-runner/internal/testrig/golden"
)

func TestReplyGolden(t *testing.T) {
	tr := &Trigger{Trigger: webhook.Trigger{Author: "alice", CommentID: 42, NodeID: "IC_42"}}
	_, ferr := policy.ParseFlags([]string{"comment-onyl```"})
	require.Error(t, ferr)
	cases := map[string]string{
		"cfg.md":       cfgReply(tr, "mrbot", ferr, policy.ValidFlagsHelp()),
		"ratelimit.md": rateReply(tr, 10, time.Date(2024, 5, 1, 13, 5, 0, 0, time.UTC)),
		"goaway.md":    goAwayReply(tr, "mrbot", []string{"alice/*", "acme/tool"}),
		"comeback.md":  comeBackReply(tr, 2, []string{"alice/*", "acme/tool"}),
		"comeback0.md": comeBackReply(tr, 0, []string{"alice/*"}),
	}
	for name, got := range cases {
		t.Run(name, func(t *testing.T) {
			golden.CheckString(t, filepath.Join("testdata", name), got)
			assert.NotContains(t, strings.ReplaceAll(got, "`@mrbot", ""), "@mrbot", "the bot never mentions itself outside code")
		})
	}
}

func TestFencedQuotesAnyBackticks(t *testing.T) {
	for _, s := range []string{"plain", "a ``` b", "````"} {
		f := fenced(s)
		fence := f[:strings.Index(f, "text")]
		assert.NotContains(t, s, fence)
	}
}
