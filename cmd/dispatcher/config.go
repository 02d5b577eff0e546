package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/google/go-github/v62/github"

	"github.com/mention-runner/mention-runner/internal/core/cli"
	"github.com/mention-runner/mention-runner/internal/core/ghclient"
	"github.com/mention-runner/mention-runner/internal/core/policy"
	"github.com/mention-runner/mention-runner/internal/core/redact"
	"github.com/mention-runner/mention-runner/internal/core/refpush"
	"github.com/mention-runner/mention-runner/internal/core/threadctx"
	"github.com/mention-runner/mention-runner/internal/core/writebudget"
	"github.com/mention-runner/mention-runner/internal/dispatcher/dispatch"
)

// setting is one configuration value, from a flag or else the environment.
type setting struct {
	env, flag, def, doc string
}

// settings is every dispatcher setting; the table in docs/configuration.md lists the same.
var settings = []setting{
	{"BOT_LOGIN", "bot", "", "the bot's login (required)"},
	{"BOT_TOKEN", "token", "", "the bot's classic token: notifications + repo (or public_repo) (required except --dry-run)"},
	{"BOT_TOKEN_FILE", "token-file", "", "a file holding BOT_TOKEN (a mounted secret: Kubernetes, systemd's LoadCredential); one trailing newline is dropped; set this or BOT_TOKEN, not both"},
	{"CONTROL_REPO", "control", "", "owner/name of the control repo (required except --dry-run)"},
	{"CONTROL_TOKEN", "control-token", "", "token for the control repo (contents:write): claims, dispatches, rate state, blocklist, write ledger; another identity than the bot's (the workflow's token in Actions) keeps this bookkeeping off the bot's write budget; default BOT_TOKEN"},
	{"CONTROL_TOKEN_FILE", "control-token-file", "", "a file holding CONTROL_TOKEN, as BOT_TOKEN_FILE; set this or CONTROL_TOKEN, not both"},
	{"ALLOWED_USERS", "allowed-users", "", "who may trigger runs: comma-separated logins or * (required; set but empty = no one)"},
	{"WEBHOOK_SECRET", "webhook-secret", "", "webhook HMAC secret (required for serve)"},
	{"GITHUB_API_URL", "api-url", ghclient.DefaultBaseURL, "GitHub REST API base URL"},
	{"MAX_CONTEXT_BYTES", "max-context-bytes", strconv.Itoa(threadctx.DefaultMaxBytes), "context budget in bytes (a pull request's diff is not in it: the runner's fetch step (prepare job) reads it)"},
	{"RATE_LIMIT_PER_HOUR", "rate-limit", strconv.Itoa(dispatch.DefaultRatePerHour), "runs per user per rolling hour"},
	{"REPLY_LIMIT_PER_AUTHOR", "reply-limit-per-author", strconv.Itoa(dispatch.DefaultReplyPerAuthor), "the bot's replies (!cfg error, rate-limit notice, opt-out confirmations) to one author's mentions, all repositories together, per rolling hour; silence beyond, logged"},
	{"REPLY_LIMIT_PER_HOUR", "reply-limit", strconv.Itoa(dispatch.DefaultReplyPerHour), "the bot's replies for the whole account per rolling hour; silence beyond, logged"},
	{"PRIVATE_TARGETS", "private-targets", "refuse", "a mention in a private repository while the control repo is public: refuse (one reply saying why, no run) or allow (its thread, code excerpts and session land in the public control repo)"},
	{"POLL_INTERVAL", "poll-interval", "60s", "least wait between poll cycles (GitHub's X-Poll-Interval wins when longer)"},
	{"WRITE_GAP", "write-gap", ghclient.DefaultWriteGap.String(), "least time between two of the bot's content-creating requests (GitHub's secondary limits also cap them at 80/min and 500/h); 0s turns the gap off, the caps stay"},
	{"CLAIM_LEASE", "claim-lease", dispatch.DefaultClaimLease.String(), "how long a claimed mention may stay undispatched before another dispatcher takes it over"},
	{"COMMENT_LIMIT", "comment-limit", strconv.Itoa(policy.DefaultCeilings().CommentLimit), "operator ceiling: comments per issue/PR per run (0…1000; keep equal to the runner's)"},
	{"ISSUE_LIMIT", "issue-limit", strconv.Itoa(policy.DefaultCeilings().IssueLimit), "operator ceiling: issues created per run (0…1000; keep equal to the runner's)"},
	{"PR_LIMIT", "pr-limit", strconv.Itoa(policy.DefaultCeilings().PRLimit), "operator ceiling: pull requests created per run (0…1000; keep equal to the runner's)"},
}

// flags holds a subcommand's setting flags until they are resolved.
type flags struct {
	fs   *flag.FlagSet
	vals map[string]*string
}

func addSettings(fs *flag.FlagSet) *flags {
	f := &flags{fs: fs, vals: map[string]*string{}}
	for _, s := range settings {
		doc := fmt.Sprintf("%s (env %s", s.doc, s.env)
		if s.def != "" {
			doc += ", default " + s.def
		}
		f.vals[s.env] = fs.String(s.flag, "", doc+")")
	}
	return f
}

// conf is the resolved configuration.
type conf struct {
	bot, token, control, controlToken, secret, apiURL string
	allowed                                           dispatch.AllowList
	maxContext, rate                                  int
	replyPerAuthor, replyPerHour                      int
	allowPrivate                                      bool
	pollInterval, claimLease, writeGap                time.Duration
	ceilings                                          policy.Ceilings
	flushEach                                         bool // event mode: write the rate state in Handle

	// For doctor, which reports what is missing instead of refusing.
	allowedRaw string
	allowedSet bool
	missing    []string
}

// resolve picks flag, then environment, then default for each setting and
// checks them; every missing required setting is named in one error.
func (f *flags) resolve(env *cli.Env, mode string, dryRun bool) (*conf, error) {
	given := map[string]bool{}
	f.fs.Visit(func(fl *flag.Flag) { given[fl.Name] = true })
	val := map[string]string{}
	set := map[string]bool{}
	for _, s := range settings {
		switch {
		case given[s.flag]:
			val[s.env], set[s.env] = *f.vals[s.env], true
		case isSet(env, s.env):
			val[s.env], set[s.env] = env.Env(s.env), true
		default:
			val[s.env] = s.def
		}
	}
	if err := tokensFromFiles(val, set); err != nil {
		return nil, err
	}
	required := []string{"BOT_LOGIN", "ALLOWED_USERS"}
	if !dryRun {
		required = append(required, "BOT_TOKEN", "CONTROL_REPO")
	}
	if mode == "serve" {
		required = append(required, "WEBHOOK_SECRET")
	}
	var missing []string
	for _, k := range required {
		// ALLOWED_USERS counts when set, even empty (no one may trigger).
		if !set[k] || (k != "ALLOWED_USERS" && strings.TrimSpace(val[k]) == "") {
			missing = append(missing, fmt.Sprintf("%s (--%s)", k, flagOf(k)))
		}
	}
	if len(missing) > 0 && mode != "doctor" {
		return nil, cli.Usagef("missing required settings: %s", strings.Join(missing, ", "))
	}
	c := &conf{bot: strings.TrimPrefix(strings.TrimSpace(val["BOT_LOGIN"]), "@"), token: val["BOT_TOKEN"],
		control: val["CONTROL_REPO"], controlToken: val["CONTROL_TOKEN"], secret: val["WEBHOOK_SECRET"],
		apiURL: val["GITHUB_API_URL"], allowed: dispatch.ParseAllowList(val["ALLOWED_USERS"]),
		allowedRaw: val["ALLOWED_USERS"], allowedSet: set["ALLOWED_USERS"], missing: missing}
	if c.controlToken == "" {
		c.controlToken = c.token
	}
	var errs []string
	num := func(k string, lo int) int {
		n, err := strconv.Atoi(strings.TrimSpace(val[k]))
		if err != nil || n < lo {
			errs = append(errs, fmt.Sprintf("%s=%q: want a whole number ≥ %d", k, val[k], lo))
		}
		return n
	}
	c.maxContext = num("MAX_CONTEXT_BYTES", 1024)
	c.rate = num("RATE_LIMIT_PER_HOUR", 1)
	c.replyPerAuthor = num("REPLY_LIMIT_PER_AUTHOR", 1)
	c.replyPerHour = num("REPLY_LIMIT_PER_HOUR", 1)
	switch v := strings.TrimSpace(val["PRIVATE_TARGETS"]); v {
	case "refuse":
	case "allow":
		c.allowPrivate = true
	default:
		errs = append(errs, fmt.Sprintf("PRIVATE_TARGETS=%q: want refuse or allow", v))
	}
	d, err := time.ParseDuration(strings.TrimSpace(val["POLL_INTERVAL"]))
	if err != nil || d < time.Second {
		errs = append(errs, fmt.Sprintf("POLL_INTERVAL=%q: want a duration of at least 1s, like 60s", val["POLL_INTERVAL"]))
	}
	c.pollInterval = d
	lease, err := time.ParseDuration(strings.TrimSpace(val["CLAIM_LEASE"]))
	if err != nil || lease <= 0 {
		errs = append(errs, fmt.Sprintf("CLAIM_LEASE=%q: want a positive duration, like 10m", val["CLAIM_LEASE"]))
	}
	c.claimLease = lease
	gap, err := time.ParseDuration(strings.TrimSpace(val["WRITE_GAP"]))
	if err != nil || gap < 0 || gap > time.Minute {
		errs = append(errs, fmt.Sprintf("WRITE_GAP=%q: want a duration from 0s to 1m, like 1s", val["WRITE_GAP"]))
	}
	c.writeGap = gap
	c.ceilings, errs = resolveCeilings(val, errs)
	if len(errs) > 0 {
		return nil, cli.Usagef("%s", strings.Join(errs, "; "))
	}
	return c, nil
}

// tokensFromFiles reads BOT_TOKEN and CONTROL_TOKEN from the files their
// _FILE settings name, as secrets are mounted, into val and set. A token
// given both ways, or a file that is unreadable or does not hold one
// token, is refused: every such problem is named in one error.
func tokensFromFiles(val map[string]string, set map[string]bool) error {
	var errs []string
	for _, k := range []string{"BOT_TOKEN", "CONTROL_TOKEN"} {
		fk := k + "_FILE"
		path := strings.TrimSpace(val[fk])
		if path == "" {
			continue
		}
		if strings.TrimSpace(val[k]) != "" {
			errs = append(errs, fmt.Sprintf("%s (--%s) and %s (--%s) are both set: keep one, the file for a mounted secret", k, flagOf(k), fk, flagOf(fk)))
			continue
		}
		tok, err := readToken(path)
		if err != nil {
			errs = append(errs, fmt.Sprintf("%s=%s: %v", fk, path, err))
			continue
		}
		redact.AddSecret(tok)
		val[k], set[k] = tok, true
	}
	if len(errs) > 0 {
		return cli.Usagef("%s", strings.Join(errs, "; "))
	}
	return nil
}

// maxTokenFile bounds what is read of a token file: a token is a few
// dozen bytes, and a path to something else must not be read whole.
const maxTokenFile = 64 << 10

// readToken reads the one token a file holds, without its line end.
func readToken(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("cannot read the token file: %w", err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxTokenFile+1))
	if err != nil {
		return "", fmt.Errorf("cannot read the token file: %w", err)
	}
	if len(b) > maxTokenFile {
		return "", fmt.Errorf("the file is over %d KiB: a token file holds the token alone", maxTokenFile>>10)
	}
	tok := strings.TrimSuffix(strings.TrimSuffix(string(b), "\n"), "\r")
	switch {
	case tok == "":
		return "", errors.New("the file is empty: write the token into it")
	case strings.ContainsAny(tok, " \t\r\n"):
		return "", errors.New("the file holds more than one token (whitespace or a second line): write the token alone, one trailing newline at most")
	}
	return tok, nil
}

// ceilingKeys are the settings holding the operator ceilings.
var ceilingKeys = [3]string{"COMMENT_LIMIT", "ISSUE_LIMIT", "PR_LIMIT"}

// resolveCeilings reads the operator ceilings from resolved settings,
// appending a message per bad value to errs.
func resolveCeilings(val map[string]string, errs []string) (policy.Ceilings, []string) {
	var n [3]int
	for i, k := range ceilingKeys {
		v, err := strconv.Atoi(strings.TrimSpace(val[k]))
		if err != nil || v < 0 || v > policy.MaxLimit {
			errs = append(errs, fmt.Sprintf("%s=%q: want a whole number 0…%d", k, val[k], policy.MaxLimit))
		}
		n[i] = v
	}
	return policy.Ceilings{CommentLimit: n[0], IssueLimit: n[1], PRLimit: n[2], MaxWrites: policy.DefaultMaxWrites,
		LabelLimit: policy.DefaultLabelLimit, ReviewComments: policy.DefaultReviewComments}, errs
}

func flagOf(env string) string {
	for _, s := range settings {
		if s.env == env {
			return s.flag
		}
	}
	return ""
}

// isSet tells an empty variable from an unset one when the environment is
// the process's own; a test environment counts only non-empty values.
func isSet(env *cli.Env, key string) bool {
	if env.Getenv == nil || reflect.ValueOf(env.Getenv).Pointer() == reflect.ValueOf(os.Getenv).Pointer() {
		_, ok := os.LookupEnv(key)
		return ok
	}
	return env.Getenv(key) != ""
}

func logger(env *cli.Env) *slog.Logger {
	return slog.New(slog.NewJSONHandler(env.Stderr, nil))
}

// build makes the dispatcher (and the bot's client, for the poller).
func (c *conf) build(env *cli.Env, dryRun bool) (*dispatch.Dispatcher, *github.Client, error) {
	return c.buildWatched(env, dryRun, nil, "")
}

// buildWatched is build with m (nil = none) counting the log records and
// GitHub answers of mode.
func (c *conf) buildWatched(env *cli.Env, dryRun bool, m *monitor, mode string) (*dispatch.Dispatcher, *github.Client, error) {
	log := logger(env)
	if m != nil {
		log = slog.New(&handler{Handler: log.Handler(), m: m, mode: mode})
	}
	ceil := c.ceilings
	cfg := dispatch.Config{Bot: c.bot, Control: c.control, Allowed: c.allowed, RatePerHour: c.rate, ReplyPerAuthor: c.replyPerAuthor, ReplyPerHour: c.replyPerHour, AllowPrivateTargets: c.allowPrivate, Ceilings: &ceil,
		Context: threadctx.Options{MaxBytes: c.maxContext}, ClaimLease: c.claimLease, DryRun: dryRun, Logger: log,
		FlushEach: c.flushEach}
	if m != nil {
		cfg.Dispatched = m.dispatched
	}
	if dryRun {
		d, err := dispatch.New(cfg, dispatch.Clients{})
		return d, nil, err
	}
	gh, ctl, dsp, ledger, err := c.clients(log, m)
	if err != nil {
		return nil, nil, err
	}
	// CONTROL's refs are pushed as the token that writes CONTROL, through
	// its client's transport (timeouts, Retry-After, pacing)
	if cfg.Push, err = refpush.ForAPI(ctl, c.controlToken); err != nil {
		return nil, nil, err
	}
	d, err := dispatch.New(cfg, dispatch.Clients{GitHub: gh, Control: ctl, Dispatch: dsp, Budget: ledger})
	return d, gh, err
}

// separateControl says whether CONTROL_TOKEN is a token of its own, not
// BOT_TOKEN: then it writes as another identity (the workflow's token, or
// an operator's account), whose writes GitHub counts apart from the bot's.
func (c *conf) separateControl() bool { return c.controlToken != "" && c.controlToken != c.token }

// clients makes the bot's client, the control repo's client, the client
// that sends dispatches, and the account's write ledger they pace through.
// m (nil = none) counts their answers and shows each identity's writes.
func (c *conf) clients(log *slog.Logger, m *monitor) (gh, ctl, dsp *github.Client, ledger *writebudget.Ledger, err error) {
	var base http.RoundTripper
	if m != nil {
		base = &ghTransport{base: http.DefaultTransport, m: m}
	}
	// GitHub's content-creation limits count per account: the clients
	// of one identity share one pacer.
	gap := c.writeGap
	if gap == 0 {
		gap = -1 // the pacer reads 0 as "default"; the operator asked for none
	}
	p := ghclient.NewPacer(0, 0, gap, nil, nil)
	mk := func(token string, unsafe bool, p *ghclient.Pacer) (*github.Client, error) {
		return ghclient.New(ghclient.Options{BaseURL: c.apiURL, Token: token, UserAgent: "mention-runner-dispatcher/" + cli.Version,
			RetryUnsafe: unsafe, Logger: log, Pacer: p, Base: base})
	}
	// The account's other writers (publish jobs) run elsewhere: every write
	// also takes a slot of the account's ledger in the control repo. The
	// ledger's own client is not paced by it; its writes are counted as
	// the bot's (SelfCost) when CONTROL_TOKEN is the bot's.
	lc, err := mk(c.controlToken, true, nil)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	// each ledger update is one push of its commit and ref (one write)
	push, err := refpush.ForAPI(lc, c.controlToken)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	lo := dispatch.LedgerOptions(lc, push, c.control, c.bot)
	// A CONTROL_TOKEN of its own (the workflow's token in Actions) is
	// another identity: the bookkeeping it writes (claims, dispatches, rate
	// state, the blocklist, the ledger itself) costs the bot nothing and
	// is paced under that identity's own limits.
	ctlP := p
	if c.separateControl() {
		lo.SelfCost = 0
		ctlP = ghclient.NewPacer(0, 0, gap, nil, nil)
		// the ledger's writes are the control identity's too: paced with
		// its others, so GitHub does not refuse them (and the bot's token
		// stands in for them only when it does anyway)
		if lo.Client, err = mk(c.controlToken, true, ctlP); err != nil {
			return nil, nil, nil, nil, err
		}
		if lo.Push, err = refpush.ForAPI(lo.Client, c.controlToken); err != nil {
			return nil, nil, nil, nil, err
		}
		// while GitHub refuses that identity (it writes for every job),
		// the bot's own token keeps the ledger shared, at the bot's cost
		if lo.Fallback, err = mk(c.token, true, nil); err != nil {
			return nil, nil, nil, nil, err
		}
		if lo.FallbackPush, err = refpush.ForAPI(lo.Fallback, c.token); err != nil {
			return nil, nil, nil, nil, err
		}
		lo.FallbackCost = writebudget.UpdateCost(lo.FallbackPush)
	}
	lo.Warn = func(err error) { log.Warn("account write budget unavailable", "err", err) }
	ledger, err = writebudget.New(lo)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	p.Share(ledger)
	if m != nil {
		watchWrites(m.writes, ledger, p, ctlP)
	}
	if gh, err = mk(c.token, false, p); err != nil {
		return nil, nil, nil, nil, err
	}
	// The control client's writes are claim refs and sha-guarded files:
	// each is recognised when repeated, so 5xx and resets are retried.
	if ctl, err = mk(c.controlToken, true, ctlP); err != nil {
		return nil, nil, nil, nil, err
	}
	// Dispatches may be retried on 5xx: an identical shard is harmless.
	if dsp, err = mk(c.controlToken, true, ctlP); err != nil {
		return nil, nil, nil, nil, err
	}
	return gh, ctl, dsp, ledger, nil
}

// watchWrites shows the bot's hour as the account's ledger last showed it
// (its pacer's, this process's writes alone, until the ledger is read),
// and a CONTROL_TOKEN of its own as its pacer's: that identity is paced
// per process. With one token the control repo's writes are the bot's.
func watchWrites(w *writesCollector, ledger *writebudget.Ledger, bot, control *ghclient.Pacer) {
	fresh := &refresher{seen: ledger.SeenAt, refresh: ledger.Refresh, every: ledgerRefreshEvery, now: time.Now}
	w.watch("bot", func() (int, int, bool) {
		fresh.maybe()
		if used, limit, ok := ledger.Hour(); ok {
			return used, limit, true
		}
		used, limit := bot.Hour()
		return used, limit, true
	})
	if control != bot {
		w.watch("control", func() (int, int, bool) {
			used, limit := control.Hour()
			return used, limit, true
		})
	}
}
