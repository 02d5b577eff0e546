package contract

import (
	"strconv"
	"strings"
	"time"
)

// Refs in the control repo (SPEC §4).
const (
	// RefNamespace holds every ref mention-runner creates.
	RefNamespace = "refs/mention-runner/"
	// JobRefPrefix holds each job's shard and lock refs.
	JobRefPrefix = RefNamespace + "jobs/"
	// DispatchedRefPrefix holds the dispatcher's dedupe refs, one per jobid.
	DispatchedRefPrefix = RefNamespace + "dispatched/"
	// RunStateRefPrefix holds each job's run state (running, done), one
	// ref per jobid, kept by publish and swept after a week.
	RunStateRefPrefix = RefNamespace + "runs/"
	// DoctorRefPrefix holds the short-lived refs `dispatcher doctor`
	// creates to prove it may write refs.
	DoctorRefPrefix = RefNamespace + "doctor/"
	// PaceRefPrefix holds one write budget per bot account: the ledger of
	// content-creating writes every process of that account (dispatcher,
	// publish jobs) reserves its writes from.
	PaceRefPrefix = RefNamespace + "pace/"
	// SweepMarkerRef says that a dispatcher sweeps claims and their job
	// states: it points at a state commit (status SweepMarkerStatus, a
	// shared commit of the hour) dated when a dispatcher last swept. The
	// runner's fallback sweep of job states stays out while it is fresh.
	// It lies under no prefix a sweep lists.
	SweepMarkerRef = RefNamespace + "swept"
	// SweepMarkerStatus is the state SweepMarkerRef's commit names.
	SweepMarkerStatus = "swept"
)

// SweepMarkerFresh is the age under which the sweep marker says a
// dispatcher sweeps job states with their claims. A sweeping dispatcher
// sets it in the push of each sweep that deletes, and at least once a day
// otherwise: two days leave room for a day's missed sweeps.
const SweepMarkerFresh = 48 * time.Hour

// JobRefs is the ref prefix of one job ("refs/mention-runner/jobs/<id>/").
func JobRefs(jobID string) string { return JobRefPrefix + jobID + "/" }

// ShardRef is the ref of one shard of a job.
func ShardRef(jobID string, index int) string {
	return JobRefs(jobID) + "shards/" + strconv.Itoa(index)
}

// LockRef is the ref whose creation decides which run of a job proceeds.
func LockRef(jobID string) string { return JobRefs(jobID) + "lock" }

// DispatchedRef marks the mention with this jobid as handled.
func DispatchedRef(jobID string) string { return DispatchedRefPrefix + jobID }

// RunStateRef is the ref recording whether a job's agent started or ended.
func RunStateRef(jobID string) string { return RunStateRefPrefix + jobID }

// PaceRef is the write budget ledger of the account login (lower case):
// its first generation, a name without a number. Each later generation is PaceGenRef; the highest that exists is the ledger.
func PaceRef(login string) string { return PaceRefPrefix + strings.ToLower(login) }

// PaceGenRef is generation gen of the account's ledger: PaceRef for 0,
// PaceRef + "." + gen after (a login has no dot, so no other account's
// ledger has these names).
func PaceGenRef(login string, gen int) string {
	if gen == 0 {
		return PaceRef(login)
	}
	return PaceRef(login) + "." + strconv.Itoa(gen)
}

// PaceGen is the generation of ref if it is a ledger of login.
func PaceGen(login, ref string) (int, bool) {
	rest, ok := strings.CutPrefix(ref, PaceRef(login))
	if !ok {
		return 0, false
	}
	if rest == "" {
		return 0, true
	}
	digits, ok := strings.CutPrefix(rest, ".")
	if !ok || digits == "" || digits[0] == '0' {
		return 0, false
	}
	gen, err := strconv.Atoi(digits)
	if err != nil || gen <= 0 || strconv.Itoa(gen) != digits {
		return 0, false
	}
	return gen, true
}

// PaceWindow names the ledger's generations after the time they are
// opened in: a generation opened by a rotation (or the upgrade from
// sequentially numbered ones) is named PaceWindowGen of the closer's
// clock, so a process that holds nothing yet reads the ledger in one
// request, at the name its own clock gives (writebudget).
const PaceWindow = time.Hour

// PaceWindowGen is the generation named for the window holding t: whole
// PaceWindows since the Unix epoch (about 495,000 in 2026; sequentially
// numbered generations stay far below it), at least 1 (a valid name).
func PaceWindowGen(t time.Time) int { return max(1, int(t.Unix()/int64(PaceWindow/time.Second))) }

// PaceMessagePrefix starts the message of every write-budget ledger
// commit; a JSON state follows. The dispatcher also claims mentions with
// its grants' commits (the claim ref pointing at one reads as claimed by
// the state's "holder"), so refstate reads them too.
const PaceMessagePrefix = "mention-runner write budget\n\n"
