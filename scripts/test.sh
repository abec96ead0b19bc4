#!/usr/bin/env bash
# Runs the whole test suite: installs the missing system libraries, builds, and tests.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
swift build --build-tests
swift test --skip-build "$@"
