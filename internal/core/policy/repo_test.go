package policy

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestValidRepo(t *testing.T) {
	tests := []struct {
		in   string
		want bool
	}{
		{"foo/bar", true},
		{"Octo-Org/Hello.World_2", true},
		{"a/b", true},
		{"a-b-c/x", true},
		{strings.Repeat("a", 39) + "/x", true},
		{"x/" + strings.Repeat("a", 100), true},
		{"x/.github", true},
		{"x/...", true},
		{"", false},
		{"foo", false},
		{"/bar", false},
		{"foo/", false},
		{"foo/bar/baz", false},
		{"-foo/bar", false},
		{"foo-/bar", false},
		{"fo--o/bar", false},
		{"fo_o/bar", false},
		{"fo.o/bar", false},
		{strings.Repeat("a", 40) + "/x", false},
		{"x/" + strings.Repeat("a", 101), false},
		{"x/.", false},
		{"x/..", false},
		{"x/b*", false},
		{"x/b c", false},
		{"ü/bar", false},
		{"foo/bär", false},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			assert.Equal(t, tt.want, ValidRepo(tt.in))
		})
	}
}
