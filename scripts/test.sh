#!/usr/bin/env bash
# Runs the whole test suite: installs the missing system libraries, builds, and tests.
set -euo pipefail
cd "$(dirname "$0")/.."
# The browser tests' packages too (Chromium, its driver, Selenium and Pillow from Debian), and
# squid, which the proxy tests run with Debian's stock rules.
scripts/install-deps.sh chromium chromium-driver python3-selenium python3-pil squid
# From PyPI, in a virtual environment of its own (scripts/python-deps.sh says what and why).
venv=$(scripts/python-deps.sh)
export WEBIMAGE_DUCKDB="$venv/bin/duckdb"
source scripts/traits.sh
swift build --build-tests "${debug_traits[@]}"
# In parallel, three tests at a time (on two cores; an unbounded run starts every test at once and
# the origin servers' connections time out), except the suite whose assertions are bounds in time
# (TimingBoundTests), which runs alone afterwards. A filtered run (arguments given) is serial.
# (The width is Swift Testing's SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH, which a toolchain before 6.3 ignores.)
export SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH=${SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH:-3}
if (($# == 0)); then
  swift test --skip-build "${debug_traits[@]}" --skip TimingBoundTests
  swift test --skip-build "${debug_traits[@]}" --no-parallel --filter TimingBoundTests
else
  swift test --skip-build "${debug_traits[@]}" --no-parallel "$@"
fi
# The server's pages in headless Chromium (Tests/Browser/test_pages.py), with Debian's
# interpreter, which sees the packages installed above. Skipped when the suite is filtered.
if (($# == 0)); then /usr/bin/python3 Tests/Browser/test_pages.py; fi
# URLs signed by PyPI's imgproxy client against a server started from IMGPROXY_* variables
# (Tests/Compat/test_imgproxy_client.py, about 10 s). Skipped when the suite is filtered.
if (($# == 0)); then "$venv/bin/python" Tests/Compat/test_imgproxy_client.py; fi
# The Python package (Tests/Python: the wheel, download(), Spark and Ray in local mode) against the
# wheel installed into a fresh virtual environment; the wheel is packed from the static release
# build, which scripts/packaging-check.sh then reuses (scripts/python-tests.sh). Skipped when the
# suite is filtered.
if (($# == 0)); then
  start=$SECONDS
  scripts/python-tests.sh
  echo "test.sh: the Python tests, with the static release build and the wheel, took $((SECONDS - start)) s" >&2
fi
