#!/usr/bin/env python3
"""Side-by-side comparisons: ours and a peer tool on the same input, in one run.

Each comparison names a workload, prepares its input once, then runs our side and the peer side
alternately (REPEATS times each, so drift on a shared machine hits both alike). Every side prints
one JSON line {"operations": N, "seconds": S}; the runner reports the median rate of each side and
the ratio ours / peer. Later issues add comparisons to COMPARISONS.

Usage: scripts/compare/run.py [NAME ...] [--repeats N] [--json FILE]
"""
import argparse
import functools
import json
import os
import socket
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parents[2]
BENCHMARKS = ROOT / "Benchmarks"
WORKLOADS = BENCHMARKS / ".build" / "release" / "CompareWorkloads"
PEERS = Path(__file__).resolve().parent / "peers"


@dataclass
class Side:
    label: str
    command: Callable[[Path], list]


@dataclass
class Comparison:
    name: str
    description: str
    prepare: Callable[[Path], Path]
    ours: Side
    peer: Side
    pip_requirements: tuple = ()
    extra_peers: tuple = ()
    system_packages: tuple = ()


# Run after each comparison, in reverse order: stops servers that a prepare step started.
CLEANUPS: list = []


def mixed_headers(workdir: Path) -> Path:
    """1 MiB of 64-byte records, each starting with one format's signature or with none."""
    signatures = [
        b"\xff\xd8\xff\xe0", b"\x89PNG\r\n\x1a\n", b"GIF89a", b"RIFF\x10\x00\x00\x00WEBPVP8 ", b"II*\x00",
        b"%PDF-1.7", b"\x00\x00\x00\x1cftypmif1\x00\x00\x00\x00mif1avif", b"BM6\x00", b"\x00\x00\x01\x00\x01\x00",
        b"<html><body>not an image</body></html>",
    ]
    records = bytearray()
    index = 0
    while len(records) < 1 << 20:
        signature = signatures[index % len(signatures)]
        records += signature + b" " * (64 - len(signature))
        index += 1
    path = workdir / "mixed-headers.bin"
    path.write_bytes(bytes(records))
    return path


def diskcache_spec(count: int, size: int) -> Callable[[Path], Path]:
    def prepare(workdir: Path) -> Path:
        path = workdir / f"diskcache-{count}x{size}.txt"
        path.write_text(f"{count} {size}")
        return path
    return prepare


def prefetch_comparison(name: str, count: int, into: str, mode: str, peer_format: str, extra_peers: tuple = ()) -> Comparison:
    """`webimage prefetch -j 16` (into the cache, or with `-o DIR --no-cache` in files or tar mode)
    against img2dataset writing the same URLs (16 threads, no resize, in files or webdataset)."""
    ours = "webimage prefetch -j 16" + ("" if mode == "cache" else f" -o DIR --output-format {mode} --no-cache")
    return Comparison(
        name=name,
        description=f"{count:,} distinct 50 KB JPEGs from a local nginx {into}, 16 at a time, whole processes timed",
        prepare=nginx_origin(count, 50 * 1024, files=jpeg_files(count, 50 * 1024), extension="jpg"),
        ours=Side(ours, lambda urls: [sys.executable, str(PEERS / "prefetch_webimage.py"), str(urls), "16", mode]),
        peer=Side(f"img2dataset --output_format {peer_format} (16 threads, no resize)",
                  lambda urls: [sys.executable, str(PEERS / "prefetch_img2dataset.py"), str(urls), "16", peer_format]),
        extra_peers=extra_peers,
        pip_requirements=("img2dataset", "pillow"),
        system_packages=("nginx", "curl") if extra_peers else ("nginx",),
    )


def photo_jpegs(count: int) -> Callable[[Path], None]:
    """COUNT distinct photo-like 1024x768 JPEGs of about 150 KB: eight smooth pictures (gradients,
    shapes and grain, q88), each copy with its own comment segment."""
    def write(root: Path):
        from photos import photo_jpeg
        bases = [photo_jpeg(seed, 1024, 768, discs=40, radii=(20, 200), blur=6) for seed in range(8)]
        for index in range(count):
            base = bases[index % len(bases)]
            comment = f"copy {index}".encode()
            segment = b"\xff\xfe" + (len(comment) + 2).to_bytes(2, "big") + comment
            (root / f"{index}.jpg").write_bytes(base[:2] + segment + base[2:])
    return write


def caption_csv(count: int) -> Callable[[Path], Path]:
    """nginx serving COUNT photo-like JPEGs, and a CSV of url,caption with awkward captions (commas,
    quotes, UTF-8) for them: img2dataset's input."""
    serve = nginx_origin(count, 0, files=photo_jpegs(count), extension="jpg")

    def prepare(workdir: Path) -> Path:
        import csv
        urls = serve(workdir).read_text().split()
        path = workdir / "captions.csv"
        with open(path, "w", newline="") as handle:
            writer = csv.writer(handle)
            writer.writerow(["url", "caption"])
            for index, url in enumerate(urls):
                writer.writerow([url, f'photo {index}, "a caption" with a comma — café'])
        return path
    return prepare


def dataset_comparison(name: str, count: int) -> Comparison:
    """img2dataset's standard job on both sides (issue 38): a caption CSV in, 256 px center crops
    as jpg q95 into webdataset shards out, both cores each."""
    shard = str(count // 2)
    return Comparison(
        name=name,
        description=f"{count:,} photo-like 1024x768 JPEGs (about 150 KB) from a local nginx by a caption CSV, "
                    "--image-size 256 --resize-mode center_crop, jpg q95, webdataset; both cores each, whole processes timed",
        prepare=caption_csv(count),
        ours=Side("webimage prefetch -j 32 (webdataset)", lambda csv: [sys.executable, str(PEERS / "dataset_webimage.py"), str(csv), shard]),
        peer=Side("img2dataset 2 processes x 16 threads",
                  lambda csv: [sys.executable, str(PEERS / "dataset_img2dataset.py"), str(csv), shard]),
        extra_peers=(Side("the floor: TurboJPEG decode to RGBA at the smallest covering DCT step (3/8), 2 processes",
                          lambda csv: [sys.executable, str(PEERS / "dataset_floor.py"), str(csv)]),
                     Side("the codec floor: that decode, then TurboJPEG encoding a 256x256 crop at q95, 2 processes",
                          lambda csv: [sys.executable, str(PEERS / "dataset_floor.py"), str(csv), "codec"]),
                     Side("the planar codec floor: the decode straight to YCbCr planes at the job's DCT step (1/2, "
                          "a SIMD one), the encode of their 256x256 centre, 2 processes",
                          lambda csv: [sys.executable, str(PEERS / "dataset_floor.py"), str(csv), "planar"]),),
        pip_requirements=("img2dataset", "pillow"),
        system_packages=("nginx",),
    )


def installed_wheel(prepare: Callable[[Path], Path]) -> Callable[[Path], Path]:
    """The input of `prepare`, after the wheel (scripts/build-wheel.sh) is installed into this
    environment: the Python side of ours is the package a user installs."""
    def wrapped(workdir: Path) -> Path:
        wheel = subprocess.run([str(ROOT / "scripts" / "build-wheel.sh")], check=True, capture_output=True, text=True).stdout.strip()
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--force-reinstall", "--no-deps", wheel], check=True)
        return prepare(workdir)
    return wrapped


def distributor_comparison(distributor: str, count: int) -> Comparison:
    """The same Python call, img2dataset's `download(...)` arguments, to `webimage.download` and to
    `img2dataset.download`, on one distributor (issue 59)."""
    shard = str(count // 4)
    side = lambda tool: lambda csv: [sys.executable, str(PEERS / "download_python.py"), tool, distributor, str(csv), shard]
    return Comparison(
        name=f"distributor-{distributor}",
        description=f"{count:,} photo-like 1024x768 JPEGs from a local nginx by a caption CSV, download(..., "
                    f"distributor=\"{distributor}\"), 2 processes x 16 threads, 256 px center crops, jpg q95, webdataset "
                    f"shards of {shard}; the call timed, its engine started before",
        prepare=installed_wheel(caption_csv(count)),
        ours=Side(f"webimage.download ({distributor})", side("webimage")),
        peer=Side(f"img2dataset.download ({distributor})", side("img2dataset")),
        pip_requirements=("img2dataset", "pillow", "pyspark==4.0.5", "ray==2.60.0"),
        system_packages=("nginx", "openjdk-17-jre-headless"),
    )


def internet(hosts: int, urls: int) -> Callable[[Path], Path]:
    """Starts internet.py (a DNS server on 127.0.0.53 and an origin of HOSTS behaving hosts on
    127.0.0.1) and returns its list of URLS rows; its resolv.conf is beside the list."""
    def prepare(workdir: Path) -> Path:
        server = subprocess.Popen([sys.executable, str(Path(__file__).resolve().parent / "internet.py"), str(workdir),
                                   str(free_port()), str(hosts), str(urls)], stdout=subprocess.PIPE, text=True)
        CLEANUPS.append(lambda: (server.kill(), server.wait()))
        if server.stdout.readline().strip() != "ready":
            raise RuntimeError("internet.py did not start (it needs port 53 on 127.0.0.53: run as root)")
        return workdir / "crawl.csv"
    return prepare


def crawl_comparison(name: str, hosts: int, urls: int) -> Comparison:
    """img2dataset's standard job on a list spread over many hosts behind a slow DNS, some of them
    dead, refusing, silent, slow, failing or redirecting (issue 58)."""
    def side(tool: str) -> Callable[[Path], list]:
        return lambda csv: [sys.executable, str(PEERS / "crawl_side.py"), tool, str(csv), str(csv.parent / "resolv.conf")]
    return Comparison(
        name=name,
        description=f"{urls:,} rows over {hosts:,} host names looked up through a DNS server on loopback (10-150 ms a "
                    "lookup, 4% NXDOMAIN), 20-250 ms to each host's first byte; hosts refuse, stay silent, stall, drip, "
                    "answer 404/500/429 or a page, redirect or close mid-body; 640x480 JPEGs to 256 px center crops, "
                    "webdataset; 256 at once on each side, timeout 10 s, no retries",
        prepare=internet(hosts, urls),
        ours=Side("webimage prefetch -j 256", side("webimage")),
        peer=Side("img2dataset 2 processes x 128 threads", side("img2dataset")),
        extra_peers=(Side("the network's floor: the same rows fetched 256 at once, nothing else done", side("floor")),),
        pip_requirements=("img2dataset", "pillow"),
        system_packages=("util-linux",),
    )


def diskcache_comparison(name: str, count: int, size: int) -> Comparison:
    """Ours against Python's diskcache: COUNT sets then COUNT gets of SIZE-byte values, 3 rounds."""
    return Comparison(
        name=name,
        description=f"disk cache: {count:,} sets then {count:,} gets of {size // 1024} KB values in an empty cache, 3 rounds",
        prepare=diskcache_spec(count, size),
        ours=Side("swift-web-image DiskCache", lambda spec: [str(WORKLOADS), "diskcache", str(spec), "3"]),
        peer=Side("python diskcache", lambda spec: [sys.executable, str(PEERS / "diskcache_python.py"), str(spec), "3"]),
        pip_requirements=("diskcache",),
    )


def photo(width: int, height: int) -> Callable[[Path], Path]:
    """A WIDTHxHEIGHT opaque PNG with gradients and noise, like a photograph to a resampler."""
    def prepare(workdir: Path) -> Path:
        from PIL import Image
        noise = Image.effect_noise((width, height), 40).convert("L")
        red = Image.linear_gradient("L").resize((width, height))
        blue = red.transpose(Image.Transpose.ROTATE_90).resize((width, height))
        path = workdir / f"photo-{width}x{height}.png"
        Image.merge("RGB", (red, noise, blue)).convert("RGBA").save(path, compress_level=1)
        return path
    return prepare


def translucent_photo(width: int, height: int) -> Callable[[Path], Path]:
    """photo() with an alpha channel: a gradient from transparent to opaque, with noise, so that
    every alpha level is there (the straight-alpha path of a transform)."""
    def prepare(workdir: Path) -> Path:
        from PIL import Image
        path = photo(width, height)(workdir)
        image = Image.open(path)
        alpha = Image.linear_gradient("L").transpose(Image.Transpose.ROTATE_90).resize((width, height))
        noise = Image.effect_noise((width, height), 30).convert("L")
        image.putalpha(Image.blend(alpha, noise, 0.3))
        translucent = workdir / f"translucent-{width}x{height}.png"
        image.save(translucent, compress_level=1)
        return translucent
    return prepare


def display_p3_photo(width: int, height: int) -> Callable[[Path], Path]:
    """A WIDTHxHEIGHT photo-like JPEG (q90) with a Display P3 profile, as phones write them."""
    def prepare(workdir: Path) -> Path:
        from PIL import Image
        sys.path.insert(0, str(ROOT / "scripts" / "fixtures"))
        import make_color
        source = encoded_photo(width, height, "PNG")(workdir)
        path = workdir / f"p3-{width}x{height}.jpg"
        profile = make_color.icc_profile("Display P3", make_color.P3, make_color.D65, make_color.SRGB_CURVE)
        Image.open(source).convert("RGB").save(path, quality=90, icc_profile=profile)
        return path
    return prepare


def encoded_photo(width: int, height: int, format: str, **save) -> Callable[[Path], Path]:
    """A WIDTHxHEIGHT photograph-like image (smooth gradients, noise, hard edges) in FORMAT."""
    def prepare(workdir: Path) -> Path:
        from PIL import Image, ImageDraw, ImageFilter
        noise = Image.effect_noise((width, height), 30).convert("L").filter(ImageFilter.GaussianBlur(1))
        red = Image.linear_gradient("L").resize((width, height))
        blue = red.transpose(Image.Transpose.ROTATE_90).resize((width, height))
        image = Image.merge("RGB", (red, noise, blue))
        draw = ImageDraw.Draw(image)
        for index in range(20):
            x, y = (index * 97) % width, (index * 61) % height
            draw.rectangle((x, y, x + width // 10, y + height // 12), fill=((index * 40) % 256, 200, (index * 90) % 256))
        if format == "GIF":
            image = image.quantize(256)
        if format == "HEIF":
            import pillow_heif
            pillow_heif.register_heif_opener()
        path = workdir / f"photo-{width}x{height}.{format.lower()}"
        if format == "JXL":
            # cjxl (libjxl-tools) at its defaults: distance 1, effort 7.
            image.save(workdir / "photo-source.png")
            subprocess.run(["cjxl", str(workdir / "photo-source.png"), str(path)], check=True, capture_output=True)
            return path
        image.save(path, format, **save)
        return path
    return prepare


def smooth_photo(width: int, height: int, **save) -> Callable[[Path], Path]:
    """A WIDTHxHEIGHT JPEG with no grain: gradients and soft-edged shapes, the kind of picture
    whose entropy-coded data is small, so that decoding it costs little besides the DCT."""
    def prepare(workdir: Path) -> Path:
        from PIL import Image, ImageDraw, ImageFilter
        red = Image.linear_gradient("L").resize((width, height))
        blue = red.transpose(Image.Transpose.ROTATE_90).resize((width, height))
        green = Image.radial_gradient("L").resize((width, height))
        image = Image.merge("RGB", (red, green, blue))
        draw = ImageDraw.Draw(image)
        for index in range(20):
            x, y = (index * 97) % width, (index * 61) % height
            draw.ellipse((x, y, x + width // 8, y + height // 6), fill=((index * 40) % 256, 180, (index * 90) % 256))
        path = workdir / f"smooth-{width}x{height}.jpeg"
        image.filter(ImageFilter.GaussianBlur(3)).save(path, "JPEG", **save)
        return path
    return prepare


def thumbnail_comparison(name: str, what: str, prepare: Callable[[Path], Path]) -> Comparison:
    return Comparison(
        name=name,
        description=f"{what} to at most 300 px, 50 rounds, pinned to one core (images per second)",
        prepare=prepare,
        ours=Side("swift-web-image decode with a thumbnail size", lambda path: ["taskset", "-c", "0", str(WORKLOADS), "thumbnail", str(path), "50"]),
        peer=Side("libvips thumbnail (pyvips, what vipsthumbnail runs)", lambda path: ["taskset", "-c", "0", sys.executable, str(PEERS / "thumbnail_vips.py"), str(path), "50"]),
        extra_peers=(
            Side("Pillow draft + thumbnail", lambda path: ["taskset", "-c", "0", sys.executable, str(PEERS / "decode_pillow.py"), "thumbnail", str(path), "50"]),
            Side("libjpeg-turbo alone at 1/8, no resampling (the floor)",
                 lambda path: ["taskset", "-c", "0", sys.executable, str(PEERS / "thumbnail_turbojpeg.py"), str(path), "50"]),
        ),
        pip_requirements=("pillow", "pyvips"),
        system_packages=("libvips42",),
    )


def built_peer(source: str, *flags: str) -> Path:
    """A C program of peers/ (SOURCE) compiled with `cc -O2` and FLAGS (its libraries) into the
    temporary folder."""
    binary = Path(tempfile.gettempdir()) / f"webimage-{Path(source).stem.replace('_', '-')}"
    subprocess.run(["cc", "-O2", "-o", str(binary), str(PEERS / source), *flags], check=True)
    return binary


@functools.lru_cache(maxsize=None)
def codec_floor() -> str:
    """peers/codec_floor.c compiled against the system libheif and libjxl (once per run)."""
    flags = subprocess.run(["pkg-config", "--cflags", "--libs", "libheif", "libjxl"], check=True, capture_output=True, text=True).stdout
    return str(built_peer("codec_floor.c", *flags.split()))


def decode_comparison(name: str, format: str, **save) -> Comparison:
    return Comparison(
        name=f"decode-{name}",
        description=f"decode a 1920x1280 {name.upper()} to pixels, 20 rounds, one thread each (megapixels per second)",
        prepare=encoded_photo(1920, 1280, format, **save),
        ours=Side(f"swift-web-image CodersManager ({name})", lambda path: ["taskset", "-c", "0", str(WORKLOADS), "decode", str(path), "20"]),
        peer=Side("Pillow Image.open + load", lambda path: ["taskset", "-c", "0", sys.executable, str(PEERS / "decode_pillow.py"), "decode", str(path), "20"]),
        pip_requirements=("pillow",),
    )


def resize_comparison(name: str, what: str, prepare: Callable[[Path], Path], extra_peers: tuple = (),
                      pip_requirements: tuple = ("pillow",), system_packages: tuple = ()) -> Comparison:
    return Comparison(
        name=name,
        description=f"resize {what} to 300x200 with Lanczos3, decoded beforehand, 10 rounds",
        prepare=prepare,
        ours=Side("swift-web-image ResizingTransformer", lambda path: [str(WORKLOADS), "resize", str(path), "10"]),
        peer=Side("Pillow resize LANCZOS", lambda path: [sys.executable, str(PEERS / "transform_pillow.py"), "resize", str(path), "10"]),
        extra_peers=extra_peers,
        pip_requirements=pip_requirements,
        system_packages=system_packages,
    )


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_for_listener(port: int, attempts: int = 100):
    """nginx returns before its worker listens: connect until it answers (bounded)."""
    for _ in range(attempts):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.1).close()
            return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"nothing listens on 127.0.0.1:{port}")


def jpeg_files(count: int, size: int) -> Callable[[Path], None]:
    """COUNT distinct, valid JPEGs of about SIZE bytes: one noise picture, each copy with its own comment."""
    def write(root: Path):
        from io import BytesIO
        from PIL import Image
        side = 64
        while True:
            buffer = BytesIO()
            Image.effect_noise((side, side), 60).convert("RGB").save(buffer, "JPEG", quality=90)
            if len(buffer.getvalue()) >= size or side > 2048:
                break
            side += 16
        base = buffer.getvalue()
        for index in range(count):
            comment = f"copy {index}".encode()
            segment = b"\xff\xfe" + (len(comment) + 2).to_bytes(2, "big") + comment
            (root / f"{index}.jpg").write_bytes(base[:2] + segment + base[2:])
    return write


def random_png_files(count: int, size: int) -> Callable[[Path], None]:
    """COUNT distinct files of SIZE bytes that start like a PNG (for transfer-only comparisons)."""
    def write(root: Path):
        for index in range(count):
            (root / f"{index}.png").write_bytes(b"\x89PNG\r\n\x1a\n" + os.urandom(size - 8))
    return write


def nginx_origin(count: int, size: int, files: Callable = None, extension: str = "png") -> Callable[[Path], Path]:
    """Starts nginx on 127.0.0.1 serving COUNT distinct files of SIZE bytes; returns their URL list."""
    def prepare(workdir: Path) -> Path:
        # nginx's workers run as an unprivileged user when it starts as root: open the path to them.
        for directory in (workdir.parent, workdir):
            directory.chmod(0o755)
        root = workdir / "www"
        root.mkdir()
        (files or random_png_files(count, size))(root)
        port = free_port()
        config = workdir / "nginx.conf"
        config.write_text(f"""worker_processes 1;
pid {workdir}/nginx.pid;
error_log {workdir}/error.log;
events {{ worker_connections 1024; }}
http {{
    access_log off;
    sendfile on;
    keepalive_requests 1000000;
    types {{ image/png png; image/jpeg jpg; }}
    server {{ listen 127.0.0.1:{port}; root {root}; }}
}}
""")
        subprocess.run(["nginx", "-c", str(config), "-p", str(workdir)], check=True)
        wait_for_listener(port)
        CLEANUPS.append(lambda: subprocess.run(["nginx", "-c", str(config), "-p", str(workdir), "-s", "stop"], check=False))
        urls = workdir / "urls.txt"
        urls.write_text("\n".join(f"http://127.0.0.1:{port}/{index}.{extension}" for index in range(count)) + "\n")
        return urls
    return prepare


COMPARISONS = [
    Comparison(
        name="sniff",
        description="format sniffing of 1 MiB of mixed 64-byte headers, 20 rounds",
        prepare=mixed_headers,
        ours=Side("swift-web-image ImageFormat", lambda data: [str(WORKLOADS), "sniff", str(data), "20"]),
        peer=Side("python filetype", lambda data: [sys.executable, str(PEERS / "sniff_filetype.py"), str(data), "20"]),
        pip_requirements=("filetype",),
    ),
    Comparison(
        name="download",
        description="2,000 distinct 50 KB files from a local nginx, 16 in flight",
        prepare=nginx_origin(2000, 50 * 1024),
        ours=Side("swift-web-image ImageDownloader", lambda urls: [str(WORKLOADS), "download", str(urls), "16"]),
        peer=Side("curl --parallel --parallel-max 16", lambda urls: [sys.executable, str(PEERS / "curl_parallel.py"), str(urls), "16"]),
        extra_peers=(
            Side("wrk -c16 -t1 (loopback limit)", lambda urls: [sys.executable, str(PEERS / "wrk_rate.py"), str(urls), "16"]),
            Side("AsyncHTTPClient alone, 16 worker tasks", lambda urls: [str(WORKLOADS), "download-ahc", str(urls), "16"]),
            Side(
                "AsyncHTTPClient alone, configured as the downloader's",
                lambda urls: [str(WORKLOADS), "download-ahc-configured", str(urls), "16"],
            ),
            Side(
                "AsyncHTTPClient alone through a delegate, as the downloader reads",
                lambda urls: [str(WORKLOADS), "download-ahc-delegate", str(urls), "16"],
            ),
            Side("FoundationNetworking URLSession, 16 tasks", lambda urls: [str(WORKLOADS), "download-urlsession", str(urls), "16"]),
            Side("ImageDownloader behind the address guard", lambda urls: [str(WORKLOADS), "download-guarded", str(urls), "16"]),
            Side("ImageDownloader, a new connection each", lambda urls: [str(WORKLOADS), "download-new-connections", str(urls), "16"]),
            Side(
                "ImageDownloader, a new guarded connection each",
                lambda urls: [str(WORKLOADS), "download-new-connections-guarded", str(urls), "16"],
            ),
        ),
        system_packages=("nginx", "wrk", "curl"),
    ),
    decode_comparison("jpeg", "JPEG", quality=90),
    decode_comparison("png", "PNG"),
    decode_comparison("gif", "GIF"),
    decode_comparison("webp", "WEBP", quality=80),
    decode_comparison("avif", "AVIF", quality=75, speed=6),
    decode_comparison("tiff", "TIFF", compression="tiff_lzw"),
    Comparison(
        name="decode-heic",
        description="decode a 1920x1280 HEIC (pillow-heif's x265 at quality 75) to pixels, 20 rounds, one core each (megapixels per second)",
        prepare=encoded_photo(1920, 1280, "HEIF", quality=75),
        ours=Side("swift-web-image HEIFCoder (Debian libheif 1.15, libde265 1.0.11)",
                  lambda path: ["taskset", "-c", "0", str(WORKLOADS), "decode", str(path), "20"]),
        peer=Side("pillow-heif Image.open + load (its libheif 1.23, libde265 1.1.3)",
                  lambda path: ["taskset", "-c", "0", sys.executable, str(PEERS / "decode_pillow.py"), "decode", str(path), "20"]),
        extra_peers=(Side("the floor: Debian's libheif 1.15 alone, from C, to RGBA",
                          lambda path: ["taskset", "-c", "0", codec_floor(), "heif", str(path), "20"]),),
        pip_requirements=("pillow", "pillow-heif"),
    ),
    Comparison(
        name="decode-jxl",
        description="decode a 1920x1280 JPEG XL (cjxl's defaults: distance 1, effort 7) to pixels, 20 rounds, one core each (megapixels per second)",
        prepare=encoded_photo(1920, 1280, "JXL"),
        ours=Side("swift-web-image JXLCoder (libjxl 0.7, 8-bit RGBA out)",
                  lambda path: ["taskset", "-c", "0", str(WORKLOADS), "decode", str(path), "20"]),
        peer=Side("djxl --num_reps --num_threads=1 (the same libjxl, no output file)",
                  lambda path: ["taskset", "-c", "0", sys.executable, str(PEERS / "decode_djxl.py"), str(path), "20"]),
        extra_peers=(Side("the floor: libjxl 0.7 alone, from C, to 8-bit RGBA in a fresh buffer",
                          lambda path: ["taskset", "-c", "0", codec_floor(), "jxl", str(path), "20"]),),
        system_packages=("libjxl-tools",),
    ),
    Comparison(
        name="encode-avif",
        description="encode a 1920x1280 photo to AVIF at quality 75 (quantizer 16), speed 6, 3 rounds, one thread each (megapixels per second)",
        prepare=encoded_photo(1920, 1280, "PNG"),
        ours=Side("swift-web-image AVIFCoder (libavif 0.11, aom)",
                  lambda path: ["taskset", "-c", "0", str(WORKLOADS), "encode-avif", str(path), "3"]),
        peer=Side("Pillow AVIF (its bundled libavif, aom)",
                  lambda path: ["taskset", "-c", "0", sys.executable, str(PEERS / "encode_pillow.py"), "AVIF", str(path), "3",
                                "quality=75", "speed=6", "max_threads=1"]),
        pip_requirements=("pillow",),
    ),
    Comparison(
        name="progressive",
        description="a 1920x1280 progressive JPEG arriving in 16 KB pieces, 20 rounds, one thread each (megapixels per second)",
        prepare=encoded_photo(1920, 1280, "JPEG", quality=90, progressive=True),
        ours=Side("swift-web-image progressive coder, every partial image, then the whole decode",
                  lambda path: ["taskset", "-c", "0", str(WORKLOADS), "progressive", str(path), "20"]),
        peer=Side("Pillow ImageFile.Parser fed the same pieces (final image only)",
                  lambda path: ["taskset", "-c", "0", sys.executable, str(PEERS / "decode_pillow.py"), "parser", str(path), "20"]),
        extra_peers=(Side("swift-web-image whole decode only", lambda path: ["taskset", "-c", "0", str(WORKLOADS), "decode", str(path), "20"]),),
        pip_requirements=("pillow",),
    ),
    thumbnail_comparison("thumbnail", "a 3000x2000 photo-like JPEG with grain (q90, about 1.1 MB)",
                         encoded_photo(3000, 2000, "JPEG", quality=90)),
    thumbnail_comparison("thumbnail-smooth", "a smooth 3000x2000 JPEG (q90, about 240 KB)",
                         smooth_photo(3000, 2000, quality=90)),
    resize_comparison("resize", "a 3000x2000 RGBA image", photo(3000, 2000),
                      extra_peers=(Side("libvips resize lanczos3 (pyvips)",
                                        lambda path: [sys.executable, str(PEERS / "transform_pyvips.py"), "resize", str(path), "10"]),),
                      pip_requirements=("pillow", "pyvips"), system_packages=("libvips42",)),
    resize_comparison("resize-rgba", "a translucent 3000x2000 RGBA image (every alpha level)", translucent_photo(3000, 2000)),
    Comparison(
        name="color",
        description="convert a 1920x1280 Display P3 JPEG's pixels to sRGB (perceptual), decoded beforehand, 20 rounds",
        prepare=display_p3_photo(1920, 1280),
        ours=Side("swift-web-image convertingToSRGB (lcms2)", lambda path: [str(WORKLOADS), "color", str(path), "20"]),
        peer=Side("Pillow ImageCms.profileToProfile",
                  lambda path: [sys.executable, str(PEERS / "color_pillow.py"), "profile-to-profile", str(path), "20"]),
        extra_peers=(
            Side("the floor: Pillow applying a transform built beforehand",
                 lambda path: [sys.executable, str(PEERS / "color_pillow.py"), "transform", str(path), "20"]),
            Side("swift-web-image on one core", lambda path: ["taskset", "-c", "0", str(WORKLOADS), "color", str(path), "20"]),
        ),
        pip_requirements=("pillow",),
    ),
    Comparison(
        name="blur",
        description="Gaussian blur, radius 10, of a 1000x1000 RGBA image, decoded beforehand, 10 rounds",
        prepare=photo(1000, 1000),
        ours=Side("swift-web-image BlurTransformer", lambda path: [str(WORKLOADS), "blur", str(path), "10"]),
        peer=Side("Pillow GaussianBlur(10)", lambda path: [sys.executable, str(PEERS / "transform_pillow.py"), "blur", str(path), "10"]),
        pip_requirements=("pillow",),
    ),
    prefetch_comparison("prefetch", 2000, "into an empty cache (or folder)", "cache", "files",
                        extra_peers=(Side("curl --parallel --parallel-max 16", lambda urls: [sys.executable, str(PEERS / "curl_parallel.py"), str(urls), "16"]),)),
    prefetch_comparison("prefetch-10k", 10000, "into an empty cache (or folder)", "cache", "files"),
    prefetch_comparison("prefetch-files", 10000, "into a folder, a file per image on both sides", "files", "files",
                        extra_peers=(Side("the floor: 10,000 50 KB files created by 16 threads, nothing else",
                                          lambda urls: [sys.executable, str(PEERS / "write_files.py"), str(urls), "16"]),)),
    prefetch_comparison("prefetch-tar", 10000, "into tar shards (webdataset)", "tar", "webdataset"),
    dataset_comparison("dataset", 2000),
    *[distributor_comparison(distributor, 2000) for distributor in ("multiprocessing", "pyspark", "ray")],
    crawl_comparison("crawl", 1500, 5000),
    *[diskcache_comparison(name, count, size) for name, count, size in (
        ("diskcache", 1000, 50 * 1024),
        ("diskcache-small", 5000, 2 * 1024),
    )],
]


PEAKS: dict = {}
CHECKS: dict = {}


def run_side(side: Side, data: Path) -> float:
    completed = subprocess.run(side.command(data), capture_output=True, text=True)
    if completed.returncode != 0:
        raise RuntimeError(f"{side.label} failed ({completed.returncode}): {completed.stderr.strip()[-2000:]}")
    output = completed.stdout
    result = json.loads(output.strip().splitlines()[-1])
    # Sides that run whole processes also say their peak resident set; the largest over the runs is kept.
    if "peak_rss_mb" in result:
        PEAKS[side.label] = max(PEAKS.get(side.label, 0), result["peak_rss_mb"])
    # Sides that write a dataset say what they wrote (count, sizes, a hash of the captions).
    if "check" in result:
        CHECKS[side.label] = result["check"]
    return result["operations"] / result["seconds"]


def baseline_side(ours: Side, binary: Path, data: Path) -> Side:
    """Ours with an earlier build in place of this one's: its CompareWorkloads, or its `webimage` for
    the sides that run the command (their scripts take it from WEBIMAGE_BINARY). A binary not called
    CompareWorkloads is a `webimage`, whatever its file is called: judged by the name `webimage`
    alone, a copy called `webimage-old` replaced nothing and the "before" side ran this build."""
    def command(path):
        arguments = ours.command(path)
        if binary.name != WORKLOADS.name:
            if str(WORKLOADS) in map(str, arguments):
                raise RuntimeError("a webimage baseline cannot stand in for CompareWorkloads")
            return ["env", f"WEBIMAGE_BINARY={binary}", *arguments]
        return [str(binary) if argument == str(WORKLOADS) else argument for argument in arguments]
    return Side(f"before: {ours.label} (--baseline)", command)


def uses_workloads(comparison) -> bool:
    """Whether a side of the comparison runs the Benchmarks package's CompareWorkloads."""
    sides = [comparison.ours, comparison.peer, *comparison.extra_peers]
    return any(str(WORKLOADS) in map(str, side.command(Path("input"))) for side in sides)


def ensure_built(chosen):
    # The Benchmarks package is a release build of its own (minutes cold): only when a chosen
    # comparison runs its CompareWorkloads.
    if any(uses_workloads(comparison) for comparison in chosen):
        # SwiftPM keeps the build plan of a path dependency and misses source files added to it
        # since; dropping the plan makes it look again.
        (BENCHMARKS / ".build" / "release.yaml").unlink(missing_ok=True)
        subprocess.run(["swift", "build", "-c", "release", "--product", "CompareWorkloads"], cwd=BENCHMARKS, check=True)
    subprocess.run(["swift", "build", "-c", "release", "--product", "webimage"], cwd=ROOT, check=True)


def ensure_requirements(comparison):
    if comparison.pip_requirements:
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", *comparison.pip_requirements], check=True)
    if comparison.system_packages:
        subprocess.run([str(ROOT / "scripts" / "install-deps.sh"), *comparison.system_packages], check=True)


def machine() -> str:
    model = "unknown CPU"
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{os.cpu_count()} cores, {model}, {platform.system()} {platform.release()}"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", help="comparisons to run (default: all)")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--json", type=Path, help="also write the results to this file")
    parser.add_argument("--baseline", type=Path,
                        help="a CompareWorkloads or webimage binary built from an earlier commit: run beside ours, "
                             "as 'before', in every comparison whose workload it has (a webimage binary: the prefetch and "
                             "dataset comparisons)")
    args = parser.parse_args()
    chosen = [c for c in COMPARISONS if not args.names or c.name in args.names]
    ensure_built(chosen)
    results = []
    print(f"{date.today()} on {machine()}")
    with tempfile.TemporaryDirectory() as workdir:
        for comparison in chosen:
            ensure_requirements(comparison)
            workspace = Path(workdir) / comparison.name
            workspace.mkdir()
            try:
                data = comparison.prepare(workspace)
                sides = [comparison.ours, comparison.peer, *comparison.extra_peers]
                if args.baseline:
                    baseline = baseline_side(comparison.ours, args.baseline, data)
                    try:
                        run_side(baseline, data)
                        sides.append(baseline)
                    except RuntimeError as error:
                        print(f"{comparison.name}: the baseline cannot run it ({str(error)[:120]})")
                rates = {side.label: [] for side in sides}
                for _ in range(args.repeats):
                    for side in sides:
                        rates[side.label].append(run_side(side, data))
            finally:
                while CLEANUPS:
                    CLEANUPS.pop()()
            medians = {label: statistics.median(values) for label, values in rates.items()}
            ours_rate = medians[comparison.ours.label]
            print(f"\n{comparison.name}: {comparison.description}")
            for side in sides:
                peak = f"   peak RSS {PEAKS[side.label]:,.0f} MB" if side.label in PEAKS else ""
                runs = ", ".join(f"{rate:,.0f}" for rate in rates[side.label])
                print(f"  {side.label:40} {medians[side.label]:14,.0f} ops/s{peak}   (runs: {runs})")
                if side.label in CHECKS:
                    print(f"    wrote: {CHECKS[side.label]}")
            for side in sides[1:]:
                print(f"  ratio ours / {side.label}: {ours_rate / medians[side.label]:.2f}x (median of {args.repeats} alternating runs)")
            results.append({"name": comparison.name, "rates": medians, "machine": machine(), "date": str(date.today())})
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
