"""16-bit PNGs and TIFFs for HighBitDepthTests, written and read without our code.

`high_bit_depth.py write PATH WIDTH HEIGHT ALPHA [P T M F]` writes a 16-bit RGB (ALPHA 0) or RGBA
(ALPHA 1) PNG whose samples are `sample(x, y, c)` below, with a cICP chunk when four code points
follow. `high_bit_depth.py read PATH` prints the file's IHDR bit depth and colour type, its cICP
(or null), whether it has an sRGB chunk, and its samples (R, G, B[, A] per pixel, rows top first)
as JSON. The reader follows the PNG specification (ISO/IEC 15948, 9: filters; 7.2: 16-bit samples
big-endian) for non-interlaced 16-bit RGB and RGBA files: what a 16-bit result here is.

`write-apng PATH WIDTH HEIGHT P T M F` writes a two-frame 16-bit APNG with that cICP, and each
frame alone as a still beside it (PATH-0.png, PATH-1.png). `write-apng-over PATH WIDTH HEIGHT`
writes a three-frame 16-bit RGBA APNG whose second frame is blended over the first and disposed
to the background, and prints every composed frame's samples (APNG 1.0, `fcTL`: the "over"
operation is Porter-Duff's, computed here in floating point on straight alpha and rounded).

`write-tiff` and `read-tiff` do the same for TIFF (TIFF 6.0): an uncompressed little-endian
baseline file of one strip, alpha unassociated (ExtraSamples 2), of PAGES pages when a sixth
argument gives it (page k's samples `page_sample(x, y, c, k)`); read, the first page of a file of
strips, uncompressed or deflated (Compression 8 or 32946), with or without the horizontal
predictor (Predictor 2, section 14), in either byte order. `write-half-tiff PATH WIDTH HEIGHT`
writes an RGB TIFF of half floats (SampleFormat 3, 16 bits: TIFF Technical Note 3's floating
point) and prints the 8-bit RGB each pixel is read as.

`write-icc PATH WIDTH HEIGHT SOURCE` writes a 16-bit RGB PNG whose iCCP chunk is the Adobe RGB
(1998) profile of the PNG at SOURCE, and prints each pixel's RGB in sRGB at 16 bits as
colour-science converts it (Adobe RGB (1998)'s 563/256 gamma and primaries, both white points
D65, out-of-gamut values clipped, sRGB's piecewise curve).
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


def image_data(width, height, channels, value):
    """Deflated rows of 16-bit samples `value(x, y, channel)`, big-endian, each row of filter type
    None: a PNG's IDAT data (ISO/IEC 15948, 7.2 and 9)."""
    raw = bytearray()
    for y in range(height):
        raw.append(0)
        for x in range(width):
            for channel in range(channels):
                raw += struct.pack(">H", value(x, y, channel))
    return zlib.compress(bytes(raw))


def write(path, width, height, alpha, cicp):
    header = struct.pack(">IIBBBBB", width, height, 16, 6 if alpha else 2, 0, 0, 0)
    described = chunk(b"cICP", bytes(cicp)) if cicp else b""
    with open(path, "wb") as file:
        file.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + described
                   + chunk(b"IDAT", image_data(width, height, 4 if alpha else 3, sample))
                   + chunk(b"IEND", b""))


def write_apng(path, width, height, cicp):
    """A two-frame 16-bit RGB APNG with a cICP chunk: frame 0 is `sample` halved (dim: PQ codes
    under half scale are under 100 cd/m2), frame 1 the same but for its first pixel, at full scale
    (PQ's 10,000 cd/m2); each stored whole (fcTL at 0, 0, no blending), each also written alone as
    PATH-N.png."""
    def rows(frame):
        value = lambda x, y, channel: 65535 if frame == 1 and x == 0 and y == 0 else sample(x, y, channel) >> 1
        return image_data(width, height, 3, value)

    header = chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 16, 2, 0, 0, 0)) + chunk(b"cICP", bytes(cicp))
    control = lambda sequence: chunk(b"fcTL", struct.pack(">IIIIIHHBB", sequence, width, height, 0, 0, 1, 10, 0, 0))
    first, second = rows(0), rows(1)
    with open(path, "wb") as file:
        file.write(b"\x89PNG\r\n\x1a\n" + header + chunk(b"acTL", struct.pack(">II", 2, 0)) + control(0) + chunk(b"IDAT", first)
                   + control(1) + chunk(b"fdAT", struct.pack(">I", 2) + second) + chunk(b"IEND", b""))
    for index, data in enumerate((first, second)):
        with open(f"{path}-{index}.png", "wb") as file:
            file.write(b"\x89PNG\r\n\x1a\n" + header + chunk(b"IDAT", data) + chunk(b"IEND", b""))


def over_sample(x, y, channel):
    """The blended frame's samples: colour unlike the first frame's, alpha clear, opaque or between."""
    if channel == 3:
        return (0, 65535, 1 + (x * 40503 + y * 9973) % 65534)[x % 3]
    return (sample(x, y, channel) * 3 + 12345) % 65536


def write_apng_over(path, width, height):
    """Frame 0: `sample` over the whole canvas. Frame 1: `over_sample` on the canvas inset by one
    pixel, blended over frame 0 (blend_op 1), then disposed to the background (dispose_op 1: the
    region cleared to transparent black). Frame 2: the top-left 2x2 pixels of `sample` halved,
    replacing (blend_op 0). Returns the three composed frames."""
    encoded = lambda w, h, value: image_data(w, h, 4, value)
    def control(sequence, w, h, x, y, dispose, blend):
        return chunk(b"fcTL", struct.pack(">IIIIIHHBB", sequence, w, h, x, y, 1, 10, dispose, blend))

    inner = (width - 2, height - 2)
    halved = lambda x, y, channel: sample(x, y, channel) >> 1 if channel < 3 else sample(x, y, channel)
    with open(path, "wb") as file:
        file.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 16, 6, 0, 0, 0))
                   + chunk(b"acTL", struct.pack(">II", 3, 0)) + control(0, width, height, 0, 0, 0, 0)
                   + chunk(b"IDAT", encoded(width, height, sample)) + control(1, *inner, 1, 1, 1, 1)
                   + chunk(b"fdAT", struct.pack(">I", 2) + encoded(*inner, over_sample)) + control(3, 2, 2, 0, 0, 0, 0)
                   + chunk(b"fdAT", struct.pack(">I", 4) + encoded(2, 2, halved)) + chunk(b"IEND", b""))

    def over(x, y):
        top = [over_sample(x - 1, y - 1, c) / 65535 for c in range(4)]
        bottom = [sample(x, y, c) / 65535 for c in range(4)]
        alpha = top[3] + bottom[3] * (1 - top[3])
        colour = [(top[c] * top[3] + bottom[c] * bottom[3] * (1 - top[3])) / alpha for c in range(3)]
        return [round(v * 65535) for v in colour + [alpha]]

    inside = lambda x, y: 1 <= x <= width - 2 and 1 <= y <= height - 2
    frames = [[], [], []]
    for y in range(height):
        for x in range(width):
            frames[0] += [sample(x, y, c) for c in range(4)]
            frames[1] += over(x, y) if inside(x, y) else [sample(x, y, c) for c in range(4)]
            if x < 2 and y < 2:
                frames[2] += [halved(x, y, c) for c in range(4)]
            else:
                frames[2] += [0, 0, 0, 0] if inside(x, y) else [sample(x, y, c) for c in range(4)]
    return frames


def write_icc(path, width, height, source):
    """`write`'s RGB samples with an iCCP chunk holding SOURCE's profile (PNG specification, 11.3.3.3)."""
    with open(source, "rb") as file:
        data = file.read()
    at, profile = 8, None
    while at < len(data) and profile is None:
        length, kind = struct.unpack(">I4s", data[at:at + 8])
        if kind == b"iCCP":
            body = data[at + 8:at + 8 + length]
            profile = zlib.decompress(body[body.index(b"\0") + 2:])
        at += length + 12
    header = struct.pack(">IIBBBBB", width, height, 16, 2, 0, 0, 0)
    iccp = chunk(b"iCCP", b"Adobe RGB\0\0" + zlib.compress(profile))
    with open(path, "wb") as file:
        file.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + iccp + chunk(b"IDAT", image_data(width, height, 3, sample))
                   + chunk(b"IEND", b""))


def adobe_rgb_in_srgb(width, height):
    import colour
    import numpy
    codes = numpy.array([[sample(x, y, c) for c in range(3)] for y in range(height) for x in range(width)]) / 65535
    adobe, srgb = colour.RGB_COLOURSPACES["Adobe RGB (1998)"], colour.RGB_COLOURSPACES["sRGB"]
    linear = colour.RGB_to_RGB(adobe.cctf_decoding(codes), adobe, srgb, chromatic_adaptation_transform=None)
    encoded = srgb.cctf_encoding(numpy.clip(linear, 0, 1))
    return [int(value) for value in numpy.round(encoded * 65535).flatten()]


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


def half_sample(x, y, c):
    """A half float from -20 to about 300, past both ends of the 0-255 scale float samples are read on."""
    return ((x * 37 + y * 11 + c * 5) % 320) - 20 + 0.37


def page_sample(x, y, channel, page):
    """`sample` for page 0; each later page's samples differ (the bits of its number flipped)."""
    value = sample(x, y, channel) ^ (page * 0x1111)
    return max(value, 1) if channel == 3 else value


def tiff_page(width, height, alpha, half, page, at, last):
    """One page at offset `at`: its IFD, the IFD's out-of-line values, then its strip."""
    channels = 4 if alpha else 3
    if half:
        # SampleFormat 3 (IEEE floating point) at 16 bits: Python's struct "e" is IEEE 754 binary16.
        data = b"".join(struct.pack("<e", half_sample(x, y, c)) for y in range(height) for x in range(width) for c in range(channels))
    else:
        data = b"".join(struct.pack("<H", page_sample(x, y, c, page)) for y in range(height) for x in range(width)
                        for c in range(channels))
    entries = [(256, 4, [width]), (257, 4, [height]), (258, 3, [16] * channels), (259, 3, [1]), (262, 3, [2]),
               (273, 4, [0]), (277, 3, [channels]), (278, 4, [height]), (279, 4, [len(data)]), (284, 3, [1])]
    if half:
        entries.append((339, 3, [3] * channels))
    if alpha:
        entries.append((338, 3, [2]))
    entries.sort()
    ifd_size = 2 + 12 * len(entries) + 4
    extra = bytearray()
    body = bytearray()
    data_offset = at + ifd_size + 64
    for tag, kind, values in entries:
        if tag == 273:
            values = [data_offset]
        packed = b"".join(struct.pack("<H" if kind == 3 else "<I", v) for v in values)
        if len(packed) <= 4:
            body += struct.pack("<HHI", tag, kind, len(values)) + packed.ljust(4, b"\0")
        else:
            body += struct.pack("<HHII", tag, kind, len(values), at + ifd_size + len(extra))
            extra += packed
    assert len(extra) <= 64
    following = 0 if last else data_offset + len(data) + len(data) % 2
    block = struct.pack("<H", len(entries)) + bytes(body) + struct.pack("<I", following) + bytes(extra).ljust(64, b"\0") + data
    return block + (b"\0" if len(data) % 2 else b"")


def write_tiff(path, width, height, alpha, half=False, pages=1):
    out = bytearray(b"II*\0" + struct.pack("<I", 8))
    for page in range(pages):
        out += tiff_page(width, height, alpha, half, page, len(out), page == pages - 1)
    with open(path, "wb") as file:
        file.write(bytes(out))


def read_tiff(path):
    data = open(path, "rb").read()
    order = "<" if data[:2] == b"II" else ">"
    (offset,) = struct.unpack(order + "I", data[4:8])
    (count,) = struct.unpack(order + "H", data[offset:offset + 2])
    sizes = {3: 2, 4: 4}
    tags = {}
    for index in range(count):
        tag, kind, number, value = struct.unpack(order + "HHI4s", data[offset + 2 + 12 * index:offset + 14 + 12 * index])
        size = sizes.get(kind, 1) * number
        raw = value if size <= 4 else data[struct.unpack(order + "I", value)[0]:][:size]
        tags[tag] = list(struct.unpack(order + ("H" if kind == 3 else "I") * number, raw[:size])) if kind in sizes else raw
    width, height, channels = tags[256][0], tags[257][0], tags[277][0]
    result = {"bitDepth": tags[258][0], "channels": channels, "extraSamples": tags.get(338), "width": width, "height": height,
              "samples": []}
    raw = bytearray()
    for start, length in zip(tags[273], tags[279]):
        strip = data[start:start + length]
        raw += zlib.decompress(strip) if tags[259][0] in (8, 32946) else strip
    samples = list(struct.unpack(order + "H" * (len(raw) // 2), raw)) if result["bitDepth"] == 16 else list(raw)
    if tags.get(317, [1])[0] == 2:
        for y in range(height):
            row = y * width * channels
            for i in range(channels, width * channels):
                samples[row + i] = (samples[row + i] + samples[row + i - channels]) & 0xFFFF
    result["samples"] = samples[:width * height * channels]
    return result


if __name__ == "__main__":
    command = sys.argv[1]
    if command == "write-half-tiff":
        # The expected 8-bit RGB of each pixel: the half float as written (struct's own decoding),
        # on the 0-255 scale, clipped and truncated, as Pillow and libvips cast float samples.
        width, height = int(sys.argv[3]), int(sys.argv[4])
        write_tiff(sys.argv[2], width, height, False, half=True)
        def cast(value):
            return 0 if not value > 0 else 255 if value >= 255 else int(value)
        expected = [cast(struct.unpack("<e", struct.pack("<e", half_sample(x, y, c)))[0])
                    for y in range(height) for x in range(width) for c in range(3)]
        print(json.dumps({"expected": expected}))
    elif command == "write-icc":
        width, height = int(sys.argv[3]), int(sys.argv[4])
        write_icc(sys.argv[2], width, height, sys.argv[5])
        print(json.dumps({"expected": adobe_rgb_in_srgb(width, height)}))
    elif command == "write-apng":
        write_apng(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), [int(v) for v in sys.argv[5:9]])
    elif command == "write-apng-over":
        print(json.dumps({"frames": write_apng_over(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))}))
    elif command in ("write", "write-tiff"):
        width, height, alpha = int(sys.argv[3]), int(sys.argv[4]), sys.argv[5] == "1"
        if command == "write-tiff":
            write_tiff(sys.argv[2], width, height, alpha, pages=int(sys.argv[6]) if len(sys.argv) > 6 else 1)
        else:
            write(sys.argv[2], width, height, alpha, [int(v) for v in sys.argv[6:10]] if len(sys.argv) >= 10 else None)
    else:
        print(json.dumps(read_tiff(sys.argv[2]) if command == "read-tiff" else read(sys.argv[2])))
