"""HEIC files with Apple's gain map, for GainMapHEIFTests, made without our code.

`apple_heic.py JPEG OLD NEW` reads the EXIF of the iPhone JPEG at JPEG (libavif's
apple_gainmap_old.jpg: its maker note holds the HDR headroom), and writes two HEICs:

- OLD: pillow-heif's (libheif and x265) RGBA picture with that EXIF as its `Exif` item, whose
  alpha plane, an auxiliary image (`auxl` to the primary), is given Apple's gain map type in its
  `auxC` property (`urn:com:apple:photo:2020:aux:hdrgainmap`), as an iPhone stores its gain map;
- NEW: the same with an XMP item (`mime`, `application/rdf+xml`) describing the gain map item
  (`cdsc`) that states `HDRGainMap:HDRGainMapHeadroom` 4.532783, as newer iPhones write it (the
  value of libavif's apple_gainmap_new.jpg).

The boxes are edited after ISO/IEC 14496-12 (box sizes, `iloc` offsets moved with the data behind
an insertion) and ISO/IEC 23008-12 (`infe` version 2, `auxC`, `iref`).
"""

import io
import struct
import sys

import pillow_heif
from PIL import Image

APPLE = b"urn:com:apple:photo:2020:aux:hdrgainmap\0"
XMP = (b'<x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">'
       b'<rdf:Description rdf:about="" xmlns:HDRGainMap="http://ns.apple.com/HDRGainMap/1.0/">'
       b"<HDRGainMap:HDRGainMapVersion>131072</HDRGainMap:HDRGainMapVersion>"
       b"<HDRGainMap:HDRGainMapHeadroom>4.532783</HDRGainMap:HDRGainMapHeadroom>"
       b"</rdf:Description></rdf:RDF></x:xmpmeta>")
# Bytes between a container's box header and its first child (iinf: its entry count, 2 bytes in
# version 0, else 4).
CONTAINERS = {b"meta": 4, b"iprp": 0, b"ipco": 0, b"iref": 4}


def boxes(data, start, end):
    while start + 8 <= end:
        size, kind = struct.unpack(">I4s", data[start:start + 8])
        yield start, size, kind
        start += size


def children_start(data, start, kind):
    if kind == b"iinf":
        return start + 12 + (2 if data[start + 8] == 0 else 4)
    return start + 8 + CONTAINERS[kind]


def find(data, path):
    """The start of each box along `path` (the first of each type), outermost first."""
    starts, start, end = [], 0, len(data)
    for index, kind in enumerate(path):
        begin, size, _ = next(b for b in boxes(data, start, end) if b[2] == kind)
        starts.append(begin)
        if index + 1 < len(path):
            start, end = children_start(data, begin, kind), begin + size
    return starts


def read(data, at, size):
    return int.from_bytes(data[at:at + size], "big")


def iloc_entries(data):
    """Each item's (item ID, method, where its base offset is, and each extent's offset field),
    with the field sizes."""
    start = find(data, [b"meta", b"iloc"])[-1]
    version = data[start + 8]
    sizes = struct.unpack(">H", data[start + 12:start + 14])[0]
    offset_size, length_size, base_size = sizes >> 12, sizes >> 8 & 15, sizes >> 4 & 15
    index_size = sizes & 15 if version else 0
    id_size = 2 if version < 2 else 4
    at = start + 14
    count = int.from_bytes(data[at:at + id_size], "big")
    at += id_size
    entries = []
    for _ in range(count):
        item = int.from_bytes(data[at:at + id_size], "big")
        at += id_size
        method = 0
        if version:
            method = struct.unpack(">H", data[at:at + 2])[0] & 15
            at += 2
        at += 2
        base_at = at
        at += base_size
        extents = struct.unpack(">H", data[at:at + 2])[0]
        at += 2
        fields = []
        for _ in range(extents):
            at += index_size
            fields.append(at)
            at += offset_size + length_size
        entries.append((item, method, base_at, fields))
    return entries, (offset_size, length_size, base_size, index_size, version, id_size), start


def read(data, at, size):
    return int.from_bytes(data[at:at + size], "big")


def splice(data, path, position, removed, inserted):
    """`removed` bytes at `position` replaced by `inserted`, inside the boxes along `path`: they
    change size by the difference, and `iloc` offsets of data behind it move by it."""
    delta = len(inserted) - removed
    holders = find(data, path)
    data[position:position + removed] = inserted
    for start in holders:
        data[start:start + 4] = struct.pack(">I", read(data, start, 4) + delta)
    entries, (offset_size, _, base_size, _, _, _), _ = iloc_entries(data)
    for _, method, base_at, fields in entries:
        if method != 0:
            continue
        base = read(data, base_at, base_size)
        for field in fields:
            if base + read(data, field, offset_size) >= position + removed:
                if base_size:
                    data[base_at:base_at + base_size] = (base + delta).to_bytes(base_size, "big")
                    break
                data[field:field + offset_size] = (read(data, field, offset_size) + delta).to_bytes(offset_size, "big")


def box_end(data, path):
    start = find(data, path)[-1]
    return start + read(data, start, 4)


def apple_auxiliary(data):
    """The alpha plane's auxC given Apple's gain map type; returns the auxiliary item's ID."""
    auxc = find(data, [b"meta", b"iprp", b"ipco", b"auxC"])[-1]
    urn_end = data.index(b"\0", auxc + 12) + 1
    splice(data, [b"meta", b"iprp", b"ipco", b"auxC"], auxc + 12, urn_end - auxc - 12, APPLE)
    auxl = find(data, [b"meta", b"iref", b"auxl"])[-1]
    return read(data, auxl + 8, 2)


def add_xmp(data, described):
    """An XMP item describing item `described`, its data in an `mdat` box at the end."""
    entries, (offset_size, length_size, base_size, index_size, version, id_size), iloc = iloc_entries(data)
    item = max(entry[0] for entry in entries) + 1
    data += struct.pack(">I4s", 8 + len(XMP), b"mdat") + XMP
    payload = len(data) - len(XMP)
    entry = item.to_bytes(id_size, "big") + (b"\0\0" if version else b"") + b"\0\0" + bytes(base_size) + b"\0\1"
    entry += bytes(index_size) + payload.to_bytes(offset_size, "big") + len(XMP).to_bytes(length_size, "big")
    data[iloc + 14:iloc + 14 + id_size] = (len(entries) + 1).to_bytes(id_size, "big")
    splice(data, [b"meta", b"iloc"], box_end(data, [b"meta", b"iloc"]), 0, entry)
    iinf = find(data, [b"meta", b"iinf"])[-1]
    count_size = 2 if data[iinf + 8] == 0 else 4
    data[iinf + 12:iinf + 12 + count_size] = (read(data, iinf + 12, count_size) + 1).to_bytes(count_size, "big")
    infe = b"\x02\0\0\0" + struct.pack(">HH", item, 0) + b"mime" + b"\0" + b"application/rdf+xml\0"
    splice(data, [b"meta", b"iinf"], box_end(data, [b"meta", b"iinf"]), 0, struct.pack(">I4s", 8 + len(infe), b"infe") + infe)
    splice(data, [b"meta", b"iref"], box_end(data, [b"meta", b"iref"]), 0, struct.pack(">I4sHHH", 14, b"cdsc", item, 1, described))


def main():
    exif = Image.open(sys.argv[1]).info["exif"]
    output = io.BytesIO()
    Image.new("RGBA", (64, 48), (200, 100, 50, 255)).save(output, format="HEIF", exif=exif, quality=90)
    data = bytearray(output.getvalue())
    auxiliary = apple_auxiliary(data)
    with open(sys.argv[2], "wb") as file:
        file.write(data)
    add_xmp(data, auxiliary)
    with open(sys.argv[3], "wb") as file:
        file.write(data)


if __name__ == "__main__":
    pillow_heif.register_heif_opener()
    main()
