package refpush

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func pkts(lines ...string) []byte {
	var b []byte
	for _, l := range lines {
		b = append(b, []byte(sprintPkt(l))...)
	}
	return append(b, "0000"...)
}

func sprintPkt(s string) string {
	const hex = "0123456789abcdef"
	n := len(s) + 4
	return string([]byte{hex[n>>12&15], hex[n>>8&15], hex[n>>4&15], hex[n&15]}) + s
}

func TestParseReport(t *testing.T) {
	ups := []Update{{Ref: "refs/a"}, {Ref: "refs/b"}}
	tests := []struct {
		name     string
		answer   []byte
		rejected []bool
		unpack   bool // a refused pack
		bad      bool // not a report: maybe applied
	}{
		{"both applied", pkts("unpack ok\n", "ok refs/a\n", "ok refs/b\n"), []bool{false, false}, false, false},
		{"one refused", pkts("unpack ok\n", "ng refs/a failed to update ref\n", "ok refs/b\n"), []bool{true, false}, false, false},
		{"in another order, lines without newline", pkts("unpack ok", "ok refs/b", "ng refs/a stale info"), []bool{true, false}, false, false},
		{"pack refused", pkts("unpack index-pack abnormal exit\n", "ng refs/a unpacker error\n"), nil, true, false},
		{"an update not reported", pkts("unpack ok\n", "ok refs/a\n"), nil, false, true},
		{"no flush", []byte(sprintPkt("unpack ok\n")), nil, false, true},
		{"empty", nil, nil, false, true},
		{"not pkt-lines", []byte("<html>502 Bad Gateway</html>"), nil, false, true},
		{"length past the end", []byte("00ffunpack ok"), nil, false, true},
		{"not starting with unpack", pkts("ok refs/a\n"), nil, false, true},
		{"an unknown line", pkts("unpack ok\n", "ok refs/a\n", "ok refs/b\n", "huh\n"), nil, false, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, err := parseReport(tc.answer, ups)
			switch {
			case tc.unpack:
				var ue *UnpackError
				require.ErrorAs(t, err, &ue)
				assert.False(t, MaybeApplied(err))
			case tc.bad:
				require.ErrorIs(t, err, errBadReport)
				assert.True(t, MaybeApplied(err), "an unreadable answer may follow an applied push")
			default:
				require.NoError(t, err)
				require.Len(t, res, len(ups))
				for i, want := range tc.rejected {
					assert.Equal(t, want, errors.Is(res[i], ErrRejected), ups[i].Ref)
				}
			}
		})
	}
}

// Whatever the server answers, the parser returns a result per update or
// an error, and never panics.
func FuzzParseReport(f *testing.F) {
	f.Add(pkts("unpack ok\n", "ok refs/a\n"))
	f.Add(pkts("unpack ok\n", "ng refs/a stale info\n"))
	f.Add([]byte("0004"))
	f.Add([]byte("zzzz"))
	f.Fuzz(func(t *testing.T, answer []byte) {
		ups := []Update{{Ref: "refs/a"}}
		res, err := parseReport(answer, ups)
		if err == nil && len(res) != len(ups) {
			t.Fatalf("%d results for %d updates", len(res), len(ups))
		}
	})
}

func BenchmarkRequest(b *testing.B) {
	c := Commit{Message: "mention-runner pace: {\"grants\":[]}", Parents: []string{zeroID[:39] + "1"}}
	ups := []Update{{Ref: "refs/mention-runner/pace/x", Old: zeroID[:39] + "1", New: c.SHA()}}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := request(nil, []Commit{c}, ups); err != nil {
			b.Fatal(err)
		}
	}
}
