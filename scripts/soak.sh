#!/usr/bin/env bash
# The long-run memory check (not in CI: about two minutes here). In one process: 10,000 decode +
# encode cycles of each format the coders write, 10,000 transform pipelines and 20,000 manager
# loads from a local origin through small memory and disk caches, in ten rounds. It prints the
# resident set after each round and exits non-zero if, after the two warm-up rounds, it grew by
# more than 5% by the end. Figures in docs/benchmarks.md.
# Usage: scripts/soak.sh [--scale F]   (F multiplies every count; 0.05 for a quick run)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
# SwiftPM keeps the build plan of a path dependency and misses files added to it since.
rm -f Benchmarks/.build/release.yaml
(cd Benchmarks && swift build -c release --product Soak)
Benchmarks/.build/release/Soak "$@"
