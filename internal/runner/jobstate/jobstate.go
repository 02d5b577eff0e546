// Package jobstate records, per job, that a workflow run started its
// agent, durably in CONTROL, so a job whose events are delivered more than
// once (a dispatch sent again after its answer was lost, a redelivered
// webhook, a sharded job delivered again after it ended) runs its agent at
// most once.
//
// The state is a ref, RefPrefix+jobid, at a state commit (internal/
// refstate): assemble creates it "running" for its workflow run before the
// agent starts. That the job is done is said by its run-log issue, whose
// last line publish sets to the job's final marker
// (contract.LogIssueFinalMarker) in the update it makes anyway; assemble
// reads it beside this state. "done" states older runners wrote are still
// read as done. With a pusher the state costs one request: its commit is
// made locally and pushed with the ref's creation. Publish deletes the job's shard refs but never this one:
// it is deleted after MaxAge (7 days), long after any redelivery, with
// its mention's claim by the dispatcher's sweep, or by the bounded
// fallback sweep (SweepSlice) assemble runs in one job in 20 while no
// dispatcher's sweep marker is fresh (DispatcherSweeps). A
// re-run of a finished workflow run after that is stopped by the log
// issue's final marker.
package jobstate

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/google/go-github/v62/github"

	"github.com/mention-runner/mention-runner/internal/core/contract"
	"github.com/mention-runner/mention-runner/internal/core/refpush"
	"github.com/mention-runner/mention-runner/internal/core/refstate"
)

// RefPrefix is where job states live in CONTROL.
const RefPrefix = contract.RunStateRefPrefix

// MaxAge is how long a job's state is kept.
const MaxAge = 7 * 24 * time.Hour

// States.
const (
	Running = "running"
	Done    = "done" // written by older runners; now the log issue's final marker
)

// Ref is the state ref of a job.
func Ref(jobID string) string { return contract.RunStateRef(jobID) }

// Holder names the workflow run that runs a job; every attempt (re-run)
// of one run has the same holder.
func Holder(runID string) string { return "run " + runID }

// Store reads and writes job states.
type Store struct{ rs *refstate.Store }

// New returns a store for repo ("owner/name"), writing through push when
// it is not nil (one request a state), else through the REST API (two).
// The client should retry POST/PATCH (every write here is recognised when
// repeated).
func New(client *github.Client, push *refpush.Client, repo string, now func() time.Time) (*Store, error) {
	rs, err := refstate.New(client, repo, now)
	if err != nil {
		return nil, fmt.Errorf("jobstate: %w", err)
	}
	rs.Push = push
	return &Store{rs: rs}, nil
}

// Begin is the answer to "may this run start the job's agent?".
type Begin struct {
	Proceed bool
	Rerun   bool // this workflow run started the job before (a re-run)
	// Created: this call made the job's state (an answer lost on the way
	// included), so no run held the job before this one.
	Created bool
	Holder  string // the run that has the job
	Status  string // its state
	Since   time.Time
}

// Begin marks the job running for runID, unless another run has it.
func (s *Store) Begin(ctx context.Context, jobID, runID string) (Begin, error) {
	m, err := s.Prepare(ctx, runID)
	if err != nil {
		return Begin{}, err
	}
	return s.BeginAt(ctx, jobID, runID, m)
}

// Prepare makes the "running" state commit of runID ahead of BeginAt, so a
// caller can make it together with other requests (with a pusher it is
// made locally, no request). Until BeginAt points the job's ref at it, it
// is only an object.
func (s *Store) Prepare(ctx context.Context, runID string) (refstate.Mark, error) {
	m, err := s.rs.NewMark(ctx, Running, Holder(runID), "")
	if err != nil {
		return m, fmt.Errorf("jobstate: %w", err)
	}
	return m, nil
}

// BeginAt is Begin with the state commit Prepare made for runID.
func (s *Store) BeginAt(ctx context.Context, jobID, runID string, m refstate.Mark) (Begin, error) {
	holder := Holder(runID)
	cur, created, err := s.rs.Create(ctx, Ref(jobID), m)
	if err != nil {
		return Begin{}, fmt.Errorf("jobstate: mark job %s running: %w", jobID, err)
	}
	b := Begin{Holder: cur.Holder, Status: cur.Status, Since: cur.At}
	switch {
	case created:
		b.Proceed, b.Created = true, true
	case cur.Holder == holder && cur.Status == Running:
		b.Proceed, b.Rerun = true, true
	}
	return b, nil
}

// MarkerFresh is the age under which the sweep marker
// (contract.SweepMarkerRef) keeps the runner's fallback sweep out.
const MarkerFresh = contract.SweepMarkerFresh

// DispatcherSweeps reads the sweep marker: one request while it holds a
// shared commit younger than MarkerFresh (its id is known here), two
// otherwise.
func (s *Store) DispatcherSweeps(ctx context.Context) (bool, error) {
	m, err := s.rs.ReadRecent(ctx, contract.SweepMarkerRef, contract.SweepMarkerStatus, MarkerFresh)
	if err != nil {
		return false, fmt.Errorf("jobstate: read the sweep marker: %w", err)
	}
	return m != nil && s.now().Sub(m.At) < MarkerFresh, nil
}

// SweepSlice deletes the job states older than MaxAge among those whose
// jobid starts with slice (two hex digits: a 256th of them, one listing
// request), reading at most maxChecks of their commits (every state has
// its own), in random order (rng; nil = randomly seeded). It is the
// fallback of the dispatcher's claim sweep, which deletes a job's state
// with its claim; assemble runs it in few jobs, and only while no
// dispatcher says it sweeps (DispatcherSweeps).
func (s *Store) SweepSlice(ctx context.Context, slice string, maxChecks int, rng *rand.Rand) (*refstate.SweepResult, error) {
	return s.rs.Sweep(ctx, refstate.SweepOptions{Prefix: RefPrefix, Under: slice, MaxAge: MaxAge, MaxChecks: maxChecks, Rand: rng})
}

func (s *Store) now() time.Time {
	if s.rs.Now == nil {
		return time.Now()
	}
	return s.rs.Now()
}
