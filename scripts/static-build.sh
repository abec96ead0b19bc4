#!/usr/bin/env bash
# The release `webimage` linked with the Swift runtime inside, with the Containerfile's flags (the
# same libraries as its build stage), in a build folder of its own, .build-static: objects built
# for the static runtime carry its libraries in their autolink entries, which a shared-runtime
# link of the same folder then fails on. One build serves the packaging check (the container's
# root, the .deb) and the wheel (scripts/build-wheel.sh). Prints the folder holding the binary
# and its resources; an up-to-date build costs a few seconds.
set -euo pipefail
cd "$(dirname "$0")/.."
# The static link takes libcurl's and libxml2's archives' companions from their -dev packages.
scripts/install-deps.sh libcurl4-openssl-dev >&2
static=(-c release --scratch-path .build-static --static-swift-stdlib -Xlinker --no-as-needed -Xlinker -l_CFURLSessionInterface
  -Xlinker -l_CFXMLInterface -Xlinker -lcurl -Xlinker -lxml2)
grep -q -- "-Xlinker -lcurl -Xlinker -lxml2" Containerfile || { echo "the Containerfile's link flags changed" >&2; exit 1; }
swift build --product webimage "${static[@]}" >&2
swift build "${static[@]}" --show-bin-path
