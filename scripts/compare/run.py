#!/usr/bin/env python3
"""Side-by-side comparisons: ours and a peer tool on the same input, in one run.

Each comparison names a workload, prepares its input once, then runs our side and the peer side
alternately (REPEATS times each, so drift on a shared machine hits both alike). Every side prints
one JSON line {"operations": N, "seconds": S}; the runner reports the median rate of each side and
the ratio ours / peer. Later issues add comparisons to COMPARISONS.

Usage: scripts/compare/run.py [NAME ...] [--repeats N] [--json FILE]
"""
import argparse
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


def nginx_origin(count: int, size: int) -> Callable[[Path], Path]:
    """Starts nginx on 127.0.0.1 serving COUNT distinct files of SIZE bytes; returns their URL list."""
    def prepare(workdir: Path) -> Path:
        # nginx's workers run as an unprivileged user when it starts as root: open the path to them.
        for directory in (workdir.parent, workdir):
            directory.chmod(0o755)
        root = workdir / "www"
        root.mkdir()
        for index in range(count):
            (root / f"{index}.png").write_bytes(b"\x89PNG\r\n\x1a\n" + os.urandom(size - 8))
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
    types {{ image/png png; }}
    server {{ listen 127.0.0.1:{port}; root {root}; }}
}}
""")
        subprocess.run(["nginx", "-c", str(config), "-p", str(workdir)], check=True)
        wait_for_listener(port)
        CLEANUPS.append(lambda: subprocess.run(["nginx", "-c", str(config), "-p", str(workdir), "-s", "stop"], check=False))
        urls = workdir / "urls.txt"
        urls.write_text("\n".join(f"http://127.0.0.1:{port}/{index}.png" for index in range(count)) + "\n")
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
        extra_peers=(Side("wrk -c16 -t1 (loopback limit)", lambda urls: [sys.executable, str(PEERS / "wrk_rate.py"), str(urls), "16"]),),
        system_packages=("nginx", "wrk", "curl"),
    ),
    *[diskcache_comparison(name, count, size) for name, count, size in (
        ("diskcache", 1000, 50 * 1024),
        ("diskcache-small", 5000, 2 * 1024),
    )],
]


def run_side(side: Side, data: Path) -> float:
    completed = subprocess.run(side.command(data), capture_output=True, text=True)
    if completed.returncode != 0:
        raise RuntimeError(f"{side.label} failed ({completed.returncode}): {completed.stderr.strip()[-2000:]}")
    output = completed.stdout
    result = json.loads(output.strip().splitlines()[-1])
    return result["operations"] / result["seconds"]


def ensure_built():
    # SwiftPM keeps the build plan of a path dependency and misses source files added to it
    # since; dropping the plan makes it look again.
    (BENCHMARKS / ".build" / "release.yaml").unlink(missing_ok=True)
    subprocess.run(["swift", "build", "-c", "release", "--product", "CompareWorkloads"], cwd=BENCHMARKS, check=True)


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
    args = parser.parse_args()
    chosen = [c for c in COMPARISONS if not args.names or c.name in args.names]
    ensure_built()
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
                print(f"  {side.label:40} {medians[side.label]:14,.0f} ops/s")
            for side in sides[1:]:
                print(f"  ratio ours / {side.label}: {ours_rate / medians[side.label]:.2f}x (median of {args.repeats} alternating runs)")
            results.append({"name": comparison.name, "rates": medians, "machine": machine(), "date": str(date.today())})
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
