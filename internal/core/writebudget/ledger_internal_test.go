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
	f.Add(messagePrefix + `{"grants":[],"pause_until_ms":9,"pause_carried_ms":3,"closed":true,"next":498727,"gen":498726}`)
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

// TestFenceForOlderWriters: a Closed state that names its successor reads,
// to a writer from before named generations (which opens gen+1 after any
// Closed state), as paused fenceFor ahead, so it waits and reads again
// rather than open a second successor; this version reads its own pause.
func TestFenceForOlderWriters(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	l := &Ledger{o: Options{Now: func() time.Time { return now }}}
	for _, tc := range []struct {
		name  string
		pause int64
	}{{"no pause", 0}, {"paused", now.Add(time.Minute).UnixMilli()}, {"paused past the fence", now.Add(time.Hour).UnixMilli()}} {
		t.Run(tc.name, func(t *testing.T) {
			closed := state{Grants: []grant{{At: 1, N: 2}}, Pause: tc.pause, Closed: true, Next: 492324, Gen: 7}
			body, err := json.Marshal(l.wire(closed))
			require.NoError(t, err)
			var older struct {
				Pause  int64 `json:"pause_until_ms"`
				Closed bool  `json:"closed"`
			}
			require.NoError(t, json.Unmarshal(body, &older))
			assert.True(t, older.Closed)
			assert.Equal(t, max(tc.pause, now.Add(fenceFor).UnixMilli()), older.Pause, "an older writer waits")
			s, err := parse(messagePrefix + string(body))
			require.NoError(t, err)
			assert.Equal(t, closed, s, "this version reads the state as written")
		})
	}
	open := state{Pause: 5, Gen: 7}
	assert.Equal(t, open, l.wire(open), "only a Closed state naming its successor is fenced")
}

// TestNamedWindows: the generation a rotation opens, and which closed ones
// may be deleted, by the clock's window (and as before, Sequential).
func TestNamedWindows(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 30, 0, 0, time.UTC)
	w := int(now.Unix() / 3600)
	named := &Ledger{o: Options{}}
	seq := &Ledger{o: Options{Sequential: true}}
	assert.Equal(t, w, named.successor(3, now), "from a sequential generation to the window's")
	assert.Equal(t, w, named.successor(w-5, now))
	assert.Equal(t, w+1, named.successor(w, now), "rotated again within the window: the next name")
	assert.Equal(t, w+2, named.successor(w+1, now), "a clock behind the ledger's never goes back")
	assert.Equal(t, 4, seq.successor(3, now))
	assert.Equal(t, []int{1, w - 3}, named.droppable([]int{1, w - 3, w - 2, w - 1, w}, now), "kept until retainWindows behind")
	assert.Equal(t, []int{1, w - 1}, seq.droppable([]int{1, w - 1}, now))
	seq.o.RotateEvery, seq.o.RotateAfter, named.o.RotateEvery, named.o.RotateAfter = 1000, 24*time.Hour, 1000, 24*time.Hour
	hourBefore := now.Add(-time.Hour).UnixMilli()
	s := state{Since: now.UnixMilli(), Seq: 1, Grants: []grant{{At: hourBefore - 31*60*1000}, {At: hourBefore}, {At: hourBefore + 1}, {At: now.UnixMilli()}}}
	assert.True(t, named.due(s, w-1, now), "named for an earlier window")
	assert.True(t, named.due(s, 3, now), "sequentially numbered: named at its next grant")
	quiet := s
	quiet.Grants = s.Grants[:2] // the window before's start is 12:00 from 12:30: two grants in it and this one
	assert.False(t, named.due(quiet, w-1, now), "quiet: fewer than busyGrants grants this hour and the one before")
	assert.False(t, named.due(quiet, w-quietNamed, now))
	assert.True(t, named.due(quiet, w-quietNamed-1, now), "named long ago: renamed however quiet")
	assert.True(t, named.due(quiet, 3, now), "sequentially numbered: named at its next grant however quiet")
	assert.False(t, named.due(s, w, now))
	assert.False(t, named.due(s, w+1, now), "a clock behind does not rotate")
	assert.False(t, seq.due(s, w-1, now))
}
