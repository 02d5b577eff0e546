package mention

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestTask(t *testing.T) {
	tests := []struct {
		name, body, want string
	}{
		{"plain task is whole body", "  @bot please fix #12\nthanks  ", "@bot please fix #12\nthanks"},
		{"cfg line removed", "@bot !cfg comment-only here-only\nSummarise this thread.", "Summarise this thread."},
		{"cfg spec 2", "@bot !cfg repo=foo/bar pr-limit=0\r\n\r\nFix the flaky test.\r\n", "Fix the flaky test."},
		{"cfg mid-line keeps prefix", "Hey team,\nplease @bot !cfg no-pr\nlook at the logs", "Hey team,\nplease\nlook at the logs"},
		{"cfg only", "@bot !cfg no-pr", ""},
		{"cfg no flags", "@bot !cfg\ndo it", "do it"},
		{"cfg after code", "```\n@bot !cfg x\n```\n@bot !cfg no-pr\ndo it", "```\n@bot !cfg x\n```\n\ndo it"},
		{"go away", "@bot go away", ""},
		{"come back", "@bot come back please", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ms := Find(tt.body, "bot")
			require.NotEmpty(t, ms)
			// The last mention is the interesting one in "cfg after code".
			assert.Equal(t, tt.want, Task(tt.body, ms[len(ms)-1]))
		})
	}
}

func TestTaskBadMention(t *testing.T) {
	body := "  @bot !cfg no-pr\nx "
	tests := []struct {
		name string
		m    Mention
		want string
	}{
		{"offset past end", Mention{Command: CommandTask, HasCfg: true, Offset: 99}, "@bot !cfg no-pr\nx"},
		{"negative offset", Mention{Command: CommandTask, HasCfg: true, Offset: -1}, "@bot !cfg no-pr\nx"},
		{"offset not at @", Mention{Command: CommandTask, HasCfg: true, Offset: 0}, "@bot !cfg no-pr\nx"},
		{"unknown command is a task", Mention{Command: "", Offset: 2}, "@bot !cfg no-pr\nx"},
		{"zero mention", Mention{}, "@bot !cfg no-pr\nx"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, Task(body, tt.m))
		})
	}
}
