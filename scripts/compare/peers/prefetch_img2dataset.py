#!/usr/bin/env python3
"""Peer side of the `prefetch` comparison: img2dataset (PyPI) over the same URL list, the same
concurrency (one process, N threads), no resize and no re-encoding, files written to a folder.
Prints {"operations": images saved, "seconds": wall time of the whole process}."""
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def main():
    url_list, parallel = Path(sys.argv[1]), int(sys.argv[2])
    with tempfile.TemporaryDirectory() as output:
        environment = dict(os.environ, NO_ALBUMENTATIONS_UPDATE="1")
        start = time.perf_counter()
        subprocess.run(
            ["img2dataset", "--url_list", str(url_list), "--input_format", "txt", "--output_folder", output,
             "--output_format", "files", "--processes_count", "1", "--thread_count", str(parallel),
             "--resize_mode", "no", "--disable_all_reencoding", "True", "--number_sample_per_shard", "100000",
             "--timeout", "30", "--retries", "0"],
            check=True, capture_output=True, env=environment)
        elapsed = time.perf_counter() - start
        saved = sum(1 for path in Path(output).rglob("*.jpg"))
    assert saved > 0, "img2dataset saved nothing"
    print(json.dumps({"operations": saved, "seconds": elapsed}))


if __name__ == "__main__":
    main()
