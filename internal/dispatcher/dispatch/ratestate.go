package dispatch

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"sort"
	"strings"
	"time"

	"github.com/mention-runner/mention-runner/internal/core/repofile"
)

// The per-user rate limit counts runs in a JSON file in CONTROL (DefaultStatePath):
// read once per cycle (or per CacheTTL in serve mode), written only when a
// run was added: once at the end of a poll cycle, every CacheTTL in serve
// mode (FlushEvery), in Handle's last step in event mode (FlushEach);
// guarded by the file's sha and merged on conflict, so `once` runs and
// several dispatchers share it.

const rateWindow = time.Hour

// RateEntry is one dispatched run.
type RateEntry struct {
	Login string    `json:"login"`
	JobID string    `json:"jobid"`
	At    time.Time `json:"at"`
}

type rateFile struct {
	Runs []RateEntry `json:"runs"`
	// IDs are the account ids first seen under each login that
	// ALLOWED_USERS names without an id (lower-case login → id): a login
	// freed and re-registered by someone else is not allowed by name alone.
	IDs map[string]int64 `json:"ids,omitempty"`
}

type rateState struct {
	loaded     time.Time
	sha        string
	runs       []RateEntry
	pending    []RateEntry
	ids        map[string]int64
	pendingIDs map[string]int64
}

// learnedID is the id first seen under login (0 = none yet).
func (s *rateState) learnedID(login string) int64 {
	login = strings.ToLower(login)
	if id := s.ids[login]; id != 0 {
		return id
	}
	return s.pendingIDs[login]
}

// count returns login's runs in the hour before now, not counting jobID.
func (s *rateState) count(login, jobID string, now time.Time) int {
	n := 0
	seen := map[string]bool{}
	for _, list := range [][]RateEntry{s.runs, s.pending} {
		for _, e := range list {
			if seen[e.JobID] || e.JobID == jobID || !strings.EqualFold(e.Login, login) || !e.At.After(now.Add(-rateWindow)) {
				continue
			}
			seen[e.JobID] = true
			n++
		}
	}
	return n
}

// rate returns the cached state, loading it when stale.
func (d *Dispatcher) rate(ctx context.Context) (*rateState, error) {
	d.mu.Lock()
	s := d.rateSt
	fresh := s != nil && d.cfg.Now().Sub(s.loaded) < d.cfg.CacheTTL
	d.mu.Unlock()
	if fresh {
		return s, nil
	}
	f, sha, err := d.loadRate(ctx)
	if err != nil {
		return nil, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	ns := &rateState{loaded: d.cfg.Now(), sha: sha, runs: f.Runs, ids: f.IDs}
	if d.rateSt != nil {
		ns.pending = d.rateSt.pending // not yet written: keep counting them
		ns.pendingIDs = d.rateSt.pendingIDs
	}
	d.rateSt = ns
	return ns, nil
}

func (d *Dispatcher) rateFile() repofile.File {
	return repofile.File{Client: d.ctl, Repo: d.cfg.Control, Path: d.cfg.StatePath}
}

// loadRate reads the state; a corrupt file must not lift the limit silently.
func (d *Dispatcher) loadRate(ctx context.Context) (rateFile, string, error) {
	var f rateFile
	sha, err := d.rateFile().Read(ctx, &f)
	if err != nil {
		return rateFile{}, "", fmt.Errorf("rate-limit state: %w", err)
	}
	return f, sha, nil
}

// learnID remembers the id seen under login; Flush writes it. The first id
// seen stays: a later, different one is refused (see Handle).
func (d *Dispatcher) learnID(login string, id int64) {
	if id == 0 {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.rateSt == nil {
		d.rateSt = &rateState{}
	}
	if d.rateSt.learnedID(login) != 0 {
		return
	}
	if d.rateSt.pendingIDs == nil {
		d.rateSt.pendingIDs = map[string]int64{}
	}
	d.rateSt.pendingIDs[strings.ToLower(login)] = id
}

// recordRun counts a dispatched run; Flush writes it.
func (d *Dispatcher) recordRun(login, jobID string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.rateSt == nil {
		d.rateSt = &rateState{}
	}
	d.rateSt.pending = append(d.rateSt.pending, RateEntry{Login: strings.ToLower(login), JobID: jobID, At: d.cfg.Now().UTC()})
}

// ErrStateConflict means every attempt to write the rate-limit state lost a race.
var ErrStateConflict = errors.New("rate-limit state: too many concurrent updates")

// Flush writes runs recorded since the last Flush to the state file, merged
// with what is there now and pruned to the last hour. Without new runs (or in
// a dry run) it makes no request.
func (d *Dispatcher) Flush(ctx context.Context) error {
	if d.cfg.DryRun {
		return nil
	}
	d.mu.Lock()
	var pending []RateEntry
	pendingIDs := map[string]int64{}
	if d.rateSt != nil {
		pending = append(pending, d.rateSt.pending...)
		maps.Copy(pendingIDs, d.rateSt.pendingIDs)
	}
	d.mu.Unlock()
	if len(pending) == 0 && len(pendingIDs) == 0 {
		return nil
	}
	d.mu.Lock()
	cached := d.rateSt != nil && !d.rateSt.loaded.IsZero()
	var f rateFile
	var sha string
	if cached {
		f.Runs, f.IDs, sha = d.rateSt.runs, d.rateSt.ids, d.rateSt.sha
	}
	d.mu.Unlock()
	for attempt := 0; attempt < 5; attempt++ {
		// First try on top of what this cycle read; the sha guards it.
		if attempt > 0 || !cached {
			var err error
			if f, sha, err = d.loadRate(ctx); err != nil {
				return err
			}
		}
		merged := mergeRuns(f.Runs, pending, d.cfg.Now().Add(-rateWindow))
		ids := mergeIDs(f.IDs, pendingIDs)
		newSHA, err := d.rateFile().Write(ctx, "mention-runner: record runs for the rate limit", rateFile{Runs: merged, IDs: ids}, sha)
		if errors.Is(err, repofile.ErrConflict) {
			continue // another writer got there first: merge again
		}
		if err != nil {
			return fmt.Errorf("rate-limit state: %w", err)
		}
		d.mu.Lock()
		if d.rateSt != nil {
			d.rateSt.pending = dropWritten(d.rateSt.pending, pending)
			d.rateSt.runs, d.rateSt.sha, d.rateSt.ids = merged, newSHA, ids
			// the write was guarded by the sha it replaced: the file is
			// what was just written, as fresh as a read now (a running
			// dispatcher that flushes every CacheTTL reads it only when
			// another writer got there first)
			d.rateSt.loaded = d.cfg.Now()
			for login := range pendingIDs {
				delete(d.rateSt.pendingIDs, login)
			}
		}
		d.mu.Unlock()
		return nil
	}
	return ErrStateConflict
}

// mergeIDs adds the ids learned since the last write; an id already in
// the file stays (the first account seen under a login).
func mergeIDs(file, add map[string]int64) map[string]int64 {
	if len(file) == 0 && len(add) == 0 {
		return nil
	}
	out := maps.Clone(file)
	if out == nil {
		out = map[string]int64{}
	}
	for login, id := range add {
		if out[login] == 0 {
			out[login] = id
		}
	}
	return out
}

// FlushEvery writes recorded runs every interval (0 = CacheTTL) until ctx
// ends, then once more (bounded by a minute): a webhook server's rate state
// costs a commit per interval that dispatched, not one per mention. Runs
// are counted by this process at once; other dispatchers read the file at
// most CacheTTL late anyway, so writing it as often keeps what they see
// within about twice that. A process killed outright loses the runs of its
// last interval from the count (never a dispatch or a claim).
func (d *Dispatcher) FlushEvery(ctx context.Context, interval time.Duration) {
	if interval <= 0 {
		interval = d.cfg.CacheTTL
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
			defer cancel()
			if err := d.Flush(fctx); err != nil {
				d.cfg.Logger.Error("write rate-limit state at shutdown", "error", err.Error())
			}
			return
		case <-t.C:
			if err := d.Flush(ctx); err != nil && ctx.Err() == nil {
				d.cfg.Logger.Error("write rate-limit state", "error", err.Error())
			}
		}
	}
}

func mergeRuns(runs, add []RateEntry, cutoff time.Time) []RateEntry {
	seen := map[string]bool{}
	var out []RateEntry
	for _, list := range [][]RateEntry{runs, add} {
		for _, e := range list {
			if seen[e.JobID] || !e.At.After(cutoff) {
				continue
			}
			seen[e.JobID] = true
			out = append(out, e)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].At.Before(out[j].At) })
	return out
}

func dropWritten(pending, written []RateEntry) []RateEntry {
	done := map[string]bool{}
	for _, e := range written {
		done[e.JobID] = true
	}
	var out []RateEntry
	for _, e := range pending {
		if !done[e.JobID] {
			out = append(out, e)
		}
	}
	return out
}

// nextSlot is when login's oldest run in the window leaves it.
func (s *rateState) nextSlot(login, jobID string, now time.Time) time.Time {
	oldest := now
	for _, list := range [][]RateEntry{s.runs, s.pending} {
		for _, e := range list {
			if e.JobID != jobID && strings.EqualFold(e.Login, login) && e.At.After(now.Add(-rateWindow)) && e.At.Before(oldest) {
				oldest = e.At
			}
		}
	}
	return oldest.Add(rateWindow)
}
