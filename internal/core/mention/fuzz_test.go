package mention

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// FuzzFind checks Find and Task never panic, that every result is a
// well-formed, stable mention (see checkInvariants), and that CRLF line
// endings find the same mentions as LF.
func FuzzFind(f *testing.F) {
	f.Add("@bot !cfg comment-only here-only\nfix it", "bot")
	f.Add("```\n@bot\n```\n> @bot\n<!-- @bot -->\n`@bot` @BOT go away", "bot")
	f.Add("- ```\n  @bot\n\n@bot come back", "@bot")
	f.Fuzz(func(t *testing.T, body, bot string) {
		if len(body) > 1<<16 {
			return
		}
		ms := Find(body, bot)
		checkInvariants(t, body, bot, ms)
		ms2, strays := Read(body, bot)
		require.Equal(t, ms, ms2)
		for _, st := range strays {
			require.Equal(t, st.Text, body[st.Offset:st.Offset+len(st.Text)])
		}
		if strings.Contains(body, "\r") {
			return
		}
		crlf := Find(strings.ReplaceAll(body, "\n", "\r\n"), bot)
		require.Equal(t, shapes(ms), shapes(crlf), "LF vs CRLF")
	})
}

// shapes drops offsets, which CRLF shifts.
func shapes(ms []Mention) []want {
	var out []want
	for _, m := range ms {
		out = append(out, want{cmd: m.Command, line: m.Line, flags: m.Flags})
	}
	return out
}
