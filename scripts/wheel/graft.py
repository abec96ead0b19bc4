"""Adds to a repaired wheel the shared libraries auditwheel leaves to the system.

manylinux policies assume a desktop's libraries (GLib, X11, expat, libffi, ...) on every machine and
leave them out; a container's minimal root has none of them, and librsvg and cairo need them. Each
library the binary loads from outside the wheel, except glibc's own and the C++ runtime every
Debian and manylinux system has, is copied into the wheel's `webimage.libs` under its soname with
RPATH `$ORIGIN` (the binary's RPATH already names that folder), and the RECORD rewritten.

Usage: graft.py WHEEL PATCHELF
"""

import base64
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

# What every glibc system has: the C library and its parts, and the C++ runtime and zlib that
# Debian's minimal root (apt needs them) and every manylinux policy hold.
SYSTEM = {
    "linux-vdso.so.1", "ld-linux-x86-64.so.2", "libc.so.6", "libm.so.6", "libpthread.so.0", "libdl.so.2", "librt.so.1",
    "libresolv.so.2", "libutil.so.1", "libstdc++.so.6", "libgcc_s.so.1", "libz.so.1",
}


def digest(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def outside(binary: Path, libs: Path) -> dict:
    """soname → path of each library ldd resolves outside `libs`."""
    found = {}
    for line in subprocess.run(["ldd", str(binary)], capture_output=True, text=True, check=True).stdout.splitlines():
        parts = line.split()
        if len(parts) >= 3 and parts[1] == "=>":
            name, path = parts[0], os.path.realpath(parts[2])
            if name not in SYSTEM and not Path(path).is_relative_to(libs.resolve()):
                found[name] = path
    return found


def main(wheel: Path, patchelf: str) -> None:
    with tempfile.TemporaryDirectory() as work:
        root = Path(work)
        with zipfile.ZipFile(wheel) as archive:
            archive.extractall(root)
            modes = {info.filename: info.external_attr for info in archive.infolist()}
        libs = root / "webimage.libs"
        binary = root / "webimage" / "bin" / "webimage"
        binary.chmod(0o755)
        for name, path in sorted(outside(binary, libs).items()):
            target = libs / name
            shutil.copyfile(path, target)
            subprocess.run([patchelf, "--set-rpath", "$ORIGIN", str(target)], check=True)
            print(f"grafted {name} from {path}", file=sys.stderr)
        left = outside(binary, libs)
        if left:
            raise SystemExit(f"still loaded from the system: {left}")
        record = next(root.glob("*.dist-info/RECORD"))
        files = sorted(p for p in root.rglob("*") if p.is_file() and p != record)
        lines = [f"{p.relative_to(root).as_posix()},{digest(p.read_bytes())},{p.stat().st_size}" for p in files]
        lines.append(f"{record.relative_to(root).as_posix()},,")
        record.write_text("\n".join(lines) + "\n")
        with zipfile.ZipFile(wheel, "w", zipfile.ZIP_DEFLATED) as archive:
            for path in files + [record]:
                name = path.relative_to(root).as_posix()
                info = zipfile.ZipInfo(name, date_time=(2026, 1, 1, 0, 0, 0))
                info.external_attr = modes.get(name, (0o100644 | (path.stat().st_mode & 0o777)) << 16)
                info.compress_type = zipfile.ZIP_DEFLATED
                archive.writestr(info, path.read_bytes())


if __name__ == "__main__":
    main(Path(sys.argv[1]), sys.argv[2])
