#!/usr/bin/env python3
"""The encoder floor under serve.py's WebP row: the same 512-wide result pixels (libvips'
thumbnail of PATH) encoded at quality Q, ROUNDS times on one core, by Debian's libwebp alone
(libwebp.so.7 through ctypes, WebPEncodeRGB: method 4, what our server links) and by libvips'
webpsave (pyvips-binary's own libwebp, effort 4). Prints milliseconds and bytes of each."""
import ctypes
import json
import sys
import time

import pyvips


def main():
    path, quality, rounds = sys.argv[1], float(sys.argv[2]), int(sys.argv[3])
    image = pyvips.Image.thumbnail_buffer(open(path, "rb").read(), 512, height=512).copy_memory()
    pixels = bytes(image.write_to_memory())
    width, height = image.width, image.height
    libwebp = ctypes.CDLL("libwebp.so.7")
    libwebp.WebPEncodeRGB.restype = ctypes.c_size_t
    libwebp.WebPEncodeRGB.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_float,
                                      ctypes.POINTER(ctypes.c_void_p)]
    output = ctypes.c_void_p()
    started = time.perf_counter()
    for _ in range(rounds):
        size = libwebp.WebPEncodeRGB(pixels, width, height, width * 3, quality, ctypes.byref(output))
        libwebp.WebPFree(output)
    debian = (time.perf_counter() - started) / rounds * 1000
    started = time.perf_counter()
    for _ in range(rounds):
        encoded = image.webpsave_buffer(Q=int(quality))
    vips = (time.perf_counter() - started) / rounds * 1000
    print(json.dumps({"debian_libwebp_ms": debian, "debian_libwebp_bytes": size, "vips_webpsave_ms": vips,
                      "vips_webpsave_bytes": len(encoded), "result": f"{width}x{height}"}))


if __name__ == "__main__":
    main()
