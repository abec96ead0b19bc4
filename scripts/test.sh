#!/usr/bin/env bash
# Runs the whole test suite: installs the missing system libraries, builds, and tests.
set -euo pipefail
cd "$(dirname "$0")/.."
# The browser tests' packages too (Chromium, its driver, Selenium and Pillow from Debian), and
# squid, which the proxy tests run with Debian's stock rules.
scripts/install-deps.sh chromium chromium-driver python3-selenium python3-pil squid
# DuckDB's command-line tool from PyPI, for the Parquet recipe's test (docs/crawling.md), in a
# virtual environment of its own (about 85 MB, 10 s).
venv="${XDG_CACHE_HOME:-${HOME:-/tmp}/.cache}/webimage-ci/venv"
[[ -x "$venv/bin/duckdb" ]] || { python3 -m venv "$venv" && "$venv/bin/pip" install -q duckdb-cli; }
export WEBIMAGE_DUCKDB="$venv/bin/duckdb"
swift build --build-tests
# One test at a time: several tests assert bounds in time (a connection closed within 100 ms, a
# 300 ms timeout), and on a two-core machine the CPU-heavy codec tests running beside them made
# those bounds fail now and then. Serially the suite takes about 35 s.
swift test --skip-build --no-parallel "$@"
# The server's pages in headless Chromium (Tests/Browser/test_pages.py), with Debian's
# interpreter, which sees the packages installed above. Skipped when the suite is filtered.
if (($# == 0)); then /usr/bin/python3 Tests/Browser/test_pages.py; fi
