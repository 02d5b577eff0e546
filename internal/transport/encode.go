package transport

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/mention-runner/mention-runner/internal/contract"
)

// Encode turns a context (one JSON object, bytes kept as given) into the
// request bodies to POST, in index order. The jobid is written in canonical
// lowercase form; the timestamp is ts in UTC as RFC 3339 (RFC3339Nano layout,
// so trailing zero fractions are dropped).
//
// One agent_small request is used when its whole marshalled body is shorter
// than contract.DispatchBodyBytes; otherwise the base64 text is cut at multiples of four
// characters into agent_shard requests, each body shorter than contract.DispatchBodyBytes.
func Encode(jobID string, context []byte, ts time.Time) ([]Request, error) {
	id, err := contract.ParseJobID(jobID)
	if err != nil {
		return nil, &Error{Kind: KindBadPayload, Index: -1, Msg: err.Error(), Err: err}
	}
	if err := checkObject(context); err != nil {
		err.JobID = id
		return nil, err
	}
	stamp := ts.UTC().Format(time.RFC3339Nano)
	if _, err := time.Parse(time.RFC3339, stamp); err != nil {
		return nil, &Error{Kind: KindBadPayload, JobID: id, Index: -1, Msg: fmt.Sprintf("timestamp %q is not RFC 3339", stamp), Err: err}
	}
	b64 := encodeBase64(context)

	small := Request{EventType: contract.EventAgentSmall, ClientPayload: Payload{JobID: id, Timestamp: stamp}}
	head, err := overhead(small)
	if err != nil {
		return nil, err
	}
	if head+len(b64) < contract.DispatchBodyBytes {
		small.ClientPayload.ContextB64 = b64
		return []Request{small}, nil
	}
	return shard(id, stamp, b64)
}

// shard cuts b64 into the fewest agent_shard requests whose bodies fit. The
// room in each body depends on the digits of index and total, so the total is
// found as a fixed point: count pieces assuming a total, raise the total to
// that count, repeat. The count never falls as the total rises, so this
// climbs to the first consistent total.
func shard(id, stamp, b64 string) ([]Request, error) {
	// The overhead depends only on how many digits index and total have, so
	// it is measured once per digit pair.
	measured := map[[2]int]int{}
	room := func(i, total int) (int, error) {
		key := [2]int{len(strconv.Itoa(i)), len(strconv.Itoa(total))}
		h, ok := measured[key]
		if !ok {
			var err error
			h, err = overhead(Request{EventType: contract.EventAgentShard, ClientPayload: Payload{
				JobID: id, Shard: &Shard{Index: i, Total: total}, Timestamp: stamp}})
			if err != nil {
				return 0, err
			}
			measured[key] = h
		}
		n := (contract.DispatchBodyBytes - 1 - h) &^ 3 // a multiple of 4 keeps each piece valid base64
		if n < 4 {
			return 0, newErr(KindTooLarge, id, i, "request overhead of %d bytes leaves no room for context", h)
		}
		return n, nil
	}
	count := func(total int) (int, error) {
		n := 0
		for left := len(b64); left > 0; n++ {
			r, err := room(n, total)
			if err != nil {
				return 0, err
			}
			left -= r
		}
		return n, nil
	}
	total := 1
	for {
		n, err := count(total)
		if err != nil {
			return nil, err
		}
		if n == total {
			break
		}
		total = n
	}
	reqs := make([]Request, 0, total)
	for i, off := 0, 0; i < total; i++ {
		r, err := room(i, total)
		if err != nil {
			return nil, err
		}
		end := min(off+r, len(b64))
		reqs = append(reqs, Request{EventType: contract.EventAgentShard, ClientPayload: Payload{
			JobID: id, Shard: &Shard{Index: i, Total: total}, ContextB64: b64[off:end], Timestamp: stamp}})
		off = end
	}
	return reqs, nil
}

// overhead is the marshalled body length of r without its context. Base64
// characters are never escaped by encoding/json, so a body with a piece of n
// characters is exactly overhead+n bytes.
func overhead(r Request) (int, error) {
	r.ClientPayload.ContextB64 = ""
	b, err := json.Marshal(r)
	if err != nil {
		return 0, fmt.Errorf("marshal request: %w", err)
	}
	return len(b), nil
}

// checkObject accepts exactly one JSON object, optionally surrounded by
// JSON whitespace.
func checkObject(b []byte) *Error {
	t := bytes.TrimLeft(b, " \t\r\n")
	if len(t) == 0 {
		return newErr(KindNotJSONObject, "", -1, "context is empty; it must be one JSON object")
	}
	if !validJSON(b) {
		return newErr(KindNotJSONObject, "", -1, "context is not valid JSON (or has data after the object)")
	}
	if t[0] != '{' {
		return newErr(KindNotJSONObject, "", -1, "context must be a JSON object, not %s", jsonKind(t[0]))
	}
	return nil
}

func jsonKind(c byte) string {
	switch c {
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	default:
		return "a number"
	}
}

// encodeBase64 is base64.StdEncoding.EncodeToString without the second copy
// that converting its []byte to a string makes; contexts run to megabytes.
func encodeBase64(b []byte) string {
	var sb strings.Builder
	sb.Grow(base64.StdEncoding.EncodedLen(len(b)))
	enc := base64.NewEncoder(base64.StdEncoding, &sb)
	enc.Write(b) // writes to a strings.Builder cannot fail
	enc.Close()
	return sb.String()
}
