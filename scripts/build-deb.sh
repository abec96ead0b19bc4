#!/usr/bin/env bash
# Builds webimage_VERSION_ARCH.deb with dpkg-deb from a webimage binary linked with
# --static-swift-stdlib (so the package needs no Swift toolchain): the binary and its resources
# in /usr/lib/webimage with /usr/bin/webimage pointing at it, the systemd unit of
# deploy/systemd (ExecStart at /usr/bin/webimage), its environment file as a conffile, and the
# nginx cache-tier file of deploy/nginx as an example to copy, the manual page and lintian's
# overrides (deploy/debian, each with its reason). Depends is worked out from the
# binary's libraries by dpkg-shlibdeps. scripts/deb-check.sh lints, installs and removes it.
#
# Usage: scripts/build-deb.sh BINARY OUTPUT_DIRECTORY
set -euo pipefail

binary=$(realpath "${1:?usage: build-deb.sh BINARY OUTPUT_DIRECTORY}")
output=$(realpath -m "${2:?usage: build-deb.sh BINARY OUTPUT_DIRECTORY}")
repo=$(cd "$(dirname "$0")/.." && pwd)
version=$(sed -n 's/.*static let version = "\(.*\)".*/\1/p' "$repo/Sources/WebImageCore/Release.swift")
architecture=$(dpkg --print-architecture)
resources="$(dirname "$binary")/swift-web-image_webimage.resources"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
root="$work/webimage"
install -d "$root/DEBIAN" "$root/usr/bin" "$root/usr/lib/webimage" "$root/usr/share/doc/webimage" \
    "$root/usr/share/webimage/nginx" "$root/etc/webimage" "$root/usr/lib/systemd/system" \
    "$root/usr/share/man/man1" "$root/usr/share/lintian/overrides"

# The binary, stripped of its debug sections, with the resources Bundle.module finds beside it.
install -m 0755 "$binary" "$root/usr/lib/webimage/webimage"
strip --strip-unneeded --remove-section=.comment --remove-section=.note "$root/usr/lib/webimage/webimage"
cp -R "$resources" "$root/usr/lib/webimage/"
find "$root/usr/lib/webimage/swift-web-image_webimage.resources" -type d -exec chmod 0755 {} + -o -type f -exec chmod 0644 {} +
ln -s ../lib/webimage/webimage "$root/usr/bin/webimage"

sed 's|^ExecStart=/usr/local/bin/webimage|ExecStart=/usr/bin/webimage|' "$repo/deploy/systemd/webimage@.service" \
    | grep -v '^#   ' > "$root/usr/lib/systemd/system/webimage@.service"
chmod 0644 "$root/usr/lib/systemd/system/webimage@.service"
install -m 0640 "$repo/deploy/systemd/webimage.env" "$root/etc/webimage/webimage.env"
install -m 0644 "$repo/deploy/nginx/webimage-cache.conf" "$root/usr/share/webimage/nginx/webimage-cache.conf"
gzip -9n -c "$repo/deploy/debian/webimage.1" > "$root/usr/share/man/man1/webimage.1.gz"
install -m 0644 "$repo/deploy/debian/lintian-overrides" "$root/usr/share/lintian/overrides/webimage"
chmod 0644 "$root/usr/share/man/man1/webimage.1.gz"

# Debian's copyright file: the project is Apache-2.0 (its LICENSE).
cat > "$root/usr/share/doc/webimage/copyright" <<COPYRIGHT
Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: swift-web-image
Source: https://github.com/swift-web-image/swift-web-image

Files: *
Copyright: 2025-2026 the swift-web-image authors
License: Apache-2.0
 On Debian systems, the full text of the Apache License 2.0 is in
 /usr/share/common-licenses/Apache-2.0.
COPYRIGHT
chmod 0644 "$root/usr/share/doc/webimage/copyright"
date=$(date -R -d "@${SOURCE_DATE_EPOCH:-$(git -C "$repo" log -1 --format=%ct 2>/dev/null || date +%s)}")
cat > "$work/changelog" <<CHANGELOG
webimage ($version) unstable; urgency=medium

  * Packaged from the repository by scripts/build-deb.sh.

 -- swift-web-image <packages@swift-web-image.invalid>  $date
CHANGELOG
gzip -9n -c "$work/changelog" > "$root/usr/share/doc/webimage/changelog.gz"
chmod 0644 "$root/usr/share/doc/webimage/changelog.gz"

cat > "$root/DEBIAN/conffiles" <<CONFFILES
/etc/webimage/webimage.env
CONFFILES

# systemd is told of the unit when it runs; a container or a chroot has none.
cat > "$root/DEBIAN/postinst" <<'POSTINST'
#!/bin/sh
set -e
if [ "$1" = "configure" ] && [ -d /run/systemd/system ]; then
    systemctl --system daemon-reload >/dev/null || true
fi
POSTINST
cat > "$root/DEBIAN/postrm" <<'POSTRM'
#!/bin/sh
set -e
if [ -d /run/systemd/system ]; then
    systemctl --system daemon-reload >/dev/null || true
fi
POSTRM
chmod 0755 "$root/DEBIAN/postinst" "$root/DEBIAN/postrm"

# The libraries the binary links, as Debian's packages name them.
mkdir -p "$work/debian"
printf 'Source: webimage\n\nPackage: webimage\nArchitecture: any\n' > "$work/debian/control"
depends=$(cd "$work" && dpkg-shlibdeps -O -e"$root/usr/lib/webimage/webimage" 2>/dev/null | sed -n 's/^shlibs:Depends=//p')
installed=$(du -sk --exclude=DEBIAN "$root" | cut -f1)
cat > "$root/DEBIAN/control" <<CONTROL
Package: webimage
Version: $version
Architecture: $architecture
Maintainer: swift-web-image <packages@swift-web-image.invalid>
Installed-Size: $installed
Depends: $depends
Section: web
Priority: optional
Homepage: https://github.com/swift-web-image/swift-web-image
Description: image proxy, loader and dataset downloader
 webimage serves images resized and converted on the fly behind signed
 imgproxy-compatible URLs (webimage serve), converts and inspects images,
 and downloads image lists into caches, folders or webdataset shards
 (webimage prefetch). The systemd unit webimage@PORT runs one proxy node.
CONTROL
(cd "$root" && find . -type f ! -path './DEBIAN/*' -printf '%P\0' | sort -z | xargs -0 md5sum > DEBIAN/md5sums)
chmod 0644 "$root/DEBIAN/control" "$root/DEBIAN/conffiles" "$root/DEBIAN/md5sums"

mkdir -p "$output"
package="$output/webimage_${version}_${architecture}.deb"
dpkg-deb --root-owner-group -Zxz --build "$root" "$package" >/dev/null
echo "$package"
