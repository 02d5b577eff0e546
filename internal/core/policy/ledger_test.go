package policy

import (
	"math/rand"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLedgerCounts(t *testing.T) {
	tests := []struct {
		name     string
		actions  []Action
		issues   int
		prs      int
		comments map[Thread]int
	}{
		{"empty", nil, 0, 0, map[Thread]int{{"a/b", 1}: 0}},
		{"mixed", []Action{issue("a/b"), pr("c/d"), pr("c/d"), comment("a/b", 1), comment("A/B", 1), comment("a/b", 2)},
			1, 2, map[Thread]int{{"a/b", 1}: 2, {"a/B", 2}: 1, {"a/b", 3}: 0}},
		{"unknown kinds ignored", []Action{{Kind: "merge", Repo: "a/b"}, {Kind: ""}}, 0, 0, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for name, l := range map[string]*Ledger{"replay": Replay(tt.actions), "record": recordAll(tt.actions), "zero": zeroRecordAll(tt.actions)} {
				assert.Equal(t, tt.issues, l.Issues(), name)
				assert.Equal(t, tt.prs, l.PRs(), name)
				for th, n := range tt.comments {
					assert.Equal(t, n, l.Comments(th), "%s %v", name, th)
				}
			}
		})
	}
}

func recordAll(as []Action) *Ledger {
	l := NewLedger()
	for _, a := range as {
		l.Record(a)
	}
	return l
}

func zeroRecordAll(as []Action) *Ledger {
	var l Ledger
	for _, a := range as {
		l.Record(a)
	}
	return &l
}

// The publish job rebuilds the ledger from the allowed outputs; it must
// then decide every further action exactly as the gate's live ledger does.
func TestReplayEquivalence(t *testing.T) {
	for seed := int64(1); seed <= 1000; seed++ {
		r := rand.New(rand.NewSource(seed))
		f, err := ParseFlags(genWords(r))
		require.NoError(t, err)
		p := Effective(f, genCeilings(r), propHere, genBlocker(r))

		live := NewLedger()
		var allowed []Action
		for _, a := range genActions(r, 20) {
			if p.Apply(a, live).Allowed {
				allowed = append(allowed, a)
			}
		}
		replayed := Replay(allowed)
		require.Equal(t, live.Issues(), replayed.Issues())
		require.Equal(t, live.PRs(), replayed.PRs())
		for _, probe := range genActions(r, 20) {
			if a, b := p.Decide(probe, live), p.Decide(probe, replayed); a != b {
				t.Fatalf("seed %d probe %v: live %+v, replayed %+v", seed, probe, a, b)
			}
		}
		// Re-checking the allowed history in order against a fresh ledger
		// (what the publish job does) allows every one of them again.
		again := NewLedger()
		for _, a := range allowed {
			if d := p.Apply(a, again); !d.Allowed {
				t.Fatalf("seed %d: %v: %s", seed, a, d.Reason)
			}
		}
	}
}
