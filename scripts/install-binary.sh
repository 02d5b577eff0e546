#!/usr/bin/env bash
# install-binary.sh NAME REF DEST
#
# Installs the release binary NAME (runner or dispatcher) of mention-runner
# release REF for this machine at DEST, after checking its SHA-256 against
# the release's checksums.txt. The release also carries a build provenance
# attestation: `gh attestation verify DEST --repo mention-runner/mention-runner`.
#
# Exit 0: installed. Exit 3: there is no release binary for REF on this
# machine (REF is a commit or branch, the release does not exist, or has no
# build for this OS/arch): the caller builds from source. Anything else is
# a failure, and a checksum mismatch never falls back to a build.
#
# MR_RELEASE_BASE_URL overrides where releases are downloaded from (tests).
set -euo pipefail

# asset_name NAME prints the release asset of NAME built for this machine
# (uname -s, uname -m); when there is none it prints why and returns 3.
asset_name() {
  local os arch
  case "$(uname -s)" in
    Linux) os=linux ;;
    Darwin) os=darwin ;;
    *) echo "no release binary for $(uname -s): build from source"; return 3 ;;
  esac
  case "$(uname -m)" in
    x86_64 | amd64) arch=amd64 ;;
    aarch64 | arm64) arch=arm64 ;;
    *) echo "no release binary for $(uname -m): build from source"; return 3 ;;
  esac
  echo "${1}_${os}_${arch}"
}

# Sourced (internal/testrig/release's tests: every machine's asset name in one
# shell), the script only defines asset_name. `return` succeeds only in a
# sourced script, so this also holds when the script is read from stdin.
if (return 0 2>/dev/null); then
  return 0
fi

if [ $# -ne 3 ]; then
  echo "usage: install-binary.sh NAME REF DEST" >&2
  exit 2
fi
name=$1 ref=$2 dest=$3
base=${MR_RELEASE_BASE_URL:-https://github.com/mention-runner/mention-runner/releases/download}

case "$ref" in
  v[0-9]*.[0-9]*.[0-9]*) ;;
  *)
    echo "mention-runner $ref is not a release tag (vX.Y.Z): no release binary, build from source"
    exit 3
    ;;
esac

asset=$(asset_name "$name") || { echo "$asset"; exit 3; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# fetch URL FILE prints the HTTP status (000 when there was no answer).
fetch() {
  curl --silent --show-error --location --retry 3 --retry-delay 2 --connect-timeout 10 --max-time 300 \
    --output "$2" --write-out '%{http_code}' "$1" || true
}

status=$(fetch "$base/$ref/checksums.txt" "$tmp/checksums.txt")
case "$status" in
  200) ;;
  404)
    echo "mention-runner $ref has no release: build from source"
    exit 3
    ;;
  *)
    echo "::error title=mention-runner::downloading $base/$ref/checksums.txt failed (HTTP $status)" >&2
    exit 1
    ;;
esac

want=$(awk -v f="$asset" '$2 == f || $2 == "*" f { print $1 }' "$tmp/checksums.txt")
if [ -z "$want" ]; then
  echo "mention-runner $ref has no $asset: build from source"
  exit 3
fi

status=$(fetch "$base/$ref/$asset" "$tmp/$asset")
if [ "$status" != 200 ]; then
  echo "::error title=mention-runner::downloading $base/$ref/$asset failed (HTTP $status)" >&2
  exit 1
fi

if command -v sha256sum >/dev/null; then
  got=$(sha256sum "$tmp/$asset" | cut -d' ' -f1)
else
  got=$(shasum -a 256 "$tmp/$asset" | cut -d' ' -f1)
fi
if [ "$got" != "$want" ]; then
  echo "::error title=mention-runner::checksum mismatch for $asset of $ref: checksums.txt says $want, the download is $got; refusing to run it" >&2
  exit 1
fi

mkdir -p "$(dirname "$dest")"
install -m 0755 "$tmp/$asset" "$dest"
echo "installed $asset of mention-runner $ref (sha256 $got) at $dest"
