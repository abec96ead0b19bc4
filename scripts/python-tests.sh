#!/usr/bin/env bash
# The Python package's tests (Tests/Python, pytest): builds the wheel (scripts/build-wheel.sh, from
# the static release build), installs it into a fresh virtual environment and runs the tests with
# that environment's Python, so that they exercise the installed copy, not the build folder.
# pytest, pyspark (4.0, with Debian's headless JRE 17), Ray and pyarrow (which writes the Parquet
# lists) live in a cached environment of
# their own (about 900 MB, 2 minutes the first time), which the fresh one sees through a .pth file.
# Usage: scripts/python-tests.sh [pytest arguments]
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh openjdk-17-jre-headless
deps="${XDG_CACHE_HOME:-${HOME:-/tmp}/.cache}/webimage-ci/cluster-venv"
[[ -x "$deps/bin/python" ]] || python3 -m venv "$deps"
"$deps/bin/python" -c "import pytest, pyspark, ray, pyarrow" 2>/dev/null ||
  "$deps/bin/pip" install -q pytest==9.0.2 pyspark==4.0.5 ray==2.60.0 pyarrow==26.0.1
wheel=$(scripts/build-wheel.sh)

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 -m venv "$work/venv"
site() { "$1/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])'; }
site "$deps" > "$(site "$work/venv")/webimage-test-dependencies.pth"
"$work/venv/bin/pip" install -q --no-index --no-deps "$wheel"
cd Tests/Python
PATH="$work/venv/bin:$PATH" "$work/venv/bin/python" -m pytest -p no:cacheprovider -q "$@"
