#!/usr/bin/env bash
# The Vapor trait keeps Vapor out of the applications that do not ask for it: a package that
# depends on this one without the trait resolves no Vapor package, and one that enables it does
# (SwiftPM prunes a dependency only a disabled trait uses, SE-0450). Resolves two small consumer
# packages in a temporary folder (about 30 s; nothing is built).
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# A consumer of the product `$2`, with the traits `$1` (a Swift array literal) on its package line.
consumer() {
  local traits=$1 product=$2 directory
  directory="$work/consumer-$product"
  mkdir -p "$directory/Sources/App"
  cat > "$directory/Package.swift" <<SWIFT
// swift-tools-version: 6.1
import PackageDescription
let package = Package(
    name: "consumer",
    dependencies: [.package(path: "$repo", traits: $traits)],
    targets: [.executableTarget(name: "App", dependencies: [.product(name: "$product", package: "$(basename "$repo")")])]
)
SWIFT
  echo 'print("consumer")' > "$directory/Sources/App/main.swift"
  (cd "$directory" && swift package resolve >/dev/null 2>&1) || { echo "trait-check: resolving the $product consumer failed" >&2; exit 1; }
  grep -o '"identity" : "[^"]*"' "$directory/Package.resolved" | sed 's/.*: "\(.*\)"/\1/'
}

without=$(consumer '[.defaults]' WebImage)
if grep -qx 'vapor\|routing-kit\|console-kit' <<< "$without"; then
  echo "trait-check: a consumer without the Vapor trait resolved Vapor's packages:" $without >&2
  exit 1
fi
with=$(consumer '["Vapor"]' WebImageVapor)
grep -qx vapor <<< "$with" || { echo "trait-check: a consumer with the Vapor trait did not resolve Vapor" >&2; exit 1; }
echo "trait-check: without the trait $(wc -l <<< "$without") packages and no Vapor; with it $(wc -l <<< "$with"), Vapor among them"
