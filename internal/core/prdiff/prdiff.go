// Package prdiff is a pull request's diff as the agent reads it: capped,
// cut at a line end, placed into the agent's copy of the context with a
// record of what was cut. The diff is read by the runner's fetch step
// (threadctx.FetchDiff), pinned to the head sha the mention's context
// recorded, beside the code it fetches at that same sha: the diff the
// agent reads and the code it sees always agree (a diff read at mention
// time would miss a push between the two reads), and the dispatched
// context stays small (a large diff does not turn one dispatch into many
// shards). No GitHub client here: the agent job links
// this package.
package prdiff

import (
	"bytes"
	"unicode/utf8"
)

// DefaultMaxBytes caps the diff the agent gets.
const DefaultMaxBytes = 1 << 20

// Diff is a fetched diff, cut to the cap.
type Diff struct {
	Text string
	// Total is the size of the whole diff as the server sent it.
	Total int64
	// Truncated means Text is a prefix of it, cut at a line end.
	Truncated bool
	// Unavailable is the server's reason when it would not send the diff
	// (too large for it, say): the agent works from the code alone.
	Unavailable string
}

// Cut returns the kept diff text, cut at the last line break when it was
// truncated (buf shorter than total), and never splitting a UTF-8 sequence.
func Cut(buf []byte, total int64) (string, bool) {
	if int64(len(buf)) >= total {
		return string(buf), false
	}
	if i := bytes.LastIndexByte(buf, '\n'); i >= 0 {
		buf = buf[:i+1]
	}
	// No line break at all: drop a partial UTF-8 sequence at the cut.
	for n := 0; n < utf8.UTFMax && len(buf) > 0; n++ {
		if r, size := utf8.DecodeLastRune(buf); r != utf8.RuneError || size != 1 {
			break
		}
		buf = buf[:len(buf)-1]
	}
	return string(buf), true
}
