package render

// pack fills parts of at most budget bytes with the units' pieces, keeping
// each unit whole when it fits in a part of its own.
func pack(units []unit, budget int) [][]string {
	var parts [][]string
	var cur []string
	size := 0
	fits := func(n int) bool {
		if len(cur) > 0 {
			n++ // the blank line between pieces
		}
		return size+n <= budget
	}
	add := func(p string) {
		if len(cur) > 0 {
			size++
		}
		cur = append(cur, p)
		size += len(p)
	}
	flush := func() {
		if len(cur) > 0 {
			parts = append(parts, cur)
			cur, size = nil, 0
		}
	}
	for _, u := range units {
		n := u.size()
		if fits(n) {
			for _, p := range u.pieces {
				add(p)
			}
			continue
		}
		flush()
		if fits(n) {
			for _, p := range u.pieces {
				add(p)
			}
			continue
		}
		// one turn too big for a part: split between its blocks
		for i, p := range u.pieces {
			if i > 0 && !fits(len(p)) {
				flush()
				add(u.label + " (continued)\n")
			}
			if !fits(len(p)) {
				room := budget - size
				if len(cur) > 0 {
					room--
				}
				p = cutPiece(p, room)
			}
			add(p)
		}
	}
	flush()
	return parts
}
