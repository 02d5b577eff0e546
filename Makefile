# mention-runner — everything CI runs is `make test`.
SHELL := /bin/bash
GO ?= go
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -X github.com/mention-runner/mention-runner/internal/core/cli.Version=$(VERSION)
ACTIONLINT := $(GO) run github.com/rhysd/actionlint/cmd/actionlint@v1.7.12
FUZZTIME ?= 10s
BIN := bin

.PHONY: prove all build test test-fast checks fmt-check vet unit lint-actions fuzz bench bench-all demo clean tools release release-snapshot

all: build

include tools.mk

build:
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN)/dispatcher ./cmd/dispatcher
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN)/runner ./cmd/runner

# The checks (gofmt, go vet, actionlint: ≈ 6 s of wall, mostly on one
# core) run beside the tests instead of before them, so neither core idles
# while they run. Their output comes as one block as soon as they end (a
# gofmt or vet failure shows in seconds); make test fails if either fails.
test: tools
	@( log=$$(mktemp); $(MAKE) --no-print-directory checks >"$$log" 2>&1; rc=$$?; \
	  cat "$$log"; rm -f "$$log"; [ $$rc -eq 0 ] || echo "make test: checks failed (gofmt, go vet or actionlint above)"; exit $$rc ) & checks=$$!; \
	$(MAKE) --no-print-directory unit; rc=$$?; wait $$checks || rc=1; exit $$rc

checks: fmt-check vet lint-actions

# test-fast is the inner loop: -short skips the load, end-to-end and real
# Claude Code tests (make test runs them all).
test-fast:
	$(GO) test -short -count=1 ./...

fmt-check:
	@bad=$$(find . -name '*.go' -not -path './tools/*' -not -path './.git/*' | xargs -r gofmt -l); \
	if [ -n "$$bad" ]; then echo "gofmt needed:"; echo "$$bad"; exit 1; fi

vet:
	$(GO) vet ./...

# The real engine CLI tests must run in CI, not skip. Every package runs
# with -race (one test aside, below). GORACE: a race-built process sleeps
# 1 s at exit by default (the race runtime's atexit_sleep_ms) so late
# reports can still come; 50 ms
# keeps that window without a second for each of the ~70 test binaries and
# each race-built child (claudetest's gate servers). -vet=off: `make test`
# has just run the full `go vet ./...`, a superset of go test's checks.
# Scale is not what -race needs: the heavy scenario tests (NORACE_RUN in
# NORACE_PKGS) run small in the -race run (internal/testrig/racebuild) and
# at full size without -race at the same time, so every concurrent path
# still runs under the race detector and every test at full size.
# racebuild.Scale fails a test that runs small but is not listed here.
# One test runs only without -race (RACE_SKIP): loadtest's
# TestApplyThenFailEachWriteEndpoint replays one in-process pipeline ~70
# times, a lost write answer per endpoint: ≈ 45 s of CPU under -race, ≈ 9
# without. Of the product code blocks it runs (-coverpkg), all but 39 also
# run under -race in loadtest's other tests (TestProve: the same pipeline
# with lost answers on every endpoint) or dispatch/assemble/publish's own;
# those 39 are markdown, !cfg and blocklist parsing: no goroutine, lock or
# channel in their functions.
RACE_SKIP := ^TestApplyThenFailEachWriteEndpoint$$
NORACE_RUN := ^(TestApplyThenFailEachWriteEndpoint|TestTenThousandCommentThread|TestFiftyMegabyteDiff|TestOneMegabyteComment|TestProve|TestProveBurst|TestProveAccountPacing|TestBurst500Mentions|TestFaults200Mentions|TestRestarts200Mentions)$$
NORACE_PKGS := ./internal/testrig/loadtest ./internal/testrig/hostile
# The no-race run's scratch files go to memory (/dev/shm when it is a
# writable directory with 1 GiB free; else TMPDIR as it is): its scenarios
# write run directories and records that the product fsyncs, ≈ 5 s of that
# run's CPU as system time on a disk file system, almost none on tmpfs.
NORACE_TMP := $(shell d=/dev/shm; [ -d $$d ] && [ -w $$d ] && \
  [ "$$(df -Pk $$d 2>/dev/null | awk 'NR == 2 { print $$4 }')" -ge 1048576 ] 2>/dev/null && echo $$d)
# Test binaries and the dispatcher and runner the tests start are kept in
# TESTBIN (-o), so a later make test relinks only those whose inputs
# changed (go's up-to-date check by build ID; ~1 s of CPU per binary, 70
# of them). -o takes one directory per run and binaries are named after
# the package's last path element: the three packages whose name repeats
# one before them (internal/testrig/demo after cmd/demo, ...) get a second run and
# directory, before the first (at the same time, on a cold cache both runs
# would compile the same packages; after it, its start and three short
# binaries ran with one core idle).
# go test starts a run's binaries in the order given, two at a time (-p):
# RACE_LONG, the binaries of ≈ 2.5 s of CPU or more, go first, longest
# first, so the run ends on short ones instead of a long one running alone.
RACE_LONG := runner/agent testrig/e2e testrig/loadtest dispatcher/dispatch runner/assemble runner/publish testrig/claudetest runner/prbundle testrig/githubsim runner/agent/streamjson runner/agent/gate core/transport runner/checkout testrig/release testrig/hostile core/writebudget core/policy
# MENTION_RUNNER_TEST_BINS: the tests that run dispatcher or runner take
# them from there instead of each building its own (testkit/prebuilt).
TESTBIN := $(CURDIR)/bin/test
unit:
	$(GO) build -o $(TESTBIN)/cmd/ ./cmd/dispatcher ./cmd/runner
	pkgs=$$($(GO) list $(RACE_LONG:%=./internal/%) ./...) || exit 1; \
	race() { $(GO) test -race -vet=off -count=1 -timeout=45m -skip '$(RACE_SKIP)' -o $(TESTBIN)/race-$$1/ \
	  $$(echo "$$pkgs" | awk -F/ -v part=$$1 '(seen[$$NF]++ == 0) == (part == "first")'); }; \
	export GORACE="atexit_sleep_ms=50 $(GORACE)" MENTION_RUNNER_TEST_BINS=$(TESTBIN)/cmd \
	  MENTION_RUNNER_REQUIRE_CLAUDE=1 MENTION_RUNNER_REQUIRE_ENGINES=1 CLAUDE_BIN=$(CLAUDE_BIN) \
	  CODEX_BIN=$(CODEX_BIN) GEMINI_BIN=$(GEMINI_BIN); \
	( tmp=; [ -z "$(NORACE_TMP)" ] || { tmp=$$(mktemp -d "$(NORACE_TMP)/mention-runner-test.XXXXXX") && export TMPDIR=$$tmp; }; \
	  $(GO) test -vet=off -count=1 -timeout=45m -o $(TESTBIN)/norace/ -run '$(NORACE_RUN)' $(NORACE_PKGS); \
	  rc=$$?; [ -z "$$tmp" ] || rm -rf "$$tmp"; exit $$rc ) & norace=$$!; \
	race repeat; rc=$$?; race first || rc=1; wait $$norace || rc=1; exit $$rc

# actionlint checks the workflows (ours and the example for control repos);
# it reads action.yml where a workflow uses it locally. action.yml's inputs
# are also checked against the runner's settings by internal/runner/config tests.
# The example is linted a second time against our own agent-run.yml: a copy
# that calls it by local path, in a scratch repository, so actionlint checks
# every input the example passes and every required one it leaves out.
EXAMPLE_WORKFLOW := examples/control-repo/.github/workflows/mention-runner.yml
lint-actions:
	@files=$$(ls .github/workflows/*.yml examples/*/.github/workflows/*.yml 2>/dev/null); \
	if [ -n "$$files" ]; then echo "actionlint $$files"; $(ACTIONLINT) $$files; fi
	@set -e; tmp=$$(mktemp -d); trap 'rm -rf "$$tmp"' EXIT; \
	mkdir -p "$$tmp/.github/workflows"; cp .github/workflows/agent-run.yml "$$tmp/.github/workflows/"; \
	sed 's#uses: mention-runner/mention-runner/.github/workflows/agent-run.yml@.*#uses: ./.github/workflows/agent-run.yml#' \
	  $(EXAMPLE_WORKFLOW) > "$$tmp/.github/workflows/mention-runner.yml"; \
	grep -q 'uses: ./.github/workflows/agent-run.yml' "$$tmp/.github/workflows/mention-runner.yml"; \
	git -C "$$tmp" init -q; echo "actionlint $(EXAMPLE_WORKFLOW) against ./.github/workflows/agent-run.yml"; \
	cd "$$tmp" && $(ACTIONLINT) .github/workflows/mention-runner.yml

# tools installs what the tests need beyond Go (see tools.mk).
tools: engines

# fuzz runs every fuzz target for FUZZTIME each, goes on past a failing
# one, and lists every failure at the end (exit status 1 if any).
fuzz:
	@failed=""; for pkg in $$($(GO) list ./...); do \
	  dir=$$($(GO) list -f '{{.Dir}}' $$pkg); \
	  for t in $$(grep -hoE '^func (Fuzz[A-Za-z0-9_]+)' $$dir/*_test.go 2>/dev/null | sed 's/func //'); do \
	    echo "== $$pkg $$t"; \
	    $(GO) test -run='^$$' -fuzz="^$$t$$" -fuzztime=$(FUZZTIME) $$pkg || failed="$$failed $$pkg.$$t"; \
	  done; \
	done; \
	if [ -n "$$failed" ]; then echo "fuzz failures:"; for f in $$failed; do echo "  $$f"; done; exit 1; fi; \
	echo "fuzz: every target passed"

# bench prints one table of the figures docs/performance.md keeps.
# BENCH_RENDER_MB=50 times the render on a 50 MB log instead of 200 MB
# (the peak-memory rows always use 20, 100 and 200 MB logs).
bench:
	$(GO) run ./cmd/benchreport table

bench-all:
	$(GO) test -run='^$$' -bench=. -benchmem ./...

# demo runs one mention end to end on a simulated GitHub (cmd/demo).
# Options: COMMENT='…' (the trigger comment; \n is a line break), SHARD=1
# (a thread big enough to be sent as agent_shard events), ENGINE=claude
# (the real Claude Code against the real model API; needs ANTHROPIC_API_KEY),
# ENGINE=codex or ENGINE=gemini (the real Codex / Gemini CLI against a fake
# model API on loopback, or the real API when OPENAI_API_KEY / GEMINI_API_KEY
# is set), SCENARIO=default|pr|bad-cfg|go-away|loop|crash|max-turns|all
# (scripted stories; exit 0 when each behaved as intended).
DEMO_TOOL = $(if $(filter claude,$(ENGINE)),claude-code)$(if $(filter codex,$(ENGINE)),codex)$(if $(filter gemini,$(ENGINE)),gemini-cli)
demo: $(DEMO_TOOL)
	$(GO) run ./cmd/demo --claude-bin "$(CLAUDE_BIN)" --codex-bin "$(CODEX_BIN)" --gemini-bin "$(GEMINI_BIN)"

# GoReleaser, pinned, built from the Go module proxy (no other download).
GORELEASER_VERSION := v2.15.1
GORELEASER := $(GO) run github.com/goreleaser/goreleaser/v2@$(GORELEASER_VERSION)

# release-snapshot builds every release asset into dist/ with the release
# configuration, publishing nothing, then checks dist/ (internal/testrig/release,
# tag releasesnapshot): exactly the assets .goreleaser.yaml names, each
# with its SHA-256 in checksums.txt, and install-binary.sh installing the
# runner and dispatcher from it (a local server) that then run. Not part of
# `make test` (GoReleaser's own build is heavy on a new machine); make test
# checks the asset names against the installer, CI runs this target.
release-snapshot:
	$(GORELEASER) check
	$(GORELEASER) release --snapshot --clean --skip=publish
	MR_RELEASE_DIST=$(CURDIR)/dist $(GO) test -tags releasesnapshot -count=1 -run '^TestSnapshotRelease$$' ./internal/testrig/release

# release publishes the tagged commit (the release workflow runs it).
release:
	$(GORELEASER) release --clean

clean:
	rm -rf $(BIN) demo-out dist

# prove runs the reliability scenarios at full scale and prints
# one row per scenario: lost mentions, duplicate agent runs, duplicate
# writes, duplicate log issues, manual re-runs needed. `make test` runs the
# same scenarios small.
# The fault, restart and burst tests run at full size here too (200, 200
# and 500 mentions; make test runs them at 50, 50 and 120).
prove:
	MENTION_RUNNER_PROVE=full $(GO) test -count=1 -timeout 60m -run 'TestProve|TestFaults200Mentions|TestRestarts200Mentions|TestBurst500Mentions' ./internal/testrig/loadtest/ -v 2>&1 | grep -E '^\| |^(ok|FAIL|--- FAIL)'
