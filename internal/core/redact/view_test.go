package redact

import (
	"encoding/base64"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestStringSeesWhatGitHubRenders: each form GitHub shows as the token is redacted, and the text around it is kept.
func TestStringSeesWhatGitHubRenders(t *testing.T) {
	tok := "ghp_" + strings.Repeat("a1B2", 9)
	ant := "sk-ant-api03-" + strings.Repeat("k", 30)
	cases := []struct{ name, in, want string }{
		{"markdown escape", "x ghp\\_" + tok[4:] + " y", "x [REDACTED:github-token] y"},
		{"entity underscore", "x ghp&#95;" + tok[4:] + " y", "x [REDACTED:github-token] y"},
		{"named entity", "x ghp&lowbar;" + tok[4:] + " y", "x [REDACTED:github-token] y"},
		{"entity hyphen", "x sk&#45;ant-" + ant[7:] + " y", "x [REDACTED:anthropic-key] y"},
		{"hex entity", "x sk&#x2d;ant&#x2D;" + ant[7:] + " y", "x [REDACTED:anthropic-key] y"},
		{"split by tags", "x gh<b>p_" + tok[4:12] + "</b>" + tok[12:] + " y", "x [REDACTED:github-token] y"},
		{"split by comment", "x " + tok[:9] + "<!-- -->" + tok[9:] + " y", "x [REDACTED:github-token] y"},
		{"split by emphasis", "x gh**p_" + tok[4:10] + "**" + tok[10:] + " y", "x [REDACTED:github-token] y"},
		{"split by code spans", "x `ghp_`" + tok[4:] + " y", "x `[REDACTED:github-token] y"},
		{"glued to a word", "x xghp_" + tok[4:] + " y", "x x[REDACTED:github-token] y"},
		{"glued after", "x " + tok + "_suffix y", "x [REDACTED:github-token]_suffix y"},
		{"glued aws", "idAKIAIOSFODNN7EXAMPLE", "id[REDACTED:aws-access-key]"},
		{"numeric entity zero-width space", "x " + tok[:9] + "&#8203;" + tok[9:] + " y", "x [REDACTED:github-token] y"},
		{"soft hyphen entity", "x " + tok[:9] + "&shy;" + tok[9:] + " y", "x [REDACTED:github-token] y"},
		{"named zero-width space", "x " + tok[:9] + "&ZeroWidthSpace;" + tok[9:] + " y", "x [REDACTED:github-token] y"},
		{"byte order mark entity", "x " + ant[:15] + "&#65279;" + ant[15:] + " y", "x [REDACTED:anthropic-key] y"},
		{"mongolian selector 180B", "x " + tok[:9] + "\u180b" + tok[9:] + " y", "x [REDACTED:github-token] y"},
		{"mongolian selector 180C", "x " + tok[:9] + "\u180c" + tok[9:] + " y", "x [REDACTED:github-token] y"},
		{"mongolian selector 180D", "x " + tok[:9] + "\u180d" + tok[9:] + " y", "x [REDACTED:github-token] y"},
		{"mongolian selector 180F", "x " + tok[:9] + "\u180f" + tok[9:] + " y", "x [REDACTED:github-token] y"},
		{"quoted > in a tag", "x " + tok[:9] + `<span title="a>b">` + tok[9:] + "</span> y", "x [REDACTED:github-token]</span> y"},
		{"single-quoted > in a tag", "x " + tok[:9] + `<span title='a>b'>` + tok[9:] + " y", "x [REDACTED:github-token] y"},
		{"split by a link", "x [" + tok[:9] + "](https://e.x/u)" + tok[9:] + " y", "x [[REDACTED:github-token] y"},
		{"split by an image", "x ![" + tok[:9] + "](x)" + tok[9:] + " y", "x ![[REDACTED:github-token] y"},
		{"split by a reference link", "x [" + tok[:9] + "][r]" + tok[9:] + " y", "x [[REDACTED:github-token] y"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.want, String(c.in))
		})
	}
	// Markup with no secret behind it stays as written.
	for _, s := range []string{"a **b** `c` <b>d</b> &amp; e\\_f", "x < y & z > w"} {
		assert.Equal(t, s, String(s))
	}
}

// TestStringRedactsRegisteredValues: the exact value of a secret from the
// job's environment is redacted raw, percent- and base64-encoded, also
// inside a longer encoded text (HTTP basic auth).
func TestStringRedactsRegisteredValues(t *testing.T) {
	val := "hunter2-correct/horse+battery staple"
	names := AddSecretsFromEnv([]string{"MY_API_KEY=" + val, "HOME=/root", "PATH_TOKEN=short", "GREETING=hello-world-value",
		"BOT_TOKEN_FILE=/run/secrets/bot-token", "GOOGLE_CREDENTIALS_PATH=/etc/gcp/key.json"})
	assert.Equal(t, []string{"MY_API_KEY"}, names)
	basic := base64.StdEncoding.EncodeToString([]byte("x-access-token:" + val))
	for _, form := range []string{
		val,
		url.QueryEscape(val),
		url.PathEscape(val),
		base64.StdEncoding.EncodeToString([]byte(val)),
		base64.URLEncoding.EncodeToString([]byte(val)),
	} {
		out := String("before " + form + " after")
		assert.NotContains(t, out, form)
		assert.Contains(t, out, "[REDACTED:secret]")
	}
	out := String("Authorization: Basic " + basic)
	assert.NotContains(t, out, basic[len(basic)-20:], "the encoded value inside basic auth")
	assert.Equal(t, "hello-world-value", String("hello-world-value"), "names that do not say secret are not registered")
	// split by markup, as a reader would still see it
	assert.Equal(t, "x [REDACTED:secret] y", String("x hunter2-<i>correct</i>/horse+battery staple y"))
}

// splitsRef is hasSplits's definition, a rune at a time.
func splitsRef(r rune) bool {
	switch r {
	case '\\', '&', '<', '*', '~', '`', '[', ']':
		return true
	}
	return r >= 0x80 && invisible(r)
}

// referenceString is String without its shortcuts: the view (mapped) is
// built for any text that has a character that can hide a secret.
func referenceString(s string) string {
	if !strings.ContainsFunc(s, splitsRef) {
		return replace(s, matches(s, nil, registered()))
	}
	v := newView(s, true)
	return replace(s, matches(v.text, v, registered()))
}

// FuzzShortcuts: String's shortcuts (byte-wise split test, unmapped view
// first, built by runs) never change what is redacted.
func FuzzShortcuts(f *testing.F) {
	tok := "ghp_" + strings.Repeat("a1B2", 9)
	for _, s := range []string{"plain", "ghp\\_" + tok[4:], "gh<b>p_</b>" + tok[4:], "ghp&#95;" + tok[4:],
		"x\u200b" + tok, "a\xffb*c", "*emph* `code` " + tok, "&amp;&lt;",
		tok[:9] + "&#8203;" + tok[9:], tok[:9] + "&shy;" + tok[9:], tok[:9] + "&ZeroWidthSpace;" + tok[9:],
		tok[:9] + "&#65279;" + tok[9:], tok[:9] + "\u180b" + tok[9:], tok[:9] + `<span title="a>b">` + tok[9:],
		"[" + tok[:9] + "](u)" + tok[9:], "![" + tok[:9] + "](x)" + tok[9:], "[a][b] ](", "<a href='>"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		assert.Equal(t, strings.ContainsFunc(s, splitsRef), hasSplits(s))
		assert.Equal(t, newView(s, true).text, viewText(s), "the unmapped view is the view")
		assert.Equal(t, referenceString(s), String(s))
	})
}
