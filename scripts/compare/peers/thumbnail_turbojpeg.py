#!/usr/bin/env python3
"""Floor of the `thumbnail` comparison: the system's libjpeg-turbo by itself (TurboJPEG through
ctypes, the library our JPEG coder calls), decoding the file at the smallest DCT scale that still
covers 300 px, straight to RGBA, with no resampling. Any thumbnail made through this library
takes at least this long."""
import ctypes
import json
import sys
import time

TJPF_RGBA = 7
TARGET = 300


def main():
    path, rounds = sys.argv[1], int(sys.argv[2])
    data = open(path, "rb").read()
    turbo = ctypes.CDLL("libturbojpeg.so.0")
    turbo.tjInitDecompress.restype = ctypes.c_void_p
    turbo.tjDecompressHeader3.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_ulong] + [ctypes.POINTER(ctypes.c_int)] * 4
    turbo.tjDecompress2.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_ulong, ctypes.c_void_p] + [ctypes.c_int] * 5
    turbo.tjDestroy.argtypes = [ctypes.c_void_p]
    handle = turbo.tjInitDecompress()
    width, height, subsampling, colorspace = (ctypes.c_int() for _ in range(4))
    assert turbo.tjDecompressHeader3(handle, data, len(data), width, height, subsampling, colorspace) == 0
    # The smallest of 1/8, 1/4, 1/2, 1 that keeps the longer side at least TARGET.
    denominator = next(d for d in (8, 4, 2, 1) if max(width.value, height.value) / d >= TARGET)
    scaled_width = (width.value + denominator - 1) // denominator
    scaled_height = (height.value + denominator - 1) // denominator
    pixels = ctypes.create_string_buffer(scaled_width * scaled_height * 4)
    start = time.perf_counter()
    for _ in range(rounds):
        assert turbo.tjDecompress2(handle, data, len(data), pixels, scaled_width, 0, scaled_height, TJPF_RGBA, 0) == 0
    elapsed = time.perf_counter() - start
    turbo.tjDestroy(handle)
    print(json.dumps({"operations": rounds, "seconds": elapsed}))


if __name__ == "__main__":
    main()
