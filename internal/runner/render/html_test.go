package render

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestWithNoteAlwaysShows: whatever a body leaves open, the NOTE block
// follows it at top level (an unclosed <details> would fold it away).
func TestWithNoteAlwaysShows(t *testing.T) {
	cases := []struct{ name, body, wantBefore string }{
		{"unclosed details", "<details><summary>More</summary>\n\nhidden?", "</details>\n"},
		{"nested", "<div>\n<details>\n<summary>x</summary>\n\n<b>bold", "</b>\n</details>\n</div>\n"},
		{"closed is left alone", "<details><summary>x</summary>y</details>", "</details>"},
		{"unclosed comment", "text <!-- hidden", " -->"},
		{"unclosed fence", "```go\nfunc main() {", "```\n"},
		{"pre", "<pre>\ncode", "</pre>\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out := WithNote(c.body, "ops/control", 7, "bot", "job", 0)
			note := strings.Index(out, "> [!NOTE]")
			assert.Positive(t, note)
			before := out[:note]
			assert.True(t, strings.HasSuffix(strings.TrimRight(before, "\n"), strings.TrimRight(c.wantBefore, "\n")), "%q", before)
			open, _ := openElements(before)
			assert.Empty(t, open)
			assert.Empty(t, openFence(before))
		})
	}
	// Raw-text openers are shown as text, never left to swallow the NOTE.
	for _, raw := range []string{"<script>", "<STYLE>", "<textarea>", "<plaintext>", "<?php", "<![CDATA[", "<!DOCTYPE x"} {
		out := WithNote("x "+raw+" y", "ops/control", 7, "bot", "job", 0)
		assert.Contains(t, out, "<"+zwsp+raw[1:], raw)
		assert.Contains(t, out, "\n> [!NOTE]\n")
	}
	// More open elements than we close: every tag is shown as text.
	out := WithNote(strings.Repeat("<span>", maxOpenElements+1), "ops/control", 7, "bot", "job", 0)
	assert.NotContains(t, out[:strings.Index(out, "> [!NOTE]")], "<span>")
}

// TestInert: agent text posted to the control repo neither pings nor loads.
func TestInert(t *testing.T) {
	const wj = "\u2060" // mention.Neutralize's word joiner
	cases := []struct{ in, want string }{
		{"thanks @alice and @org/team", "thanks @" + wj + "alice and @" + wj + "org/team"},
		{"![x](https://evil.example/p.png)", "!" + zwsp + "[x](https://evil.example/p.png)"},
		{"<img src=x> <IMG src=y> <picture> <video src=z>", "<" + zwsp + "img src=x> <" + zwsp + "IMG src=y> <" + zwsp + "picture> <" + zwsp + "video src=z>"},
		{"a@b.com 2 @ 3 <b>ok</b> <imgx> !x [y]", "a@b.com 2 @ 3 <b>ok</b> <imgx> !x [y]"},
		{"", ""},
		{"@", "@"},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, Inert(c.in))
	}
}
