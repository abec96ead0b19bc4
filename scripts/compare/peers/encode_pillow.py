#!/usr/bin/env python3
"""Peer side of the `encode-*` comparisons: Pillow encoding an image decoded beforehand, ROUNDS
times, to FORMAT with the options given as NAME=VALUE (numbers stay numbers); operations are
megapixels."""
import io
import json
import sys
import time

from PIL import Image


def main():
    format, path, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3])
    options = {name: int(value) if value.isdigit() else value for name, value in (a.split("=", 1) for a in sys.argv[4:])}
    image = Image.open(path).convert("RGB")
    image.load()
    start = time.perf_counter()
    for _ in range(rounds):
        output = io.BytesIO()
        image.save(output, format, **options)
        assert output.tell() > 0
    elapsed = time.perf_counter() - start
    print(json.dumps({"operations": rounds * image.width * image.height / 1e6, "seconds": elapsed}))


if __name__ == "__main__":
    main()
