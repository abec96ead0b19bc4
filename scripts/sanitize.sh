#!/usr/bin/env bash
# Builds and runs the test suite under a sanitizer, in a scratch folder of its own
# (.build-tsan, .build-asan) so that the normal build is kept.
# Usage: scripts/sanitize.sh thread|address [swift test arguments ...]
# ThreadSanitizer ends the run with status 66 when it reported a race (its default exitcode);
# AddressSanitizer stops at the first error. Tests that cannot run under a sanitizer skip
# themselves and say why (see Sanitizer in WebImageTesting).
set -euo pipefail
cd "$(dirname "$0")/.."
kind=${1:-}
case "$kind" in
  thread | address) shift ;;
  *) echo "usage: scripts/sanitize.sh thread|address [swift test arguments ...]" >&2; exit 2 ;;
esac
scripts/install-deps.sh
scratch=.build-tsan
[[ $kind == address ]] && scratch=.build-asan
swift build --build-tests --sanitize="$kind" --scratch-path "$scratch"
# LeakSanitizer reports leaks inside the test runner itself (platform notes); leaks are checked
# apart from this suite.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0}
swift test --skip-build --sanitize="$kind" --scratch-path "$scratch" --no-parallel "$@"
