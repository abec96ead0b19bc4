#!/usr/bin/env python3
"""Our side of the `dataset` comparison: `webimage prefetch` (release build) running img2dataset's
standard job on the same caption CSV: `--image-size 256 --resize-mode center_crop`, jpg at
quality 95, webdataset shards, nothing in the disk cache, 32 at a time. Prints
{"operations": samples written, "seconds": wall time, "peak_rss_mb": its resident peak, "check":
as the peer's}."""
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from dataset_check import shard_check  # noqa: E402

ROOT = Path(__file__).resolve().parents[3]


def main():
    csv, shard_size = Path(sys.argv[1]), sys.argv[2]
    with tempfile.TemporaryDirectory() as cache, tempfile.TemporaryDirectory() as output:
        command = [os.environ.get("WEBIMAGE_BINARY", str(ROOT / ".build" / "release" / "webimage")), "prefetch", "-i", str(csv), "--input-format", "csv",
                   "--caption-col", "caption", "-o", output, "--output-format", "webdataset", "--shard-size", shard_size,
                   "--image-size", "256", "--resize-mode", "center_crop", "--encode-format", "jpg", "--encode-quality", "95",
                   "-j", "32", "--no-cache", "--cache-dir", cache, "--json"]
        start = time.perf_counter()
        completed = subprocess.run(command, check=True, capture_output=True, text=True)
        elapsed = time.perf_counter() - start
        check = shard_check(Path(output))
    summary = json.loads(completed.stdout.strip().splitlines()[-1])
    assert summary["failed"] == 0, summary
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    print(json.dumps({"operations": check["samples"], "seconds": elapsed, "peak_rss_mb": round(peak, 1), "check": check}))


if __name__ == "__main__":
    main()
