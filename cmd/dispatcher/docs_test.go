package main

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSettingsTableInDocs: docs/configuration.md's dispatcher table lists
// every setting, by variable and flag, in the order of settings, and
// nothing else.
func TestSettingsTableInDocs(t *testing.T) {
	b, err := os.ReadFile("../../docs/configuration.md")
	require.NoError(t, err)
	_, section, ok := strings.Cut(string(b), "\n## Dispatcher settings\n")
	require.True(t, ok, "docs/configuration.md has a Dispatcher settings section")
	section, _, _ = strings.Cut(section, "\n## ")
	var got, want []string
	for _, line := range strings.Split(section, "\n") {
		cells := strings.Split(line, "|")
		if len(cells) < 4 || !strings.HasPrefix(strings.TrimSpace(cells[1]), "`") {
			continue
		}
		got = append(got, strings.TrimSpace(cells[1])+" "+strings.TrimSpace(cells[2]))
	}
	for _, s := range settings {
		want = append(want, "`"+s.env+"` `--"+s.flag+"`")
	}
	assert.Equal(t, want, got)
}

// TestSystemdUnitReadsTokenFiles: the example unit hands each token over
// as a credential the dispatcher reads through a _FILE setting, with no
// shell to read it into the environment.
func TestSystemdUnitReadsTokenFiles(t *testing.T) {
	b, err := os.ReadFile("../../examples/dispatcher/dispatcher.service")
	require.NoError(t, err)
	creds, files := map[string]bool{}, map[string]string{}
	var exec []string
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(line), "=")
		switch {
		case !ok || strings.HasPrefix(k, "#"):
		case k == "LoadCredential":
			name, _, _ := strings.Cut(v, ":")
			creds[name] = true
		case k == "Environment" && strings.Contains(v, "_FILE="):
			name, path, _ := strings.Cut(v, "=")
			files[name] = path
		case k == "ExecStart":
			exec = append(exec, v)
		}
	}
	require.Len(t, exec, 1)
	assert.Equal(t, "/usr/local/bin/dispatcher poll", exec[0], "no shell between systemd and the dispatcher")
	assert.Equal(t, map[string]string{"BOT_TOKEN_FILE": "%d/bot-token", "CONTROL_TOKEN_FILE": "%d/control-token"}, files)
	for name, path := range files {
		assert.NotEmpty(t, flagOf(name), "%s is a setting", name)
		assert.True(t, creds[strings.TrimPrefix(path, "%d/")], "%s names a credential the unit loads", name)
	}
}
