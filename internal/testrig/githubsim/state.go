package githubsim

import (
	"encoding/json"
	"time"
)

// repoState is a repository and everything GitHub keeps about it outside git.
type repoState struct {
	meta       *Repo
	perms      map[string]string // lower login → permission
	labels     map[string]*label // lower name
	labelOrder []string
	issues     map[int]*issue
	nextNumber int
	dispatches []Dispatch
	forks      []string // full names
	git        *gitStore
	// protected are branches (full ref names) with a protection rule that
	// refuses the bot's pushes.
	protected map[string]bool
}

type label struct {
	id          int64
	name        string
	color       string
	description string
}

type issue struct {
	id          int64
	number      int
	title       string
	body        string
	author      string
	state       string // "open" | "closed"
	stateReason string
	labels      []string // names as created
	created     time.Time
	updated     time.Time
	edited      time.Time // last body edit (GraphQL lastEditedAt); zero = never
	closed      time.Time
	comments    []int64
	reactions   []*reaction
	pull        *pull // nil for plain issues
}

type pull struct {
	id       int64
	headRepo string // full name
	headRef  string
	headSHA  string
	baseRef  string
	baseSHA  string
	diff     string // fixed diff from CreatePR; "" = compute from git
	draft    bool
	// maintainerCanModify: a fork's pull request lets the base
	// repository's writers push to its head branch.
	maintainerCanModify bool
	reviews             []*review
	rcomms              []*reviewComment
}

type review struct {
	id        int64
	author    string
	state     string
	body      string
	commitID  string
	submitted time.Time
	edited    time.Time // last body edit; REST shows no trace of it
}

type reviewComment struct {
	id        int64
	reviewID  int64
	author    string
	path      string
	line      int
	body      string
	diffHunk  string
	commitID  string
	created   time.Time
	reactions []*reaction
}

type comment struct {
	id        int64
	repo      string // lower full name
	number    int
	author    string
	body      string
	created   time.Time
	updated   time.Time
	edited    time.Time // last body edit; zero = never
	reactions []*reaction
}

type reaction struct {
	id      int64
	user    string
	content string
	created time.Time
}

// thread is a notification thread for one user about one issue or PR.
type thread struct {
	id         string
	login      string // lower
	repo       string // lower full name
	number     int
	reason     string
	unread     bool
	updated    time.Time
	lastRead   time.Time
	latestURL  string // path relative to base, e.g. "repos/o/r/issues/comments/1"
	subjectTyp string
}

// Dispatch is one accepted repository_dispatch request.
type Dispatch struct {
	EventType     string
	ClientPayload json.RawMessage
	Body          []byte
	At            time.Time
}

// LoggedRequest is one request the simulator received, faults included.
type LoggedRequest struct {
	Method           string
	Path             string
	Query            string
	Status           int // 0 when the connection was reset
	ReqBody          []byte
	RespBody         []byte
	Token            string
	Login            string
	CountedRateLimit bool
	Fault            string
	// AppliedStatus is the status the request was served with before an
	// apply-then-fail fault replaced the answer (0 = not applied).
	AppliedStatus int
	At            time.Time
	seq           int64 // arrival order
	// Start and End are the wall-clock times the request arrived and its
	// handler ended (whatever the simulated clock says): RoundTrips reads
	// them.
	Start, End time.Time
	// Arrived and Ended order the same two moments on one counter, where
	// times tie (in a testing/synctest bubble requests take no time): a
	// request that arrived before another's handler ended has the lower
	// Arrived than that one's Ended.
	Arrived, Ended int64
}

// maxLoggedBody caps bodies kept in the request log.
const maxLoggedBody = 64 << 10

var permRank = map[string]int{"none": 0, "read": 1, "triage": 2, "write": 3, "maintain": 4, "admin": 5}

// permissionLocked is login's effective permission on r ("" login = anonymous).
func (s *Sim) permissionLocked(r *repoState, login string) string {
	best := "none"
	raise := func(p string) {
		if permRank[p] > permRank[best] {
			best = p
		}
	}
	if !r.meta.Private {
		raise("read")
	}
	if login == "" {
		return best
	}
	l := lower(login)
	if lower(r.meta.Owner) == l {
		return "admin"
	}
	if roles, ok := s.members[lower(r.meta.Owner)]; ok {
		switch roles[l] {
		case "admin":
			raise("admin")
		case "member":
			raise("read")
		}
	}
	if p, ok := r.perms[l]; ok {
		raise(p)
	}
	return best
}

func atLeast(have, want string) bool { return permRank[have] >= permRank[want] }
