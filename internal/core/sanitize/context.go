package sanitize

import (
	"errors"
	"fmt"
	"time"

	"github.com/mention-runner/mention-runner/internal/core/contract"
)

// Withheld replaces the body of a comment edited after the trigger: what it
// said when the person asked is gone, and what it says now was written
// after the request, possibly to steer the agent.
const Withheld = "[edited after the trigger; content withheld]"

// Errors callers branch on. Returned wrapped with detail; use errors.Is.
var (
	// ErrInvalidContext: the context is not one well-formed JSON object.
	ErrInvalidContext = errors.New("context is not a valid JSON object")
	// ErrNoTrigger: the trigger comment, whose time is the cutoff, cannot be
	// found or has no usable timestamp. Without it nothing can be dated, so
	// the run must not start.
	ErrNoTrigger = errors.New("trigger comment not found in context")
)

// Report says what Context changed.
type Report struct {
	Counts                        // from Text over every string outside code fields
	CodeEscapes    int            // invisible characters made visible in diff/patch/diff_hunk
	DuplicateKeys  int            // repeated object keys collapsed (last one kept)
	Dropped        map[string]int // per collection: items created after the trigger or undatable
	WithheldEdited int            // bodies withheld because edited after the trigger
	TriggerAt      time.Time      // the cutoff: the trigger's created_at
	TriggerEdited  bool           // the trigger itself was edited after it was posted
}

// dated names the collections filtered by time and the field that dates
// their items. A review is dated when submitted; a pending review has no
// submitted_at and only its author can see it, so it goes.
var dated = []struct{ key, timeField string }{
	{contract.KeyComments, "created_at"},
	{contract.KeyReviews, "submitted_at"},
	{contract.KeyReviewComments, "created_at"},
}

// codeKeys hold source code: escaped, not stripped.
var codeKeys = map[string]bool{"diff": true, "patch": true, "diff_hunk": true}

// bodyKeys hold an item's text in its several renderings.
var bodyKeys = []string{"body", "body_text", "body_html"}

// Context returns a sanitized copy of the context JSON (SPEC §4: an object
// of raw GitHub API responses). Every string is cleaned with Text, except
// code fields (diff, patch, diff_hunk) which get Code. Comments, reviews and
// review comments created after the trigger comment are dropped, as are
// items that cannot be dated; bodies of comments edited after it are
// replaced with Withheld. Unknown keys pass through, cleaned. Output is
// compact JSON, keys in input order, numbers as written. Idempotent.
//
// triggerCommentID identifies the trigger: it must match
// trigger_comment.id, or, without trigger_comment, an item of comments or
// review_comments. Zero accepts trigger_comment as is.
func Context(ctx []byte, triggerCommentID int64) ([]byte, Report, error) {
	rep := Report{Dropped: map[string]int{}}
	root, err := parseJSON(ctx)
	if err != nil {
		return nil, rep, fmt.Errorf("%w: %w", ErrInvalidContext, err)
	}
	if root.kind != kindObject {
		return nil, rep, fmt.Errorf("%w: top level is not an object", ErrInvalidContext)
	}
	clean(root, "", &rep)

	trig, err := findTrigger(root, triggerCommentID)
	if err != nil {
		return nil, rep, err
	}
	rep.TriggerAt = trig.at
	if up, ok := timeField(trig.item, "updated_at"); ok && up.After(trig.at) {
		rep.TriggerEdited = true
	}
	for _, d := range dated {
		list := root.get(d.key)
		if list == nil || list.kind != kindArray {
			continue
		}
		kept := list.vals[:0]
		for _, item := range list.vals {
			if trig.after(item, d.key, d.timeField) {
				rep.Dropped[d.key]++
				continue
			}
			if trig.editedAfter(item) {
				for _, k := range bodyKeys {
					item.setString(k, Withheld)
				}
				rep.WithheldEdited++
			}
			kept = append(kept, item)
		}
		clear(list.vals[len(kept):])
		list.vals = kept
	}
	return root.encode(make([]byte, 0, len(ctx))), rep, nil
}

// clean sanitizes every string under n in place and collapses duplicate
// keys, including ones that only collide once cleaned.
func clean(n *node, key string, rep *Report) {
	switch n.kind {
	case kindString:
		if codeKeys[key] {
			s, esc := CodeCounts(n.str)
			n.str = s
			rep.CodeEscapes += esc
			return
		}
		s, c := TextCounts(n.str)
		n.str = s
		rep.add(c)
	case kindArray:
		for _, v := range n.vals {
			clean(v, key, rep)
		}
	case kindObject:
		seen := make(map[string]int, len(n.keys))
		keys, vals := n.keys[:0], n.vals[:0]
		for i, k := range n.keys {
			k, c := TextCounts(k)
			rep.add(c)
			v := n.vals[i]
			clean(v, k, rep)
			if j, dup := seen[k]; dup {
				vals[j] = v // last wins, as encoding/json decides
				rep.DuplicateKeys++
				continue
			}
			seen[k] = len(keys)
			keys = append(keys, k)
			vals = append(vals, v)
		}
		n.keys, n.vals = keys, vals
	}
}

// trigger is the cutoff and where the trigger came from, for ties.
type trigger struct {
	item       *node
	id         int64
	at         time.Time
	collection string
}

func findTrigger(root *node, wantID int64) (trigger, error) {
	if tc := root.get(contract.KeyTriggerComment); tc != nil {
		if tc.kind != kindObject {
			return trigger{}, fmt.Errorf("%w: trigger_comment is not an object", ErrNoTrigger)
		}
		id, hasID := tc.getInt("id")
		if wantID != 0 && (!hasID || id != wantID) {
			return trigger{}, fmt.Errorf("%w: trigger_comment id is not %d", ErrNoTrigger, wantID)
		}
		coll := contract.KeyComments
		if tc.has("pull_request_review_id") {
			coll = contract.KeyReviewComments
		}
		return newTrigger(tc, id, coll)
	}
	if wantID == 0 {
		return trigger{}, fmt.Errorf("%w: no trigger_comment and no trigger id given", ErrNoTrigger)
	}
	for _, coll := range []string{contract.KeyComments, contract.KeyReviewComments} {
		list := root.get(coll)
		if list == nil || list.kind != kindArray {
			continue
		}
		for _, item := range list.vals {
			if id, ok := item.getInt("id"); ok && id == wantID {
				return newTrigger(item, id, coll)
			}
		}
	}
	return trigger{}, fmt.Errorf("%w: no comment with id %d", ErrNoTrigger, wantID)
}

func newTrigger(item *node, id int64, coll string) (trigger, error) {
	at, ok := timeField(item, "created_at")
	if !ok {
		return trigger{}, fmt.Errorf("%w: trigger comment %d has no valid created_at", ErrNoTrigger, id)
	}
	return trigger{item: item, id: id, at: at, collection: coll}, nil
}

// after reports whether item must be dropped: created after the trigger,
// or not datable (fail closed). GitHub stamps whole seconds, so a tie in
// the trigger's own collection is broken by id, which grows with time.
func (t trigger) after(item *node, coll, field string) bool {
	at, ok := timeField(item, field)
	if !ok {
		return true
	}
	if at.After(t.at) {
		return true
	}
	if at.Equal(t.at) && coll == t.collection && t.id != 0 {
		id, ok := item.getInt("id")
		return ok && id > t.id
	}
	return false
}

// editedAfter reports a body changed after the trigger. The trigger itself
// is the instruction and is reported, not withheld.
func (t trigger) editedAfter(item *node) bool {
	if item == t.item {
		return false
	}
	if id, ok := item.getInt("id"); ok && t.id != 0 && id == t.id {
		return false
	}
	up, ok := timeField(item, "updated_at")
	return ok && up.After(t.at)
}

func timeField(n *node, key string) (time.Time, bool) {
	s, ok := n.getString(key)
	if !ok {
		return time.Time{}, false
	}
	t, err := time.Parse(time.RFC3339, s)
	return t, err == nil
}
