package main

import (
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestTokenFiles: BOT_TOKEN_FILE and CONTROL_TOKEN_FILE (or their flags)
// read each token from a file as secrets are mounted, one trailing line
// end dropped; a token given both ways, or a file that is missing,
// unreadable, empty or holds more than the token, is refused naming the
// setting and what to do.
func TestTokenFiles(t *testing.T) {
	dir := t.TempDir()
	file := func(name, content string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(content), 0o600))
		return p
	}
	bot, crlf, ctl := file("bot", "ghp_bot0000000\n"), file("crlf", "ghp_crlf000000\r\n"), file("ctl", "ghs_control000")
	empty, lines, spaced := file("empty", "\n"), file("lines", "ghp_one\nghp_two\n"), file("spaced", "ghp_one two\n")
	big := file("big", strings.Repeat("x", maxTokenFile+1))
	base := map[string]string{"BOT_LOGIN": "b", "CONTROL_REPO": "o/c", "ALLOWED_USERS": "*"}
	for _, tc := range []struct {
		name      string
		vars      map[string]string
		args      []string
		bot, ctl  string   // the tokens resolved
		wantErrIn []string // else: the error says each
	}{
		{name: "bot token file", vars: map[string]string{"BOT_TOKEN_FILE": bot}, bot: "ghp_bot0000000", ctl: "ghp_bot0000000"},
		{name: "CRLF dropped", vars: map[string]string{"BOT_TOKEN_FILE": crlf}, bot: "ghp_crlf000000", ctl: "ghp_crlf000000"},
		{name: "control token file", vars: map[string]string{"BOT_TOKEN": "ghp_env", "CONTROL_TOKEN_FILE": ctl}, bot: "ghp_env", ctl: "ghs_control000"},
		{name: "both from files, by flag", args: []string{"--token-file", bot, "--control-token-file", ctl}, bot: "ghp_bot0000000", ctl: "ghs_control000"},
		{name: "both ways", vars: map[string]string{"BOT_TOKEN": "ghp_env", "BOT_TOKEN_FILE": bot},
			wantErrIn: []string{"BOT_TOKEN (--token) and BOT_TOKEN_FILE (--token-file) are both set: keep one"}},
		{name: "both ways, flag and variable", vars: map[string]string{"CONTROL_TOKEN_FILE": ctl}, args: []string{"--token", "ghp_x", "--control-token", "ghp_y"},
			wantErrIn: []string{"CONTROL_TOKEN (--control-token) and CONTROL_TOKEN_FILE (--control-token-file) are both set"}},
		{name: "missing file", vars: map[string]string{"BOT_TOKEN_FILE": filepath.Join(dir, "nope")},
			wantErrIn: []string{"BOT_TOKEN_FILE=" + filepath.Join(dir, "nope") + ": cannot read the token file", "no such file"}},
		{name: "a directory", vars: map[string]string{"BOT_TOKEN_FILE": dir}, wantErrIn: []string{"BOT_TOKEN_FILE=" + dir + ": cannot read the token file"}},
		{name: "empty", vars: map[string]string{"BOT_TOKEN_FILE": empty}, wantErrIn: []string{"the file is empty"}},
		{name: "two lines", vars: map[string]string{"BOT_TOKEN_FILE": lines}, wantErrIn: []string{"more than one token"}},
		{name: "a space", vars: map[string]string{"BOT_TOKEN_FILE": spaced}, wantErrIn: []string{"more than one token"}},
		{name: "too big", vars: map[string]string{"BOT_TOKEN_FILE": big}, wantErrIn: []string{"over 64 KiB"}},
		{name: "both files bad: both named", vars: map[string]string{"BOT_TOKEN_FILE": empty, "CONTROL_TOKEN_FILE": lines},
			wantErrIn: []string{"BOT_TOKEN_FILE=" + empty, "CONTROL_TOKEN_FILE=" + lines}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vars := maps.Clone(base)
			maps.Copy(vars, tc.vars)
			c, err := resolveWith(t, vars, tc.args...)
			if tc.wantErrIn != nil {
				require.Error(t, err)
				for _, w := range tc.wantErrIn {
					assert.Contains(t, err.Error(), w)
				}
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.bot, c.token)
			assert.Equal(t, tc.ctl, c.controlToken)
		})
	}
}
