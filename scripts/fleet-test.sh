#!/usr/bin/env bash
# The fleet test: deploy/nginx/webimage-cache.conf in front of two `webimage serve` nodes started
# as deploy/systemd/webimage@.service starts them, an nginx origin, all on 127.0.0.1 in a
# temporary folder (no system configuration touched). What it checks: scripts/fleet/fleet_test.py.
# Usage: scripts/fleet-test.sh [--webimage PATH] [--keep]   (about a minute; run by .ci/run)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh nginx python3-pil systemd
source scripts/traits.sh
if [[ " $* " != *" --webimage "* ]]; then swift build --product webimage "${debug_traits[@]}"; fi
# Debian's interpreter, which sees the packages just installed (a python3 earlier on PATH, such
# as pyenv's, would not).
exec /usr/bin/python3 scripts/fleet/fleet_test.py "$@"
