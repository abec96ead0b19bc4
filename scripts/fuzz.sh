#!/usr/bin/env bash
# Builds the libFuzzer targets (Fuzz/, with AddressSanitizer) and runs each target (the decoders
# and the image proxy's request parsing) for SECONDS (default 300) with an RSS limit, starting from
# the small seed corpus in Fuzz/Corpus.
# New inputs go to a scratch corpus, not to the committed seeds. Crashes, leaks and out-of-memory
# stop a run with a non-zero status and leave the input in Fuzz/findings/.
# Usage: scripts/fuzz.sh [SECONDS] [TARGET ...]   (targets: FuzzJPEG FuzzPNG FuzzGIF FuzzWebP FuzzAVIF FuzzBMP FuzzTIFF FuzzHEIF FuzzJXL FuzzSVG FuzzJPEGPlanes FuzzProxyPath FuzzProxyOptions FuzzS3XML FuzzLists FuzzRobots FuzzVideo)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
seconds=${1:-300}
shift || true
targets=("$@")
((${#targets[@]})) || targets=(FuzzJPEG FuzzPNG FuzzGIF FuzzWebP FuzzAVIF FuzzBMP FuzzTIFF FuzzHEIF FuzzJXL FuzzSVG FuzzJPEGPlanes FuzzProxyPath FuzzProxyOptions FuzzS3XML FuzzLists FuzzRobots FuzzVideo)
rm -f Fuzz/.build/debug.yaml
mkdir -p Fuzz/findings
# Build every target first, so that the runs test one version of the library.
# swiftc's -sanitize=fuzzer links libFuzzer but instruments no Swift code for coverage: without
# -sanitize-coverage the fuzzer sees only the C targets and cannot steer into the Swift parsers
# (FuzzProxyPath reached 65 edges in 5 minutes without it, 1,100 within seconds with it).
(cd Fuzz && swift build --sanitize=fuzzer --sanitize=address -Xswiftc -sanitize-coverage=edge,trace-cmp,inline-8bit-counters,pc-table)
# The same LeakSanitizer suppressions as scripts/sanitize.sh (each says why it is there).
export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$PWD/scripts/lsan-suppressions.txt:print_suppressions=0}
for target in "${targets[@]}"; do
  seeds=$(echo "${target#Fuzz}" | tr '[:upper:]' '[:lower:]')
  scratch=$(mktemp -d)
  echo "== $target for ${seconds}s"
  Fuzz/.build/debug/"$target" "$scratch" "Fuzz/Corpus/$seeds" -max_total_time="$seconds" -rss_limit_mb=2048 \
    -max_len=65536 -artifact_prefix=Fuzz/findings/"$target"- -print_final_stats=1 2>&1 | tail -25
  rm -rf "$scratch"
done
