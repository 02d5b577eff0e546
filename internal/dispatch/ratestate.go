package dispatch

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/mention-runner/mention-runner/internal/repofile"
)

// The per-user rate limit counts runs in a JSON file in CONTROL (DefaultStatePath):
// read once per cycle (or per CacheTTL in serve mode), written once at the
// end of a cycle only when a run was added, guarded by the file's sha and
// merged on conflict, so `once` runs and several dispatchers share it.

const rateWindow = time.Hour

// RateEntry is one dispatched run.
type RateEntry struct {
	Login string    `json:"login"`
	JobID string    `json:"jobid"`
	At    time.Time `json:"at"`
}

type rateFile struct {
	Runs []RateEntry `json:"runs"`
}

type rateState struct {
	loaded  time.Time
	sha     string
	runs    []RateEntry
	pending []RateEntry
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
	runs, sha, err := d.loadRate(ctx)
	if err != nil {
		return nil, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	ns := &rateState{loaded: d.cfg.Now(), sha: sha, runs: runs}
	if d.rateSt != nil {
		ns.pending = d.rateSt.pending // not yet written: keep counting them
	}
	d.rateSt = ns
	return ns, nil
}

func (d *Dispatcher) rateFile() repofile.File {
	return repofile.File{Client: d.ctl, Repo: d.cfg.Control, Path: d.cfg.StatePath}
}

// loadRate reads the state; a corrupt file must not lift the limit silently.
func (d *Dispatcher) loadRate(ctx context.Context) ([]RateEntry, string, error) {
	var f rateFile
	sha, err := d.rateFile().Read(ctx, &f)
	if err != nil {
		return nil, "", fmt.Errorf("rate-limit state: %w", err)
	}
	return f.Runs, sha, nil
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
	if d.rateSt != nil {
		pending = append(pending, d.rateSt.pending...)
	}
	d.mu.Unlock()
	if len(pending) == 0 {
		return nil
	}
	d.mu.Lock()
	cached := d.rateSt != nil && !d.rateSt.loaded.IsZero()
	var runs []RateEntry
	var sha string
	if cached {
		runs, sha = d.rateSt.runs, d.rateSt.sha
	}
	d.mu.Unlock()
	for attempt := 0; attempt < 5; attempt++ {
		// First try on top of what this cycle read; the sha guards it.
		if attempt > 0 || !cached {
			var err error
			if runs, sha, err = d.loadRate(ctx); err != nil {
				return err
			}
		}
		merged := mergeRuns(runs, pending, d.cfg.Now().Add(-rateWindow))
		newSHA, err := d.rateFile().Write(ctx, "mention-runner: record runs for the rate limit", rateFile{Runs: merged}, sha)
		if errors.Is(err, repofile.ErrConflict) {
			continue // another writer got there first: merge again
		}
		if err != nil {
			return fmt.Errorf("rate-limit state: %w", err)
		}
		d.mu.Lock()
		if d.rateSt != nil {
			d.rateSt.pending = dropWritten(d.rateSt.pending, pending)
			d.rateSt.runs, d.rateSt.sha = merged, newSHA
		}
		d.mu.Unlock()
		return nil
	}
	return ErrStateConflict
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
