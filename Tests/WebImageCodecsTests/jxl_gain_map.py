"""JPEG XL files with a gain map box (`jhgm`), for GainMapJXLTests, made without our code.

`jxl_gain_map.py DIRECTORY` writes, with Pillow and Debian's cjxl (0.7, which knows no gain map):

- iso.bin: ISO 21496-1 metadata of the values libavif's test fills (`FillTestGainMapMetadata(true)`
  in avifgainmaptest.cc; flags 0xC0: one set of values per channel, the base image's colour space),
  laid out as libavif writes it after its `tmap` item's version byte;
- gain-map.jxl: a 32x24 picture, read by cjxl as BT.2100 PQ (an HDR base, as the metadata says:
  libjxl's gain maps lead from HDR to SDR), in a container (ISO/IEC 18181-2: the signature box,
  `ftyp`, the codestream in `jxlc`) with a `jhgm` box before the codestream: the bundle as libjxl's
  `JxlGainMapWriteBundle` (lib/extras/gain_map.cc) writes it: version 0, the metadata's size
  (big-endian 16 bits) and iso.bin, the colour encoding's size (1) and a default (sRGB) encoding
  (its all_default bit, padded to a byte), the compressed ICC profile's size (big-endian 32 bits,
  0), and the gain map image, cjxl's bare codestream of a 16x12 grey picture;
- after-codestream.jxl: the same bundle after the codestream, the picture this time sRGB;
- bare.jxl: cjxl's bare codestream of the PQ picture (no container, so no boxes);
- version-1.jxl: the bundle's version byte 1;
- minimum-version-1.jxl: the metadata's minimum version 1;
- cut-bundle.jxl: the metadata's size 4 bytes more than the box holds;
- no-image.jxl: the bundle without the gain map image.
"""

import struct
import subprocess
import sys
import tempfile
from pathlib import Path

from PIL import Image

SIGNATURE = struct.pack(">I", 12) + b"JXL " + b"\x0d\x0a\x87\x0a"


def box(kind: bytes, payload: bytes) -> bytes:
    return struct.pack(">I", 8 + len(payload)) + kind + payload


def fraction(numerator: int, denominator: int, signed: bool) -> bytes:
    return struct.pack(">iI" if signed else ">II", numerator, denominator)


def iso_metadata(minimum_version: int = 0) -> bytes:
    # minimum and writer versions, flags, base and alternate headroom, then per channel c the
    # gain map's minimum -1/(c+1) and maximum (11+c)/(c+1), gamma 1/(c+1), base offset 10c/1000
    # and alternate offset 20c/1000: FillTestGainMapMetadata(base_rendition_is_hdr: true).
    data = struct.pack(">HHB", minimum_version, 0, 0xC0) + fraction(6, 2, False) + fraction(0, 1, False)
    for channel in range(3):
        data += fraction(-1, channel + 1, True) + fraction(11 + channel, channel + 1, True) + fraction(1, channel + 1, False)
        data += fraction(10 * channel, 1000, True) + fraction(20 * channel, 1000, True)
    return data


def bundle(metadata: bytes, gain_map: bytes, version: int = 0, declared_metadata_size: int | None = None) -> bytes:
    size = len(metadata) if declared_metadata_size is None else declared_metadata_size
    return bytes([version]) + struct.pack(">H", size) + metadata + bytes([1, 0x01]) + struct.pack(">I", 0) + gain_map


def cjxl(picture: Image.Image, work: Path, name: str, *options: str) -> bytes:
    png, jxl = work / f"{name}.png", work / f"{name}.jxl"
    picture.save(png)
    subprocess.run(["cjxl", str(png), str(jxl), "-d", "0", *options], check=True, capture_output=True)
    data = jxl.read_bytes()
    if not data.startswith(b"\xff\x0a"):
        sys.exit(f"cjxl wrote a container for {name}: a bare codestream was expected")
    return data


def main(directory: Path) -> None:
    with tempfile.TemporaryDirectory() as scratch:
        work = Path(scratch)
        picture = Image.merge("RGB", [Image.linear_gradient("L").resize((32, 24)).rotate(angle) for angle in (0, 90, 180)])
        codestream = cjxl(picture, work, "picture", "-x", "color_space=RGB_D65_202_Rel_PeQ")
        sdr = cjxl(picture, work, "sdr")
        gain_map = cjxl(Image.linear_gradient("L").resize((16, 12)), work, "gain-map")
    metadata = iso_metadata()
    head = SIGNATURE + box(b"ftyp", b"jxl " + struct.pack(">I", 0) + b"jxl ")
    files = {
        "gain-map.jxl": head + box(b"jhgm", bundle(metadata, gain_map)) + box(b"jxlc", codestream),
        "after-codestream.jxl": head + box(b"jxlc", sdr) + box(b"jhgm", bundle(metadata, gain_map)),
        "bare.jxl": codestream,
        "version-1.jxl": head + box(b"jhgm", bundle(metadata, gain_map, version=1)) + box(b"jxlc", codestream),
        "minimum-version-1.jxl": head + box(b"jhgm", bundle(iso_metadata(minimum_version=1), gain_map)) + box(b"jxlc", codestream),
        "cut-bundle.jxl": head + box(b"jhgm", bundle(metadata, b"", declared_metadata_size=len(metadata) + 4)) + box(b"jxlc", codestream),
        "no-image.jxl": head + box(b"jhgm", bundle(metadata, b"")) + box(b"jxlc", codestream),
    }
    (directory / "iso.bin").write_bytes(metadata)
    for name, data in files.items():
        (directory / name).write_bytes(data)


if __name__ == "__main__":
    main(Path(sys.argv[1]))
