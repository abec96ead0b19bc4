#!/usr/bin/env bash
# Builds the webimage command and runs its demo: a local origin server and the library at work.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
source scripts/traits.sh
swift build --product webimage "${debug_traits[@]}"
.build/debug/webimage demo "$@"
