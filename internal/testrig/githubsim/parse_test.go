package githubsim

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
)

func TestMentions(t *testing.T) {
	for _, tc := range []struct {
		body string
		want []string
	}{
		{"@bot fix", []string{"bot"}},
		{"hi @Bot, and @bot again", []string{"Bot"}},
		{"(@a) [@b-c] @d.", []string{"a", "b-c", "d"}},
		{"mail a@b.com or x@y", nil},
		{"`@bot` not code", nil},
		{"```\n@bot\n```\n@alice", []string{"alice"}},
		{"@org/team", nil},
		{"@-bad @ok-", []string{"ok"}},
		{"", nil},
	} {
		assert.Equal(t, tc.want, mentions(tc.body), "%q", tc.body)
	}
}

func TestMatchSegs(t *testing.T) {
	for _, tc := range []struct {
		pattern, path string
		want          map[string]string
	}{
		{"repos/{owner}/{repo}", "repos/a/b", map[string]string{"owner": "a", "repo": "b"}},
		{"repos/{owner}/{repo}", "repos/a/b/", map[string]string{"owner": "a", "repo": "b"}},
		{"repos/{owner}/{repo}", "repos/a", nil},
		{"repos/{owner}/{repo}", "repos//b", nil},
		{"git/ref/{ref...}", "git/ref/heads/a/b", map[string]string{"ref": "heads/a/b"}},
		{"git/ref/{ref...}", "git/ref", nil},
	} {
		got, ok := matchSegs(strings.Split(tc.pattern, "/"), strings.Split(tc.path, "/"))
		if tc.want == nil {
			assert.False(t, ok, tc.path)
			continue
		}
		assert.True(t, ok, tc.path)
		assert.Equal(t, tc.want, got, tc.path)
	}
}

func TestParseSig(t *testing.T) {
	got := parseSig("Jane Doe <jane@example.com> 1714564800 +0200")
	assert.Equal(t, obj{"name": "Jane Doe", "email": "jane@example.com", "date": "2024-05-01T12:00:00Z"}, got)
}

func TestBearer(t *testing.T) {
	for _, tc := range []struct {
		header, token string
		ok            bool
	}{
		{"token abc", "abc", true},
		{"Bearer abc", "abc", true},
		{"bearer   abc ", "abc", true},
		{"Basic abc", "", false},
		{"token ", "", false},
		{"", "", false},
	} {
		tok, ok := bearer(tc.header)
		assert.Equal(t, tc.ok, ok, tc.header)
		assert.Equal(t, tc.token, tok, tc.header)
	}
}

func FuzzMentions(f *testing.F) {
	for _, s := range []string{"@bot", "a@b.c", "```\n@x\n```", "`@x` @y", "@@@", "@-", "(@a)", "@" + strings.Repeat("a", 60)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		for _, m := range mentions(body) {
			if m == "" || len(m) > 39 || strings.HasPrefix(m, "-") || strings.HasSuffix(m, "-") {
				t.Fatalf("bad login %q from %q", m, body)
			}
			if !strings.Contains(body, "@"+m) {
				t.Fatalf("login %q not in body %q", m, body)
			}
		}
	})
}

func FuzzRoute(f *testing.F) {
	for _, s := range []string{"/repos/a/b", "/repos/a/b/git/ref/heads/x", "/repos/a/b/issues/comments/1", "//", "/", "/repos/a/b/contents/"} {
		f.Add("GET", s)
	}
	s := &Sim{}
	f.Fuzz(func(t *testing.T, method, p string) {
		h, params := s.route(method, p)
		if h == nil {
			return
		}
		for k, v := range params {
			if !utf8.ValidString(p) {
				return
			}
			// Rest parameters ({path...}) may be empty: the repository root.
			if v == "" && k != "path" && k != "ref" && k != "name" {
				t.Fatalf("empty parameter for %s %q: %v", method, p, params)
			}
		}
	})
}

func FuzzParseSig(f *testing.F) {
	for _, s := range []string{"A <a@b> 1 +0000", "", "<>", "x <y> z"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		o := parseSig(v)
		if _, ok := o["date"].(string); !ok {
			t.Fatalf("no date for %q", v)
		}
	})
}
