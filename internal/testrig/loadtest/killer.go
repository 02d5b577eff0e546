package loadtest

import (
	"net/http"
	"os"
	"strings"
	"sync"
	"time"
)

// KillPlan SIGKILLs a real process at its At-th write request (POST,
// PATCH, PUT, DELETE; 1-based), as the simulator sees it: before the
// write is handled (the request is lost) or, with AfterApply, once it is
// stored but before the answer leaves (the write landed, the process
// never learns it). Tokens are the process's own: each run gets tokens of
// its own so its writes can be told apart.
type KillPlan struct {
	At         int
	AfterApply bool
	Tokens     []string
	// Match, when set, picks the request to kill at instead of At: the
	// first of the process's requests (reads too) it matches.
	Match func(*http.Request) bool
	// Then runs just before the kill (after the request is stored, with
	// AfterApply): something that happens while the process dies.
	Then func()
}

// killTarget is a registered plan and its process.
type killTarget struct {
	plan   KillPlan
	proc   *os.Process
	exited <-chan struct{}
	writes int
	fired  bool
}

// killer finds the process behind a write and kills it at its plan.
type killer struct {
	mu      sync.Mutex
	byToken map[string]*killTarget
}

// Kill registers plan for proc (exited closes when the process has been
// waited for); fired reports whether the kill happened and how many writes
// the process had sent by then (all of them when it was not killed). A
// plan with At 0 only counts.
func (w *World) Kill(plan KillPlan, proc *os.Process, exited <-chan struct{}) (fired func() (bool, int)) {
	t := &killTarget{plan: plan, proc: proc, exited: exited}
	w.kills.mu.Lock()
	if w.kills.byToken == nil {
		w.kills.byToken = map[string]*killTarget{}
	}
	for _, tok := range plan.Tokens {
		w.kills.byToken[tok] = t
	}
	w.kills.mu.Unlock()
	return func() (bool, int) {
		w.kills.mu.Lock()
		defer w.kills.mu.Unlock()
		return t.fired, t.writes
	}
}

// due counts a write of r's process and says whether to kill it now.
func (k *killer) due(r *http.Request) *killTarget {
	tok := strings.TrimPrefix(strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer "), "token ")
	if _, pass, ok := r.BasicAuth(); ok {
		tok = pass // a git push
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	t := k.byToken[tok]
	if t == nil || t.fired {
		return nil
	}
	write := false
	switch r.Method {
	case http.MethodPost, http.MethodPatch, http.MethodPut, http.MethodDelete:
		write = true
		t.writes++
	}
	switch {
	case t.plan.Match != nil:
		if !t.plan.Match(r) {
			return nil
		}
	case !write || t.plan.At == 0 || t.writes < t.plan.At:
		return nil
	}
	t.fired = true
	return t
}

// kill SIGKILLs the process and waits until it is reaped, so nothing it
// would do after this request happens.
func (t *killTarget) kill() {
	_ = t.proc.Kill()
	select {
	case <-t.exited:
	case <-time.After(time.Minute):
	}
}

func (k *killer) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t := k.due(r)
		if t == nil {
			h.ServeHTTP(w, r)
			return
		}
		if t.plan.AfterApply {
			rec := &heldResponse{header: http.Header{}}
			h.ServeHTTP(rec, r) // stored; the answer is held back
		}
		if t.plan.Then != nil {
			t.plan.Then()
		}
		t.kill()
		w.WriteHeader(http.StatusBadGateway) // nobody is left to read it
	})
}

// heldResponse takes an answer that is never sent.
type heldResponse struct {
	header http.Header
}

func (h *heldResponse) Header() http.Header         { return h.header }
func (h *heldResponse) Write(b []byte) (int, error) { return len(b), nil }
func (h *heldResponse) WriteHeader(int)             {}
