"""16-bit PNGs for HighBitDepthTests, written and read without our code.

`png16.py write PATH WIDTH HEIGHT ALPHA [P T M F]` writes a 16-bit RGB (ALPHA 0) or RGBA (ALPHA 1)
PNG whose samples are `sample(x, y, c)` below, with a cICP chunk when four code points follow.
`png16.py read PATH` prints the file's IHDR bit depth and colour type, its cICP (or null), whether it
has an sRGB chunk, and its samples (R, G, B[, A] per pixel, rows top first) as JSON. The reader
follows the PNG specification (ISO/IEC 15948, 9: filters; 7.2: 16-bit samples big-endian) for
non-interlaced 16-bit RGB and RGBA files: what a 16-bit result here is.
"""

import json
import struct
import sys
import zlib


def sample(x, y, channel):
    """Values that use all 16 bits (none a multiple of 257 but by chance), alpha never 0."""
    value = (x * 7919 + y * 104729 + channel * 15485863) % 65536
    return max(value, 1) if channel == 3 else value


def chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def write(path, width, height, alpha, cicp):
    channels = 4 if alpha else 3
    raw = bytearray()
    for y in range(height):
        raw.append(0)
        for x in range(width):
            for channel in range(channels):
                raw += struct.pack(">H", sample(x, y, channel))
    header = struct.pack(">IIBBBBB", width, height, 16, 6 if alpha else 2, 0, 0, 0)
    described = chunk(b"cICP", bytes(cicp)) if cicp else b""
    with open(path, "wb") as file:
        file.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + described + chunk(b"IDAT", zlib.compress(bytes(raw)))
                   + chunk(b"IEND", b""))


def paeth(a, b, c):
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    if pa <= pb and pa <= pc:
        return a
    return b if pb <= pc else c


def read(path):
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    offset, chunks, idat = 8, {}, b""
    while offset < len(data):
        length, kind = struct.unpack(">I4s", data[offset:offset + 8])
        body = data[offset + 8:offset + 8 + length]
        if kind == b"IDAT":
            idat += body
        else:
            chunks.setdefault(kind, body)
        offset += 12 + length
    width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", chunks[b"IHDR"])
    result = {"bitDepth": depth, "colorType": colour, "cicp": list(chunks[b"cICP"]) if b"cICP" in chunks else None,
              "sRGB": b"sRGB" in chunks, "width": width, "height": height, "samples": []}
    if depth != 16 or colour not in (2, 6) or interlace:
        return result
    bpp = 6 if colour == 2 else 8
    stride = width * bpp
    raw = zlib.decompress(idat)
    prior = bytearray(stride)
    samples = []
    for y in range(height):
        kind = raw[y * (stride + 1)]
        row = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = row[i - bpp] if i >= bpp else 0
            b = prior[i]
            c = prior[i - bpp] if i >= bpp else 0
            row[i] = (row[i] + [0, a, b, (a + b) // 2, paeth(a, b, c)][kind]) & 0xFF
        samples += [struct.unpack(">H", row[i:i + 2])[0] for i in range(0, stride, 2)]
        prior = row
    result["samples"] = samples
    return result


if __name__ == "__main__":
    if sys.argv[1] == "write":
        width, height, alpha = int(sys.argv[3]), int(sys.argv[4]), sys.argv[5] == "1"
        write(sys.argv[2], width, height, alpha, [int(v) for v in sys.argv[6:10]] if len(sys.argv) >= 10 else None)
    else:
        print(json.dumps(read(sys.argv[2])))
