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


# glibc's parts and the C++ runtime and zlib, which every glibc system has (scripts/wheel/graft.py).
SYSTEM = {"libc.so.6", "libm.so.6", "libpthread.so.0", "libdl.so.2", "librt.so.1", "libresolv.so.2", "libutil.so.1",
          "libstdc++.so.6", "libgcc_s.so.1", "libz.so.1"}


def test_every_image_library_is_inside_the_wheel():
    """ldd resolves every library the binary needs, all but glibc's and the C++ runtime from the
    wheel's own folder (webimage.libs), not the machine's: the image codecs, lcms2, librsvg and
    what they load."""
    output = subprocess.run(["ldd", webimage.command_path()], capture_output=True, text=True, check=True).stdout
    assert "not found" not in output, output
    vendored = (Path(webimage.__file__).resolve().parent.parent / "webimage.libs").resolve()
    resolved = {parts[0]: Path(parts[2]).resolve() for parts in map(str.split, output.splitlines())
                if len(parts) >= 3 and parts[1] == "=>"}
    outside = {name: path for name, path in resolved.items() if not path.is_relative_to(vendored)}
    assert set(outside) <= SYSTEM, f"from the machine: {outside}"
    for library in ("libturbojpeg", "libpng16", "libwebp", "libavif", "libheif", "libjxl", "liblcms2", "librsvg-2", "libgif",
                    "libglib-2.0"):
        assert any(name.startswith(library) for name in resolved), f"{library} is not linked:\n{output}"


def test_the_console_entry_runs_a_conversion(tmp_path):
    source = REPO / "Tests/WebImageTestSupport/Fixtures/gradient.jpg"
    entry = shutil.which("webimage", path=str(Path(sys.executable).parent))
    subprocess.run([entry, "convert", str(source), str(tmp_path / "out.webp"), "--thumbnail", "32x32"], check=True)
    assert (tmp_path / "out.webp").read_bytes()[8:12] == b"WEBP"


def test_the_wheel_reads_no_video(tmp_path):
    """The wheel is built without the package's Video trait (it vendors no FFmpeg): a video is
    refused with its reason, not decoded and not a crash. The Swift suite, built with the trait,
    decodes the same kind of file."""
    clip = tmp_path / "clip.mp4"
    subprocess.run(["ffmpeg", "-v", "error", "-f", "lavfi", "-i", "color=c=red:s=64x48:r=10:d=1", "-c:v", "libx264",
                    "-pix_fmt", "yuv420p", str(clip)], check=True)
    entry = shutil.which("webimage", path=str(Path(sys.executable).parent))
    refused = subprocess.run([entry, "convert", str(clip), str(tmp_path / "poster.jpg")], capture_output=True, text=True)
    assert refused.returncode != 0
    assert "no coder decodes mp4" in refused.stderr, refused.stderr
    assert not any(name.startswith(("libavcodec", "libavformat"))
                   for name in subprocess.run(["ldd", webimage.command_path()], capture_output=True, text=True).stdout.split())
