#!/usr/bin/env bash
# Formats the Swift sources with the toolchain's swift-format and the repository's .swift-format
# (140 columns, 4 spaces). `scripts/format.sh --check` changes nothing and fails on any finding.
set -euo pipefail
cd "$(dirname "$0")/.."
paths=(Sources Tests Benchmarks/Sources Benchmarks/Benchmarks Fuzz/Sources)
if [[ ${1:-} == --check ]]; then
  swift format lint --strict --parallel --recursive "${paths[@]}"
else
  swift format --in-place --parallel --recursive "${paths[@]}"
fi
