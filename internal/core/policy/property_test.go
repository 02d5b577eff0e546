package policy

import (
	"math/rand"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

var propHere = Thread{Repo: "owner/name", Number: 12}

// Adding any flag never allows something that was denied: for every flag
// set F, extra flag x and action sequence, each action denied under F is
// denied under F+x, judged against the same ledger. The one exception is
// the SPEC's own: several repo= form an allow-list (a union), so when F
// already has one, x = repo=r may allow writes to r, and only to r.
// Every flag set is also never looser than no flags at all (the ceilings).
func TestPropertyExtraFlagOnlyRestricts(t *testing.T) {
	for seed := int64(1); seed <= 3000; seed++ {
		r := rand.New(rand.NewSource(seed))
		words := genWords(r)
		extra := genWord(r)
		c := genCeilings(r)
		b := genBlocker(r)

		f, err := ParseFlags(words)
		require.NoError(t, err, "seed %d", seed)
		fx, err := ParseFlags(append(append([]string{}, words...), extra))
		require.NoError(t, err, "seed %d", seed)
		pF := Effective(f, c, propHere, b)
		pFx := Effective(fx, c, propHere, b)
		pNone := Effective(Flags{}, c, propHere, b)
		widened := "" // the repo an extra repo= may add to an existing allow-list
		if key, val, _ := strings.Cut(extra, "="); key == "repo" && len(f.AllowRepos) > 0 {
			widened = strings.ToLower(val)
		}

		l := NewLedger()
		historyFromF := r.Intn(2) == 0 // grow the shared history from either policy
		for i, a := range genActions(r, 25) {
			dF, dFx := pF.Decide(a, l), pFx.Decide(a, l)
			if dNone := pNone.Decide(a, l); !dNone.Allowed && dF.Allowed {
				t.Fatalf("seed %d step %d: %v denied by the ceilings alone but allowed under %q", seed, i, a, f.String())
			}
			if !dF.Allowed && widened != "" && strings.EqualFold(a.Repo, widened) && dF.Rule == RuleRepoNotAllowed {
				continue // F+x may allow it; the ledger is left alone so both stay comparable
			}
			if !dF.Allowed && dFx.Allowed {
				t.Fatalf("seed %d step %d: %v denied under %q (%s) but allowed after adding %q",
					seed, i, a, f.String(), dF.Reason, extra)
			}
			if (historyFromF && dF.Allowed) || (!historyFromF && dFx.Allowed) {
				l.Record(a)
			}
		}
	}
}

// The effective policy never exceeds the operator's ceilings, and flag
// order does not matter.
func TestPropertyCeilingsAndOrder(t *testing.T) {
	for seed := int64(1); seed <= 2000; seed++ {
		r := rand.New(rand.NewSource(seed))
		words := genWords(r)
		c := genCeilings(r)
		f, err := ParseFlags(words)
		require.NoError(t, err)
		p := Effective(f, c, propHere, nil)
		require.LessOrEqual(t, p.IssueLimit, c.IssueLimit)
		require.LessOrEqual(t, p.PRLimit, c.PRLimit)
		require.LessOrEqual(t, p.CommentLimit, c.CommentLimit)

		shuffled := append([]string{}, words...)
		r.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		g, err := ParseFlags(shuffled)
		require.NoError(t, err)
		require.Equal(t, f, g, "seed %d: %q vs %q", seed, words, shuffled)
		require.Equal(t, f.String(), g.String())
	}
}
