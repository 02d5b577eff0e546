package sanitize

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestFence(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"empty", "", "```"},
		{"no backticks", "plain text", "```"},
		{"short runs", "a `b` ``c``", "```"},
		{"triple run", "```go\nx\n```", "````"},
		{"longest run counts", "`` ````` ```", "``````"},
		{"multibyte around", "é`````ü", "``````"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, Fence(tt.in))
		})
	}
}
