package policy

import (
	"strconv"
	"strings"
	"sync"
)

// Ledger is what this run already wrote: issues and PRs per run, comments
// per thread. It is safe for concurrent use; the zero value is empty.
type Ledger struct {
	mu       sync.Mutex
	issues   int
	prs      int
	total    int // every recorded write
	labels   int // label changes (each label named counts one)
	comments map[threadKey]int
	// ids key a thread by its repository's id when known, so the same
	// thread under an old name (GitHub redirects it) shares one count.
	ids IDs
}

type threadKey struct {
	repo   string // lower-cased
	number int
}

func (l *Ledger) keyOf(repo string, number int) threadKey {
	if id := l.ids.Of(repo).Repo; id != 0 {
		return threadKey{"id:" + strconv.FormatInt(id, 10), number}
	}
	return threadKey{strings.ToLower(repo), number}
}

// NewLedger returns an empty ledger.
func NewLedger() *Ledger { return &Ledger{} }

// NewLedgerIDs returns an empty ledger that counts comments per thread by
// repository id where ids knows it.
func NewLedgerIDs(ids IDs) *Ledger { return &Ledger{ids: ids} }

// ReplayIDs is Replay into NewLedgerIDs(ids).
func ReplayIDs(ids IDs, actions []Action) *Ledger {
	l := NewLedgerIDs(ids)
	for _, a := range actions {
		l.record(a)
	}
	return l
}

// Replay rebuilds a ledger from the actions a run was already allowed, e.g.
// the publish job re-reading outputs.jsonl.
func Replay(actions []Action) *Ledger {
	l := NewLedger()
	for _, a := range actions {
		l.record(a)
	}
	return l
}

// Record counts a as done. Unknown kinds are ignored.
func (l *Ledger) Record(a Action) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.record(a)
}

func (l *Ledger) record(a Action) {
	l.total++
	switch a.Kind {
	case KindIssue:
		l.issues++
	case KindPullRequest, KindPush:
		l.prs++
	case KindLabels:
		l.labels += a.Changes
	case KindComment, KindReview:
		if l.comments == nil {
			l.comments = map[threadKey]int{}
		}
		l.comments[l.keyOf(a.Repo, a.Number)]++
	}
}

// Issues is how many issues were recorded.
func (l *Ledger) Issues() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.issues
}

// PRs is how many pull requests were recorded.
func (l *Ledger) PRs() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.prs
}

// Labels is how many label changes were recorded.
func (l *Ledger) Labels() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.labels
}

// Comments is how many comments were recorded on one thread.
func (l *Ledger) Comments(t Thread) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.comments[l.keyOf(t.Repo, t.Number)]
}
