#!/usr/bin/env bash
# Checks the Containerfile without a container engine: hadolint lints it, and its runtime stage is
# proved by building the same root with mmdebstrap (Debian bookworm, minbase like bookworm-slim,
# and exactly the packages the runtime stage installs, read from the Containerfile), copying in a
# webimage binary linked with --static-swift-stdlib (as the build stage links it) and its
# resources, and running it there as the image's non-root user with chroot: a conversion, and
# `serve` answering a processed request and `webimage health`. A library the binary needs that
# the list lacks fails the conversion.
#
# Usage: scripts/container-check.sh BINARY [HADOLINT]   (as root: mmdebstrap and chroot)
set -euo pipefail

binary=$(realpath "${1:?usage: container-check.sh BINARY [HADOLINT]}")
hadolint=${2:-hadolint}
repo=$(cd "$(dirname "$0")/.." && pwd)
containerfile="$repo/Containerfile"

"$hadolint" "$containerfile"
echo "hadolint: Containerfile clean"

# The runtime stage's packages: the apt-get install after the last FROM.
packages=$(awk '/^FROM /{stage++} {print stage "\t" $0}' "$containerfile" | awk -F'\t' -v last="$(grep -c '^FROM ' "$containerfile")" '$1==last {print $2}' \
    | sed -n '/apt-get install/,/rm -rf/p' | tr ' \\' '\n\n' | grep -E '^[a-z0-9][a-z0-9.+-]+$' \
    | grep -vE '^(apt-get|install|rm|y|no|recommends|and|useradd|system|uid|home|dir|create|var|lib|apt|lists)$' | sort -u | paste -sd, -)
echo "runtime packages: $packages"

work=$(mktemp -d)
root="$work/root"
cleanup() {
    [ -n "${server:-}" ] && kill "$server" 2>/dev/null || true
    umount "$root/proc" 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT
mmdebstrap --quiet --variant=minbase --include="$packages" \
    --customize-hook='chroot "$1" useradd --system --uid 10001 --home-dir /var/cache/webimage --create-home webimage' \
    bookworm "$root" http://deb.debian.org/debian

install -D -m 0755 "$binary" "$root/usr/local/bin/webimage"
cp -R "$(dirname "$binary")/swift-web-image_webimage.resources" "$root/usr/local/bin/"
mount -t proc proc "$root/proc"
run() { chroot --userspec=10001:10001 "$root" env HOME=/var/cache/webimage "$@"; }

# A conversion: decoders, resampling and an encoder, in the image's root.
cp "$repo/Tests/WebImageTestSupport/Fixtures/gradient.jpg" "$root/var/cache/webimage/in.jpg"
chown 10001:10001 "$root/var/cache/webimage/in.jpg"
run /usr/local/bin/webimage convert /var/cache/webimage/in.jpg /var/cache/webimage/out.webp --thumbnail 64x64
test -s "$root/var/cache/webimage/out.webp"
echo "convert: ran in the runtime root"

# The server, configured by environment as the image configures it, and its health check.
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
run env WEBIMAGE_BIND="127.0.0.1:$port" WEBIMAGE_RESULT_CACHE_DIR=/var/cache/webimage/serve WEBIMAGE_ALLOW_UNSIGNED=1 \
    WEBIMAGE_LOCAL_FILESYSTEM_ROOT=/var/cache/webimage /usr/local/bin/webimage serve > "$work/serve.out" 2> "$work/serve.err" &
server=$!
for _ in $(seq 100); do grep -q '^listening on ' "$work/serve.out" 2>/dev/null && break; sleep 0.1; done
grep -q '^listening on ' "$work/serve.out" || { cat "$work/serve.err"; exit 1; }
run env WEBIMAGE_BIND="127.0.0.1:$port" /usr/local/bin/webimage health
status=$(curl -s -o "$work/answer.png" -w '%{http_code}' "http://127.0.0.1:$port/unsafe/rs:fit:32:32/plain/local:///in.jpg@png")
test "$status" = 200 && test "$(head -c 8 "$work/answer.png" | od -An -tx1 | tr -d ' ')" = 89504e470d0a1a0a
echo "serve: answered a processed request and its health check in the runtime root"
