package prdiff

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestCut(t *testing.T) {
	for _, tc := range []struct {
		name  string
		buf   string
		total int64
		want  string
		cut   bool
	}{
		{"whole", "a\nb\n", 4, "a\nb\n", false},
		{"at the last line end", "a\nbc", 10, "a\n", true},
		{"no line end: no split rune", "abc\xe2\x82", 10, "abc", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, cut := Cut([]byte(tc.buf), tc.total)
			assert.Equal(t, tc.want, got)
			assert.Equal(t, tc.cut, cut)
		})
	}
}
