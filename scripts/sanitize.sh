#!/usr/bin/env bash
# Builds and runs the test suite under a sanitizer, in a scratch folder of its own
# (.build-tsan, .build-asan) so that the normal build is kept.
# Usage: scripts/sanitize.sh thread|address [swift test arguments ...]
# ThreadSanitizer ends the run with status 66 when it reported a race (its default exitcode);
# AddressSanitizer stops at the first error, and LeakSanitizer fails the run on any leak. Tests that cannot run under a sanitizer skip
# themselves and say why (see Sanitizer in WebImageTesting).
set -euo pipefail
cd "$(dirname "$0")/.."
kind=${1:-}
case "$kind" in
  thread | address) shift ;;
  *) echo "usage: scripts/sanitize.sh thread|address [swift test arguments ...]" >&2; exit 2 ;;
esac
scripts/install-deps.sh squid  # the proxy tests run Debian's squid
scripts/python-deps.sh > /dev/null  # botocore and SeaweedFS for the S3 tests
scratch=.build-tsan
[[ $kind == address ]] && scratch=.build-asan
# swift-otel does not compile under a sanitizer with Swift 6.3.1: these builds leave the OTLP
# exporter out (Package.swift), and the tests that need it skip themselves.
export WEBIMAGE_WITHOUT_OTEL=1
# AddressSanitizer's build carries the Video trait, so that the video coder's C and Swift run under
# it and LeakSanitizer; ThreadSanitizer's does not, and runs the suite's no-video branches (the
# static build behind the wheel is the other build without it).
traits=()
[[ $kind == address ]] && traits=(--traits Video)
swift build --build-tests --sanitize="$kind" --scratch-path "$scratch" "${traits[@]}"
if [[ $kind == address ]]; then
  # LeakSanitizer runs at the exit of the test process and of every child it starts (the command,
  # the test child), and makes the exit status non-zero on any leak not in the suppressions, each
  # of which belongs to the toolchain and says why.
  export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
  export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$PWD/scripts/lsan-suppressions.txt:print_suppressions=0}
fi
# As scripts/test.sh runs it: in parallel but for the suite of bounds in time, unless filtered.
export SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH=${SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH:-3}
run=(swift test --skip-build --sanitize="$kind" --scratch-path "$scratch" "${traits[@]}")
if (($# == 0)); then
  # The codecs' tests are synchronous and CPU-bound, and a sanitizer makes them ten times slower:
  # run beside the rest, two of them held both cooperative threads of this 2-core machine for
  # 264 s (the planar resize under ThreadSanitizer), and a test waiting on a server meanwhile saw
  # its deadline pass before the answer that was ready (the proxy's source timeout gave a 504).
  # They run on their own first, the suites that wait on I/O after them.
  "${run[@]}" --filter WebImageCodecsTests
  "${run[@]}" --skip WebImageCodecsTests --skip TimingBoundTests
  "${run[@]}" --no-parallel --filter TimingBoundTests
else
  "${run[@]}" --no-parallel "$@"
fi
