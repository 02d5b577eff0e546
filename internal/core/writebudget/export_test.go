package writebudget

// countGrants counts the grants of a ledger commit's message (tests).
func countGrants(msg string) int {
	s, err := parse(msg)
	if err != nil {
		return -1
	}
	n := 0
	for _, g := range s.Grants {
		n += g.N
	}
	return n
}

// CountGrants is countGrants for the external tests.
var CountGrants = countGrants

// GrantSizes lists the sizes of a ledger commit's grants, oldest first (tests).
func GrantSizes(msg string) []int {
	s, err := parse(msg)
	if err != nil {
		return nil
	}
	var out []int
	for _, g := range s.Grants {
		out = append(out, g.N)
	}
	return out
}

// LedgerState is a ledger commit's commits-since-root, whether it is
// closed, and whether it says when its generation started (tests).
func LedgerState(msg string) (seq int, closed, dated bool) {
	s, err := parse(msg)
	if err != nil {
		return -1, false, false
	}
	return s.Seq, s.Closed, s.Since != 0
}

// ID is the name a handle's grants carry (tests).
func (l *Ledger) ID() string { return l.id }

// GrantsBy counts a ledger commit's grants taken by the handle id (tests).
func GrantsBy(msg, id string) int {
	s, err := parse(msg)
	if err != nil {
		return -1
	}
	n := 0
	for _, g := range s.Grants {
		if g.By == id {
			n++
		}
	}
	return n
}

// Wanted is the size Ready asked for the next grant (tests).
func Wanted(l *Ledger) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.want
}

// PauseUntil is a ledger commit's pause (unix ms; tests).
func PauseUntil(msg string) int64 {
	s, err := parse(msg)
	if err != nil {
		return -1
	}
	return s.Pause
}
