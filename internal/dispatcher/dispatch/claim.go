package dispatch

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/mention-runner/mention-runner/internal/core/contract"
	"github.com/mention-runner/mention-runner/internal/core/refpush"
	"github.com/mention-runner/mention-runner/internal/core/refstate"
	"github.com/mention-runner/mention-runner/internal/core/writebudget"
)

// A mention is claimed with a state ref in CONTROL, RefPrefix+jobid,
// pointing at a state commit (internal/core/refstate):
//
//	(none) ──create──► claimed ──advance──► dispatched
//	                      │  └──advance──► released (a failed send: anyone may retry at once)
//	                      └── older than the lease: taken over (advance to a claim of ours)
//
// Each dispatcher process has a holder name of its own, so a claim whose
// answer was lost is recognised as ours on the retry. Its claim commit is
// made once and reused (a new one every claimRotate, so the commit date
// tells a claim's age within that). A dispatched mark points the ref at
// the hour's shared "dispatched" commit (refstate.SetShared), forced: a
// mention costs two ref writes and no commit of its own. A takeover commits on top of the
// stale claim and advances without force, so of several dispatchers only
// one takes it over.

// Claim states.
const (
	// StatusClaimed is also what a claim ref pointing at a write-budget
	// grant's commit reads as (see grantMark).
	StatusClaimed    = refstate.GrantStatus
	StatusDispatched = "dispatched" // the mention's work was sent: its dispatch, reply or opt-out
	StatusReleased   = "released"   // a failed send gave the claim up
)

// Defaults for the claim settings.
const (
	DefaultClaimLease = 10 * time.Minute
	// DefaultStateMaxAge is how long dispatched refs are kept; older ones
	// are swept. Mentions that old are never looked at again: a poll looks
	// back DefaultReadMargin before a thread's last read.
	DefaultStateMaxAge = 7 * 24 * time.Hour
	claimRotateMax     = time.Minute
)

// RefPrefix is where claim refs live in CONTROL.
const RefPrefix = contract.DispatchedRefPrefix

// DedupeRef is the claim ref of the mention with this jobid.
func DedupeRef(jobID string) string { return contract.DispatchedRef(jobID) }

// ClaimedError means another dispatcher holds a live claim on the mention:
// it is left for now and looked at again next cycle.
type ClaimedError struct {
	JobID, Holder string
	At            time.Time
	Lease         time.Duration
}

func (e *ClaimedError) Error() string {
	return fmt.Sprintf("mention %s is claimed by %s since %s; it is taken over if not dispatched within the lease of %s",
		e.JobID, e.Holder, e.At.Format(time.RFC3339), e.Lease)
}

// claims is the dispatcher's claim bookkeeping.
type claims struct {
	holder string
	// grants: claims may use the write budget's grant commits (the
	// budget's OwnGrants said so); grantHolder is the holder they name.
	grants      bool
	grantHolder string
	cur         refstate.Mark            // this process's current claim commit
	rel         map[string]refstate.Mark // claim commit → its released commit
	held        map[string]refstate.Mark // jobid → the claim commit we hold it with
	sent        map[string]bool          // jobid → dispatched but not yet marked
	making      map[string]chan struct{} // status+claim commit → closed when its next commit is made (or failed)
	listed      map[string]string        // claim ref → commit, as ListClaims found them (nil = not listed)
}

func newHolder() string { return "dispatcher-" + uuid.NewString() }

func (d *Dispatcher) states() *refstate.Store {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.refs == nil {
		d.refs, _ = refstate.New(d.ctl, d.cfg.Control, d.cfg.Now) // Control was validated
		d.refs.Push = d.cfg.Push
	}
	return d.refs
}

// claimRotate is how long a claim commit is used: its date tells a
// claim's age within that.
func (d *Dispatcher) claimRotate() time.Duration { return min(claimRotateMax, d.cfg.ClaimLease/4) }

// claimMark returns this process's claim commit, made anew every
// claimRotate.
func (d *Dispatcher) claimMark(ctx context.Context) (refstate.Mark, error) {
	d.mu.Lock()
	m := d.cl.cur
	d.mu.Unlock()
	if m.Commit != "" && d.cfg.Now().Sub(m.At) < d.claimRotate() {
		return m, nil
	}
	m, ok := d.grantMark(ctx)
	if !ok {
		var err error
		if m, err = d.states().NewMark(ctx, StatusClaimed, d.cl.holder, ""); err != nil {
			return m, fmt.Errorf("claim: %w", err)
		}
	}
	d.mu.Lock()
	d.cl.cur = m
	d.mu.Unlock()
	return m, nil
}

// grantBudget is a Budget whose grants are commits in CONTROL
// (writebudget.Ledger).
type grantBudget interface {
	// OwnGrants is true for the first caller only: a claim commit must be
	// one claimer's, or two would each take a claim on it as their own.
	OwnGrants() bool
	// Granted waits until a grant is held and returns the latest one's
	// commit.
	Granted(ctx context.Context) (writebudget.Grant, bool, error)
}

// grantMark returns the commit of this process's latest write grant as a
// claim commit, when it is recent enough to date claims (claimRotate):
// the grant is needed before the first claim anyway, and claiming with
// its commit saves the claim commit and its round trip. The
// commit is this process's alone (it names the ledger handle, which only
// this dispatcher uses: grantsOwned), so a claim whose answer was lost is
// still recognised by its commit.
func (d *Dispatcher) grantMark(ctx context.Context) (refstate.Mark, bool) {
	gb, ok := d.budget.(grantBudget)
	if !ok || !d.cl.grants {
		return refstate.Mark{}, false
	}
	g, ok, err := gb.Granted(ctx)
	if err != nil || !ok || g.Holder == "" || d.cfg.Now().Sub(g.At) >= d.claimRotate() {
		return refstate.Mark{}, false
	}
	d.mu.Lock()
	d.cl.grantHolder = g.Holder
	d.mu.Unlock()
	return refstate.Mark{Commit: g.Commit, Status: StatusClaimed, Holder: g.Holder, At: g.At}, true
}

// mine says whether a claim's holder is this process: its holder name,
// or its ledger handle's when it claimed with a grant's commit.
func (d *Dispatcher) mine(holder string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return holder == d.cl.holder || d.cl.grantHolder != "" && holder == d.cl.grantHolder
}

// claim claims the mention. It reports false when the mention was handled
// already, and a *ClaimedError while another dispatcher's claim is live.
func (d *Dispatcher) claim(ctx context.Context, jobID string) (bool, error) {
	m, err := d.claimMark(ctx)
	if err != nil {
		return false, err
	}
	// The claim may go out on credit beside the ref update that records
	// the process's grant (writebudget.OnCredit): often its commit is m.
	cur, created, err := d.states().Create(writebudget.OnCredit(ctx), DedupeRef(jobID), m)
	if err != nil {
		return false, fmt.Errorf("claim mention %s: %w", jobID, err)
	}
	if created {
		d.hold(jobID, m)
		return true, nil
	}
	return d.resolve(ctx, jobID, cur)
}

// resolve decides on an existing claim ref in state cur.
func (d *Dispatcher) resolve(ctx context.Context, jobID string, cur refstate.Mark) (bool, error) {
	for range 3 {
		switch {
		case cur.Status == StatusDispatched:
			return false, nil
		case cur.Status == StatusClaimed && d.mine(cur.Holder):
			d.hold(jobID, cur) // ours, from an earlier try
			return true, nil
		case cur.Status == StatusClaimed && d.cfg.Now().Sub(cur.At) < d.cfg.ClaimLease:
			return false, &ClaimedError{JobID: jobID, Holder: cur.Holder, At: cur.At, Lease: d.cfg.ClaimLease}
		case cur.Status != StatusClaimed && cur.Status != StatusReleased:
			return false, fmt.Errorf("claim mention %s: %s holds unknown state %q; delete the ref to let the mention be dispatched", jobID, DedupeRef(jobID), cur.Status)
		}
		// A released claim, or one whose holder died: take it over.
		t, err := d.states().NewMark(ctx, StatusClaimed, d.cl.holder, cur.Commit)
		if err != nil {
			return false, fmt.Errorf("take over the claim on %s: %w", jobID, err)
		}
		got, err := d.states().Advance(ctx, DedupeRef(jobID), t)
		if err == nil {
			d.cfg.Logger.Warn("took over a claim", "jobid", jobID, "from", cur.Holder, "state", cur.Status, "since", cur.At)
			d.hold(jobID, t)
			return true, nil
		}
		if !errors.Is(err, refstate.ErrLost) {
			return false, fmt.Errorf("take over the claim on %s: %w", jobID, err)
		}
		cur = got // someone else moved it: decide again on what it holds
	}
	return false, &ClaimedError{JobID: jobID, Holder: cur.Holder, At: cur.At, Lease: d.cfg.ClaimLease}
}

func (d *Dispatcher) hold(jobID string, m refstate.Mark) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.cl.held[jobID] = m
}

// settle advances our claim on jobID to status (dispatched or released),
// reusing one commit per claim commit. A claim that was taken over in the
// meantime is left to its new holder.
func (d *Dispatcher) settle(ctx context.Context, jobID, status string) error {
	d.mu.Lock()
	claimM, ok := d.cl.held[jobID]
	d.mu.Unlock()
	if !ok {
		return fmt.Errorf("claim mention %s: not held by this dispatcher", jobID)
	}
	if b := marksOf(ctx); status == StatusDispatched && b != nil {
		b.add(jobID, claimM.Commit) // written with the cycle's others (flushMarks)
		return nil
	}
	if status == StatusDispatched {
		// Final, and the same for whoever sets it: forced to the shared
		// commit. A dispatcher that took the claim over meanwhile has sent
		// the mention too or will (the runner runs it once); its own
		// takeover, built on our claim, then fails and reads "dispatched".
		if _, err := d.states().SetShared(ctx, DedupeRef(jobID), StatusDispatched); err != nil {
			return fmt.Errorf("mark mention %s %s: %w", jobID, status, err)
		}
		d.forget(jobID)
		return nil
	}
	next, err := d.nextMark(ctx, claimM, status)
	if err != nil {
		return fmt.Errorf("mark mention %s %s: %w", jobID, status, err)
	}
	got, err := d.states().Advance(ctx, DedupeRef(jobID), next)
	if errors.Is(err, refstate.ErrLost) {
		d.cfg.Logger.Warn("claim was taken over before it was marked", "jobid", jobID, "status", status, "now", got.Status, "holder", got.Holder)
		err = nil
	}
	if err != nil {
		return fmt.Errorf("mark mention %s %s: %w", jobID, status, err)
	}
	d.forget(jobID)
	return nil
}

// ensureShared makes the hour's shared commit of status ahead of the mark
// that points at it, beside the claim, the thread's read and the dispatch
// (refstate.EnsureShared): the mark is then one request after the
// dispatch. The returned channel closes when it is done; a failure only
// warns, the mark makes the commit itself.
func (d *Dispatcher) ensureShared(ctx context.Context, status string) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := d.states().EnsureShared(ctx, status); err != nil && ctx.Err() == nil {
			d.cfg.Logger.Warn("could not prepare the hour's shared state commit; the mark makes it", "status", status, "error", err.Error())
		}
	}()
	return done
}

// forget drops a settled claim from this process's bookkeeping.
func (d *Dispatcher) forget(jobID string) {
	d.mu.Lock()
	delete(d.cl.held, jobID)
	delete(d.cl.sent, jobID)
	d.mu.Unlock()
}

// nextMark returns the commit that moves claim commit claimM to status
// (released), made once per claim commit and reused: a caller finding it
// being made waits for that.
func (d *Dispatcher) nextMark(ctx context.Context, claimM refstate.Mark, status string) (refstate.Mark, error) {
	key := status + " " + claimM.Commit
	for {
		d.mu.Lock()
		cache := d.cl.rel
		if next, cached := cache[claimM.Commit]; cached {
			d.mu.Unlock()
			return next, nil
		}
		ch, making := d.cl.making[key]
		if !making {
			ch = make(chan struct{})
			d.cl.making[key] = ch
		}
		d.mu.Unlock()
		if making {
			select {
			case <-ch:
				continue // made, or failed: look again (and make it)
			case <-ctx.Done():
				return refstate.Mark{}, ctx.Err()
			}
		}
		next, err := d.states().NewMark(ctx, status, d.cl.holder, claimM.Commit)
		d.mu.Lock()
		if err == nil {
			cache[claimM.Commit] = next
		}
		delete(d.cl.making, key)
		close(ch)
		d.mu.Unlock()
		return next, err
	}
}

// release gives a claim up after a failed send, so a later cycle (of any
// dispatcher) tries again at once. The send may have landed: the runner
// runs a job's agent at most once however often it is delivered.
func (d *Dispatcher) release(ctx context.Context, jobID string) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	return d.settle(ctx, jobID, StatusReleased)
}

// ListClaims reads every claim ref at once (a request per 100), for a
// cycle about to look at many mentions most of which were dispatched
// already (a backlog): handled then answers from the listing, not a read
// per mention. A mention claimed after the listing is found by its claim
// write as ever.
func (d *Dispatcher) ListClaims(ctx context.Context) error {
	refs, err := d.states().List(ctx, RefPrefix)
	if err != nil {
		return fmt.Errorf("list claims: %w", err)
	}
	d.mu.Lock()
	d.cl.listed = refs
	d.mu.Unlock()
	return nil
}

// handled reports whether the mention's claim ref says it was dispatched
// (a cheap check for triggers an earlier cycle probably handled).
func (d *Dispatcher) handled(ctx context.Context, jobID string) (bool, error) {
	d.mu.Lock()
	listed := d.cl.listed
	d.mu.Unlock()
	if listed != nil {
		sha, ok := listed[DedupeRef(jobID)]
		if !ok {
			return false, nil // not claimed when listed: the claim decides
		}
		m, err := d.states().MarkAt(ctx, DedupeRef(jobID), sha)
		if err != nil {
			return false, fmt.Errorf("read claim of %s: %w", jobID, err)
		}
		return m.Status == StatusDispatched, nil
	}
	cur, err := d.states().Read(ctx, DedupeRef(jobID))
	if err != nil {
		return false, fmt.Errorf("read claim of %s: %w", jobID, err)
	}
	return cur != nil && cur.Status == StatusDispatched, nil
}

// SweepClaims deletes claim refs older than the configured age (best
// effort: per-ref failures are in the result), in one push with
// Config.Push. With Config.Push, each swept claim's job state
// (contract.RunStateRef, the runner's) goes in the same push
// (SweepResult.Along): the job states are then swept here, where most
// claims share their commits, not by reading each state's own commit in
// the jobs.
//
// A job state is made after its claim, by the job's first workflow run,
// so it is at most that run's queueing younger. Deleting it when its
// claim expires is safe: a mention whose claim is StateMaxAge old is
// never dispatched again (a poll looks back DefaultReadMargin), and a
// re-run of the finished workflow run finds its job done by the log
// issue's final marker, which assemble reads beside the state. A job
// state that moved since it was listed is left (compare-and-swap).
//
// With Config.Push it also keeps the sweep marker (contract.SweepMarkerRef)
// fresh, so the runner's fallback sweep of job states stays out: it reads
// the marker (one request), sets it in the sweep's own push when the sweep
// deletes something, and otherwise writes it alone once it is
// MarkerRefresh old. Each write is sent once: a lost answer leaves the
// marker set or stale, and either is harmless (the next sweep sets it
// again). A dry run sweeps nothing and writes nothing.
func (d *Dispatcher) SweepClaims(ctx context.Context) (*refstate.SweepResult, error) {
	if d.cfg.DryRun {
		return &refstate.SweepResult{}, nil
	}
	st := d.states()
	o := d.claimSweep()
	var marker *refstate.Mark
	var markerErr error
	if st.Push != nil {
		marker, markerErr = st.ReadRecent(ctx, contract.SweepMarkerRef, contract.SweepMarkerStatus, MarkerRefresh)
		if markerErr == nil {
			o.Mark = &refstate.SweepMark{Ref: contract.SweepMarkerRef, Status: contract.SweepMarkerStatus}
			if marker != nil {
				o.Mark.Old = marker.Commit
			}
		}
	}
	res, err := st.Sweep(ctx, o)
	if err != nil {
		return nil, err
	}
	if markerErr != nil {
		res.Errors = append(res.Errors, fmt.Errorf("the sweep marker is left as it is: %w", markerErr))
	}
	if o.Mark != nil && !res.MarkSent && (marker == nil || d.cfg.Now().Sub(marker.At) >= MarkerRefresh) {
		if err := st.MarkShared(ctx, contract.SweepMarkerRef, contract.SweepMarkerStatus, o.Mark.Old); err != nil {
			res.Errors = append(res.Errors, err)
		} else {
			res.Marked = true
		}
	}
	return res, nil
}

// MarkerRefresh is the age at which a claim sweep that deletes nothing
// still sets the sweep marker (one write a day at most): the runner takes
// a marker for a sweeping dispatcher's for jobstate.MarkerFresh, twice
// that.
const MarkerRefresh = 24 * time.Hour

// SweepClaimsUnlessSwept is SweepClaims unless the sweep marker says a
// dispatcher swept within the last `within` (then it costs one request):
// for processes that each see few mentions and could all sweep at once
// (event mode).
func (d *Dispatcher) SweepClaimsUnlessSwept(ctx context.Context, within time.Duration) (*refstate.SweepResult, error) {
	if d.cfg.DryRun {
		return &refstate.SweepResult{}, nil
	}
	st := d.states()
	m, err := st.ReadRecent(ctx, contract.SweepMarkerRef, contract.SweepMarkerStatus, within)
	if err == nil && m != nil && d.cfg.Now().Sub(m.At) < within {
		return nil, nil
	}
	return d.SweepClaims(ctx)
}

func (d *Dispatcher) claimSweep() refstate.SweepOptions {
	return refstate.SweepOptions{Prefix: RefPrefix, MaxAge: d.cfg.StateMaxAge, Along: d.jobStatesOf}
}

// jobStatesOf lists the job states once and returns a delete, from the
// listed commit, for each of these claims' jobs that has one (a job that
// never ran has none).
func (d *Dispatcher) jobStatesOf(ctx context.Context, claims []string) ([]refpush.Update, error) {
	states, err := d.states().List(ctx, contract.RunStateRefPrefix)
	if err != nil {
		return nil, fmt.Errorf("the job states of %d swept claims are left to the runner's sweep: %w", len(claims), err)
	}
	var dels []refpush.Update
	for _, c := range claims {
		ref := contract.RunStateRef(strings.TrimPrefix(c, RefPrefix))
		if sha, ok := states[ref]; ok {
			dels = append(dels, refpush.Update{Ref: ref, Old: sha})
		}
	}
	return dels, nil
}

// forgetClaims drops ListClaims' listing: it is one cycle's.
func (d *Dispatcher) forgetClaims() {
	d.mu.Lock()
	d.cl.listed = nil
	d.mu.Unlock()
}
