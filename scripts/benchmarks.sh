#!/usr/bin/env bash
# Runs every benchmark (release builds) and every side-by-side comparison with peer tools.
# Results print to the terminal and are written to benchmark-results/<date-time>/ (not committed);
# record the figures worth keeping in docs/benchmarks.md with the command, date and machine.
# Usage: scripts/benchmarks.sh [--only-swift | --only-compare]
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
mode=${1:-all}
results="benchmark-results/$(date -u +%Y-%m-%dT%H%M)"
mkdir -p "$results"
if [[ $mode != --only-compare ]]; then
  # SwiftPM keeps the build plan of a path dependency and misses files added to it since.
  rm -f Benchmarks/.build/release.yaml
  (cd Benchmarks && swift package --allow-writing-to-package-directory benchmark --no-progress) | tee "$results/benchmarks.txt"
fi
if [[ $mode != --only-swift ]]; then
  python3 scripts/compare/run.py --json "$results/comparisons.json" | tee "$results/comparisons.txt"
fi
echo "Figures written to $results/"
