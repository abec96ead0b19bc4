#!/usr/bin/env python3
"""The floor under every `prefetch-files` side: creating one file per URL of the list (50 KB
each, open/write/close, no fsync, no network, no decoding) with N threads into one empty folder,
as both sides do. Prints {"operations": files written, "seconds": wall time}."""
import json
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path


def main():
    url_list, threads = Path(sys.argv[1]), int(sys.argv[2])
    count = sum(1 for line in open(url_list) if line.strip())
    payload = bytes(50 * 1024)
    with tempfile.TemporaryDirectory() as folder:
        def write(index):
            with open(f"{folder}/{index:09d}.jpg", "wb") as file:
                file.write(payload)
        start = time.perf_counter()
        with ThreadPoolExecutor(threads) as pool:
            list(pool.map(write, range(count)))
        elapsed = time.perf_counter() - start
    print(json.dumps({"operations": count, "seconds": elapsed}))


if __name__ == "__main__":
    main()
