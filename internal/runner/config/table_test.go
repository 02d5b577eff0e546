package config

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mention-runner/mention-runner/internal/testrig/golden"
)

// docs/configuration.md carries the settings table between two markers; it
// is generated from Settings so the two never disagree (-update rewrites it).
const docsPage = "../../../docs/configuration.md"

func TestDocsSettingsTable(t *testing.T) {
	const begin, end = "<!-- runner-settings:begin -->\n", "<!-- runner-settings:end -->"
	raw, err := os.ReadFile(docsPage)
	require.NoError(t, err)
	s := string(raw)
	i, j := strings.Index(s, begin), strings.Index(s, end)
	require.True(t, i >= 0 && j > i, "docs/configuration.md needs the runner-settings markers")
	want := s[:i+len(begin)] + MarkdownTable() + s[j:]
	if golden.Updating() {
		require.NoError(t, os.WriteFile(docsPage, []byte(want), 0o644))
		return
	}
	require.Equal(t, want, s, "docs/configuration.md settings table is stale: go test ./internal/runner/config -update")
}
