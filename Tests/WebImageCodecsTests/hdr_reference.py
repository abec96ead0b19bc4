"""HDR test pictures and their expected SDR rendering, for HDRRenderingTests.

Usage: hdr_reference.py FOLDER
Writes FOLDER/pq.avif and FOLDER/hlg.avif: rows of 4x4 patches of known BT.2020 colours, PQ
(SMPTE ST 2084) and HLG (BT.2100) coded, 12-bit, lossless (avifenc -l, CICP 9/16/0 and 9/18/0:
BT.2020 primaries, identity matrix, so that each decoded sample is the one written), and prints
JSON: for each file, its patches' expected 8-bit sRGB and, for comparison, what showing the
code values as if they were sRGB gives (the dark rendering this replaces). The same patches are
written, each lossless, as a 16-bit PNG with a cICP chunk (PNG Third Edition), a 12-bit HEIF
with the same nclx (pillow-heif's libheif and x265, in RGB), and a 16-bit JPEG XL whose encoded
colour is BT.2100 PQ or HLG (libjxl's cjxl -d 0, the PNG read as that colour space): "others".

The expected values come from colour-science: PQ's EOTF (eotf_ST2084), HLG's inverse OETF and
OOTF (oetf_inverse_BT2100_HLG, ootf_BT2100_HLG for a 1000 cd/m2 display), the BT.2020 to BT.709
conversion (RGB_to_RGB) and sRGB's encoding (eotf_inverse_sRGB). colour-science has no BT.2390
EETF, so the tone curve is written here from ITU-R BT.2390-10, 5.4.1 (the Hermite knee, black
at 0), with the choices HDRRendering documents: the source peak is the picture's largest
component (not below 203 cd/m2), the target peak and SDR white are 203 cd/m2 (BT.2408), and the
curve scales R, G and B by the ratio it gives their largest.
"""

import json
import os
import struct
import subprocess
import sys
import zlib

import colour
import numpy as np
import pillow_heif

SDR_WHITE = 203.0
PATCH = 4


def pq_code(nits):
    return colour.models.eotf_inverse_ST2084(np.asarray(nits, dtype=np.float64))


def eetf(nits, source_peak, target_peak):
    """BT.2390's EETF in PQ's domain from source_peak to target_peak, black at 0."""
    source_code = pq_code(source_peak)
    max_lum = pq_code(target_peak) / source_code
    if max_lum >= 1:
        return nits
    knee = 1.5 * max_lum - 0.5
    e1 = min(pq_code(nits) / source_code, 1.0)
    if e1 < knee:
        return nits
    t = (e1 - knee) / (1 - knee)
    e2 = (2 * t**3 - 3 * t**2 + 1) * knee + (t**3 - 2 * t**2 + t) * (1 - knee) + (-2 * t**3 + 3 * t**2) * max_lum
    return float(colour.models.eotf_ST2084(e2 * source_code))


def render(light):
    """Display light (N x 3, cd/m2, BT.2020) to 8-bit sRGB."""
    peak = max(float(light.max()), SDR_WHITE)
    out = []
    for rgb in light:
        largest = float(rgb.max())
        ratio = eetf(largest, peak, SDR_WHITE) / largest / SDR_WHITE if largest > 0 else 0.0
        bt709 = colour.RGB_to_RGB(rgb * ratio, colour.RGB_COLOURSPACES["ITU-R BT.2020"], colour.RGB_COLOURSPACES["ITU-R BT.709"])
        encoded = colour.models.eotf_inverse_sRGB(np.clip(bt709, 0, 1))
        out.append([int(v) for v in np.round(encoded * 255)])
    return out


def write_png16(path, codes, cicp=None):
    """A 16-bit RGB PNG: one row of PATCH x PATCH patches, 12-bit codes scaled to 16 bits; with
    a cICP chunk (PNG Third Edition: primaries, transfer, matrix, full range) when given."""
    width = PATCH * len(codes)
    row = bytearray([0])
    for code in codes:
        for _ in range(PATCH):
            for value in code:
                row += struct.pack(">H", round(value * 65535 / 4095))
    raw = bytes(row) * PATCH

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", width, PATCH, 16, 2, 0, 0, 0)
    with open(path, "wb") as file:
        described = chunk(b"cICP", bytes(cicp)) if cicp else b""
        file.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + described + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))


def write_heif12(path, codes, transfer):
    """A lossless 12-bit HEIF of the patches with an nclx colr box (pillow-heif's libheif and x265:
    Debian's heif-enc 1.15 writes no nclx), 4:4:4 in RGB (matrix 0), the 12-bit codes as given."""
    row = np.repeat(np.array(codes, dtype=np.uint16), PATCH, axis=0)
    picture = np.repeat(row[np.newaxis, :, :], PATCH, axis=0)
    pillow_heif.options.SAVE_HDR_TO_12_BIT = True
    # 16-bit input is reduced to 12 bits by a shift of 4: the codes are given shifted up by 4.
    image = pillow_heif.from_bytes(mode="RGB;16", size=(picture.shape[1], PATCH), data=(picture << 4).astype("<u2").tobytes())
    image.save(path, quality=-1, chroma=444, matrix_coefficients=0, color_primaries=9, transfer_characteristics=transfer,
               full_range_flag=1)


def make(folder, name, transfer, codes, light):
    png = os.path.join(folder, name + ".png")
    avif = os.path.join(folder, name + ".avif")
    write_png16(png, codes)
    subprocess.run(["avifenc", "-l", "-d", "12", "--cicp", f"9/{transfer}/0", png, avif], check=True, capture_output=True)
    tagged = os.path.join(folder, name + "-cicp.png")
    write_png16(tagged, codes, cicp=[9, transfer, 0, 1])
    heic = os.path.join(folder, name + ".heic")
    write_heif12(heic, codes, transfer)
    jxl = os.path.join(folder, name + ".jxl")
    space = "PeQ" if transfer == 16 else "HLG"
    subprocess.run(["cjxl", "-d", "0", "-x", f"color_space=RGB_D65_202_Rel_{space}", png, jxl], check=True, capture_output=True)
    as_srgb = [[round(v / 4095 * 255) for v in code] for code in codes]
    return {"file": avif, "others": [tagged, heic, jxl], "expected": render(light), "asSRGB": as_srgb}


def main():
    folder = sys.argv[1]
    # PQ: cd/m2 in BT.2020. Greys from 1 to 1000, reference white (203), saturated primaries
    # at 1000 (BT.2020's green and red lie outside sRGB), a skin tone.
    nits = np.array(
        [[0, 0, 0], [1, 1, 1], [10, 10, 10], [50, 50, 50], [100, 100, 100], [203, 203, 203], [400, 400, 400],
         [1000, 1000, 1000], [1000, 0, 0], [0, 1000, 0], [0, 0, 1000], [120, 80, 60]], dtype=np.float64)
    pq_codes = [[int(v) for v in np.round(pq_code(rgb) * 4095)] for rgb in nits]
    pq_light = np.array([colour.models.eotf_ST2084(np.array(code) / 4095) for code in pq_codes])
    # HLG: signal values; 0.75 is BT.2408's reference white.
    hlg_codes = [[int(round(v * 4095)) for v in rgb] for rgb in
                 [[0, 0, 0], [0.25, 0.25, 0.25], [0.5, 0.5, 0.5], [0.75, 0.75, 0.75], [1, 1, 1], [1, 0, 0], [0.5, 0.75, 0.25]]]
    scene = np.array([colour.models.oetf_inverse_BT2100_HLG(np.array(code) / 4095) for code in hlg_codes])
    hlg_light = np.array([colour.models.ootf_BT2100_HLG(rgb, 0, 1000) for rgb in scene])
    tagged = os.path.join(folder, "pq-cicp.png")
    write_png16(tagged, pq_codes, cicp=[9, 16, 0, 1])
    result = {
        "taggedPNG": tagged,
        "pq": make(folder, "pq", 16, pq_codes, pq_light),
        "hlg": make(folder, "hlg", 18, hlg_codes, hlg_light),
        "patch": PATCH,
    }
    print(json.dumps(result))


if __name__ == "__main__":
    main()
