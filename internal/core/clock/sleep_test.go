package clock

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestSleep(t *testing.T) {
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []struct {
		name string
		ctx  context.Context
		d    time.Duration
		want error
	}{
		{"zero returns at once", context.Background(), 0, nil},
		{"negative returns at once", context.Background(), -time.Second, nil},
		{"short wait ends", context.Background(), time.Millisecond, nil},
		{"cancelled with zero wait", cancelled, 0, context.Canceled},
		{"cancelled with long wait", cancelled, time.Hour, context.Canceled},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.ErrorIs(t, Sleep(tt.ctx, tt.d), tt.want)
		})
	}
}
