#!/usr/bin/env bash
# Builds the .deb (scripts/build-deb.sh) from a webimage binary linked with --static-swift-stdlib,
# lints it with lintian (an error or a warning fails it, but for the overrides the package carries,
# deploy/debian/lintian-overrides, each with its reason), installs it with dpkg, runs the installed command,
# then removes and purges it and checks that nothing of it is left.
#
# Usage: scripts/deb-check.sh BINARY   (as root: dpkg -i)
set -euo pipefail

binary=$(realpath "${1:?usage: deb-check.sh BINARY}")
repo=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

package=$("$repo/scripts/build-deb.sh" "$binary" "$work")
dpkg-deb --info "$package" | sed -n 's/^ Depends: /depends: /p'
lintian --fail-on error,warning "$package"
echo "lintian: no error or warning"

dpkg -i "$package" >/dev/null
test "$(dpkg-query -W -f '${Status}' webimage)" = "install ok installed"
webimage convert "$repo/Tests/WebImageTestSupport/Fixtures/gradient.jpg" "$work/out.png" --thumbnail 32x32
test -s "$work/out.png"
test -f /usr/lib/systemd/system/webimage@.service && test -f /etc/webimage/webimage.env
echo "installed: /usr/bin/webimage converts; the unit and its environment file are in place"

dpkg -r webimage >/dev/null
test ! -e /usr/bin/webimage && test ! -e /usr/lib/webimage
test -f /etc/webimage/webimage.env   # a removed package keeps its conffiles
dpkg -P webimage >/dev/null
test ! -e /etc/webimage/webimage.env && ! dpkg-query -W webimage >/dev/null 2>&1
echo "removed and purged: nothing left"
