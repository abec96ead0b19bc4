#!/usr/bin/env python3
"""Peer side of the `dataset` comparison: img2dataset (PyPI) running its standard job on a caption
CSV: `--image_size 256 --resize_mode center_crop`, jpg at quality 95, webdataset shards, on both
cores as its docs advise (2 processes x 16 threads). Prints {"operations": samples written,
"seconds": wall time, "peak_rss_mb": the largest resident set among its processes, "check": the
sample count and a SHA-256 of the sorted (url, caption) pairs in the shards}."""
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


def main():
    csv, shard_size = Path(sys.argv[1]), sys.argv[2]
    with tempfile.TemporaryDirectory() as output:
        environment = dict(os.environ, NO_ALBUMENTATIONS_UPDATE="1")
        start = time.perf_counter()
        subprocess.run(
            ["img2dataset", "--url_list", str(csv), "--input_format", "csv", "--url_col", "url", "--caption_col", "caption",
             "--output_folder", output, "--output_format", "webdataset", "--processes_count", "2", "--thread_count", "16",
             "--image_size", "256", "--resize_mode", "center_crop", "--encode_format", "jpg", "--encode_quality", "95",
             "--number_sample_per_shard", shard_size, "--timeout", "30", "--retries", "0", "--enable_wandb", "False"],
            check=True, capture_output=True, env=environment)
        elapsed = time.perf_counter() - start
        check = shard_check(Path(output))
    assert check["samples"] > 0, "img2dataset wrote nothing"
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    print(json.dumps({"operations": check["samples"], "seconds": elapsed, "peak_rss_mb": round(peak, 1), "check": check}))


if __name__ == "__main__":
    main()
