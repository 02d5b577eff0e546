package threadctx

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/mention-runner/mention-runner/internal/core/contract"
)

// Truncation records what the context left out.
type Truncation struct {
	BudgetBytes         int     `json:"budget_bytes"`
	CommentsTotal       int     `json:"comments_total"`
	CommentsKept        int     `json:"comments_kept"`
	DroppedIDs          []int64 `json:"dropped_ids"`
	ReviewsTotal        int     `json:"reviews_total,omitempty"`
	ReviewsKept         int     `json:"reviews_kept,omitempty"`
	DroppedReviewIDs    []int64 `json:"dropped_review_ids,omitempty"`
	ReviewCommentsTotal int     `json:"review_comments_total,omitempty"`
	ReviewCommentsKept  int     `json:"review_comments_kept,omitempty"`
	DroppedReviewCmtIDs []int64 `json:"dropped_review_comment_ids,omitempty"`
	// LabelsTotal and LabelsKept count the repository's labels gathered
	// and kept (labels over a sixteenth of the budget are cut).
	LabelsTotal int `json:"labels_total,omitempty"`
	LabelsKept  int `json:"labels_kept,omitempty"`
	// RepoLabels records, for each further repository whose labels were
	// asked for (repo=), how many were gathered and kept (a sixteenth of
	// the budget each), or why none were; RepoLabelsOver counts the
	// repositories past contract.MaxLabelRepos, not read.
	RepoLabels     map[string]RepoLabelCount `json:"repo_labels,omitempty"`
	RepoLabelsOver int                       `json:"repo_labels_over_cap,omitempty"`
	// AfterTriggerIDs are items created (or edited) after the trigger: never
	// shown to the agent, whatever the budget (SPEC §9).
	AfterTriggerIDs []int64 `json:"after_trigger_ids"`
}

// RepoLabelCount is one further repository's line in the truncation
// record.
type RepoLabelCount struct {
	Total   int    `json:"total"`
	Kept    int    `json:"kept"`
	Missing string `json:"missing,omitempty"`
}

// recordSlack covers the digits of the counts in the truncation record,
// which are only known after selection.
const recordSlack = 128

func assemble(req Request, o Options) (*Result, error) {
	var lists [3][]item
	var err error
	if lists[kindComment], err = parseItems(req.Comments, kindComment); err != nil {
		return nil, err
	}
	if lists[kindReview], err = parseItems(req.Reviews, kindReview); err != nil {
		return nil, err
	}
	if lists[kindReviewComment], err = parseItems(req.ReviewComments, kindReviewComment); err != nil {
		return nil, err
	}
	fixed := map[string]json.RawMessage{}
	for key, raw := range map[string]json.RawMessage{contract.KeyRepository: req.Repository, contract.KeyIssue: req.Issue, contract.KeyPullRequest: req.PullRequest} {
		if raw == nil {
			continue
		}
		c, err := compact(raw)
		if err != nil {
			return nil, fmt.Errorf("%s is not valid JSON: %w", key, err)
		}
		fixed[key] = c
	}

	trig, trigKind, err := findTrigger(req, fixed, lists)
	if err != nil {
		return nil, err
	}
	labels, labelsTotal, labelsKept, err := keepLabels(req.Labels, o.MaxBytes/16)
	if err != nil {
		return nil, err
	}

	repoLabels, repoCounts, repoCost, err := keepRepoLabels(req, o.MaxBytes/16)
	if err != nil {
		return nil, err
	}

	tr := Truncation{BudgetBytes: o.MaxBytes, DroppedIDs: []int64{}, AfterTriggerIDs: []int64{}, LabelsTotal: labelsTotal, LabelsKept: labelsKept,
		RepoLabels: repoCounts, RepoLabelsOver: req.RepoLabelsOver}
	// Drop what came after the trigger; the rest forms the pool.
	var pool []item
	keep := map[*item]bool{}
	for k := range lists {
		for i := range lists[k] {
			it := &lists[k][i]
			switch {
			case it.nodeID == trig.NodeID:
				keep[it] = true // the trigger: always kept
			case after(it, trig, kind(k) == trigKind):
				tr.AfterTriggerIDs = append(tr.AfterTriggerIDs, it.id)
			default:
				pool = append(pool, *it)
			}
		}
	}

	// Cost with every pool item dropped, then keep items in priority order
	// while they fit.
	used := 0
	for _, raw := range fixed {
		used += len(raw) + 32 // key and separators
	}
	used += len(trig.Raw) + 32
	if labels != nil {
		used += len(labels) + 32
	}
	used += repoCost
	for it := range keep {
		used += len(it.raw) + 1
	}
	for _, id := range tr.AfterTriggerIDs {
		used += digits(id) + 1
	}
	for _, it := range pool {
		used += digits(it.id) + 1
	}
	used += 3*32 + recordSlack // list keys and the record's own fields
	kept := map[[2]int]bool{}
	for _, it := range priority(pool) {
		delta := len(it.raw) + 1 - (digits(it.id) + 1)
		if used+delta <= o.MaxBytes {
			used += delta
			kept[[2]int{int(it.kind), it.index}] = true
		}
	}

	var out [3][]json.RawMessage
	for k := range lists {
		out[k] = []json.RawMessage{}
		var dropped []int64
		for i := range lists[k] {
			it := &lists[k][i]
			switch {
			case keep[it] || kept[[2]int{k, i}]:
				out[k] = append(out[k], it.raw)
			case !containsID(tr.AfterTriggerIDs, it.id):
				dropped = append(dropped, it.id)
			}
		}
		switch kind(k) {
		case kindComment:
			tr.CommentsTotal, tr.CommentsKept = len(lists[k]), len(out[k])
			if dropped != nil {
				tr.DroppedIDs = dropped
			}
		case kindReview:
			tr.ReviewsTotal, tr.ReviewsKept, tr.DroppedReviewIDs = len(lists[k]), len(out[k]), dropped
		case kindReviewComment:
			tr.ReviewCommentsTotal, tr.ReviewCommentsKept, tr.DroppedReviewCmtIDs = len(lists[k]), len(out[k]), dropped
		}
	}

	var b bytes.Buffer
	b.Grow(used)
	field := func(key string, raw []byte) {
		if b.Len() > 1 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Quote(key))
		b.WriteByte(':')
		b.Write(raw)
	}
	b.WriteByte('{')
	for _, key := range []string{contract.KeyRepository, contract.KeyIssue, contract.KeyPullRequest} {
		if raw, ok := fixed[key]; ok {
			field(key, raw)
		}
	}
	field(contract.KeyComments, joinArray(out[kindComment]))
	if req.IsPR {
		field(contract.KeyReviews, joinArray(out[kindReview]))
		field(contract.KeyReviewComments, joinArray(out[kindReviewComment]))
	}
	if labels != nil {
		field(contract.KeyLabels, labels)
	}
	if repoLabels != nil {
		field(contract.KeyRepoLabels, repoLabels)
	}
	field(contract.KeyTriggerComment, trig.Raw)
	rec, err := marshalNoEscape(tr)
	if err != nil {
		return nil, err
	}
	field(contract.KeyTruncation, rec)
	b.WriteByte('}')
	return &Result{JSON: b.Bytes(), Trigger: trig, Truncation: tr}, nil
}

// keepLabels compacts the repository's labels, keeping whole label
// objects in order while they fit in max bytes (nil raw: none gathered).
func keepLabels(raw json.RawMessage, max int) (kept []byte, total, n int, err error) {
	if raw == nil {
		return nil, 0, 0, nil
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, 0, 0, fmt.Errorf("labels are not a JSON array: %w", err)
	}
	var keep []json.RawMessage
	size := 2
	for _, it := range items {
		c, err := compact(it)
		if err != nil {
			return nil, 0, 0, fmt.Errorf("a label is not valid JSON: %w", err)
		}
		if size+len(c)+1 > max {
			break
		}
		size += len(c) + 1
		keep = append(keep, c)
	}
	return joinArray(keep), len(items), len(keep), nil
}

// keepRepoLabels is keepLabels for each further repository, each within
// max bytes, as one object keyed by lower-case owner/name (nil: none asked
// for), their lines of the truncation record, and what both cost of the
// budget.
func keepRepoLabels(req Request, max int) (obj []byte, counts map[string]RepoLabelCount, cost int, err error) {
	if len(req.RepoLabels) == 0 && len(req.RepoLabelsMissing) == 0 {
		return nil, nil, 0, nil
	}
	counts = map[string]RepoLabelCount{}
	for repo, why := range req.RepoLabelsMissing {
		counts[strings.ToLower(repo)] = RepoLabelCount{Missing: why}
	}
	kept := map[string]json.RawMessage{}
	for repo, raw := range req.RepoLabels {
		k, total, n, err := keepLabels(raw, max)
		if err != nil {
			return nil, nil, 0, fmt.Errorf("labels of %s: %w", repo, err)
		}
		kept[strings.ToLower(repo)] = k
		counts[strings.ToLower(repo)] = RepoLabelCount{Total: total, Kept: n}
	}
	obj, err = marshalNoEscape(kept) // keys sorted: the same context every time
	if err != nil {
		return nil, nil, 0, err
	}
	rec, err := marshalNoEscape(counts)
	if err != nil {
		return nil, nil, 0, err
	}
	// the object and its key, and the record's field (its counts' digits
	// included: they are known now)
	return obj, counts, len(obj) + 32 + len(rec) + 32, nil
}

// findTrigger looks the trigger up by node id among the lists, then the
// issue and pull request themselves (a mention in their body).
func findTrigger(req Request, fixed map[string]json.RawMessage, lists [3][]item) (Trigger, kind, error) {
	for k := range lists {
		for _, it := range lists[k] {
			if it.nodeID == req.TriggerNodeID {
				t, err := triggerOf(it.raw, kind(k) == kindReview)
				return t, kind(k), err
			}
		}
	}
	for _, key := range []string{contract.KeyPullRequest, contract.KeyIssue} {
		raw, ok := fixed[key]
		if !ok {
			continue
		}
		t, err := triggerOf(raw, false)
		if err != nil {
			return Trigger{}, 0, fmt.Errorf("%s: %w", key, err)
		}
		if t.NodeID == req.TriggerNodeID {
			return t, -1, nil
		}
	}
	return Trigger{}, 0, fmt.Errorf("%w: node id %q", ErrTriggerNotFound, req.TriggerNodeID)
}

// after reports whether it was created after the trigger, or edited after
// it (an edit-after-trigger could smuggle text in). Within one list, ids
// order items created in the same second.
func after(it *item, trig Trigger, sameList bool) bool {
	if trig.CreatedAt.IsZero() {
		return false
	}
	if it.at.After(trig.CreatedAt) || it.updated.After(trig.CreatedAt) {
		return true
	}
	return sameList && it.at.Equal(trig.CreatedAt) && it.id > trig.ID
}

// priority orders the pool for keeping: the three newest, then the oldest,
// then the next three newest, then the next oldest, and so on.
func priority(pool []item) []item {
	sorted := append([]item(nil), pool...)
	sort.SliceStable(sorted, func(i, j int) bool {
		a, b := sorted[i], sorted[j]
		if !a.at.Equal(b.at) {
			return a.at.Before(b.at)
		}
		if a.kind != b.kind {
			return a.kind < b.kind
		}
		return a.id < b.id
	})
	out := make([]item, 0, len(sorted))
	lo, hi := 0, len(sorted)-1
	for lo <= hi {
		for n := 0; n < 3 && lo <= hi; n++ {
			out = append(out, sorted[hi])
			hi--
		}
		if lo <= hi {
			out = append(out, sorted[lo])
			lo++
		}
	}
	return out
}

func joinArray(items []json.RawMessage) []byte {
	n := 2
	for _, it := range items {
		n += len(it) + 1
	}
	b := make([]byte, 0, n)
	b = append(b, '[')
	for i, it := range items {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, it...)
	}
	return append(b, ']')
}

// marshalNoEscape is json.Marshal without HTML escaping, so "<" in a body
// stays one byte.
func marshalNoEscape(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("encode: %w", err)
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}

func digits(id int64) int { return len(strconv.FormatInt(id, 10)) }

func containsID(ids []int64, id int64) bool {
	for _, x := range ids {
		if x == id {
			return true
		}
	}
	return false
}
