package loadtest

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestRoundTrips(t *testing.T) {
	at := func(ms int) time.Time { return time.Unix(0, 0).Add(time.Duration(ms) * time.Millisecond) }
	sp := func(a, b int) Span { return Span{Start: at(a), End: at(b)} }
	tests := []struct {
		name  string
		spans []Span
		want  int
	}{
		{"none", nil, 0},
		{"one", []Span{sp(0, 50)}, 1},
		{"chain", []Span{sp(0, 50), sp(50, 100), sp(101, 150)}, 3},
		{"concurrent", []Span{sp(0, 50), sp(1, 51), sp(2, 52)}, 1},
		{"fan-out then one", []Span{sp(0, 50), sp(0, 60), sp(0, 55), sp(61, 110)}, 2},
		{"unordered input", []Span{sp(101, 150), sp(0, 50), sp(50, 100)}, 3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, RoundTrips(tc.spans))
		})
	}
}
