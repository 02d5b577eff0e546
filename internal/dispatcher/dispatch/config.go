package dispatch

import (
	"fmt"
	"log/slog"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/mention-runner/mention-runner/internal/core/contract"
	"github.com/mention-runner/mention-runner/internal/core/mention"
	"github.com/mention-runner/mention-runner/internal/core/policy"
	"github.com/mention-runner/mention-runner/internal/core/refpush"
	"github.com/mention-runner/mention-runner/internal/core/threadctx"
)

// Defaults for Config fields left zero.
const (
	DefaultRatePerHour = 10
	DefaultStatePath   = ".mention-runner/ratelimit.json"
	DefaultCacheTTL    = 30 * time.Second
	// DefaultReplyPerAuthor and DefaultReplyPerHour bound the bot's own
	// replies (the !cfg error, the rate-limit notice, the opt-out
	// confirmations) per author across every repository, and for the
	// whole account, per rolling hour.
	DefaultReplyPerAuthor = 3
	DefaultReplyPerHour   = 30
)

// AllowList is ALLOWED_USERS: logins that may trigger runs, or everyone.
type AllowList struct {
	All    bool
	logins map[string]int64 // login → pinned user id (0: the login alone)
	ids    map[int64]bool
}

// ParseAllowList reads "*" (anyone) or comma-separated logins ("@" and
// spaces tolerated). An empty value allows no one (fail closed). A login
// may pin GitHub's numeric user id as "login:id" (`gh api users/LOGIN -q
// .id`): then only that account is allowed, under this login or any later
// one, and a re-registered login is not. A malformed id drops the entry.
func ParseAllowList(s string) AllowList {
	a := AllowList{logins: map[string]int64{}, ids: map[int64]bool{}}
	for _, w := range strings.Split(s, ",") {
		w = strings.TrimPrefix(strings.TrimSpace(w), "@")
		login, idText, pinned := strings.Cut(w, ":")
		switch {
		case w == "":
		case w == "*":
			a.All = true
		case pinned:
			id, err := strconv.ParseInt(strings.TrimSpace(idText), 10, 64)
			if err != nil || id <= 0 {
				continue // fail closed: nobody is allowed by a typo
			}
			a.logins[strings.ToLower(strings.TrimSpace(login))] = id
			a.ids[id] = true
		default:
			if _, ok := a.logins[strings.ToLower(w)]; !ok {
				a.logins[strings.ToLower(w)] = 0
			}
		}
	}
	return a
}

// Logins lists the named logins (lower case, sorted), without "*".
func (a AllowList) Logins() []string {
	out := make([]string, 0, len(a.logins))
	for l := range a.logins {
		out = append(out, l)
	}
	sort.Strings(out)
	return out
}

// Allows reports whether the account (login, numeric id; 0 = unknown) may
// trigger a run: a pinned id must match, whatever the login is now.
func (a AllowList) Allows(login string, id int64) bool {
	if a.All || id != 0 && a.ids[id] {
		return true
	}
	pin, ok := a.logins[strings.ToLower(login)]
	return ok && pin == 0
}

// byNameOnly reports whether login is allowed by its name alone (listed
// without an id, and no "*"): the dispatcher then remembers the id first
// seen under it and refuses any other account that later holds the login.
func (a AllowList) byNameOnly(login string) bool {
	pin, ok := a.logins[strings.ToLower(login)]
	return !a.All && ok && pin == 0
}

// Config is the dispatcher's settings.
type Config struct {
	Bot     string // the bot's login, without "@"
	Control string // owner/name of the control repo
	Allowed AllowList

	// Ceilings are the operator's limits for the policy shown in decisions;
	// they should equal the runner's. nil = policy.DefaultCeilings(). A
	// pointer so that all-zero ceilings (no writes) stay zero.
	Ceilings *policy.Ceilings
	Context  threadctx.Options // context budget and diff cap

	RatePerHour int // runs per user per rolling hour; 0 = DefaultRatePerHour
	// ReplyPerAuthor caps the replies to one author's mentions, in every
	// repository together, per rolling hour; ReplyPerHour caps them for
	// the whole account. Beyond either the bot stays silent and says why
	// in the decision and the log. 0 = the defaults.
	ReplyPerAuthor, ReplyPerHour int
	// AllowPrivateTargets lets a mention in a private repository run while
	// the control repository is public, where its thread, code excerpts and
	// session would be readable by anyone. Off: such a mention gets one
	// reply saying why, and no run.
	AllowPrivateTargets bool
	BlocklistPath       string // "" = contract.BlocklistPath
	StatePath           string // rate-limit state in CONTROL; "" = DefaultStatePath
	// CacheTTL is how long the blocklist and rate state are reused between
	// Refresh calls (serve mode); 0 = DefaultCacheTTL.
	CacheTTL time.Duration
	// FlushEach writes the rate state in each Handle's last step, together
	// with the claim's mark and the reaction (event mode: one mention per
	// process, so a Flush after Handle would be one more round trip).
	// Otherwise whoever runs the dispatcher calls Flush: at the end of a
	// poll cycle, or every CacheTTL in serve mode (FlushEvery).
	FlushEach bool

	// ClaimLease is how long a claim may stay undispatched before another
	// dispatcher takes it over; 0 = DefaultClaimLease.
	ClaimLease time.Duration
	// StateMaxAge is how long claim refs are kept; 0 = DefaultStateMaxAge.
	StateMaxAge time.Duration
	// Holder names this dispatcher in its claims; "" = a fresh
	// "dispatcher-<uuid>". Two dispatchers must never share one.
	Holder string
	// Push writes CONTROL's refs with a git push, several changes in one
	// request (a poll cycle's dispatched marks); nil = the REST API, a
	// request per change. It pushes as the token that writes CONTROL.
	Push *refpush.Client

	// DryRun decides without any API call and reports what it would do.
	DryRun bool

	// Dispatched, when set, hears of each mention whose repository_dispatch
	// GitHub accepted, once per mention (a send retried after a lost
	// answer too), with the time by Now from its claim to that answer.
	Dispatched func(jobID string, sinceClaim time.Duration)

	Now    func() time.Time // nil = time.Now
	Logger *slog.Logger     // nil = discard
}

func (c Config) withDefaults() Config {
	c.Bot = strings.TrimPrefix(strings.TrimSpace(c.Bot), "@")
	if c.RatePerHour == 0 {
		c.RatePerHour = DefaultRatePerHour
	}
	if c.ReplyPerAuthor == 0 {
		c.ReplyPerAuthor = DefaultReplyPerAuthor
	}
	if c.ReplyPerHour == 0 {
		c.ReplyPerHour = DefaultReplyPerHour
	}
	if c.BlocklistPath == "" {
		c.BlocklistPath = contract.BlocklistPath
	}
	if c.StatePath == "" {
		c.StatePath = DefaultStatePath
	}
	if c.CacheTTL <= 0 {
		c.CacheTTL = DefaultCacheTTL
	}
	if c.ClaimLease <= 0 {
		c.ClaimLease = DefaultClaimLease
	}
	if c.StateMaxAge <= 0 {
		c.StateMaxAge = DefaultStateMaxAge
	}
	if c.Holder == "" {
		c.Holder = newHolder()
	}
	ceil := policy.DefaultCeilings()
	if c.Ceilings != nil {
		ceil = *c.Ceilings // a copy: the caller's value may change later
	}
	c.Ceilings = &ceil
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c
}

func (c Config) validate() error {
	if err := mention.ValidBot(c.Bot); err != nil {
		return fmt.Errorf("dispatch: %w", err)
	}
	if !c.DryRun && !policy.ValidRepo(c.Control) {
		return fmt.Errorf("dispatch: control repo %q is not owner/name", c.Control)
	}
	if c.RatePerHour < 0 {
		return fmt.Errorf("dispatch: rate limit %d runs per hour is negative", c.RatePerHour)
	}
	if c.ReplyPerAuthor < 0 || c.ReplyPerHour < 0 {
		return fmt.Errorf("dispatch: reply limits %d per author and %d per hour: negative", c.ReplyPerAuthor, c.ReplyPerHour)
	}
	if err := c.Ceilings.Validate(); err != nil {
		return fmt.Errorf("dispatch: ceilings: %w", err)
	}
	return nil
}
