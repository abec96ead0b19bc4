#!/usr/bin/env bash
# Builds the DocC documentation of the library products offline, with warnings as errors, so that
# a broken symbol link or an unresolved article reference fails: the symbol graphs come from the
# debug build (`swift package dump-symbol-graph`), then the toolchain's `docc convert` makes one
# archive per module from its catalog (Sources/MODULE/MODULE.docc). No swift-docc-plugin: the
# toolchain's docc is enough, and the package resolves one dependency fewer.
#
# Usage: scripts/docs.sh [OUTPUT_DIRECTORY]   (default .build/documentation)
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
output=$(realpath -m "${1:-$repo/.build/documentation}")
modules=(WebImage WebImageCore WebImageCodecs WebImageCaching WebImageDownloader WebImageS3 WebImageGCS WebImageServer WebImageDataset WebImageTesting)
docc=$(dirname "$(readlink -f "$(command -v swift)")")/docc

cd "$repo"
source scripts/traits.sh
graphs=$(swift package dump-symbol-graph "${debug_traits[@]}" --minimum-access-level public 2>&1 | sed -n 's/.*Files written to //p')
[ -d "$graphs" ] || { echo "no symbol graphs were written" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$output"
for module in "${modules[@]}"; do
    mkdir -p "$work/$module"
    cp "$graphs/$module.symbols.json" "$work/$module/"
    cp "$graphs/$module"@*.symbols.json "$work/$module/" 2>/dev/null || true
    "$docc" convert "Sources/$module/$module.docc" --additional-symbol-graph-dir "$work/$module" \
        --fallback-display-name "$module" --fallback-bundle-identifier "swift-web-image.$module" \
        --output-path "$output/$module.doccarchive" --warnings-as-errors > "$work/$module.log" 2>&1 \
        || { cat "$work/$module.log" >&2; echo "docs: $module has warnings or errors" >&2; exit 1; }
    echo "docs: $module built ($(find "$output/$module.doccarchive/data/documentation" -name '*.json' | wc -l) pages)"
done
