package transport

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/mention-runner/mention-runner/internal/core/contract"
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
	p, context, err := newPlan(jobID, context, ts, checked)
	if err != nil {
		return nil, err
	}
	reqs := make([]Request, len(p.ends))
	for i := range p.ends {
		reqs[i] = p.request(i, encodeBase64(p.piece(context, i)))
	}
	return reqs, nil
}

// WriteCompact compacts context in place (to the bytes json.Compact gives)
// and writes the request bodies Encode returns for the compacted context to
// w, each followed by a newline: the bytes a json.Encoder writes for them.
// Nothing is written unless the context is one JSON object; after that each
// body is base64-encoded just before it is written, so a reader has the
// first one while the rest are being encoded. It returns the compacted
// context (a prefix of context).
func WriteCompact(w io.Writer, jobID string, context []byte, ts time.Time) ([]byte, error) {
	p, context, err := newPlan(jobID, context, ts, compactObject)
	if err != nil {
		return nil, err
	}
	var body []byte // one request at a time, reused
	for i := range p.ends {
		head, err := json.Marshal(p.request(i, ""))
		if err != nil {
			return nil, fmt.Errorf("marshal request %d: %w", i, err)
		}
		// The piece goes between the quotes of the empty context_b64:
		// base64 characters are never escaped, so these are the bytes
		// json.Marshal gives for the whole request.
		cut := bytes.Index(head, []byte(`"context_b64":""`)) + len(`"context_b64":"`)
		src := p.piece(context, i)
		n := base64.StdEncoding.EncodedLen(len(src))
		body = append(append(body[:0], head[:cut]...), make([]byte, n)...)
		base64.StdEncoding.Encode(body[cut:], src)
		body = append(append(body, head[cut:]...), '\n')
		if _, err := w.Write(body); err != nil {
			return nil, fmt.Errorf("write request %d: %w", i, err)
		}
	}
	return context, nil
}

// plan is how a context is cut into requests: ends holds the end offset of
// each request's piece in the context's base64 text (one entry for
// agent_small).
type plan struct {
	id, stamp string
	small     bool
	total     int // base64 length of the whole context
	ends      []int
}

// checked is Encode's preparation of a context: checked, kept as given.
func checked(b []byte) ([]byte, *Error) { return b, checkObject(b) }

// newPlan checks the job id, the context (with prepare, which may rewrite
// it) and the timestamp, in that order, and cuts the prepared context.
func newPlan(jobID string, context []byte, ts time.Time, prepare func([]byte) ([]byte, *Error)) (plan, []byte, error) {
	id, err := contract.ParseJobID(jobID)
	if err != nil {
		return plan{}, nil, &Error{Kind: KindBadPayload, Index: -1, Msg: err.Error(), Err: err}
	}
	context, perr := prepare(context)
	if perr != nil {
		perr.JobID = id
		return plan{}, nil, perr
	}
	stamp := ts.UTC().Format(time.RFC3339Nano)
	if _, err := time.Parse(time.RFC3339, stamp); err != nil {
		return plan{}, nil, &Error{Kind: KindBadPayload, JobID: id, Index: -1, Msg: fmt.Sprintf("timestamp %q is not RFC 3339", stamp), Err: err}
	}
	p := plan{id: id, stamp: stamp, total: base64.StdEncoding.EncodedLen(len(context))}
	head, err := overhead(p.request(-1, ""))
	if err != nil {
		return plan{}, nil, err
	}
	if head+p.total < contract.DispatchBodyBytes {
		p.small, p.ends = true, []int{p.total}
		return p, context, nil
	}
	if p.ends, err = shard(id, stamp, p.total); err != nil {
		return plan{}, nil, err
	}
	return p, context, nil
}

// request is request i of the plan carrying piece b64 (i is ignored for
// agent_small).
func (p plan) request(i int, b64 string) Request {
	if p.small || i < 0 {
		return Request{EventType: contract.EventAgentSmall, ClientPayload: Payload{JobID: p.id, ContextB64: b64, Timestamp: p.stamp}}
	}
	return Request{EventType: contract.EventAgentShard, ClientPayload: Payload{
		JobID: p.id, Shard: &Shard{Index: i, Total: len(p.ends)}, ContextB64: b64, Timestamp: p.stamp}}
}

// piece is the part of context that request i's base64 piece encodes:
// pieces are cut at multiples of four characters, which are multiples of
// three bytes, so each piece encodes on its own to its part of the text.
func (p plan) piece(context []byte, i int) []byte {
	start := 0
	if i > 0 {
		start = p.ends[i-1] / 4 * 3
	}
	return context[start:min(p.ends[i]/4*3, len(context))]
}

// shard cuts a base64 text of n characters into the fewest agent_shard
// requests whose bodies fit and returns where each piece ends. The room in
// each body depends on the digits of index and total, so the total is
// found as a fixed point: count pieces assuming a total, raise the total to
// that count, repeat. The count never falls as the total rises, so this
// climbs to the first consistent total.
func shard(id, stamp string, n int) ([]int, error) {
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
		r := (contract.DispatchBodyBytes - 1 - h) &^ 3 // a multiple of 4 keeps each piece valid base64
		if r < 4 {
			return 0, newErr(KindTooLarge, id, i, "request overhead of %d bytes leaves no room for context", h)
		}
		return r, nil
	}
	count := func(total int) (int, error) {
		k := 0
		for left := n; left > 0; k++ {
			r, err := room(k, total)
			if err != nil {
				return 0, err
			}
			left -= r
		}
		return k, nil
	}
	total := 1
	for {
		k, err := count(total)
		if err != nil {
			return nil, err
		}
		if k == total {
			break
		}
		total = k
	}
	ends := make([]int, 0, total)
	for i, off := 0, 0; i < total; i++ {
		r, err := room(i, total)
		if err != nil {
			return nil, err
		}
		off = min(off+r, n)
		ends = append(ends, off)
	}
	return ends, nil
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

// compactObject is checkObject, then removes the insignificant whitespace
// of b in place: the bytes json.Compact gives, without a second buffer (a
// compact context is left as it is, unmoved).
func compactObject(b []byte) ([]byte, *Error) {
	if err := checkObject(b); err != nil {
		return nil, err
	}
	w, i := 0, 0
	for i < len(b) {
		switch c := b[i]; c {
		case '"':
			end := skipString(b, i)
			if w != i {
				copy(b[w:], b[i:end])
			}
			w, i = w+end-i, end
		case ' ', '\t', '\r', '\n':
			i++
		default:
			b[w] = c
			w, i = w+1, i+1
		}
	}
	return b[:w], nil
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
