// Package githubsim is an in-process GitHub: an http.Handler with in-memory
// state that answers the REST calls mention-runner makes in GitHub's own JSON
// shapes (so the real go-github client decodes them), serves each repository
// as a real bare git repository over smart HTTP, and can be told to fail the
// way GitHub fails (rate limits, 5xx, resets, hangs). No test reaches the
// internet: everything runs on loopback.
package githubsim

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Options configures a simulator.
type Options struct {
	Seed   int64            // drives fault injection by Rate
	Now    func() time.Time // nil = time.Now
	GitDir string           // bare repos live here; "" = temp dir removed on Close
	Logf   func(string, ...any)
}

// User is a user or organization account.
type User struct {
	ID        int64
	Login     string
	Kind      string // "User" or "Organization"
	NodeID    string
	CreatedAt time.Time
}

// Repo describes a repository. Its fields do not change after creation.
type Repo struct {
	ID            int64
	NodeID        string
	Owner         string
	Name          string
	FullName      string
	Private       bool
	DefaultBranch string
	Fork          bool
	Parent        string // full name of the forked repo, "" if not a fork
	CreatedAt     time.Time
}

// Sim is the simulator. All methods are safe for concurrent use.
type Sim struct {
	now     func() time.Time
	logf    func(string, ...any)
	logMu   sync.RWMutex // held by logf while it logs; Close sets logOff under it
	logOff  bool
	gitDir  string
	tempGit bool
	gitBin  string
	gitEnv  []string
	// viaHTTPBackend sends every smart HTTP request to git http-backend
	// (tests compare the direct answers with it); set before serving.
	viaHTTPBackend atomic.Bool
	directServed   atomic.Int64 // requests serveService answered
	closed         chan struct{}

	mu        sync.Mutex
	base      string // "http://127.0.0.1:port/" once started or first request seen
	nextID    int64
	users     map[string]*User             // lower login
	members   map[string]map[string]string // lower org → lower login → role
	tokens    map[string]*tokenInfo
	repos     map[string]*repoState // lower full name
	redirects map[string]string     // lower old full name → current full name
	comments  map[int64]*comment
	threads   map[string]*thread            // thread id
	userThr   map[string]map[string]*thread // lower login → repo#number → thread
	notifVer  map[string]int                // lower login → change counter
	servedLM  map[string]map[string]int     // lower login → Last-Modified sent → version
	hooks     []func(string, Dispatch)
	requests  []LoggedRequest
	answering map[int64]struct{} // requests whose outcome the client may see, not yet logged
	logged    *sync.Cond         // signalled when one of them is logged
	logLimit  int
	reqSeq    int64
	moments   int64 // orders requests' arrivals and ends (LoggedRequest.Arrived, Ended)
	primary   int
	// acctLimit overrides primary for some accounts (lower-case login):
	// GitHub gives a workflow's GITHUB_TOKEN 1,000 an hour, not 5,000.
	acctLimit map[string]int
	anonLimit int
	windows   map[string]*rateWindow
	secondary int
	// secondaryHour is the per-hour content limit; writes holds each
	// account's writes of the last hour, acctWrites all of them.
	secondaryHour int
	writes        map[string][]time.Time
	acctWrites    map[string][]time.Time
	faults        []*faultState
	nextFault     int
	rng           *rand.Rand

	srv *http.Server
	ln  net.Listener
}

type tokenInfo struct {
	login         string
	notifications bool
	// scopes are a classic token's OAuth scopes, sent as X-OAuth-Scopes;
	// nil = not a classic token (fine-grained or app), which GitHub sends
	// no scopes header for.
	scopes []string
}

// New creates a simulator. It needs the git binary on PATH.
func New(o Options) (*Sim, error) {
	gitBin, err := exec.LookPath("git")
	if err != nil {
		return nil, fmt.Errorf("githubsim: git binary not found: %w", err)
	}
	s := &Sim{
		now:        o.Now,
		logf:       o.Logf,
		gitDir:     o.GitDir,
		gitBin:     gitBin,
		closed:     make(chan struct{}),
		nextID:     1000,
		users:      map[string]*User{},
		members:    map[string]map[string]string{},
		tokens:     map[string]*tokenInfo{},
		repos:      map[string]*repoState{},
		comments:   map[int64]*comment{},
		threads:    map[string]*thread{},
		userThr:    map[string]map[string]*thread{},
		notifVer:   map[string]int{},
		servedLM:   map[string]map[string]int{},
		primary:    5000,
		logLimit:   defaultLogLimit,
		anonLimit:  60,
		windows:    map[string]*rateWindow{},
		writes:     map[string][]time.Time{},
		acctWrites: map[string][]time.Time{},
		answering:  map[int64]struct{}{},
		rng:        rand.New(rand.NewPCG(uint64(o.Seed), 0x9e3779b97f4a7c15)),
	}
	s.logged = sync.NewCond(&s.mu)
	if s.now == nil {
		s.now = time.Now
	}
	if logf := s.logf; logf != nil {
		// A request still being served when the simulator closes (a
		// client's background write, a push's read-back) logs nothing:
		// its test may have ended, and a test's Logf then is a race.
		s.logf = func(format string, a ...any) {
			s.logMu.RLock()
			defer s.logMu.RUnlock()
			if !s.logOff {
				logf(format, a...)
			}
		}
	} else {
		s.logf = func(string, ...any) {}
	}
	if s.gitDir == "" {
		dir, err := os.MkdirTemp("", "githubsim-")
		if err != nil {
			return nil, fmt.Errorf("githubsim: temp git dir: %w", err)
		}
		s.gitDir, s.tempGit = dir, true
	} else if err := os.MkdirAll(s.gitDir, 0o755); err != nil {
		return nil, fmt.Errorf("githubsim: git dir: %w", err)
	}
	home := filepath.Join(s.gitDir, ".home")
	if err := os.MkdirAll(home, 0o755); err != nil {
		return nil, fmt.Errorf("githubsim: git home: %w", err)
	}
	// Isolate git from the machine's configuration so results are reproducible.
	s.gitEnv = []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + home,
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_CONFIG_GLOBAL=" + os.DevNull,
		"GIT_TERMINAL_PROMPT=0",
		"LANG=C", "LC_ALL=C",
		// No gc or maintenance after a push: the repositories live as long
		// as the simulator, and each auto run is one more process per push.
		"GIT_CONFIG_COUNT=2",
		"GIT_CONFIG_KEY_0=receive.autogc", "GIT_CONFIG_VALUE_0=false",
		"GIT_CONFIG_KEY_1=maintenance.auto", "GIT_CONFIG_VALUE_1=false",
	}
	return s, nil
}

// Handler returns the simulator as an http.Handler. When it is mounted by
// someone else (httptest.NewServer), URLs in responses use the request's Host.
func (s *Sim) Handler() http.Handler { return http.HandlerFunc(s.serveHTTP) }

// Start listens on 127.0.0.1:0 and serves. baseURL ends with "/".
func (s *Sim) Start() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("githubsim: listen: %w", err)
	}
	srv := &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 10 * time.Second}
	s.mu.Lock()
	s.base = "http://" + ln.Addr().String() + "/"
	s.srv, s.ln = srv, ln
	base := s.base
	s.mu.Unlock()
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.logf("githubsim: serve: %v", err)
		}
	}()
	return base, nil
}

// URL is the base URL ("http://127.0.0.1:port/"), or a placeholder before
// the first request when the simulator was not started with Start.
func (s *Sim) URL() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.baseLocked()
}

func (s *Sim) baseLocked() string {
	if s.base == "" {
		return "http://githubsim.invalid/"
	}
	return s.base
}

// Close stops the server, releases hanging requests and removes a temporary
// git directory.
func (s *Sim) Close() error {
	s.mu.Lock()
	select {
	case <-s.closed:
		s.mu.Unlock()
		return nil
	default:
		close(s.closed)
	}
	srv := s.srv
	s.mu.Unlock()
	s.logMu.Lock()
	s.logOff = true
	s.logMu.Unlock()
	var errs []error
	if srv != nil {
		if err := srv.Close(); err != nil {
			errs = append(errs, fmt.Errorf("githubsim: close server: %w", err))
		}
	}
	if s.tempGit {
		if err := os.RemoveAll(s.gitDir); err != nil {
			errs = append(errs, fmt.Errorf("githubsim: remove git dir: %w", err))
		}
	}
	return errors.Join(errs...)
}

func (s *Sim) newIDLocked() int64 {
	s.nextID++
	return s.nextID
}

func lower(v string) string { return strings.ToLower(v) }
