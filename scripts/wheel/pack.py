"""Packs a staged `webimage` package folder into a wheel (PEP 427): the package, its metadata,
the `webimage` console entry and a RECORD of every file's hash. The wheel is tagged for Linux
x86_64; `auditwheel repair` then vendors the binary's shared libraries and sets the manylinux tag.

Usage: pack.py STAGE VERSION OUTPUT_FOLDER   (prints the wheel's path)
"""

import base64
import hashlib
import sys
import zipfile
from pathlib import Path

TAG = "py3-none-linux_x86_64"

METADATA = """Metadata-Version: 2.1
Name: webimage
Version: {version}
Summary: swift-web-image's webimage command: img2dataset's download() on a Swift image stack, on one machine, Spark or Ray
License: Apache-2.0
Requires-Python: >=3.8
Provides-Extra: pyspark
Requires-Dist: pyspark>=3.3; extra == "pyspark"
Provides-Extra: ray
Requires-Dist: ray>=2.9; extra == "ray"

`from webimage import download` takes img2dataset's arguments; `webimage` on PATH is the command.
"""

WHEEL = f"""Wheel-Version: 1.0
Generator: swift-web-image scripts/wheel/pack.py
Root-Is-Purelib: false
Tag: {TAG}
"""

ENTRY_POINTS = """[console_scripts]
webimage = webimage._command:main
"""


def digest(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def main(stage: Path, version: str, output: Path) -> Path:
    dist_info = f"webimage-{version}.dist-info"
    wheel = output / f"webimage-{version}-{TAG}.whl"
    records = []
    with zipfile.ZipFile(wheel, "w", zipfile.ZIP_DEFLATED) as archive:
        def add(name: str, data: bytes, mode: int = 0o644):
            info = zipfile.ZipInfo(name, date_time=(2026, 1, 1, 0, 0, 0))
            info.external_attr = (0o100000 | mode) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, data)
            records.append(f"{name},{digest(data)},{len(data)}")

        for path in sorted(p for p in stage.rglob("*") if p.is_file() and "__pycache__" not in p.parts):
            add(path.relative_to(stage).as_posix(), path.read_bytes(), path.stat().st_mode & 0o777)
        add(f"{dist_info}/METADATA", METADATA.format(version=version).encode())
        add(f"{dist_info}/WHEEL", WHEEL.encode())
        add(f"{dist_info}/entry_points.txt", ENTRY_POINTS.encode())
        records.append(f"{dist_info}/RECORD,,")
        archive.writestr(f"{dist_info}/RECORD", "\n".join(records) + "\n")
    return wheel


if __name__ == "__main__":
    print(main(Path(sys.argv[1]), sys.argv[2], Path(sys.argv[3])))
