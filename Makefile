# mention-runner — everything CI runs is `make test`.
SHELL := /bin/bash
GO ?= go
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -X github.com/mention-runner/mention-runner/internal/core/cli.Version=$(VERSION)
ACTIONLINT := $(GO) run github.com/rhysd/actionlint/cmd/actionlint@v1.7.12
FUZZTIME ?= 10s
BIN := bin

.PHONY: prove all build test test-fast checks fmt-check vet lint-actions fuzz bench bench-all demo clean tools release release-snapshot image

all: build

include tools.mk

build:
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN)/dispatcher ./cmd/dispatcher
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN)/runner ./cmd/runner

# test is what CI runs (.ci/run): the checks beside every package's tests
# with the race detector (scripts/test.sh). The heavy scenario tests,
# NORACE_RUN in NORACE_PKGS, run small under -race and at full size without
# it; internal/testrig/racebuild reads these two lists and fails a test that
# runs small without being listed. RACE_SKIP runs only without -race: it
# replays one pipeline ~70 times (≈ 45 s of CPU under -race, ≈ 9 without),
# and TestProve runs the same code with -race.
NORACE_RUN := ^(TestApplyThenFailEachWriteEndpoint|TestTenThousandCommentThread|TestFiftyMegabyteDiff|TestOneMegabyteComment|TestProve|TestProveBurst|TestProveAccountPacing|TestBurst500Mentions|TestFaults200Mentions|TestRestarts200Mentions|TestUpgradeToOwnControlToken|TestProveBurstOwnControl)$$
NORACE_PKGS := ./internal/testrig/loadtest ./internal/testrig/hostile
RACE_SKIP := ^TestApplyThenFailEachWriteEndpoint$$
test: tools
	@NORACE_RUN='$(NORACE_RUN)' NORACE_PKGS='$(NORACE_PKGS)' RACE_SKIP='$(RACE_SKIP)' GO='$(GO)' \
	  CLAUDE_BIN='$(CLAUDE_BIN)' CODEX_BIN='$(CODEX_BIN)' GEMINI_BIN='$(GEMINI_BIN)' scripts/test.sh

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

# bench prints the figures docs/performance.md keeps: one table of them, then
# what a mention costs (`--only cost` alone).
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
# is set), SCENARIO=default|pr|review|fix-in-place|triage|bad-cfg|go-away|loop|crash|max-turns|all
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

# image writes the dispatcher's container image, an OCI layout tar
# (dist/dispatcher-image.tar), with no container engine: a static binary and
# the CA bundle on scratch (docs/dispatcher-service.md). GOARCH picks the
# platform (GOARCH=arm64 make image IMAGE_TAR=dist/dispatcher-image-arm64.tar).
IMAGE_TAR ?= dist/dispatcher-image.tar
image:
	mkdir -p dist/image
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags "-s -w $(LDFLAGS)" -o dist/image/dispatcher ./cmd/dispatcher
	$(GO) run ./cmd/imagebuild -binary dist/image/dispatcher -version $(VERSION) -arch $$($(GO) env GOARCH) -o $(IMAGE_TAR)
	MR_IMAGE_TAR=$(CURDIR)/$(IMAGE_TAR) MR_IMAGE_VERSION=$(VERSION) $(GO) test -count=1 -run '^TestImage$$' ./internal/devtools/imagebuild

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
