#!/usr/bin/env bash
# The wheel where the build machine's libraries are absent: a Debian bookworm minimal root
# (mmdebstrap minbase, with python3-venv and nothing else: no image codec, no GLib, no X11) into
# which the wheel is pip-installed in a virtual environment, offline, then run there with chroot:
# `webimage --version` and `webimage.__version__`, and conversions that load every codec the
# wheel vendors (JPEG, PNG, WebP, AVIF, HEIF, JPEG XL, GIF, and SVG through librsvg).
#
# Usage: scripts/wheel-check.sh WHEEL   (as root: mmdebstrap and chroot)
set -euo pipefail
wheel=$(realpath "${1:?usage: wheel-check.sh WHEEL}")
repo=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
root="$work/root"
cleanup() {
    umount "$root/proc" 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT
mmdebstrap --quiet --variant=minbase --include=python3-venv bookworm "$root" http://deb.debian.org/debian
for absent in libturbojpeg.so.0 libjpeg.so.62 libpng16.so.16 libwebp.so.7 librsvg-2.so.2 libglib-2.0.so.0; do
    if [[ -e "$root/usr/lib/x86_64-linux-gnu/$absent" ]]; then echo "the minimal root has $absent" >&2; exit 1; fi
done
mount -t proc proc "$root/proc"
cp "$wheel" "$root/tmp/"
chroot "$root" python3 -m venv /opt/webimage
chroot "$root" /opt/webimage/bin/pip install --quiet --no-index "/tmp/$(basename "$wheel")"
version=$(chroot "$root" /opt/webimage/bin/webimage --version)
test "$version" = "$(chroot "$root" /opt/webimage/bin/python -c 'import webimage; print(webimage.__version__)')"
echo "wheel: webimage $version installed and run in a minimal root"

fixtures="$repo/Tests/WebImageTestSupport/Fixtures"
mkdir -p "$root/tmp/in"
cp "$fixtures/gradient.jpg" "$fixtures/gradient-rgba.png" "$fixtures/gradient-lossy.webp" "$fixtures/animated.gif" "$root/tmp/in/"
cp "$fixtures/avif/8-bit.avif" "$fixtures/heif/photo.heic" "$fixtures/jxl/photo.jxl" "$fixtures/svg/text.svg" "$root/tmp/in/"
for source in "$root"/tmp/in/*; do
    name=$(basename "$source")
    for format in jpg png webp avif jxl; do
        chroot "$root" /opt/webimage/bin/webimage convert "/tmp/in/$name" "/tmp/$name.$format" --thumbnail 48x48
        test -s "$root/tmp/$name.$format"
    done
done
echo "wheel: every codec decoded and encoded in the minimal root"
