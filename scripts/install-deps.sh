#!/usr/bin/env bash
# Installs the Debian packages the build and the tests need, only those that are missing.
# Usage: scripts/install-deps.sh [extra-package ...]
set -euo pipefail

# FFmpeg's libraries are for the Video trait (CI's debug build carries it), the ffmpeg command
# for the test videos the suite makes at run time; libavif-bin's avifenc and libjxl-tools' cjxl
# write the HDR tests' AVIF and JPEG XL pictures.
packages=(pkg-config libturbojpeg0-dev libjpeg62-turbo-dev libpng-dev libdeflate-dev libgif-dev libwebp-dev liblcms2-dev libavif-dev libtiff-dev libheif-dev libjxl-dev librsvg2-dev libsnappy-dev libzstd-dev fonts-dejavu-core libavif-bin libjxl-tools libavformat-dev libavcodec-dev libswscale-dev libavutil-dev ffmpeg libcurl4 bsdutils "$@")

missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "ok installed" || missing+=("$package")
done
((${#missing[@]} == 0)) && exit 0

sudo_cmd=()
[[ $(id -u) -eq 0 ]] || sudo_cmd=(sudo)
echo "Installing: ${missing[*]}" >&2
"${sudo_cmd[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq
"${sudo_cmd[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
