#!/usr/bin/env python3
"""Peer side of serve.py's `formats`, `png-kinds` and `high-bit-depth` parts: libvips alone (pyvips
from PyPI's pyvips-binary), no HTTP, doing what an image server does per request: thumbnail_buffer
(shrink-on-load where the format has it) to fit 512x512, then save to SUFFIX (e.g. `.webp[Q=75]`)
in memory, again and again for SECONDS (as long as the server's side is measured, so that both
average over the same stretch of this machine's time). Prints {"operations", "seconds", "bytes"}
(bytes: the last result's size).

With `--keep-depth` a 16-bit PNG or 10-bit AVIF keeps its depth, as imgproxy keeps it with
IMGPROXY_PRESERVE_HDR: load (which gives `ushort` RGB16), `resize` to fit (lanczos3, libvips's
default; `thumbnail_buffer` converts to 8-bit sRGB), save (`.png`: 16-bit; `.avif[bitdepth=10]`)."""
import json
import sys
import time

import pyvips


def thumbnail(data):
    return pyvips.Image.thumbnail_buffer(data, 512, height=512)


def kept_depth(data):
    image = pyvips.Image.new_from_buffer(data, "", access="sequential")
    assert image.format == "ushort", image.format
    resized = image.resize(512 / max(image.width, image.height))
    assert resized.format == "ushort"
    return resized


def main():
    path, suffix, seconds = sys.argv[1], sys.argv[2], float(sys.argv[3])
    make = kept_depth if "--keep-depth" in sys.argv[4:] else thumbnail
    data = open(path, "rb").read()
    output = b""
    operations = 0
    start = time.perf_counter()
    while operations == 0 or time.perf_counter() - start < seconds:
        image = make(data)
        output = image.write_to_buffer(suffix)
        assert max(image.width, image.height) == 512 and output
        operations += 1
    print(json.dumps({"operations": operations, "seconds": time.perf_counter() - start, "bytes": len(output)}))


if __name__ == "__main__":
    main()
