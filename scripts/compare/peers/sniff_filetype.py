#!/usr/bin/env python3
"""Peer side of the `sniff` comparison: the `filetype` package (PyPI) on every 64-byte record."""
import json
import sys
import time

import filetype


def main():
    path, rounds = sys.argv[1], int(sys.argv[2])
    data = open(path, "rb").read()
    records = [data[start:start + 64] for start in range(0, len(data) - 63, 64)]
    start = time.perf_counter()
    recognised = 0
    for _ in range(rounds):
        for record in records:
            if filetype.guess_mime(record) is not None:
                recognised += 1
    elapsed = time.perf_counter() - start
    assert recognised > 0, "the input holds no image signature"
    print(json.dumps({"operations": len(records) * rounds, "seconds": elapsed}))


if __name__ == "__main__":
    main()
