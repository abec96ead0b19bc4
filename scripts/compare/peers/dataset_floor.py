#!/usr/bin/env python3
"""Floor of the `dataset` comparison: the system's libjpeg-turbo by itself (TurboJPEG through
ctypes, the library our JPEG coder calls) decoding every image of the job at the DCT step the job
needs (the smallest n/8 whose output still covers the resize: the shorter side made 256, the
longer by the same scale, rounded), straight to RGBA, in two processes (both cores), no
download, resize or encode. No dataset job through this library can go faster.

With `codec` as second argument, each decode is followed by what the job's output needs of the codec
too: TurboJPEG encoding the 256x256 centre of the decoded pixels at quality 95, 4:2:0 (as our
`--encode-quality 95` and OpenCV's `imencode` in img2dataset), still with no download or resize.

With `planar`, the same codec work as our JPEG-to-JPEG path does it (JPEGPlanarResize): the decode
straight to Y, Cb and Cr planes at the DCT step that path takes (the smallest of 1/8, 1/4, 1/2 and 1
that covers the resize, the steps whose inverse DCT libjpeg-turbo has in SIMD: 1/2 for these
1024x768 photos, where the other modes take 3/8, which decodes slower), and the encode of the planes'
256x256 centre, with no RGB conversion on either side (and still no resize). `planar N` decodes at
N/8 instead, whether it covers the resize or not (`docs/benchmarks.md` compares the steps)."""
import ctypes
import json
import sys
import time
from multiprocessing import Pool
from pathlib import Path

TJPF_RGBA = 7
TJSAMP_420 = 2
TARGET = 256


def turbojpeg():
    """The system's TurboJPEG through ctypes, the functions the floors call typed."""
    turbo = ctypes.CDLL("libturbojpeg.so.0")
    turbo.tjInitDecompress.restype = ctypes.c_void_p
    turbo.tjInitCompress.restype = ctypes.c_void_p
    turbo.tjDecompressHeader3.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_ulong] + [ctypes.POINTER(ctypes.c_int)] * 4
    turbo.tjDecompress2.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_ulong, ctypes.c_void_p] + [ctypes.c_int] * 5
    turbo.tjCompress2.argtypes = [ctypes.c_void_p, ctypes.c_void_p] + [ctypes.c_int] * 4 + [
        ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(ctypes.c_ulong)] + [ctypes.c_int] * 3
    turbo.tjDecompressToYUVPlanes.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_ulong, ctypes.POINTER(ctypes.c_void_p),
                                              ctypes.c_int, ctypes.POINTER(ctypes.c_int), ctypes.c_int, ctypes.c_int]
    turbo.tjCompressFromYUVPlanes.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p), ctypes.c_int,
                                              ctypes.POINTER(ctypes.c_int), ctypes.c_int, ctypes.c_int,
                                              ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(ctypes.c_ulong), ctypes.c_int, ctypes.c_int]
    turbo.tjFree.argtypes = [ctypes.c_void_p]
    return turbo


def jobs(turbo, handle, paths, steps=range(1, 9)):
    """Each file's bytes, its subsampling and the size of its decode at the job's DCT step (the
    smallest of `steps`, in eighths, that covers the resize)."""
    for path in paths:
        data = Path(path).read_bytes()
        width, height, subsampling, colorspace = (ctypes.c_int() for _ in range(4))
        assert turbo.tjDecompressHeader3(handle, data, len(data), width, height, subsampling, colorspace) == 0
        yield data, subsampling.value, scaled_size(width.value, height.value, steps)


def decode_planar(paths, steps=(1, 2, 4, 8)):
    turbo = turbojpeg()
    handle, compressor = turbo.tjInitDecompress(), turbo.tjInitCompress()
    for data, subsampling, scaled in jobs(turbo, handle, paths, steps):
        assert subsampling == TJSAMP_420, "the job's photos are 4:2:0"
        sizes = [(turbo.tjPlaneWidth(index, scaled[0], TJSAMP_420), turbo.tjPlaneHeight(index, scaled[1], TJSAMP_420)) for index in range(3)]
        planes = [ctypes.create_string_buffer(w * h) for w, h in sizes]
        pointers = (ctypes.c_void_p * 3)(*(ctypes.addressof(plane) for plane in planes))
        strides = (ctypes.c_int * 3)(*(w for w, _ in sizes))
        assert turbo.tjDecompressToYUVPlanes(handle, data, len(data), pointers, scaled[0], strides, scaled[1], 0) == 0
        # The centre, from an even row and column so that the chroma planes' centre is whole samples,
        # or as much of the plane as there is at a step too small for it.
        kept = (min(TARGET, scaled[0]), min(TARGET, scaled[1]))
        left, top = (scaled[0] - kept[0]) // 2 & ~1, (scaled[1] - kept[1]) // 2 & ~1
        centre = (ctypes.c_void_p * 3)(*(ctypes.addressof(plane) + (top // step) * w + left // step
                                         for plane, (w, _), step in zip(planes, sizes, (1, 2, 2))))
        output, size = ctypes.c_void_p(), ctypes.c_ulong()
        assert turbo.tjCompressFromYUVPlanes(compressor, centre, kept[0], strides, kept[1], TJSAMP_420, ctypes.byref(output),
                                             ctypes.byref(size), 95, 0) == 0
        turbo.tjFree(output)
    return len(paths)


def scaled_size(width, height, steps):
    """The job's DCT step: the smallest n/8 of `steps` whose output still covers the resize (the
    shorter side made 256, the longer by the same scale, rounded), and the size it gives."""
    scale = TARGET / min(width, height)
    needed = (round(width * scale), round(height * scale))
    numerator = next((n for n in steps if -(-width * n // 8) >= needed[0] and -(-height * n // 8) >= needed[1]), 8)
    return -(-width * numerator // 8), -(-height * numerator // 8)


def decode_all(paths, encode=False):
    turbo = turbojpeg()
    handle, compressor = turbo.tjInitDecompress(), turbo.tjInitCompress()
    for data, _, scaled in jobs(turbo, handle, paths):
        pixels = ctypes.create_string_buffer(scaled[0] * scaled[1] * 4)
        # TurboJPEG picks the scale whose output fits the width and height asked for.
        assert turbo.tjDecompress2(handle, data, len(data), pixels, scaled[0], 0, scaled[1], TJPF_RGBA, 0) == 0
        if encode:
            pitch = scaled[0] * 4
            left, top = (scaled[0] - TARGET) // 2, (scaled[1] - TARGET) // 2
            centre = ctypes.addressof(pixels) + top * pitch + left * 4
            output, size = ctypes.c_void_p(), ctypes.c_ulong()
            assert turbo.tjCompress2(compressor, centre, TARGET, pitch, TARGET, TJPF_RGBA, ctypes.byref(output), ctypes.byref(size),
                                     TJSAMP_420, 95, 0) == 0
            turbo.tjFree(output)
    return len(paths)


def main():
    folder = Path(sys.argv[1]).parent / "www"
    mode = sys.argv[2] if len(sys.argv) > 2 else "decode"
    paths = sorted(str(path) for path in folder.glob("*.jpg"))
    start = time.perf_counter()
    with Pool(2) as pool:
        if mode == "planar":
            steps = (int(sys.argv[3]),) if len(sys.argv) > 3 else (1, 2, 4, 8)
            done = sum(pool.starmap(decode_planar, [(paths[0::2], steps), (paths[1::2], steps)]))
        else:
            done = sum(pool.starmap(decode_all, [(paths[0::2], mode == "codec"), (paths[1::2], mode == "codec")]))
    print(json.dumps({"operations": done, "seconds": time.perf_counter() - start}))


if __name__ == "__main__":
    main()
