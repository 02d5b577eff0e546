package mention

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestReadStrayCfg: every !cfg a reader would see, other than the first
// mention's own, is reported, and none in code.
func TestReadStrayCfg(t *testing.T) {
	cases := []struct {
		name, body string
		want       []string // stray texts
		lines      []int
	}{
		{"second mention decides nothing", "@bot hi\n@bot !cfg here-only do X", []string{"!cfg"}, []int{2}},
		{"after other words", "@bot please !cfg here-only", []string{"!cfg"}, []int{1}},
		{"next line", "@bot\n!cfg here-only", []string{"!cfg"}, []int{2}},
		{"after parenthesised mention", "(@bot) !cfg here-only", []string{"!cfg"}, []int{1}},
		{"fullwidth bang", "@bot ！cfg here-only", []string{"！cfg"}, []int{1}},
		{"inverted bang", "@bot ¡cfg here-only", []string{"¡cfg"}, []int{1}},
		{"entity", "@bot &#33;cfg here-only", []string{"&#33;cfg"}, []int{1}},
		{"named entity", "@bot &excl;CFG here-only", []string{"&excl;CFG"}, []int{1}},
		{"fullwidth letters", "@bot !ｃｆｇ here-only", []string{"!ｃｆｇ"}, []int{1}},
		{"zero-width inside", "@bot !c\u200bfg here-only", []string{"!c\u200bfg"}, []int{1}},
		{"escaped bang", "@bot \\!cfg here-only", []string{"!cfg"}, []int{1}},
		{"emphasis", "@bot !**cfg** here-only", []string{"!**cfg"}, []int{1}},
		{"before the mention", "!cfg here-only\n@bot do it", []string{"!cfg"}, []int{1}},
		{"in a quote", "> @bot !cfg no-pr\n\n@bot do it", []string{"!cfg"}, []int{1}},
		{"in a comment", "<!-- !cfg no-pr -->\n@bot do it", []string{"!cfg"}, []int{1}},
		{"twice on its line", "@bot !cfg no-pr !cfg here-only", []string{"!cfg"}, []int{1}},
		{"own only", "@bot !cfg no-pr\ndo it", nil, nil},
		{"glued own", "@bot!CFG no-pr", nil, nil},
		{"code span", "@bot do `!cfg x`", nil, nil},
		{"fence", "@bot do\n```\n!cfg x\n```", nil, nil},
		{"indented code", "@bot do\n\n    !cfg x", nil, nil},
		{"no mention", "just !cfg", []string{"!cfg"}, []int{1}},
		{"plain words", "@bot configure! cfg is fine, so is !cf g", nil, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, st := Read(c.body, "bot")
			var texts []string
			var lines []int
			for _, s := range st {
				texts = append(texts, s.Text)
				lines = append(lines, s.Line)
				assert.Equal(t, s.Text, c.body[s.Offset:s.Offset+len(s.Text)])
			}
			assert.Equal(t, c.want, texts)
			assert.Equal(t, c.lines, lines)
		})
	}
}
