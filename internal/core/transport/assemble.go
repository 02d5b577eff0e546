package transport

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/mention-runner/mention-runner/internal/core/contract"
)

// strictBase64 also refuses non-zero padding bits, so each piece has exactly
// one spelling and duplicates can be compared by their decoded bytes.
var strictBase64 = base64.StdEncoding.Strict()

// minPieceForLimit is the fewest base64 characters Encode ever puts in a
// non-last shard (its real minimum is about 63,800); deriving MaxShards from
// it leaves headroom while still bounding memory.
const minPieceForLimit = 60000

// Options bounds what an Assembler accepts. Zero or negative values take the
// defaults: MaxContextBytes = DefaultMaxContextBytes, and MaxShards =
// ceil(base64 length of a MaxContextBytes context / 60,000) + 1, which is 188
// for 8 MiB — more than Encode ever needs for a context under the cap.
type Options struct {
	MaxContextBytes int
	MaxShards       int
}

func (o Options) withDefaults() Options {
	if o.MaxContextBytes <= 0 {
		o.MaxContextBytes = DefaultMaxContextBytes
	}
	if o.MaxShards <= 0 {
		b64 := (o.MaxContextBytes + 2) / 3 * 4
		o.MaxShards = (b64+minPieceForLimit-1)/minPieceForLimit + 1
	}
	return o
}

// Progress is where a job's assembly stands after an Add.
type Progress struct {
	JobID       string
	Have, Total int
	Done        bool
	// Missing lists the shard indices not yet seen, in order.
	Missing []int
}

// Assembler collects the events of one job. It is not safe for concurrent
// use. The first error is sticky: every later Add and Context returns it, so
// a job with one bad event never yields a context.
type Assembler struct {
	opt     Options
	jobID   string
	small   bool     // the job arrived as agent_small
	total   int      // 0 until the first event
	pieces  [][]byte // decoded pieces by index; nil = not seen yet
	have    int
	decoded int // sum of len(pieces)
	// joined holds pieces 0..next-1 back to back, and those pieces are
	// views of it. A piece arriving in order is decoded straight onto its
	// end and one arriving early is copied on when its turn comes, so the
	// context is joined by the time the last piece is in.
	joined  []byte
	next    int
	err     *Error
	context []byte
}

// NewAssembler returns an empty Assembler.
func NewAssembler(o Options) *Assembler {
	return &Assembler{opt: o.withDefaults()}
}

// Add checks one event against the job so far and stores its piece. An event
// that repeats an earlier one byte for byte is harmless.
func (a *Assembler) Add(eventType string, p Payload) (Progress, error) {
	if a.err != nil {
		return a.progress(), a.err
	}
	if err := a.add(eventType, p); err != nil {
		a.err = err
		return a.progress(), err
	}
	return a.progress(), nil
}

func (a *Assembler) add(eventType string, p Payload) *Error {
	index := -1
	if p.Shard != nil {
		index = p.Shard.Index
	}
	if err := a.checkHeader(eventType, p, index); err != nil {
		return err
	}
	if a.jobID == "" {
		a.jobID = p.JobID
	} else if p.JobID != a.jobID {
		return newErr(KindJobIDMismatch, a.jobID, index, "event belongs to job %s, not to this job", p.JobID)
	}

	total := 1
	if eventType == contract.EventAgentShard {
		total = p.Shard.Total
		if total < 1 {
			return newErr(KindIndexOutOfRange, a.jobID, index, "shard total %d must be at least 1", total)
		}
		if total > a.opt.MaxShards {
			return newErr(KindTooManyShards, a.jobID, index, "job declares %d shards; at most %d are accepted", total, a.opt.MaxShards)
		}
		if index < 0 || index >= total {
			return newErr(KindIndexOutOfRange, a.jobID, index, "shard index %d is outside 0..%d", index, total-1)
		}
	} else {
		index = 0
	}
	switch {
	case a.total == 0:
		a.small = eventType == contract.EventAgentSmall
		a.total = total
		a.pieces = make([][]byte, total)
	case a.small != (eventType == contract.EventAgentSmall):
		return newErr(KindEventTypeMismatch, a.jobID, p.index(), "an %s event cannot join a job that arrived as %s", eventType, a.eventType())
	case total != a.total:
		return newErr(KindTotalMismatch, a.jobID, index, "shard says total %d, earlier shards said %d", total, a.total)
	}

	prev := a.pieces[index]
	if prev == nil {
		// Size first, from the text alone, so nothing is decoded past the cap.
		if n := a.decoded + decodedLen(p.ContextB64); n > a.opt.MaxContextBytes {
			return newErr(KindTooLarge, a.jobID, p.index(), "context exceeds the cap of %d bytes (%d bytes so far)", a.opt.MaxContextBytes, n)
		}
	}
	piece, err := a.decodePiece(p.ContextB64, index, prev == nil && index == a.next)
	if err != nil {
		return err
	}
	if prev != nil {
		if !bytes.Equal(prev, piece) {
			return newErr(KindConflictingDuplicate, a.jobID, p.index(), "a second %s event carries different content", a.eventType())
		}
		return nil
	}
	a.pieces[index] = piece
	a.decoded += len(piece)
	a.have++
	a.join()
	return nil
}

// join moves pieces that now follow joined in order onto it: the one just
// decoded in place, then any that came early.
func (a *Assembler) join() {
	for a.next < a.total && a.pieces[a.next] != nil {
		p := a.pieces[a.next]
		end := len(a.joined) + len(p)
		if end > cap(a.joined) || &a.joined[:end][len(a.joined)] != &p[0] {
			a.grow(len(p))
			end = len(a.joined) + len(p)
			copy(a.joined[len(a.joined):end], p)
		}
		a.pieces[a.next] = a.joined[len(a.joined):end:end]
		a.joined = a.joined[:end]
		a.next++
	}
}

// grow makes room for n more bytes on joined, moving the pieces' views
// with it. The first piece sizes it for the whole job: every piece of a job
// is about as long as its first (never past the cap).
func (a *Assembler) grow(n int) {
	if cap(a.joined)-len(a.joined) >= n {
		return
	}
	if a.joined == nil {
		size := a.opt.MaxContextBytes
		if n > 0 && a.total <= size/n {
			size = n * a.total
		}
		a.joined = make([]byte, 0, max(size, n))
		return
	}
	g := slices.Grow(a.joined, n)
	for i, off := 0, 0; i < a.next; i++ {
		l := len(a.pieces[i])
		a.pieces[i] = g[off : off+l : off+l]
		off += l
	}
	a.joined = g
}

// checkHeader validates what does not depend on the job so far.
func (a *Assembler) checkHeader(eventType string, p Payload, index int) *Error {
	switch eventType {
	case contract.EventAgentSmall:
		if p.Shard != nil {
			return newErr(KindEventTypeMismatch, p.JobID, index, "agent_small event carries a shard field")
		}
	case contract.EventAgentShard:
		if p.Shard == nil {
			return newErr(KindEventTypeMismatch, p.JobID, -1, "agent_shard event has no shard field")
		}
	default:
		return newErr(KindBadPayload, p.JobID, index, "unknown event type %q (want %s or %s)", truncateString(eventType), contract.EventAgentSmall, contract.EventAgentShard)
	}
	if err := contract.CheckJobID(p.JobID); err != nil {
		return &Error{Kind: KindBadPayload, Index: index, Msg: err.Error()}
	}
	if p.Timestamp == "" {
		return newErr(KindBadPayload, p.JobID, index, "timestamp is missing")
	}
	if _, err := time.Parse(time.RFC3339, p.Timestamp); err != nil {
		return &Error{Kind: KindBadPayload, JobID: p.JobID, Index: index, Msg: fmt.Sprintf("timestamp %q is not RFC 3339", truncateString(p.Timestamp)), Err: err}
	}
	return nil
}

// decodePiece checks the size before decoding, then insists on canonical,
// padded, standard base64 with no line breaks; only the last shard may pad,
// so that the concatenation of all pieces is valid base64 too.
//
// In place, it decodes onto the free end of joined (join then takes it in);
// otherwise into a new slice.
func (a *Assembler) decodePiece(s string, index int, inPlace bool) ([]byte, *Error) {
	at := -1
	if !a.small {
		at = index
	}
	if len(s) >= contract.DispatchBodyBytes {
		return nil, newErr(KindTooLarge, a.jobID, at, "context_b64 of %d characters cannot come from a request body under %d bytes", len(s), contract.DispatchBodyBytes)
	}
	if s == "" {
		if a.small {
			return nil, newErr(KindNotJSONObject, a.jobID, at, "context_b64 is empty")
		}
		return nil, newErr(KindInvalidBase64, a.jobID, at, "context_b64 is empty")
	}
	if len(s)%4 != 0 {
		return nil, newErr(KindInvalidBase64, a.jobID, at, "context_b64 length %d is not a multiple of 4", len(s))
	}
	// base64 decoding skips line breaks; they are refused here (two
	// IndexByte scans run at memory speed, IndexAny does not).
	if i := lineBreak(s); i >= 0 {
		return nil, newErr(KindInvalidBase64, a.jobID, at, "context_b64 has a line break at offset %d", i)
	}
	if s[len(s)-1] == '=' && index != a.total-1 {
		return nil, newErr(KindInvalidBase64, a.jobID, at, "padding in shard %d, which is not the last of %d", index, a.total)
	}
	n := strictBase64.DecodedLen(len(s))
	var out []byte
	if inPlace {
		a.grow(n)
		out = a.joined[len(a.joined) : len(a.joined)+n]
	} else {
		out = make([]byte, n)
	}
	n, err := strictBase64.Decode(out, []byte(s)) // the conversion does not copy: s does not escape
	out = out[:n:n]
	if err != nil {
		return nil, &Error{Kind: KindInvalidBase64, JobID: a.jobID, Index: at, Msg: "context_b64 is not valid standard padded base64", Err: err}
	}
	if len(out) == 0 {
		return nil, newErr(KindInvalidBase64, a.jobID, at, "context_b64 decodes to nothing")
	}
	return out, nil
}

// Context returns the decoded context once every piece is in and it is
// exactly one JSON object. It never returns a partial context. The returned
// slice is shared with the Assembler; copy it before changing it.
func (a *Assembler) Context() ([]byte, error) {
	if a.err != nil {
		return nil, a.err
	}
	if a.context != nil {
		return a.context, nil
	}
	if a.total == 0 || a.have < a.total {
		pr := a.progress()
		if a.total == 0 {
			return nil, newErr(KindIncomplete, "", -1, "no events received")
		}
		return nil, newErr(KindIncomplete, a.jobID, -1, "have %d of %d shards; missing %s", pr.Have, pr.Total, listInts(pr.Missing, 20))
	}
	if a.next != a.total || len(a.joined) != a.decoded {
		// join takes every piece in as soon as its turn comes; a gap here
		// is a bug, and a partial context is never handed out for it
		return nil, newErr(KindIncomplete, a.jobID, -1, "internal error: %d of %d pieces joined (%d of %d bytes)", a.next, a.total, len(a.joined), a.decoded)
	}
	buf := a.joined
	if err := checkObject(buf); err != nil {
		err.JobID = a.jobID
		err.Msg = "decoded " + err.Msg
		a.err = err
		return nil, err
	}
	a.context = buf
	return buf, nil
}

func (a *Assembler) progress() Progress {
	pr := Progress{JobID: a.jobID, Have: a.have, Total: a.total, Done: a.total > 0 && a.have == a.total}
	if pr.Done {
		return pr
	}
	if a.total > a.have {
		pr.Missing = make([]int, 0, a.total-a.have)
	}
	for i, p := range a.pieces {
		if p == nil {
			pr.Missing = append(pr.Missing, i)
		}
	}
	return pr
}

func (a *Assembler) eventType() string {
	if a.small {
		return contract.EventAgentSmall
	}
	return contract.EventAgentShard
}

func (p Payload) index() int {
	if p.Shard == nil {
		return -1
	}
	return p.Shard.Index
}

func listInts(xs []int, max int) string {
	s := ""
	for i, x := range xs {
		if i == max {
			return s + fmt.Sprintf(" and %d more", len(xs)-max)
		}
		if i > 0 {
			s += ", "
		}
		s += fmt.Sprint(x)
	}
	return s
}

func truncateString(s string) string {
	if len(s) > 60 {
		return s[:60] + "…"
	}
	return s
}

// decodedLen is the byte length s decodes to, assuming it is valid base64.
func decodedLen(s string) int {
	n := len(s) / 4 * 3
	for i := len(s) - 1; i >= 0 && i >= len(s)-2 && s[i] == '='; i-- {
		n--
	}
	return max(n, 0)
}

// lineBreak is the offset of the first CR or LF in s, or -1.
func lineBreak(s string) int {
	cr, lf := strings.IndexByte(s, '\r'), strings.IndexByte(s, '\n')
	if cr < 0 || (lf >= 0 && lf < cr) {
		return lf
	}
	return cr
}
