package mention

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestNeutralize(t *testing.T) {
	cases := []struct{ name, in, want string }{
		{"none", "plain text", "plain text"},
		{"mention", "ask @alice please", "ask @\u2060alice please"},
		{"start", "@Bot-fan hi", "@\u2060Bot-fan hi"},
		{"email", "mail a@b.example", "mail a@b.example"},
		{"bare at", "@ and @-x", "@ and @-x"},
		{"twice", "(@a) [@b]", "(@\u2060a) [@\u2060b]"},
		{"idempotent", "@\u2060alice", "@\u2060alice"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := Neutralize(c.in)
			assert.Equal(t, c.want, got)
			assert.Equal(t, got, Neutralize(got))
			assert.Empty(t, Find(got, "alice"), "no mention of alice is left")
		})
	}
}

func FuzzNeutralize(f *testing.F) {
	for _, s := range []string{"@a", "x@y", "@bot !cfg here-only\n@alice", "@"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := Neutralize(s)
		if Neutralize(got) != got {
			t.Fatalf("not idempotent: %q", s)
		}
		if len(Find(got, "bot")) > 0 {
			t.Fatalf("a mention survived: %q → %q", s, got)
		}
	})
}
