package publish

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPublishRedactsWhatAReaderSees: a token split by a form GitHub shows
// as nothing (an entity for an invisible character, a Mongolian variation
// selector, a tag with a quoted '>', a link's or image's syntax) is not
// posted in a comment: with the splitting form taken out, the posted body
// holds no token.
func TestPublishRedactsWhatAReaderSees(t *testing.T) {
	gh := "ghp_" + strings.Repeat("Q7w8E9r0T1", 3) + "y2U3i4"
	ant := "sk-ant-api03-" + strings.Repeat("Xy_Z-0123456789", 3)
	cases := []struct{ name, before, sep, after string }{
		{"numeric entity zero-width space", "", "&#8203;", ""},
		{"soft hyphen entity", "", "&shy;", ""},
		{"named zero-width space", "", "&ZeroWidthSpace;", ""},
		{"byte order mark entity", "", "&#65279;", ""},
		{"mongolian selector 180B", "", "\u180b", ""},
		{"mongolian selector 180F", "", "\u180f", ""},
		{"quoted > in a tag", "", `<span title="a>b">`, "</span>"},
		{"split by a link", "[", "](https://example.com/u)", ""},
		{"split by an image", "![", "](x.png)", ""},
	}
	for _, c := range cases {
		for _, tok := range []string{gh, ant} {
			t.Run(c.name+"/"+tok[:3], func(t *testing.T) {
				f := newFixture(t, "")
				f.add(f.comment(testTarget, f.issue, "use "+c.before+tok[:14]+c.sep+tok[14:]+c.after+" please"))
				res := f.run(f.options())
				require.Equal(t, "completed", res.Status)
				cs := f.botComments(testTarget, f.issue)
				require.Len(t, cs, 1)
				seen := strings.NewReplacer(c.sep, "", "[", "", "!", "").Replace(cs[0].GetBody())
				assert.NotContains(t, seen, tok)
				assert.Contains(t, cs[0].GetBody(), "[REDACTED:")
			})
		}
	}
}
