#!/usr/bin/env python3
"""Both sides of the `crawl` comparison (issue 58): one tool running img2dataset's standard job
(256 px center crops, jpg q95, webdataset shards) over the internet-like list, inside a mount
namespace whose /etc/resolv.conf names the comparison's DNS server, so that every host name is
looked up through it as on a real machine. Each tool runs as its users run a crawl: img2dataset
with its default 256 threads (2 processes x 128 here, one per core), `webimage prefetch -j 256`;
both with img2dataset's default timeout (10 s) and no retries (its default).
Prints {"operations": successful samples, "seconds": wall time, "peak_rss_mb", "check": the rows,
successes, success rate and commonest failures from the shards' _stats.json}.

Usage: crawl_side.py webimage|img2dataset|floor CSV RESOLV_CONF
"""
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from dataset_check import stats_check  # noqa: E402

ROOT = Path(__file__).resolve().parents[3]


def command(tool: str, csv: Path, output: str, cache: str) -> list:
    if tool == "floor":
        return [sys.executable, str(Path(__file__).resolve().parent / "crawl_floor.py"), str(csv)]
    if tool == "webimage":
        return [os.environ.get("WEBIMAGE_BINARY", str(ROOT / ".build" / "release" / "webimage")), "prefetch", "-i", str(csv),
                "--input-format", "csv", "--caption-col", "caption", "-o", output, "--output-format", "webdataset",
                "--shard-size", "1000", "--image-size", "256", "--resize-mode", "center_crop", "--encode-format", "jpg",
                "--encode-quality", "95", "-j", "256", "--timeout", "10", "--retries", "0", "--no-cache", "--cache-dir", cache,
                "--json"]
    return ["img2dataset", "--url_list", str(csv), "--input_format", "csv", "--url_col", "url", "--caption_col", "caption",
            "--output_folder", output, "--output_format", "webdataset", "--processes_count", "2", "--thread_count", "128",
            "--image_size", "256", "--resize_mode", "center_crop", "--encode_format", "jpg", "--encode_quality", "95",
            "--number_sample_per_shard", "1000", "--timeout", "10", "--retries", "0", "--enable_wandb", "False"]


def main():
    tool, csv, resolv = sys.argv[1], Path(sys.argv[2]), sys.argv[3]
    with tempfile.TemporaryDirectory() as cache, tempfile.TemporaryDirectory() as output:
        inner = command(tool, csv, output, cache)
        # The tool's own view of /etc/resolv.conf, nobody else's: a mount namespace of its own.
        wrapped = ["unshare", "--mount", "sh", "-c", 'mount --bind "$0" /etc/resolv.conf && exec "$@"', resolv, *inner]
        environment = dict(os.environ, NO_ALBUMENTATIONS_UPDATE="1")
        start = time.perf_counter()
        completed = subprocess.run(wrapped, check=True, capture_output=True, text=True, env=environment)
        elapsed = time.perf_counter() - start
        if tool == "floor":
            print(completed.stdout.strip().splitlines()[-1])
            return
        check = stats_check(Path(output))
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    print(json.dumps({"operations": check["successes"], "seconds": elapsed, "peak_rss_mb": round(peak, 1), "check": check}))


if __name__ == "__main__":
    main()
