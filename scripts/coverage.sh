#!/usr/bin/env bash
# Line coverage of Sources/ by module: builds the tests with coverage in a scratch folder of its own
# (.build-cov), runs them as scripts/test.sh does (without the timing-bound suite), and reads the
# profiles of the test bundle and of every `webimage` the tests start.
#
# SwiftPM's own merge gives up when one profile is truncated (a child process a test kills), so
# the profiles are merged here with llvm-profdata's -failure-mode=all, which skips such a file.
#
# Usage: scripts/coverage.sh [--skip-build]
set -euo pipefail
cd "$(dirname "$0")/.."
scratch=.build-cov
debug=$scratch/$(uname -m)-unknown-linux-gnu/debug
tools=$(dirname "$(readlink -f "$(command -v swift)")")
if [[ ${1:-} != --skip-build ]]; then
  venv=$(scripts/python-deps.sh)
  export WEBIMAGE_DUCKDB="$venv/bin/duckdb"
  swift build --build-tests --enable-code-coverage --scratch-path "$scratch"
  rm -f "$debug"/codecov/*.profraw
  export SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH=${SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH:-3}
  # Its status is the merge's as well as the tests': the tests' own result is in their output.
  swift test --skip-build --enable-code-coverage --scratch-path "$scratch" --skip TimingBoundTests || true
fi
"$tools/llvm-profdata" merge -sparse -failure-mode=all "$debug"/codecov/*.profraw -o "$scratch/coverage.profdata"
report=$("$tools/llvm-cov" report "$debug/swift-web-imagePackageTests.xctest" -object "$debug/webimage" \
  -instr-profile "$scratch/coverage.profdata" -ignore-filename-regex='(\.build|/Tests/|/checkouts/)' 2>/dev/null)
# Each file's row: name, regions (3 columns), functions (3), lines, missed lines, cover, ...
awk '$1 ~ /\.swift$/ { split($1, part, "/"); lines[part[1]] += $8; missed[part[1]] += $9 }
     END { for (module in lines) printf "%-20s %6d lines %7.2f%%\n", module, lines[module], 100 * (lines[module] - missed[module]) / lines[module] }' \
  <<< "$report" | LC_ALL=C sort
awk '$1 ~ /\.swift$/ { all += $8; missed += $9 } END { printf "%-20s %6d lines %7.2f%%\n", "all", all, 100 * (all - missed) / all }' <<< "$report"
