package redact

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestString(t *testing.T) {
	gh := "ghp_" + strings.Repeat("a1B2", 9)
	cases := []struct {
		name, in, want string
	}{
		{"classic token", "token " + gh + " end", "token [REDACTED:github-token] end"},
		{"oauth token", "gho_" + strings.Repeat("x", 36), "[REDACTED:github-token]"},
		{"server token", "x=ghs_" + strings.Repeat("Z9", 18), "x=[REDACTED:github-token]"},
		{"fine-grained", "github_pat_11AAAAAAA0" + strings.Repeat("b", 60), "[REDACTED:github-token]"},
		{"anthropic", "ANTHROPIC_API_KEY=sk-ant-api03-" + strings.Repeat("k", 40), "ANTHROPIC_API_KEY=[REDACTED:anthropic-key]"},
		{"aws id", "AKIAIOSFODNN7EXAMPLE", "[REDACTED:aws-access-key]"},
		{"aws secret", "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "aws_secret_access_key = [REDACTED:aws-secret-key]"},
		{"jwt", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U", "[REDACTED:jwt]"},
		{"bearer", "Authorization: Bearer abcdefghijklmnopqrstuvwxyz", "Authorization: Bearer [REDACTED:bearer-token]"},
		{"clean", "nothing to see: ghp_short sk-ant", "nothing to see: ghp_short sk-ant"},
		{"hash is not a secret", strings.Repeat("a", 40), strings.Repeat("a", 40)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.want, String(c.in))
			assert.Equal(t, c.in != c.want, String(c.in) != c.in)
		})
	}
}

func FuzzString(f *testing.F) {
	f.Add("ghp_" + strings.Repeat("a", 36))
	f.Add("plain text")
	tok := "ghp_" + strings.Repeat("a1B2", 9)
	for _, sep := range []string{"&#8203;", "&shy;", "&ZeroWidthSpace;", "&#65279;", "\u180b", "\u180f", `<span title="a>b">`, "](u)"} {
		f.Add("[" + tok[:9] + sep + tok[9:])
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := String(s)
		// redaction is idempotent and never leaves a shape it knows
		assert.Equal(t, out, String(out))
	})
}

func BenchmarkStringClean(b *testing.B) {
	s := strings.Repeat("an ordinary line of a transcript with no secrets in it\n", 2000)
	b.SetBytes(int64(len(s)))
	for b.Loop() {
		String(s)
	}
}

func TestStringSeesThroughInvisibleCharacters(t *testing.T) {
	tok := "ghp_" + strings.Repeat("a1B2", 9)
	for _, c := range []string{"\u200b", "\u2060", "\u00ad", "\u202e", "\ufeff"} {
		split := "x " + tok[:10] + c + tok[10:] + " y"
		out := String(split)
		assert.Equal(t, "x [REDACTED:github-token] y", out, "split by %U", []rune(c)[0])
	}
	// invisible characters with no secret behind them are left alone
	assert.Equal(t, "a\u200bb", String("a\u200bb"))
}

// TestStringIgnoresCaseLikeThePatterns: the rules that ignore case are
// not skipped by their cheap hint for an unusual casing.
func TestStringIgnoresCaseLikeThePatterns(t *testing.T) {
	key := "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
	for _, in := range []string{
		"SeCrEt_access_key = " + key,
		"aws_sEcReT=" + key,
		"\u017fecret_access_key=" + key, // ſ folds to s under (?i)
		"AuThOrIzAtIoN: Bearer abcdefghijklmnopqrstuvwxyz",
		"authorization: to\u212aen abcdefghijklmnopqrstuvwxyz", // Kelvin sign folds to k
	} {
		out := String(in)
		assert.Contains(t, out, "[REDACTED:", in)
		assert.NotContains(t, out, "abcdefghijklmnopqrstuvwxyz", in)
		assert.NotContains(t, out, key, in)
	}
}

// FuzzMayHolds: a rule's cheap test never skips a text its pattern
// matches (the test is a necessary condition of a match).
func FuzzMayHolds(f *testing.F) {
	for _, s := range []string{
		"ghp_" + strings.Repeat("a1B2", 9), "xgho_" + strings.Repeat("Z", 20), "github_pat_" + strings.Repeat("a_", 12),
		"sk-ant-api03-" + strings.Repeat("x", 12), "AKIAIOSFODNN7EXAMPLE", "id ASIA1234567890ABCDEF.",
		"aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "\u017fecret=" + strings.Repeat("k", 40),
		"eyJhbGciOi.eyJzdWIiOi.abcdefghijkl", "AUTHORIZATION:\tBearer " + strings.Repeat("t", 20),
		"authorization: to\u212aen " + strings.Repeat("t", 20), "plain text: a=b", "",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, r := range rules() {
			if r.re.MatchString(s) {
				assert.True(t, r.may(s), "%s: %q", r.label, s)
			}
		}
	})
}
