package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/go-github/v62/github"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/mention-runner/mention-runner/internal/core/cli"
)

// monitor serves /healthz and /metrics for serve and poll. It reads what
// the dispatcher does from its log records (the "trigger" and "poll cycle"
// lines) and from the responses its GitHub clients receive, so it adds no
// GitHub write and no hook inside the dispatcher's bookkeeping. Its one
// read is the probe of the control repository, once per interval.
type monitor struct {
	reg      *prometheus.Registry
	interval time.Duration // the probe's period; health allows two
	loopMax  time.Duration // poll: the longest gap between cycles that is healthy (0 = no loop)
	now      func() time.Time

	seen      *prometheus.CounterVec
	decisions *prometheus.CounterVec
	errs      *prometheus.CounterVec
	rate      *prometheus.GaugeVec
	cycle     prometheus.Histogram
	latency   prometheus.Histogram
	writes    *writesCollector

	mu         sync.Mutex
	ready      bool   // the token and the control repo were checked
	probeErr   string // the last probe's failure, "" when it passed
	probed     time.Time
	cycleStart time.Time
	cycleEnd   time.Time
}

func newMonitor(interval, loopMax time.Duration) *monitor {
	m := &monitor{reg: prometheus.NewRegistry(), interval: interval, loopMax: loopMax, now: time.Now}
	m.seen = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "mention_runner_mentions_seen_total",
		Help: "Triggers the dispatcher decided on, by mode."}, []string{"mode"})
	m.decisions = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "mention_runner_mentions_total",
		Help: "Triggers by decision (dispatch, ignore, reply, block, unblock) and reason."}, []string{"decision", "reason"})
	m.errs = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "mention_runner_errors_total",
		Help: "Errors by kind: trigger, cycle, probe, github_network, github_5xx, github_rate_limited."}, []string{"kind"})
	m.rate = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "mention_runner_github_rate_limit_remaining",
		Help: "X-RateLimit-Remaining of the last GitHub answer, by resource."}, []string{"resource"})
	m.cycle = prometheus.NewHistogram(prometheus.HistogramOpts{Name: "mention_runner_poll_cycle_seconds",
		Help: "Duration of one poll cycle.", Buckets: prometheus.ExponentialBuckets(0.05, 2, 12)})
	m.latency = prometheus.NewHistogram(prometheus.HistogramOpts{Name: "mention_runner_claim_to_dispatch_seconds",
		Help:    "Time from a mention's claim to GitHub accepting its repository_dispatch, once per mention (a send retried after a lost answer too).",
		Buckets: []float64{0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300}})
	m.writes = newWritesCollector()
	m.reg.MustRegister(m.seen, m.decisions, m.errs, m.rate, m.cycle, m.latency, m.writes)
	return m
}

// dispatched is dispatch.Config.Dispatched: the dispatcher times each
// mention's claim to its accepted dispatch on its own clock.
func (m *monitor) dispatched(_ string, sinceClaim time.Duration) {
	m.latency.Observe(sinceClaim.Seconds())
}

// writesCollector reports, at each scrape, every identity's writes in the
// rolling hour and what is left of its hourly limit, from the pacing
// state the process holds: a scrape makes no request.
type writesCollector struct {
	used, left *prometheus.Desc
	mu         sync.Mutex
	ids        []identityHour
}

// identityHour is one identity's hour: hour reports its writes, its
// hourly limit (0: none) and whether it knows them yet.
type identityHour struct {
	identity string
	hour     func() (used, limit int, ok bool)
}

func newWritesCollector() *writesCollector {
	return &writesCollector{
		used: prometheus.NewDesc("mention_runner_writes_used", "Content-creating writes in the rolling hour, by identity (bot: the account's, as its write ledger last showed them; control: this process's).", []string{"identity"}, nil),
		left: prometheus.NewDesc("mention_runner_writes_left", "What is left of the identity's hourly write limit (GitHub's 500 unless the ledger says otherwise).", []string{"identity"}, nil),
	}
}

// watch adds an identity.
func (w *writesCollector) watch(identity string, hour func() (used, limit int, ok bool)) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.ids = append(w.ids, identityHour{identity, hour})
}

func (w *writesCollector) Describe(ch chan<- *prometheus.Desc) { ch <- w.used; ch <- w.left }

func (w *writesCollector) Collect(ch chan<- prometheus.Metric) {
	w.mu.Lock()
	ids := append([]identityHour(nil), w.ids...)
	w.mu.Unlock()
	for _, id := range ids {
		used, limit, ok := id.hour()
		if !ok {
			continue
		}
		ch <- prometheus.MustNewConstMetric(w.used, prometheus.GaugeValue, float64(used), id.identity)
		if limit > 0 {
			ch <- prometheus.MustNewConstMetric(w.left, prometheus.GaugeValue, float64(max(limit-used, 0)), id.identity)
		}
	}
}

// reasonLabel bounds the reason label: the reasons are the dispatcher's
// fixed phrases, some followed by ": " or ", " and a detail that varies,
// some with counts in them.
func reasonLabel(r string) string {
	if i := strings.IndexAny(r, ":,"); i >= 0 {
		r = r[:i]
	}
	r = strings.Map(func(c rune) rune {
		if c >= '0' && c <= '9' {
			return 'N'
		}
		return c
	}, r)
	if len(r) > 48 {
		r = r[:48]
	}
	return r
}

// handler counts the dispatcher's log records before passing them on.
type handler struct {
	slog.Handler
	m    *monitor
	mode string
}

func (h *handler) Handle(ctx context.Context, r slog.Record) error {
	switch r.Message {
	case "trigger", "trigger failed":
		var decision, reason string
		r.Attrs(func(a slog.Attr) bool {
			switch a.Key {
			case "decision":
				decision = a.Value.String()
			case "reason":
				reason = a.Value.String()
			}
			return true
		})
		h.m.seen.WithLabelValues(h.mode).Inc()
		if r.Message == "trigger failed" {
			h.m.errs.WithLabelValues("trigger").Inc()
		} else {
			h.m.decisions.WithLabelValues(decision, reasonLabel(reason)).Inc()
		}
	case "poll cycle", "poll cycle failed":
		h.m.cycleDone(r.Message == "poll cycle")
	}
	return h.Handler.Handle(ctx, r)
}

func (h *handler) WithAttrs(as []slog.Attr) slog.Handler {
	return &handler{Handler: h.Handler.WithAttrs(as), m: h.m, mode: h.mode}
}

func (h *handler) WithGroup(name string) slog.Handler {
	return &handler{Handler: h.Handler.WithGroup(name), m: h.m, mode: h.mode}
}

func (m *monitor) cycleDone(ok bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	if !m.cycleStart.IsZero() {
		m.cycle.Observe(now.Sub(m.cycleStart).Seconds())
	}
	if ok {
		m.cycleEnd = now
	} else {
		m.errs.WithLabelValues("cycle").Inc()
	}
}

// sleep wraps the poller's sleep: a cycle starts when a sleep ends.
func (m *monitor) sleep(inner func(context.Context, time.Duration) error) func(context.Context, time.Duration) error {
	return func(ctx context.Context, d time.Duration) error {
		err := inner(ctx, d)
		m.mu.Lock()
		m.cycleStart = m.now()
		m.mu.Unlock()
		return err
	}
}

// transport records every GitHub answer's rate limit and the failures
// by kind (each attempt, retries included).
type ghTransport struct {
	base http.RoundTripper
	m    *monitor
}

func (t *ghTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(r)
	if err != nil {
		if !errors.Is(err, context.Canceled) {
			t.m.errs.WithLabelValues("github_network").Inc()
		}
		return resp, err
	}
	if v := resp.Header.Get("X-RateLimit-Remaining"); v != "" {
		if n, perr := strconv.ParseFloat(v, 64); perr == nil {
			res := resp.Header.Get("X-RateLimit-Resource")
			if res == "" {
				res = "core"
			}
			t.m.rate.WithLabelValues(res).Set(n)
		}
	}
	switch {
	case resp.StatusCode >= 500:
		t.m.errs.WithLabelValues("github_5xx").Inc()
	case resp.StatusCode == http.StatusTooManyRequests,
		resp.StatusCode == http.StatusForbidden && (resp.Header.Get("Retry-After") != "" || resp.Header.Get("X-RateLimit-Remaining") == "0"):
		t.m.errs.WithLabelValues("github_rate_limited").Inc()
	}
	return resp, nil
}

// probe checks the token and the control repository (one read) every
// interval until ctx ends.
func (m *monitor) probe(ctx context.Context, check func(context.Context) error) {
	for {
		cctx, cancel := context.WithTimeout(ctx, max(m.interval, 5*time.Second))
		err := check(cctx)
		cancel()
		if ctx.Err() != nil {
			return
		}
		m.mu.Lock()
		m.probed = m.now()
		m.probeErr = ""
		if err != nil {
			m.probeErr = err.Error()
			m.errs.WithLabelValues("probe").Inc()
		} else {
			m.ready = true
		}
		m.mu.Unlock()
		t := time.NewTimer(m.interval)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
}

// start begins the probe of the token and control repo (a read through
// gh) and, with addr set, serves /healthz and /metrics there; stop ends
// both.
func (m *monitor) start(ctx context.Context, addr string, log *slog.Logger, gh *github.Client, control string) (stop func(), err error) {
	pctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	owner, repo, _ := strings.Cut(control, "/")
	go func() {
		defer close(done)
		m.probe(pctx, func(ctx context.Context) error {
			_, _, err := gh.Repositories.Get(ctx, owner, repo)
			if err != nil {
				return fmt.Errorf("control repo %s: %w", control, err)
			}
			return nil
		})
	}()
	shutdown := func() {}
	if addr != "" {
		if shutdown, err = m.listen(ctx, addr, log); err != nil {
			cancel()
			<-done
			return nil, err
		}
	}
	return func() { cancel(); <-done; shutdown() }, nil
}

// metricsAddr adds --metrics-addr (METRICS_ADDR).
func metricsAddr(fs *flag.FlagSet, env *cli.Env, what string) *string {
	return fs.String("metrics-addr", env.Getenv("METRICS_ADDR"), "listen address of "+what+" (METRICS_ADDR; e.g. 127.0.0.1:9090)")
}

// Health is /healthz's answer.
type Health struct {
	Live      bool   `json:"live"`
	Ready     bool   `json:"ready"`
	LastCycle string `json:"last_cycle,omitempty"`
	Error     string `json:"error,omitempty"`
}

func (m *monitor) health() Health {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	h := Health{Live: true, Ready: m.ready && m.probeErr == "" && now.Sub(m.probed) <= 2*m.interval, Error: m.probeErr}
	if m.loopMax > 0 {
		last := m.cycleEnd
		if last.IsZero() {
			last = m.cycleStart
		}
		h.Live = !last.IsZero() && now.Sub(last) <= m.loopMax
		if !m.cycleEnd.IsZero() {
			h.LastCycle = m.cycleEnd.UTC().Format(time.RFC3339)
		}
		if !h.Live && h.Error == "" {
			h.Error = fmt.Sprintf("no successful poll cycle in %s", m.loopMax)
		}
	}
	switch {
	case h.Ready || h.Error != "":
	case m.ready:
		h.Error = fmt.Sprintf("the control repo check has had no answer for %s", now.Sub(m.probed).Round(time.Second))
	default:
		h.Error = "the token and control repo are not checked yet"
	}
	return h
}

func (m *monitor) serveHealth(w http.ResponseWriter, _ *http.Request) {
	h := m.health()
	w.Header().Set("Content-Type", "application/json")
	if !h.Live || !h.Ready {
		w.WriteHeader(http.StatusServiceUnavailable)
	}
	_ = json.NewEncoder(w).Encode(h)
}

// mux serves /healthz and /metrics, and everything else with next (nil =
// 404).
func (m *monitor) mux(next http.Handler) http.Handler {
	mx := http.NewServeMux()
	mx.HandleFunc("GET /healthz", m.serveHealth)
	mx.Handle("GET /metrics", promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg}))
	if next != nil {
		mx.Handle("/", next)
	}
	return mx
}

// listen serves m.mux() on addr until ctx ends.
func (m *monitor) listen(ctx context.Context, addr string, log *slog.Logger) (func(), error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", addr, err)
	}
	srv := &http.Server{Handler: m.mux(nil), ReadHeaderTimeout: 10 * time.Second}
	log.Info("serving health and metrics", "addr", ln.Addr().String())
	go func() { _ = srv.Serve(ln) }()
	return func() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}, nil
}

// ledgerRefreshEvery bounds how stale the bot's writes gauge may get: the
// ledger is read again, in the background, by a scrape that finds it
// seen longer ago (one read at most that often, however often scraped).
const ledgerRefreshEvery = time.Minute

// refresher reads the ledger again when a scrape finds it stale: an idle
// dispatcher otherwise shows the account's hour as its own last grant
// left it, while publish jobs write on.
type refresher struct {
	seen    func() time.Time
	refresh func(context.Context) error
	every   time.Duration
	now     func() time.Time
	busy    atomic.Bool
}

// maybe starts a refresh when the ledger was seen more than every ago
// and none is under way; the scrape does not wait for it.
func (r *refresher) maybe() {
	if r.now().Sub(r.seen()) < r.every || !r.busy.CompareAndSwap(false, true) {
		return
	}
	go func() {
		defer r.busy.Store(false)
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		_ = r.refresh(ctx) // a failed read leaves the figure as it was
	}()
}
