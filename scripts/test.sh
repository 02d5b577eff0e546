#!/usr/bin/env bash
# scripts/test.sh: what `make test` (CI's one entry) runs. The Makefile
# passes the test lists: NORACE_RUN, NORACE_PKGS, RACE_SKIP. Three runs
# share the 2 cores, so neither idles:
#   1. the checks (`make checks`: gofmt, go vet, actionlint), printed as
#      one block as soon as they end;
#   2. every package with -race, RACE_SKIP aside;
#   3. NORACE_RUN in NORACE_PKGS without -race, at full size (under -race
#      internal/testrig/racebuild runs those tests small).
# -vet=off: the checks run the full go vet. GORACE: a race-built process
# otherwise sleeps 1 s at exit, once per test binary and race-built child.
# Test binaries, and the dispatcher and runner the tests start
# (internal/testrig/prebuilt), are kept in bin/test: a later run relinks
# only those whose inputs changed (≈ 27 s of CPU less per run). -o needs
# one binary name per package, its last path element, so the packages
# whose name repeats an earlier one's run first, in a directory of their own.
set -uo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
: "${NORACE_RUN:?}" "${NORACE_PKGS:?}" "${RACE_SKIP:?}"
bin=$PWD/bin/test

$GO build -o "$bin/cmd/" ./cmd/dispatcher ./cmd/runner || exit 1
pkgs=$($GO list ./...) || exit 1
repeats=$(echo "$pkgs" | awk -F/ 'seen[$NF]++') firsts=$(echo "$pkgs" | awk -F/ '!seen[$NF]++')
export GORACE="atexit_sleep_ms=50 ${GORACE:-}" MENTION_RUNNER_TEST_BINS=$bin/cmd \
  MENTION_RUNNER_REQUIRE_CLAUDE=1 MENTION_RUNNER_REQUIRE_ENGINES=1

( log=$(mktemp); make --no-print-directory checks >"$log" 2>&1; rc=$?; cat "$log"; rm -f "$log"
  [ $rc -eq 0 ] || echo "make test: checks failed (gofmt, go vet or actionlint above)"; exit $rc ) & checks=$!
$GO test -vet=off -count=1 -timeout=45m -o "$bin/norace/" -run "$NORACE_RUN" $NORACE_PKGS & norace=$!
race() { $GO test -race -vet=off -count=1 -timeout=45m -skip "$RACE_SKIP" -o "$bin/race-$1/" "${@:2}"; }
rc=0
[ -z "$repeats" ] || race repeat $repeats || rc=1
race first $firsts || rc=1
wait $norace || rc=1
wait $checks || rc=1
exit $rc
