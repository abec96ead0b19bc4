#!/usr/bin/env python3
"""Peer side of the `decode-*` and `thumbnail` comparisons: Pillow on the same file.

`decode`: Image.open + load (Pillow's native mode: RGB for JPEG, no alpha work), ROUNDS times;
operations are megapixels. `thumbnail`: Image.open, draft (JPEG DCT scaling) and thumbnail((300,
300)) with the default filter, ROUNDS times; operations are images.
"""
import io
import json
import sys
import time

from PIL import Image


def main():
    workload, path, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3])
    data = open(path, "rb").read()
    start = time.perf_counter()
    pixels = 0
    for _ in range(rounds):
        image = Image.open(io.BytesIO(data))
        if workload == "thumbnail":
            image.thumbnail((300, 300))
            assert max(image.size) <= 300
        else:
            image.load()
            pixels += image.size[0] * image.size[1]
    elapsed = time.perf_counter() - start
    operations = rounds if workload == "thumbnail" else pixels / 1e6
    print(json.dumps({"operations": operations, "seconds": elapsed}))


if __name__ == "__main__":
    main()
