#!/usr/bin/env bash
# Runs every benchmark (release builds) and every side-by-side comparison with peer tools.
# Results print to the terminal; record them in docs/benchmarks.md with the date and machine.
# Usage: scripts/benchmarks.sh [--only-swift | --only-compare]
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
mode=${1:-all}
if [[ $mode != --only-compare ]]; then
  # SwiftPM keeps the build plan of a path dependency and misses files added to it since.
  rm -f Benchmarks/.build/release.yaml
  (cd Benchmarks && swift package --allow-writing-to-package-directory benchmark --no-progress)
fi
if [[ $mode != --only-swift ]]; then
  python3 scripts/compare/run.py
fi
