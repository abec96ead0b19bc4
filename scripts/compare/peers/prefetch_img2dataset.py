#!/usr/bin/env python3
"""Peer side of the `prefetch` comparisons: img2dataset (PyPI) over the same URL list, the same
concurrency (one process, N threads), no resize and no re-encoding, files written to a folder
(or, with `webdataset` as third argument, tar shards). Prints {"operations": images saved,
"seconds": wall time of the whole process, "peak_rss_mb": the largest resident set among its
processes}."""
import json
import os
import resource
import subprocess
import tarfile
import sys
import tempfile
import time
from pathlib import Path


def main():
    url_list, parallel = Path(sys.argv[1]), int(sys.argv[2])
    output_format = sys.argv[3] if len(sys.argv) > 3 else "files"
    with tempfile.TemporaryDirectory() as output:
        environment = dict(os.environ, NO_ALBUMENTATIONS_UPDATE="1")
        start = time.perf_counter()
        subprocess.run(
            ["img2dataset", "--url_list", str(url_list), "--input_format", "txt", "--output_folder", output,
             "--output_format", output_format, "--processes_count", "1", "--thread_count", str(parallel),
             "--resize_mode", "no", "--disable_all_reencoding", "True", "--number_sample_per_shard", "100000",
             "--timeout", "30", "--retries", "0"],
            check=True, capture_output=True, env=environment)
        elapsed = time.perf_counter() - start
        if output_format == "files":
            saved = sum(1 for path in Path(output).rglob("*.jpg"))
        else:
            saved = sum(1 for shard in Path(output).glob("*.tar") for name in tarfile.open(shard).getnames() if name.endswith(".jpg"))
    assert saved > 0, "img2dataset saved nothing"
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    print(json.dumps({"operations": saved, "seconds": elapsed, "peak_rss_mb": round(peak, 1)}))


if __name__ == "__main__":
    main()
