#!/usr/bin/env bash
# Runs the whole test suite: installs the missing system libraries, builds, and tests.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
swift build --build-tests
# One test at a time: several tests assert bounds in time (a connection closed within 100 ms, a
# 300 ms timeout), and on a two-core machine the CPU-heavy codec tests running beside them made
# those bounds fail now and then. Serially the suite takes about 35 s.
swift test --skip-build --no-parallel "$@"
