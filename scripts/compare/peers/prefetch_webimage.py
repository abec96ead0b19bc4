#!/usr/bin/env python3
"""Our side of the `prefetch` comparisons: `webimage prefetch -j N` (release build) over the URL
list into an empty cache directory, or with `tar` or `files` as third argument into tar shards or
a file per image only (`-o DIR --output-format tar|files --no-cache`). Prints {"operations": images loaded, "seconds": wall time of the
whole process, "peak_rss_mb": the largest resident set of the process}."""
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]


def main():
    url_list, parallel = Path(sys.argv[1]), int(sys.argv[2])
    mode = sys.argv[3] if len(sys.argv) > 3 else "cache"
    with tempfile.TemporaryDirectory() as cache, tempfile.TemporaryDirectory() as output:
        command = [os.environ.get("WEBIMAGE_BINARY", str(ROOT / ".build" / "release" / "webimage")), "prefetch", "-i", str(url_list), "-j", str(parallel), "--cache-dir", cache, "--json"]
        if mode in ("tar", "files"):
            # The output is the only copy, as with img2dataset: nothing goes into the disk cache.
            # No resize and no re-encoding, as the peer runs (--disable_all_reencoding).
            command += ["-o", output, "--output-format", mode, "--no-cache", "--disable-all-reencoding"]
        start = time.perf_counter()
        completed = subprocess.run(command, check=True, capture_output=True, text=True)
        elapsed = time.perf_counter() - start
    summary = json.loads(completed.stdout.strip().splitlines()[-1])
    assert summary["failed"] == 0 and summary["succeeded"] == summary["total"], summary
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    print(json.dumps({"operations": summary["succeeded"], "seconds": elapsed, "peak_rss_mb": round(peak, 1)}))


if __name__ == "__main__":
    main()
