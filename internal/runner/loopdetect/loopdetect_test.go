package loopdetect

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCanonical(t *testing.T) {
	tests := []struct {
		name, in, want string
		ok             bool
	}{
		{"empty", "", "{}", true},
		{"spaces", "  \n", "{}", true},
		{"sorted keys", `{"b":1, "a":{"d":[1, 2],"c":"x"}}`, `{"a":{"c":"x","d":[1,2]},"b":1}`, true},
		{"numbers as written", `{"n":1.50}`, `{"n":1.50}`, true},
		{"no html escaping", `{"body":"<b>&</b>"}`, `{"body":"<b>&</b>"}`, true},
		{"unicode kept", `{"s":"café \u00e9"}`, `{"s":"café é"}`, true},
		{"not json", ` {"a": `, `{"a":`, false},
		{"two values", `{} {}`, `{} {}`, false},
		{"scalar", ` 42 `, `42`, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := Canonical([]byte(tc.in))
			assert.Equal(t, tc.want, got)
			assert.Equal(t, tc.ok, ok)
		})
	}
}

type call struct{ tool, args string }

func TestDetector(t *testing.T) {
	same := call{"mcp__gate__noop", `{"reason":"x"}`}
	reordered := call{"mcp__gate__add_comment", `{"repo":"o/r","number":1,"body":"hi"}`}
	reordered2 := call{"mcp__gate__add_comment", `{ "body":"hi", "number":1, "repo":"o/r" }`}
	rep := func(c call, n int) []call {
		out := make([]call, n)
		for i := range out {
			out[i] = c
		}
		return out
	}
	tests := []struct {
		name      string
		threshold int
		calls     []call
		firesAt   int // 1-based index of the call that completes the loop; 0 = never
	}{
		{"six identical", 6, rep(same, 6), 6},
		{"five identical", 6, rep(same, 5), 0},
		{"key order and whitespace do not matter", 3, []call{reordered, reordered2, reordered}, 3},
		{"different args break the streak", 3, []call{same, same, {"mcp__gate__noop", `{"reason":"y"}`}, same, same}, 0},
		{"different tool breaks the streak", 3, []call{same, same, {"Read", `{"reason":"x"}`}, same, same, same}, 6},
		{"default threshold", 0, rep(same, 6), 6},
		{"threshold two", 2, rep(same, 2), 2},
		{"malformed args compare by text", 3, rep(call{"Read", `{"a":`}, 3), 3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := New(tc.threshold)
			fired := 0
			for i, c := range tc.calls {
				if d.Observe(fmt.Sprintf("toolu_%d", i+1), c.tool, []byte(c.args)) && fired == 0 {
					fired = i + 1
				}
			}
			assert.Equal(t, tc.firesAt, fired)
			if tc.firesAt == 0 {
				assert.Nil(t, d.Loop())
				return
			}
			l := d.Loop()
			require.NotNil(t, l)
			assert.Equal(t, d.Threshold(), l.Count)
			assert.Len(t, l.Calls, l.Count)
			assert.Equal(t, fmt.Sprintf("toolu_%d", tc.firesAt), l.Calls[len(l.Calls)-1].ID)
		})
	}
}

func TestLoopStaysFound(t *testing.T) {
	d := New(2)
	assert.False(t, d.Observe("a", "T", nil))
	assert.True(t, d.Observe("b", "T", []byte(`{}`)))
	assert.True(t, d.Observe("c", "Other", nil))
	assert.Equal(t, "T", d.Loop().Tool)
}

func TestExcerpt(t *testing.T) {
	d := New(3)
	for i := range 3 {
		d.Observe(fmt.Sprintf("toolu_%d", i), "mcp__gate__noop", []byte(`{"reason": "`+strings.Repeat("z", 400)+`"}`))
	}
	ex := d.Loop().Excerpt()
	lines := strings.Split(ex, "\n")
	require.Len(t, lines, 4)
	assert.Equal(t, "3 identical consecutive calls of mcp__gate__noop:", lines[0])
	assert.True(t, strings.HasPrefix(lines[1], `1. toolu_0 mcp__gate__noop({"reason":"zzz`), lines[1])
	assert.True(t, strings.HasSuffix(lines[1], "…)"), "long arguments are cut")
	assert.Equal(t, "", (*Loop)(nil).Excerpt())
}

func FuzzCanonical(f *testing.F) {
	for _, s := range []string{``, `{}`, `{"b":1,"a":2}`, `[1,{"z":null,"y":true}]`, `{"a":`, `"\u2028<>&"`, `1e400`, `{"a":1,"a":2}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		c, ok := Canonical(in)
		if !ok {
			return
		}
		// canonical form is a fixed point
		again, ok2 := Canonical([]byte(c))
		if !ok2 || again != c {
			t.Fatalf("not a fixed point: %q → %q → %q", in, c, again)
		}
	})
}

func BenchmarkObserve(b *testing.B) {
	args := []byte(`{"repo":"octo/hello","number":42,"body":"` + strings.Repeat("a reasonably long comment body ", 40) + `"}`)
	d := New(1 << 30) // never fires, so every call does the full work
	b.ReportAllocs()
	b.SetBytes(int64(len(args)))
	for b.Loop() {
		d.Observe("toolu_1", "mcp__gate__add_comment", args)
		if len(d.run) > 1000 {
			d.run = d.run[:0]
		}
	}
}
