package githubsim

import (
	"sort"
	"time"
)

// RoundTrips is the number of sequential round trips among logged
// requests: the most of them that ran one after another without
// overlapping (greedy by earliest end, which finds that maximum). Requests
// made concurrently count once; a chain of dependent requests counts each.
// With a fixed latency on every request (a slow fault) it is how many
// latencies a piece of work waits for.
func RoundTrips(reqs []LoggedRequest) int {
	s := append([]LoggedRequest(nil), reqs...)
	sort.Slice(s, func(i, j int) bool { return s[i].End.Before(s[j].End) })
	n := 0
	var last time.Time
	for _, r := range s {
		if n == 0 || !r.Start.Before(last) {
			n++
			last = r.End
		}
	}
	return n
}
