package process

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestTailBuffer(t *testing.T) {
	tb := NewTail(5)
	_, _ = tb.Write([]byte("ab"))
	assert.Equal(t, "ab", tb.String())
	_, _ = tb.Write([]byte("cdefg"))
	assert.Equal(t, "…cdefg", tb.String())
	_, _ = tb.Write([]byte("hi"))
	assert.Equal(t, "…efghi", tb.String())
	_, _ = tb.Write([]byte("0123456789"))
	assert.Equal(t, "…56789", tb.String())
}
