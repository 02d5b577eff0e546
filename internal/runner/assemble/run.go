package assemble

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/mention-runner/mention-runner/internal/core/blockfile"
	"github.com/mention-runner/mention-runner/internal/core/contract"
	"github.com/mention-runner/mention-runner/internal/core/ghclient"
	"github.com/mention-runner/mention-runner/internal/core/refpush"
	"github.com/mention-runner/mention-runner/internal/core/refstate"
	"github.com/mention-runner/mention-runner/internal/core/transport"
	"github.com/mention-runner/mention-runner/internal/runner/actions"
	"github.com/mention-runner/mention-runner/internal/runner/config"
	"github.com/mention-runner/mention-runner/internal/runner/jobstate"
	"github.com/mention-runner/mention-runner/internal/runner/shardstore"
	"golang.org/x/sync/errgroup"
)

// Defaults of Options.
const (
	DefaultTimeout = 10 * time.Minute
	sweepTimeout   = time.Minute
	reportTimeout  = time.Minute
	// StateSweepOneIn: one job in this many looks at old job states: it
	// reads the dispatcher's sweep marker and, only when no dispatcher
	// sweeps (the marker missing or stale), sweeps one slice of them. The
	// dispatcher's claim sweep deletes each job's state with its claim;
	// this is the fallback for one that does not (no pusher, a dispatcher
	// that stopped). Every state has a commit of its own and the listing
	// holds 7 days of them: a sweep of them all cost a page per 100 states
	// and a read per commit.
	StateSweepOneIn = 20
	// StateSweepChecks bounds the state commits one fallback sweep reads.
	//
	// Why a bounded slice still keeps up: expired states appear at the
	// rate jobs start (E an hour), and one job in StateSweepOneIn sweeps a
	// random slice of 1/256 of the states, so each sweep must delete
	// StateSweepOneIn of them on average. A slice holds L live states
	// (7 days of E/256) and the expired ones X that piled up since it was
	// last swept; a sweep reading C ≥ L+X commits deletes all X, and
	// reading C < L+X of them at random deletes C·X/(L+X) on average. X
	// grows while that is under StateSweepOneIn and shrinks above it, so
	// it settles at X = StateSweepOneIn·L/(C−StateSweepOneIn) whatever E
	// (with C = 2·StateSweepOneIn, X = L: states live at most about twice
	// MaxAge), and at StateSweepOneIn when the slice is read whole.
	StateSweepChecks = 2 * StateSweepOneIn
	// ShardSweepOneIn: one job in this many that is not sharded sweeps
	// stale shard refs (the first shard's run of every sharded job does).
	// They come only from sharded jobs that never finished: the first
	// shard's runs sweep at the rate they can appear, and this sweeps
	// what a sharded job left when none follows.
	ShardSweepOneIn = 20
)

// Options is the outside world of one assemble run, so tests can run many
// in one process.
type Options struct {
	Getenv func(string) string // the environment (required)
	Stdout io.Writer           // log lines and workflow commands; nil = discard
	Now    func() time.Time    // commit dates and ref ages; nil = time.Now
	// Rand draws which sweeps a run makes (StateSweepOneIn,
	// ShardSweepOneIn, the slice of job states) and their order; nil =
	// the draws come from the job's id, so a job's runs always make the
	// same ones (a measurement of one mention repeats exactly).
	Rand *rand.Rand
	// Timeout bounds the whole run; 0 = DefaultTimeout.
	Timeout time.Duration
	// Client adjusts the GitHub client options (tests: retries, sleeps).
	Client func(*ghclient.Options)
}

// Result is what the run decided; the same values go to the step outputs.
type Result struct {
	Ready         bool
	JobID         string
	EventType     string
	Shard         *transport.Shard // this run's shard, nil for agent_small
	ContextFile   string
	ContextSHA256 string
	LogIssue      int
	// LogIssueNew: this run opened the log issue (it did not find one).
	LogIssueNew  bool
	TargetRepo   string
	TargetNumber int
	// Holder is the run proceeding when this shard run does not.
	Holder *shardstore.Holder
	// Missing lists shard indices not stored yet (this run waits for them).
	Missing []int
	// Superseded: a newer dispatch of this job stored its shards; this
	// run's piece is stale and the run ends without proceeding.
	Superseded bool
	// AlreadyRun: another workflow run has (or had) this job: this
	// delivery is a duplicate and the run ends without proceeding.
	AlreadyRun *jobstate.Begin
	// Sweep is what the stale-ref sweep did (nil if it did not run).
	Sweep *shardstore.SweepResult
	// StateSweep is what the sweep of old job states did (nil if it did
	// not run: it runs in one job in StateSweepOneIn that starts its
	// agent, when no dispatcher's sweep marker is fresh).
	StateSweep *refstate.SweepResult
	// DispatcherSweeps: this run read the sweep marker and found it
	// fresh, so it left job states to the dispatcher.
	DispatcherSweeps bool
}

// run holds one assemble run's settings and clients.
type run struct {
	o       Options
	cfg     *config.Config
	log     *actions.Toolkit
	store   *shardstore.Store
	states  *jobstate.Store
	issues  *logIssues
	blocks  *blockfile.Store // read for the agent's snapshot
	now     func() time.Time
	holder  shardstore.Holder // this run, as written in a lock
	runURL  string
	earlier time.Time // earliest payload timestamp seen: the job is no older

	// state is the "running" state commit, made ahead (with the shard
	// reads) when this run may proceed; zero = Begin makes it.
	state refstate.Mark
	sw    sweeps
	// draw is which sweeps this run makes: from o.Rand, drawn in setup
	// before any sweep uses it (a rand.Rand is not shared between
	// goroutines), or from the job's id once it is known.
	draw *draws
}

// Run performs one assemble run. Its error is for the exit status; when
// the job is known, the failure was also recorded on a log issue.
func Run(ctx context.Context, o Options) (*Result, error) {
	if o.Getenv == nil {
		return nil, errors.New("assemble: Options.Getenv is required")
	}
	if o.Stdout == nil {
		o.Stdout = io.Discard
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	r, err := setup(o)
	if err != nil {
		return nil, fmt.Errorf("assemble: %w", err)
	}
	res := &Result{}
	err = r.assemble(ctx, res)
	if err == nil && res.Ready {
		if rerr := r.writeRecord(res); rerr != nil {
			// the agent job starts the record itself then; nothing is lost but assemble's part
			r.log.Warningf("%v", rerr)
		}
	}
	if err != nil {
		if rerr := r.recordFailure(ctx, res, err); rerr != nil {
			r.log.Warningf("could not record the failure on a log issue: %v", rerr)
		}
	}
	r.sweep(ctx, res.JobID, false) // started early unless the event was unreadable
	r.reportSweeps(res)
	if oerr := r.setOutputs(res); oerr != nil {
		err = errors.Join(err, oerr)
	}
	if err != nil {
		return res, fmt.Errorf("assemble: %w", err)
	}
	return res, nil
}

func setup(o Options) (*run, error) {
	cfg, err := config.Load(o.Getenv)
	if err != nil {
		return nil, err
	}
	token := strings.TrimSpace(o.Getenv("GITHUB_TOKEN"))
	if token == "" {
		return nil, errors.New("GITHUB_TOKEN is not set: assemble needs a token that can write refs and issues in " + cfg.ControlRepo)
	}
	if cfg.ControlRepo == "" {
		return nil, errors.New("CONTROL_REPO (or GITHUB_REPOSITORY) is not set: assemble needs the control repo")
	}
	now := o.Now
	if now == nil {
		now = time.Now
	}
	// Writes count against the account's content limits, shared with other jobs:
	// when GitHub says slow down, wait it out rather than fail the job.
	gopt := ghclient.Options{BaseURL: cfg.APIURL, Token: token, UserAgent: "mention-runner-assemble", Now: now, MaxWait: ghclient.AccountLimitWait}
	if o.Client != nil {
		o.Client(&gopt)
	}
	issuesClient, err := ghclient.New(gopt) // creating an issue is not repeated blindly
	if err != nil {
		return nil, err
	}
	gopt.RetryUnsafe = true // every git write in shardstore is safe to repeat
	gitClient, err := ghclient.New(gopt)
	if err != nil {
		return nil, err
	}
	// Refs and their commits go up as git pushes, one request each (a piece,
	// the lock, the job's state), through the same client: its timeouts
	// and its waits on GitHub's limits.
	push, err := refpush.ForAPI(gitClient, token)
	if err != nil {
		return nil, err
	}
	store, err := shardstore.New(gitClient, cfg.ControlRepo, now)
	if err != nil {
		return nil, err
	}
	store.Push = push
	states, err := jobstate.New(gitClient, push, cfg.ControlRepo, now)
	if err != nil {
		return nil, err
	}
	owner, name, _ := strings.Cut(cfg.ControlRepo, "/")
	r := &run{
		o: o, cfg: cfg, now: now, store: store, states: states,
		log:    actions.New(o.Getenv, o.Stdout),
		issues: &logIssues{gh: issuesClient, owner: owner, name: name},
		blocks: &blockfile.Store{Client: issuesClient, Repo: cfg.ControlRepo, Path: cfg.BlocklistPath},
	}
	r.holder, r.runURL = identity(o.Getenv, cfg.ServerURL)
	if o.Rand != nil {
		d := drawRand(o.Rand)
		r.draw = &d
	}
	return r, nil
}

// identity names this workflow run for the lock and links.
func identity(getenv func(string) string, server string) (shardstore.Holder, string) {
	h := shardstore.Holder{RunID: strings.TrimSpace(getenv("GITHUB_RUN_ID")), Attempt: strings.TrimSpace(getenv("GITHUB_RUN_ATTEMPT"))}
	repo := strings.TrimSpace(getenv("GITHUB_REPOSITORY"))
	var url string
	if h.RunID != "" && repo != "" && strings.HasPrefix(server, "https://") {
		url = contract.WorkflowRunURL(server, repo, h.RunID)
		h.URL = url
	}
	if h.RunID == "" {
		// Outside Actions no two runs may look alike, or both could "re-enter" a lock.
		h.RunID = "local-" + uuid.NewString()
	}
	return h, url
}

// assemble fills res; it returns an error only for a failed run.
func (r *run) assemble(ctx context.Context, res *Result) error {
	data, err := readEvent(r.o.Getenv("GITHUB_EVENT_PATH"))
	if err != nil {
		return err
	}
	et, p, err := transport.ParseLine(data)
	if err != nil {
		return err
	}
	res.EventType = et
	if contract.ValidJobID(p.JobID) {
		res.JobID = p.JobID
	}
	// Stale refs of other jobs are swept beside this job's own requests.
	r.sweep(ctx, res.JobID, et == contract.EventAgentShard && p.Shard != nil && p.Shard.Index == 0)
	if ts, terr := time.Parse(time.RFC3339, p.Timestamp); terr == nil {
		r.earlier = ts
	}
	opt := transport.Options{MaxContextBytes: r.cfg.MaxContextBytes}
	a := transport.NewAssembler(opt)
	if _, err := a.Add(et, p); err != nil {
		return err
	}
	if et == contract.EventAgentSmall {
		c, err := a.Context()
		if err != nil {
			return err
		}
		r.log.Infof("job %s: agent_small event with a context of %d bytes", res.JobID, len(c))
		return r.proceed(ctx, res, c)
	}
	res.Shard = p.Shard
	c, err := r.shard(ctx, res, p, opt)
	if err != nil || c == nil {
		return err
	}
	return r.proceed(ctx, res, c)
}

// shard stores this run's piece and, when this run is the one to proceed,
// returns the whole context; nil without error means another run proceeds
// or shards are still missing.
func (r *run) shard(ctx context.Context, res *Result, p transport.Payload, opt transport.Options) ([]byte, error) {
	piece, err := shardstore.PieceOf(p)
	if err != nil {
		return nil, err
	}
	i, n := piece.Index, piece.Total
	stored, err := r.store.Put(ctx, piece)
	if err != nil {
		return nil, err
	}
	if stored.Superseded {
		return nil, r.superseded(res, piece, stored.NewerTimestamp)
	}
	what := fmt.Sprintf("stored shard %d of %d (index %d) of job %s", i+1, n, i, piece.JobID)
	switch {
	case stored.Duplicate:
		what = fmt.Sprintf("shard %d of %d (index %d) of job %s was already stored with the same content", i+1, n, i, piece.JobID)
	case stored.Replaced:
		what += ", replacing the piece of an older dispatch"
	}
	job, err := r.store.List(ctx, piece.JobID)
	if err != nil {
		return nil, err
	}
	for _, u := range job.Unknown {
		r.log.Warningf("job %s: ignoring unexpected ref %s", piece.JobID, u)
	}
	// Indices without any ref are missing whatever their dispatch; checking
	// that first keeps a waiting run from reading the other shards.
	if res.Missing = job.Missing(n); len(res.Missing) > 0 {
		r.log.Infof("%s; waiting for %d more (missing indices: %s)", what, len(res.Missing), ints(res.Missing, 20))
		return nil, nil
	}
	h := r.holder
	h.JobID = piece.JobID
	var pieces []shardstore.Piece
	if job.Lock == "" {
		// This run tries to take the lock: its lock commit and the job's
		// state commit are made while the shards are described (locally:
		// each goes up in the push that creates its ref), and the pieces
		// are read while the lock is pushed (thrown away if another run
		// wins it).
		var lockSHA string
		g, gctx := errgroup.WithContext(ctx)
		g.Go(func() (err error) { job, err = r.current(gctx, res, job, stored); return err })
		g.Go(func() (err error) { lockSHA, err = r.store.LockCommit(gctx, h, stored.Tree); return err })
		g.Go(func() (err error) { r.state, err = r.states.Prepare(gctx, r.holder.RunID); return err })
		if err := g.Wait(); err != nil || job == nil {
			return nil, err
		}
		if res.Missing = job.Missing(n); len(res.Missing) > 0 {
			r.log.Infof("%s; waiting for %d more of this dispatch (missing indices: %s; pieces of an older dispatch do not count)", what, len(res.Missing), ints(res.Missing, 20))
			return nil, nil
		}
		var lock *shardstore.LockResult
		var readErr error
		var lg errgroup.Group
		lg.Go(func() (err error) { lock, err = r.store.LockAt(ctx, job, h, lockSHA); return err })
		lg.Go(func() error { pieces, readErr = r.store.Read(ctx, job, stored); return nil })
		if err := lg.Wait(); err != nil {
			return nil, err
		}
		if !r.locked(res, lock, what, n) {
			return nil, nil
		}
		if readErr != nil {
			return nil, readErr
		}
	} else {
		// A lock already taken is final: the pieces it was taken for are
		// read by its holder, whatever arrived since.
		lock, err := r.store.LockAt(ctx, job, h, "")
		if err != nil {
			return nil, err
		}
		if !r.locked(res, lock, what, n) {
			return nil, nil
		}
		// Re-entered from a listed lock: the shards are not described yet.
		if err := r.store.Describe(ctx, job, stored); err != nil {
			return nil, err
		}
		job = job.Select(piece.Timestamp)
		if pieces, err = r.store.Read(ctx, job, stored); err != nil {
			return nil, err
		}
	}
	a := transport.NewAssembler(opt)
	for _, pc := range pieces {
		// Select chose these by their commits; check what was read too, so
		// the assembler gets one dispatch's pieces or nothing.
		if c, err := shardstore.CompareTimestamps(pc.Timestamp, piece.Timestamp); err != nil || c != 0 {
			return nil, &shardstore.CorruptError{Ref: contract.ShardRef(pc.JobID, pc.Index),
				Reason: fmt.Sprintf("its piece has timestamp %q, not this dispatch's %q", pc.Timestamp, piece.Timestamp)}
		}
		if _, err := a.Add(contract.EventAgentShard, pc.Payload()); err != nil {
			return nil, err
		}
	}
	return a.Context()
}

// locked reports whether this run holds the lock, logging who proceeds.
func (r *run) locked(res *Result, lock *shardstore.LockResult, what string, n int) bool {
	switch {
	case !lock.Won:
		res.Holder = &lock.Holder
		r.log.Infof("%s; all %d shards are stored and %s proceeds", what, n, lock.Holder)
		return false
	case lock.Reentered:
		r.log.Infof("%s; this run already holds the lock (re-run), proceeding", what)
	default:
		r.log.Infof("%s; all %d shards are stored and this run won the lock, proceeding", what, n)
	}
	return true
}

// current describes the job's shards and keeps those of this run's
// dispatch; nil without error means a newer dispatch superseded it.
func (r *run) current(ctx context.Context, res *Result, job *shardstore.Job, stored *shardstore.Stored) (*shardstore.Job, error) {
	if err := r.store.Describe(ctx, job, stored); err != nil {
		return nil, err
	}
	newest := job.Newest()
	if c, err := shardstore.CompareTimestamps(newest, stored.Timestamp); err == nil && c > 0 {
		return nil, r.superseded(res, stored.Piece, newest)
	}
	return job.Select(stored.Timestamp), nil
}

// superseded ends the run cleanly: its piece belongs to a dispatch of the
// job that a newer one replaced.
func (r *run) superseded(res *Result, p shardstore.Piece, newer string) error {
	res.Superseded = true
	r.log.Infof("shard %d of %d (index %d) of job %s, dispatched at %s, is superseded by a newer dispatch of this job (dispatched at %s); this run ends without proceeding",
		p.Index+1, p.Total, p.Index, p.JobID, p.Timestamp, newer)
	return nil
}

// sweeps are the stale-ref sweeps of one run: they touch only other jobs'
// refs, so they run beside this job's own requests and are reported at
// the end.
type sweeps struct {
	wg                sync.WaitGroup
	shardsOn, stateOn bool
	shards            *shardstore.SweepResult
	shardsErr         error
	dispatcher        bool // the sweep marker was fresh
	markerErr         error
	states            *refstate.SweepResult
	statesErr         error
}

// draws are the sweeps one run makes.
type draws struct {
	shards, states bool
	slice          string // the job states' slice: two hex digits of a jobid
}

// drawRand draws a run's sweeps from rng.
func drawRand(rng *rand.Rand) draws {
	return draws{states: rng.IntN(StateSweepOneIn) == 0, shards: rng.IntN(ShardSweepOneIn) == 0,
		slice: fmt.Sprintf("%02x", rng.IntN(256))}
}

// drawJob draws a job's sweeps from its id: a hash, so jobs draw evenly
// and independently whatever their ids look like, and every run of one
// job draws the same.
func drawJob(jobID string) draws {
	h := sha256.Sum256([]byte("mention-runner sweeps\x00" + jobID))
	return draws{
		states: binary.BigEndian.Uint32(h[0:4])%StateSweepOneIn == 0,
		shards: binary.BigEndian.Uint32(h[4:8])%ShardSweepOneIn == 0,
		slice:  hex.EncodeToString(h[8:9]),
	}
}

// draws is this run's draw, made from jobID when no Rand made it.
func (r *run) draws(jobID string) draws {
	if r.draw == nil {
		d := drawJob(jobID)
		r.draw = &d
	}
	return *r.draw
}

// sweep starts the sweep of stale job refs (skipping jobID), once, when
// this run is the first shard's of a sharded job (firstShard) or drew it.
func (r *run) sweep(ctx context.Context, jobID string, firstShard bool) {
	if r.sw.shardsOn {
		return
	}
	r.sw.shardsOn = true
	if !firstShard && !r.draws(jobID).shards {
		return
	}
	r.sw.wg.Go(func() {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), sweepTimeout)
		defer cancel()
		r.sw.shards, r.sw.shardsErr = r.store.Sweep(ctx, shardstore.SweepOptions{Skip: jobID, Rand: r.o.Rand})
	})
}

// sweepStates starts the fallback sweep of old job states, once, in a
// run that has its job's whole context and drew it: it reads the sweep
// marker and sweeps one slice unless a dispatcher swept lately.
func (r *run) sweepStates(ctx context.Context, jobID string) {
	if r.sw.stateOn {
		return
	}
	r.sw.stateOn = true
	d := r.draws(jobID)
	if !d.states {
		return
	}
	r.sw.wg.Go(func() {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), sweepTimeout)
		defer cancel()
		// an unreadable marker is no dispatcher's word: sweep
		fresh, err := r.states.DispatcherSweeps(ctx)
		if r.sw.dispatcher, r.sw.markerErr = fresh, err; fresh {
			return
		}
		r.sw.states, r.sw.statesErr = r.states.SweepSlice(ctx, d.slice, StateSweepChecks, r.o.Rand)
	})
}

// reportSweeps waits for the sweeps and logs what they did.
func (r *run) reportSweeps(res *Result) {
	r.sw.wg.Wait()
	if r.sw.shardsErr != nil {
		r.log.Warningf("sweep of stale job refs: %v", r.sw.shardsErr)
	} else if sr := r.sw.shards; sr != nil {
		res.Sweep = sr
		for _, e := range sr.Errors {
			r.log.Warningf("sweep of stale job refs: %v", e)
		}
		if len(sr.Deleted) > 0 {
			r.log.Infof("swept %d stale job refs (checked %d of %d)", len(sr.Deleted), sr.Checked, sr.Listed)
		}
	}
	res.DispatcherSweeps = r.sw.dispatcher
	if r.sw.markerErr != nil {
		r.log.Warningf("%v; sweeping a slice of the job states", r.sw.markerErr)
	}
	if r.sw.statesErr != nil {
		r.log.Warningf("sweep of old job states: %v", r.sw.statesErr)
	} else if js := r.sw.states; js != nil {
		res.StateSweep = js
		if len(js.Deleted) > 0 {
			r.log.Infof("swept %d job states older than %s (checked %d of the %d in slice %s)", len(js.Deleted), jobstate.MaxAge, js.Checked, js.Listed, r.draw.slice)
		}
	}
}

func (r *run) setOutputs(res *Result) error {
	set := []struct{ k, v string }{{"ready", strconv.FormatBool(res.Ready)}}
	if res.JobID != "" {
		set = append(set, struct{ k, v string }{"jobid", res.JobID})
	}
	if res.LogIssue > 0 {
		set = append(set, struct{ k, v string }{"log_issue", strconv.Itoa(res.LogIssue)})
	}
	if res.Ready {
		set = append(set,
			struct{ k, v string }{"context_sha256", res.ContextSHA256},
			// publish skips reads these settle: the listing of shard refs
			// to delete, and on the run's first attempt the log issue's
			// comments and labels
			struct{ k, v string }{"sharded", strconv.FormatBool(res.EventType != contract.EventAgentSmall)},
			struct{ k, v string }{"log_issue_new", strconv.FormatBool(res.LogIssueNew)},
			struct{ k, v string }{"target_repo", res.TargetRepo},
			struct{ k, v string }{"target_number", strconv.Itoa(res.TargetNumber)})
	}
	var errs []error
	for _, s := range set {
		errs = append(errs, r.log.SetOutput(s.k, s.v))
	}
	return errors.Join(errs...)
}

func ints(xs []int, max int) string {
	var b strings.Builder
	for i, x := range xs {
		if i == max {
			fmt.Fprintf(&b, " and %d more", len(xs)-max)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.Itoa(x))
	}
	return b.String()
}
