#!/usr/bin/env python3
"""Peer side of the `decode-*` and `thumbnail` comparisons: Pillow on the same file.

`decode`: Image.open + load (Pillow's native mode: RGB for JPEG, no alpha work), ROUNDS times;
operations are megapixels. `thumbnail`: Image.open, draft (JPEG DCT scaling) and thumbnail((300,
300)) with the default filter, ROUNDS times; operations are images. `parser`: ImageFile.Parser
fed the file in 16 KB pieces, then closed (Pillow shows no partial image of a progressive JPEG);
operations are megapixels.
"""
import io
import json
import sys
import time

from PIL import Image, ImageFile

try:  # HEIC through pillow-heif, when it is installed (decode-heic).
    import pillow_heif
    pillow_heif.register_heif_opener()
except ImportError:
    pass


def main():
    workload, path, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3])
    data = open(path, "rb").read()
    start = time.perf_counter()
    pixels = 0
    for _ in range(rounds):
        if workload == "parser":
            parser = ImageFile.Parser()
            for offset in range(0, len(data), 16 * 1024):
                parser.feed(data[offset:offset + 16 * 1024])
            image = parser.close()
            pixels += image.size[0] * image.size[1]
            continue
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
