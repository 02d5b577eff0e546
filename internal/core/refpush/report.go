package refpush

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// errBadReport: the server's answer is not a status report for the
// updates sent. The push may have been applied (MaybeApplied).
var errBadReport = errors.New("refpush: the push's answer is not a status report")

// parseReport reads receive-pack's report-status answer: "unpack ok" (or
// the reason it failed), then "ok REF" or "ng REF REASON" per update, then
// a flush. It returns one error per update, in their order.
func parseReport(answer []byte, updates []Update) ([]error, error) {
	lines, err := pktLines(answer)
	if err != nil {
		return nil, err
	}
	if len(lines) == 0 {
		return nil, fmt.Errorf("%w: empty", errBadReport)
	}
	unpack, ok := strings.CutPrefix(lines[0], "unpack ")
	if !ok {
		return nil, fmt.Errorf("%w: it starts %q", errBadReport, clip(lines[0]))
	}
	if unpack != "ok" {
		return nil, &UnpackError{Reason: clip(unpack)}
	}
	result := map[string]error{}
	for _, l := range lines[1:] {
		switch {
		case strings.HasPrefix(l, "ok "):
			result[strings.TrimPrefix(l, "ok ")] = nil
		case strings.HasPrefix(l, "ng "):
			ref, reason, _ := strings.Cut(strings.TrimPrefix(l, "ng "), " ")
			result[ref] = &RejectedError{Ref: ref, Reason: clip(reason)}
		default:
			return nil, fmt.Errorf("%w: line %q", errBadReport, clip(l))
		}
	}
	out := make([]error, len(updates))
	for i, up := range updates {
		r, ok := result[up.Ref]
		if !ok {
			return nil, fmt.Errorf("%w: no word on %s", errBadReport, up.Ref)
		}
		out[i] = r
	}
	return out, nil
}

// pktLines splits a pkt-line stream up to its first flush, each line
// without its newline.
func pktLines(b []byte) ([]string, error) {
	var out []string
	for {
		if len(b) < 4 {
			return nil, fmt.Errorf("%w: it ends before a flush", errBadReport)
		}
		n, err := strconv.ParseUint(string(b[:4]), 16, 16)
		if err != nil {
			return nil, fmt.Errorf("%w: bad length %q", errBadReport, clip(string(b[:4])))
		}
		if n == 0 {
			return out, nil
		}
		if n < 4 || int(n) > len(b) {
			return nil, fmt.Errorf("%w: length %d out of range", errBadReport, n)
		}
		out = append(out, strings.TrimSuffix(string(b[4:n]), "\n"))
		b = b[n:]
	}
}

func clip(s string) string {
	if len(s) > 200 {
		return s[:200] + "…"
	}
	return s
}
