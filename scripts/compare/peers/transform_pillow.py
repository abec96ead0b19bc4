#!/usr/bin/env python3
"""Peer side of the `resize`, `resize-rgba` and `blur` comparisons: Pillow on an image decoded
beforehand (Pillow premultiplies RGBA inside resize, opaque or not)."""
import json
import sys
import time

from PIL import Image, ImageFilter


def main():
    workload, path, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3])
    image = Image.open(path).convert("RGBA")
    image.load()
    start = time.perf_counter()
    for _ in range(rounds):
        if workload == "resize":
            result = image.resize((300, 200), Image.Resampling.LANCZOS)
        else:
            result = image.filter(ImageFilter.GaussianBlur(10))
        assert result.size[0] > 0
    elapsed = time.perf_counter() - start
    print(json.dumps({"operations": rounds, "seconds": elapsed}))


if __name__ == "__main__":
    main()
