#!/usr/bin/env python3
"""Peer side of the `diskcache` comparison: Python's `diskcache` package (PyPI), same workload.

The input file holds "COUNT SIZE". Each round sets COUNT values of SIZE bytes in an empty cache,
then gets each back once and checks it; only the sets and gets are timed.
"""
import json
import shutil
import sys
import tempfile
import time

import diskcache


def main():
    path, rounds = sys.argv[1], int(sys.argv[2])
    count, size = (int(field) for field in open(path).read().split())
    values = [bytes((offset + index) % 256 for offset in range(size)) for index in range(count)]
    operations, seconds = 0, 0.0
    for _ in range(rounds):
        directory = tempfile.mkdtemp(prefix="compare-diskcache-py-")
        try:
            cache = diskcache.Cache(directory, size_limit=2**40)
            start = time.perf_counter()
            for index in range(count):
                cache.set(f"https://example.com/{index}.jpg", values[index])
            for index in range(count):
                assert cache.get(f"https://example.com/{index}.jpg") == values[index], "a get returned the wrong bytes"
            seconds += time.perf_counter() - start
            operations += 2 * count
            cache.close()
        finally:
            shutil.rmtree(directory, ignore_errors=True)
    print(json.dumps({"operations": operations, "seconds": seconds}))


if __name__ == "__main__":
    main()
