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
