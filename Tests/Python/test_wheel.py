"""The installed wheel: its command, its version and its vendored libraries."""

import re
import shutil
import subprocess
import sys
from pathlib import Path

import webimage

REPO = Path(__file__).resolve().parents[2]


def test_the_installed_copy_is_tested():
    """The package and its binary come from the virtual environment, not the source tree."""
    assert Path(webimage.__file__).resolve().is_relative_to(Path(sys.prefix).resolve())
    assert Path(webimage.command_path()).resolve().is_relative_to(Path(sys.prefix).resolve())


def test_one_version():
    """`webimage --version` (the console entry on PATH), `webimage.__version__` and the package's
    WebImageRelease.version are one."""
    release = re.search(r'static let version = "([^"]+)"', (REPO / "Sources/WebImageCore/Release.swift").read_text())[1]
    entry = shutil.which("webimage", path=str(Path(sys.executable).parent))
    assert entry is not None, "the console entry is not in the environment's bin"
    shown = subprocess.run([entry, "--version"], capture_output=True, text=True, check=True).stdout.strip()
    assert shown == webimage.__version__ == release


def test_every_image_library_is_inside_the_wheel():
    """ldd resolves every library the binary needs; the image codecs, lcms2 and librsvg from the
    wheel's own folder (auditwheel's webimage.libs), not the machine's."""
    output = subprocess.run(["ldd", webimage.command_path()], capture_output=True, text=True, check=True).stdout
    assert "not found" not in output, output
    vendored = Path(webimage.__file__).resolve().parent.parent / "webimage.libs"
    for library in ("libturbojpeg", "libpng16", "libwebp", "libavif", "libheif", "libjxl", "liblcms2", "librsvg-2", "libgif"):
        lines = [line for line in output.splitlines() if line.strip().startswith(library)]
        assert lines, f"{library} is not linked:\n{output}"
        assert all(str(vendored) in line for line in lines), f"{library} is not the wheel's:\n{output}"


def test_the_console_entry_runs_a_conversion(tmp_path):
    source = REPO / "Tests/WebImageTestSupport/Fixtures/gradient.jpg"
    entry = shutil.which("webimage", path=str(Path(sys.executable).parent))
    subprocess.run([entry, "convert", str(source), str(tmp_path / "out.webp"), "--thumbnail", "32x32"], check=True)
    assert (tmp_path / "out.webp").read_bytes()[8:12] == b"WEBP"
