#!/usr/bin/env python3
"""Floor of the `dataset` comparison: the system's libjpeg-turbo by itself (TurboJPEG through
ctypes, the library our JPEG coder calls) decoding every image of the job at the DCT step the job
needs (the smallest of 1/8, 1/4, 1/2, 1 that keeps the shorter side at least 256), straight to
RGBA, in two processes (both cores), no download, resize or encode. No dataset job through this
library can go faster."""
import ctypes
import json
import sys
import time
from multiprocessing import Pool
from pathlib import Path

TJPF_RGBA = 7
TARGET = 256


def decode_all(paths):
    turbo = ctypes.CDLL("libturbojpeg.so.0")
    turbo.tjInitDecompress.restype = ctypes.c_void_p
    turbo.tjDecompressHeader3.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_ulong] + [ctypes.POINTER(ctypes.c_int)] * 4
    turbo.tjDecompress2.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_ulong, ctypes.c_void_p] + [ctypes.c_int] * 5
    handle = turbo.tjInitDecompress()
    for path in paths:
        data = Path(path).read_bytes()
        width, height, subsampling, colorspace = (ctypes.c_int() for _ in range(4))
        assert turbo.tjDecompressHeader3(handle, data, len(data), width, height, subsampling, colorspace) == 0
        denominator = next(d for d in (8, 4, 2, 1) if min(width.value, height.value) / d >= TARGET)
        scaled = ((width.value + denominator - 1) // denominator, (height.value + denominator - 1) // denominator)
        pixels = ctypes.create_string_buffer(scaled[0] * scaled[1] * 4)
        assert turbo.tjDecompress2(handle, data, len(data), pixels, scaled[0], 0, scaled[1], TJPF_RGBA, 0) == 0
    return len(paths)


def main():
    folder = Path(sys.argv[1]).parent / "www"
    paths = sorted(str(path) for path in folder.glob("*.jpg"))
    start = time.perf_counter()
    with Pool(2) as pool:
        done = sum(pool.map(decode_all, [paths[0::2], paths[1::2]]))
    print(json.dumps({"operations": done, "seconds": time.perf_counter() - start}))


if __name__ == "__main__":
    main()
