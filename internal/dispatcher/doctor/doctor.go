// Package doctor checks a mention-runner setup the way the dispatcher and the
// control-repo workflow will use it, and says how to fix each problem. A
// wrong scope, a missing variable or a bot without access to the control
// repo otherwise shows up only as a mention nobody answers.
package doctor

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/go-github/v62/github"
	"github.com/google/uuid"

	"github.com/mention-runner/mention-runner/internal/core/blockfile"
	"github.com/mention-runner/mention-runner/internal/core/contract"
	"github.com/mention-runner/mention-runner/internal/core/refpush"
	"github.com/mention-runner/mention-runner/internal/core/refstate"
	"github.com/mention-runner/mention-runner/internal/dispatcher/dispatch"
)

// ProbeEventType is the repository_dispatch event type the dispatch check
// sends. No mention-runner workflow listens to it, so it starts nothing.
const ProbeEventType = "mention-runner-doctor"

// probeRefPrefix is where the write check creates (and at once deletes) a
// ref, named <unix seconds>-<uuid>: a probe left behind (a doctor killed
// between the two) is deleted by a later doctor once it is probeMaxAge old.
const probeRefPrefix = contract.DoctorRefPrefix

const probeMaxAge = time.Hour

// now is the doctor's clock (tests move it).
var now = time.Now

// Config is what the dispatcher would run with.
type Config struct {
	Bot     string // BOT_LOGIN
	Control string // CONTROL_REPO, owner/name
	// GitHub uses BOT_TOKEN; ControlClient uses CONTROL_TOKEN (nil = GitHub).
	GitHub, ControlClient *github.Client
	// OwnControl says CONTROL_TOKEN is a token of its own, not BOT_TOKEN.
	OwnControl bool
	// Push pushes to CONTROL as CONTROL_TOKEN, as the dispatcher writes
	// its state (nil: not checked).
	Push *refpush.Client
	// AllowedUsers is ALLOWED_USERS; AllowedSet tells set-but-empty from unset.
	AllowedUsers  string
	AllowedSet    bool
	BlocklistPath string // "" = contract.BlocklistPath
	// Missing names required settings that were not given; their checks fail.
	Missing []string
}

// Check is one line of the report.
type Check struct {
	Name   string
	OK     bool
	Warn   bool   // passed, but something needs the operator's attention
	Detail string // what was found
	Fix    string // what to do (failures and warnings)
}

// Report is every check, in order.
type Report []Check

// Failed counts the checks that did not pass.
func (r Report) Failed() int {
	n := 0
	for _, c := range r {
		if !c.OK {
			n++
		}
	}
	return n
}

// Print writes one ✓/✗ line per check and the fix under each failure.
func (r Report) Print(w io.Writer) error {
	var b strings.Builder
	warnings := 0
	for _, c := range r {
		mark := "✓"
		switch {
		case !c.OK:
			mark = "✗"
		case c.Warn:
			mark = "!"
			warnings++
		}
		fmt.Fprintf(&b, "%s %s", mark, c.Name)
		if c.Detail != "" {
			fmt.Fprintf(&b, ": %s", c.Detail)
		}
		b.WriteByte('\n')
		if (!c.OK || c.Warn) && c.Fix != "" {
			fmt.Fprintf(&b, "    fix: %s\n", c.Fix)
		}
	}
	if n := r.Failed(); n > 0 {
		fmt.Fprintf(&b, "\n%d of %d checks failed.\n", n, len(r))
	} else if warnings > 0 {
		fmt.Fprintf(&b, "\nAll %d checks passed (%d with a warning).\n", len(r), warnings)
	} else {
		fmt.Fprintf(&b, "\nAll %d checks passed.\n", len(r))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// run carries what later checks learn from earlier ones.
type run struct {
	cfg      Config
	ctl      *github.Client
	rep      Report
	repo     *github.Repository // nil when the control repo is unreachable
	workflow *workflowFinding
	pinned   string // the mention-runner ref the workflow runs, once it is known to exist
	head     string // the control repo's default branch head, once refs are known writable
}

func (r *run) ok(name, detail string) {
	r.rep = append(r.rep, Check{Name: name, OK: true, Detail: detail})
}
func (r *run) fail(name, detail, fix string) {
	r.rep = append(r.rep, Check{Name: name, Detail: detail, Fix: fix})
}
func (r *run) warn(name, detail, fix string) {
	r.rep = append(r.rep, Check{Name: name, OK: true, Warn: true, Detail: detail, Fix: fix})
}

// Run performs every check. Checks that depend on a failed one fail too,
// saying which to fix first, so the report always has the same lines.
func Run(ctx context.Context, cfg Config) Report {
	r := &run{cfg: cfg, ctl: cfg.ControlClient}
	if r.ctl == nil {
		r.ctl = cfg.GitHub
	}
	if len(cfg.Missing) > 0 {
		r.fail("settings", "missing "+strings.Join(cfg.Missing, ", "),
			"set them as the dispatcher would get them (environment or flags); in the dispatcher workflow BOT_TOKEN is a secret, BOT_LOGIN and CONTROL_REPO are repository variables")
	} else {
		r.ok("settings", "BOT_LOGIN, BOT_TOKEN and CONTROL_REPO are set")
	}
	r.allowedUsers()
	r.identities()
	r.token(ctx)
	r.controlRepo(ctx)
	r.refs(ctx)
	r.push(ctx)
	r.sweepMarker(ctx)
	r.blocklist(ctx)
	r.schedule()
	r.privateTargets()
	r.findWorkflow(ctx)
	r.pinnedRelease(ctx)
	r.engineVersions(ctx)
	r.dispatch(ctx)
	return r.rep
}

// identities says which token writes what: GitHub counts its write limits
// (80 a minute, 500 an hour) per account, so what the bot writes bounds
// how many mentions it serves.
func (r *run) identities() {
	const name = "who writes what"
	const workflow = "; the mention-runner workflow's own token writes job state, shard refs, the run-log issue and the bot's ledger for publish (5 writes a mention)"
	if r.cfg.OwnControl {
		r.ok(name, "BOT_TOKEN writes what people see as the bot (👀, replies, the agent's writes); CONTROL_TOKEN, a token of its own, writes claims, dispatches, rate state, the blocklist and the bot's write ledger"+workflow)
		return
	}
	r.ok(name, "BOT_TOKEN writes what people see as the bot (👀, replies, the agent's writes) and, CONTROL_TOKEN being unset or the same token, claims, dispatches, rate state, the blocklist and the bot's write ledger too (about 2.5 more of the bot's writes a mention for a dispatcher handling many at once, 5 for a `dispatcher once` a mention — make bench's cost table; a CONTROL_TOKEN of another account takes them off the bot's 500 an hour)"+workflow)
}

func (r *run) allowedUsers() {
	const name = "ALLOWED_USERS"
	fix := "set the repository variable (or environment variable) ALLOWED_USERS to the logins that may trigger runs, comma-separated, or * for anyone"
	switch {
	case !r.cfg.AllowedSet:
		r.fail(name, "not set: the dispatcher refuses to start", fix)
	case len(dispatch.ParseAllowList(r.cfg.AllowedUsers).Logins()) == 0 && !dispatch.ParseAllowList(r.cfg.AllowedUsers).All:
		r.fail(name, "set but empty: no one can trigger a run", fix)
	default:
		a := dispatch.ParseAllowList(r.cfg.AllowedUsers)
		if a.All {
			r.ok(name, "* (anyone)")
		} else {
			r.ok(name, strings.Join(a.Logins(), ", "))
		}
	}
}

const tokenFix = "create a classic personal access token on the bot account (Settings → Developer settings → Personal access tokens → Tokens (classic)) with the scopes notifications and repo (or public_repo when every target and the control repo are public), and store it as the BOT_TOKEN secret"

// token checks BOT_TOKEN: valid, a classic token with the scopes the
// dispatcher needs, belonging to BOT_LOGIN, able to read notifications.
func (r *run) token(ctx context.Context) {
	if r.cfg.GitHub == nil {
		for _, n := range []string{"token valid", "token scopes", "bot login matches the token", "notifications readable"} {
			r.fail(n, "no BOT_TOKEN", tokenFix)
		}
		return
	}
	u, resp, err := r.cfg.GitHub.Users.Get(ctx, "")
	if err != nil {
		detail := "GET /user failed: " + errText(err)
		if resp != nil && resp.StatusCode == http.StatusUnauthorized {
			detail = "GitHub rejects BOT_TOKEN (401 Bad credentials): expired, revoked or mistyped"
		}
		r.fail("token valid", detail, tokenFix)
		for _, n := range []string{"token scopes", "bot login matches the token", "notifications readable"} {
			r.fail(n, "cannot check: the token is not valid", "fix \"token valid\" first")
		}
		return
	}
	r.ok("token valid", "authenticated as "+u.GetLogin())

	header, classic := resp.Header["X-Oauth-Scopes"]
	switch {
	case !classic:
		r.fail("token scopes", "not a classic token (GitHub sends no X-OAuth-Scopes): fine-grained tokens cannot read notifications", tokenFix)
	default:
		scopes := parseScopes(strings.Join(header, ","))
		var missing []string
		if !slices.Contains(scopes, "notifications") && !slices.Contains(scopes, "repo") {
			missing = append(missing, "notifications")
		}
		if !slices.Contains(scopes, "repo") && !slices.Contains(scopes, "public_repo") {
			missing = append(missing, "repo (or public_repo)")
		}
		have := strings.Join(scopes, ", ")
		if have == "" {
			have = "none"
		}
		if len(missing) > 0 {
			r.fail("token scopes", "has "+have+"; missing "+strings.Join(missing, " and "),
				"edit the token (Settings → Developer settings → Tokens (classic)) and tick "+strings.Join(missing, " and ")+"; the secret keeps working, no need to store it again")
		} else {
			r.ok("token scopes", have)
		}
	}

	if r.cfg.Bot == "" {
		r.fail("bot login matches the token", "BOT_LOGIN is not set; the token belongs to "+u.GetLogin(), "set BOT_LOGIN to "+u.GetLogin())
	} else if !strings.EqualFold(strings.TrimPrefix(r.cfg.Bot, "@"), u.GetLogin()) {
		r.fail("bot login matches the token", fmt.Sprintf("BOT_LOGIN is %s but the token belongs to %s", r.cfg.Bot, u.GetLogin()),
			fmt.Sprintf("set BOT_LOGIN to %s, or store the bot account's own token as BOT_TOKEN", u.GetLogin()))
	} else {
		r.ok("bot login matches the token", u.GetLogin())
	}

	req, err := r.cfg.GitHub.NewRequest(http.MethodGet, "notifications?participating=true&per_page=1", nil)
	if err == nil {
		_, err = r.cfg.GitHub.Do(ctx, req, &[]any{})
	}
	if err != nil {
		r.fail("notifications readable", "GET /notifications failed: "+errText(err), tokenFix)
	} else {
		r.ok("notifications readable", "")
	}
}

const accessFix = "invite the bot account to the control repo with the Write role (Settings → Collaborators) and accept the invitation as the bot"

// controlRepo checks CONTROL is reachable with the control token and that
// its permissions cover refs, contents and issues.
func (r *run) controlRepo(ctx context.Context) {
	const reach, write, issues = "control repo reachable", "control repo writable (refs, contents)", "control repo issues"
	owner, name, ok := strings.Cut(r.cfg.Control, "/")
	if r.ctl == nil || !ok || owner == "" || name == "" || strings.Contains(name, "/") {
		detail := fmt.Sprintf("CONTROL_REPO=%q is not owner/name", r.cfg.Control)
		if r.ctl == nil {
			detail = "no token to reach it with"
		}
		r.fail(reach, detail, "set CONTROL_REPO to the control repo's owner/name and BOT_TOKEN to the bot's token")
		r.fail(write, "cannot check", "fix \""+reach+"\" first")
		r.fail(issues, "cannot check", "fix \""+reach+"\" first")
		return
	}
	repo, resp, err := r.ctl.Repositories.Get(ctx, owner, name)
	if err != nil {
		detail, fix := "GET /repos/"+r.cfg.Control+" failed: "+errText(err), accessFix
		if resp != nil && resp.StatusCode == http.StatusNotFound {
			detail = "CONTROL_REPO=" + r.cfg.Control + ": no such repository, or the token's account cannot see it"
			fix = "check CONTROL_REPO (the owner/name of the control repo; in the dispatcher workflow a repository variable, default: the repository it runs in); if it is right, " + accessFix
			if _, uresp, uerr := r.ctl.Users.Get(ctx, owner); uerr != nil && uresp != nil && uresp.StatusCode == http.StatusNotFound {
				detail = "CONTROL_REPO=" + r.cfg.Control + ": there is no account " + owner + " (mistyped?)"
				fix = "set CONTROL_REPO to the control repo's owner/name"
			}
		}
		r.fail(reach, detail, fix)
		r.fail(write, "cannot check", "fix \""+reach+"\" first")
		r.fail(issues, "cannot check", "fix \""+reach+"\" first")
		return
	}
	r.repo = repo
	r.ok(reach, repo.GetFullName())
	perms := repo.GetPermissions()
	if perms["push"] || perms["maintain"] || perms["admin"] {
		r.ok(write, "the account has "+role(perms))
	} else {
		r.fail(write, "the account has "+role(perms)+" (needs write: the dispatcher creates claim refs and keeps the opt-out list and rate state there)", accessFix)
	}
	switch {
	case !repo.GetHasIssues():
		r.fail(issues, "issues are turned off: run-log issues cannot be opened",
			"turn Issues on in the control repo's Settings → General → Features")
	case !(perms["push"] || perms["maintain"] || perms["admin"] || perms["triage"]):
		r.fail(issues, "the account cannot label or close issues ("+role(perms)+")", accessFix)
	default:
		r.ok(issues, "enabled")
	}
}

// refs creates a probe ref and deletes it: the dispatcher's claim refs need
// exactly this.
func (r *run) refs(ctx context.Context) {
	const name = "control repo refs writable"
	if r.repo == nil {
		r.fail(name, "cannot check", "fix \"control repo reachable\" first")
		return
	}
	owner, repo := r.repo.GetOwner().GetLogin(), r.repo.GetName()
	branch := r.repo.GetDefaultBranch()
	head, _, err := r.ctl.Git.GetRef(ctx, owner, repo, "heads/"+branch)
	if err != nil {
		r.fail(name, "default branch "+branch+" not readable: "+errText(err),
			"push one commit to the control repo's default branch (claim refs need a commit to point at)")
		return
	}
	ref := probeRefPrefix + strconv.FormatInt(now().Unix(), 10) + "-" + uuid.NewString()
	_, _, err = r.ctl.Git.CreateRef(ctx, owner, repo, &github.Reference{Ref: github.String(ref), Object: &github.GitObject{SHA: head.Object.SHA}})
	if err != nil {
		r.fail(name, "creating "+ref+" failed: "+errText(err), accessFix+"; a fine-grained CONTROL_TOKEN needs Contents: read and write")
		return
	}
	if _, err := r.ctl.Git.DeleteRef(ctx, owner, repo, strings.TrimPrefix(ref, "refs/")); err != nil {
		r.fail(name, "created "+ref+" but could not delete it: "+errText(err),
			"delete the ref by hand (git push origin :"+ref+") and give the account the Write role")
		return
	}
	r.ok(name, "created and deleted "+probeRefPrefix+"…")
	r.head = head.GetObject().GetSHA()
	r.sweepProbes(ctx, owner, repo)
}

// push creates a probe ref and deletes it with git pushes, as the
// dispatcher writes its state (a state commit and its ref in one request).
func (r *run) push(ctx context.Context) {
	const name = "control repo refs pushable"
	switch {
	case r.head == "":
		r.fail(name, "cannot check", "fix \"control repo refs writable\" first")
		return
	case r.cfg.Push == nil:
		r.fail(name, "cannot check without a token", "set CONTROL_TOKEN (or BOT_TOKEN)")
		return
	}
	repo, sha := r.repo.GetOwner().GetLogin()+"/"+r.repo.GetName(), r.head
	ref := probeRefPrefix + strconv.FormatInt(now().Unix(), 10) + "-" + uuid.NewString()
	fix := "the dispatcher and the workflow write their state with git pushes over HTTPS (the token as password), one request a state; refused, they write it through the REST API instead, two writes a state: let the token push to the control repo (Contents: read and write; no ruleset blocking refs/mention-runner/*)"
	for _, step := range []struct {
		what string
		up   refpush.Update
	}{{"creating", refpush.Update{Ref: ref, New: sha}}, {"deleting", refpush.Update{Ref: ref, Old: sha}}} {
		res, err := r.cfg.Push.Push(ctx, repo, nil, []refpush.Update{step.up})
		if err == nil {
			err = res[0]
		}
		if err != nil {
			// not fatal: the writers fall back to the REST API
			r.warn(name, step.what+" "+ref+" by a push failed: "+err.Error(), fix)
			return
		}
	}
	r.ok(name, "created and deleted "+probeRefPrefix+"… by git pushes")
}

// sweepMarker says whether a dispatcher sweeps old claims and job states:
// the sweep marker its claim sweep keeps fresh. Without one, one prepare
// job in 20 sweeps a slice of the job states itself (a few REST requests
// of the workflow token's 1,000 an hour); a marker that is not a state
// commit is never overwritten, so it keeps that fallback on for good.
func (r *run) sweepMarker(ctx context.Context) {
	const name = "old state swept"
	if r.repo == nil {
		r.fail(name, "cannot check", "fix \"control repo reachable\" first")
		return
	}
	st, err := refstate.New(r.ctl, r.cfg.Control, now)
	if err != nil {
		r.fail(name, err.Error(), "set CONTROL_REPO to owner/name")
		return
	}
	m, err := st.ReadRecent(ctx, contract.SweepMarkerRef, contract.SweepMarkerStatus, contract.SweepMarkerFresh)
	var corrupt *refstate.CorruptError
	switch {
	case errors.As(err, &corrupt):
		r.fail(name, contract.SweepMarkerRef+" is not a state commit: "+corrupt.Reason,
			"delete it (git push origin :"+contract.SweepMarkerRef+"); the dispatcher's next claim sweep sets it again")
	case err != nil:
		r.warn(name, "could not read "+contract.SweepMarkerRef+": "+errText(err), "run doctor again")
	case m == nil:
		r.ok(name, "no dispatcher has swept yet ("+contract.SweepMarkerRef+" is not set): until one does, one prepare job in 20 sweeps a slice of the old job states itself; poll, serve and event sweep hourly or now and then")
	case now().Sub(m.At) >= contract.SweepMarkerFresh:
		r.warn(name, fmt.Sprintf("the last dispatcher sweep was %s ago (%s): one prepare job in 20 sweeps a slice of the old job states itself", now().Sub(m.At).Round(time.Hour), m.At.UTC().Format(time.RFC3339)),
			"run a dispatcher that sweeps (poll, serve, or once on a schedule) so old claims and job states go in its pushes")
	default:
		r.ok(name, fmt.Sprintf("a dispatcher swept at %s", m.At.UTC().Format(time.RFC3339)))
	}
}

// sweepProbes deletes probe refs left behind by earlier doctors (best
// effort: the check has passed). One named without a time predates the
// naming and is as old as that.
func (r *run) sweepProbes(ctx context.Context, owner, repo string) {
	refs, _, err := r.ctl.Git.ListMatchingRefs(ctx, owner, repo, &github.ReferenceListOptions{Ref: strings.TrimPrefix(probeRefPrefix, "refs/")})
	if err != nil {
		return
	}
	for _, ref := range refs {
		stamp, _, timed := strings.Cut(strings.TrimPrefix(ref.GetRef(), probeRefPrefix), "-")
		secs, err := strconv.ParseInt(stamp, 10, 64)
		if timed && err == nil && now().Sub(time.Unix(secs, 0)) < probeMaxAge {
			continue
		}
		_, _ = r.ctl.Git.DeleteRef(ctx, owner, repo, strings.TrimPrefix(ref.GetRef(), "refs/"))
	}
}

func (r *run) blocklist(ctx context.Context) {
	const name = "opt-out list readable"
	path := r.cfg.BlocklistPath
	if path == "" {
		path = contract.BlocklistPath
	}
	if r.repo == nil {
		r.fail(name, "cannot check", "fix \"control repo reachable\" first")
		return
	}
	l, err := (&blockfile.Store{Client: r.ctl, Repo: r.cfg.Control, Path: path}).Load(ctx)
	switch {
	case err != nil:
		r.fail(name, path+": "+errText(err),
			"fix or restore "+path+" in the control repo from its git history (a corrupt list blocks every run: it must not silently unblock anyone)")
	case l.SHA == "":
		r.ok(name, path+" (not created yet: nobody has opted out)")
	default:
		r.ok(name, fmt.Sprintf("%s (%d entries)", path, len(l.Entries)))
	}
}

// dispatch sends a repository_dispatch no mention-runner workflow listens to.
func (r *run) dispatch(ctx context.Context) {
	const name = "dispatch allowed"
	if r.repo == nil {
		r.fail(name, "cannot check", "fix \"control repo reachable\" first")
		return
	}
	if r.workflow != nil && r.workflow.allTypes {
		r.fail(name, "not tried: "+r.workflow.path+" runs on every repository_dispatch type and would start",
			"fix \"workflow\" first")
		return
	}
	_, _, err := r.ctl.Repositories.Dispatch(ctx, r.repo.GetOwner().GetLogin(), r.repo.GetName(), github.DispatchRequestOptions{EventType: ProbeEventType})
	if err != nil {
		r.fail(name, "POST /repos/"+r.cfg.Control+"/dispatches failed: "+errText(err),
			accessFix+"; the token needs the repo scope (classic) or Contents: read and write (fine-grained CONTROL_TOKEN)")
		return
	}
	r.ok(name, "sent a "+ProbeEventType+" event (no workflow listens to it)")
}

func parseScopes(h string) []string {
	var out []string
	for _, s := range strings.Split(h, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

func role(perms map[string]bool) string {
	for _, r := range []string{"admin", "maintain", "push", "triage", "pull"} {
		if perms[r] {
			if r == "push" {
				return "write"
			}
			if r == "pull" {
				return "read"
			}
			return r
		}
	}
	return "no access"
}

func errText(err error) string {
	var er *github.ErrorResponse
	if errors.As(err, &er) && er.Response != nil {
		return fmt.Sprintf("%d %s", er.Response.StatusCode, er.Message)
	}
	return err.Error()
}
