package writebudget

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestFit(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	ms := func(d time.Duration) int64 { return t0.Add(d).UnixMilli() }
	minute := window{time.Minute, 10}
	hour := window{time.Hour, 25}
	tests := []struct {
		name string
		s    state
		need int
		want time.Duration // after t0
	}{
		{"empty ledger: now", state{}, 5, 0},
		{"room left", state{Grants: []grant{{At: ms(-30 * time.Second), N: 5}}}, 5, 0},
		{"minute full: when the oldest leaves", state{Grants: []grant{{At: ms(-50 * time.Second), N: 5}, {At: ms(-10 * time.Second), N: 4}}}, 5, 10 * time.Second},
		{"never before the last grant", state{Grants: []grant{{At: ms(20 * time.Second), N: 1}}}, 1, 20 * time.Second},
		{"never before the pause", state{Pause: ms(45 * time.Second)}, 1, 45 * time.Second},
		{"hour full", state{Grants: []grant{{At: ms(-59 * time.Minute), N: 10}, {At: ms(-30 * time.Minute), N: 10}, {At: ms(-5 * time.Minute), N: 5}}}, 5, time.Minute},
		{"grant too old to count", state{Grants: []grant{{At: ms(-61 * time.Second), N: 10}}}, 10, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.s.fit(t0, tc.need, []window{minute, hour})
			assert.Equal(t, t0.Add(tc.want), got)
		})
	}
}

func TestParse(t *testing.T) {
	good, err := json.Marshal(state{Grants: []grant{{At: 1, N: 2}, {At: 3, N: 4}}, Pause: 9, Holder: "p"})
	require.NoError(t, err)
	s, err := parse(messagePrefix + string(good))
	require.NoError(t, err)
	assert.Equal(t, []grant{{At: 1, N: 2}, {At: 3, N: 4}}, s.Grants)
	for _, bad := range []string{"", "mention-runner state: claimed", messagePrefix + "null x", messagePrefix + `{"grants":[{"at_ms":5,"n":1},{"at_ms":1,"n":1}]}`} {
		_, err := parse(bad)
		assert.Error(t, err, bad)
	}
}

// FuzzParse: any ledger message either parses into grants in time order or
// is refused; never a panic.
func FuzzParse(f *testing.F) {
	f.Add(messagePrefix + `{"grants":[{"at_ms":1,"n":2}],"pause_until_ms":3}`)
	f.Add(messagePrefix + `{}`)
	f.Add("garbage")
	f.Fuzz(func(t *testing.T, msg string) {
		s, err := parse(msg)
		if err != nil {
			return
		}
		for i := 1; i < len(s.Grants); i++ {
			if s.Grants[i].At < s.Grants[i-1].At {
				t.Fatalf("grants out of order accepted: %+v", s.Grants)
			}
		}
	})
}
