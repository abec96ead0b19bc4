#!/usr/bin/env python3
"""Peak resident set of `webimage prefetch` against the length of its URL list (issue 21's goal:
at most 150 MB for 100,000 URLs, flat in the list's length).

A local nginx serves one small JPEG under N distinct URLs (a query string each; nginx ignores it,
the cache and the dataset do not); the release `webimage prefetch -j 16` runs over lists of each
length with a fresh cache, in the mode given (`tar` writes shards, `files` a file per image, `cache`
only warms the cache), and GNU time's %M gives the peak. Usage:
    python3 scripts/compare/prefetch_memory.py [--mode tar|files|cache] [--no-cache] 10000 100000
"""
import argparse
import json
import os
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("lengths", nargs="+", type=int)
    parser.add_argument("--mode", choices=["tar", "files", "cache"], default="tar")
    parser.add_argument("--no-cache", action="store_true", help="with --mode tar or files: the output is the only copy")
    arguments = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="prefetch-memory-"))
    work.chmod(0o755)
    (work / "www").mkdir()
    shutil.copy(ROOT / "Tests/WebImageTestSupport/Fixtures/large-progressive.jpg", work / "www/a.jpg")
    port = free_port()
    (work / "nginx.conf").write_text(f"""worker_processes 1;
pid {work}/nginx.pid;
error_log {work}/error.log;
events {{ worker_connections 1024; }}
http {{ access_log off; keepalive_requests 1000000; server {{ listen 127.0.0.1:{port}; root {work}/www; }} }}
""")
    subprocess.run(["nginx", "-c", str(work / "nginx.conf"), "-p", str(work)], check=True)
    try:
        for length in arguments.lengths:
            urls = work / f"urls-{length}.txt"
            with open(urls, "w") as file:
                for index in range(length):
                    file.write(f"http://127.0.0.1:{port}/a.jpg?i={index}\n")
            cache, output = work / f"cache-{length}", work / f"out-{length}"
            command = [str(ROOT / ".build/release/webimage"), "prefetch", "-i", str(urls), "-j", "16", "--cache-dir", str(cache), "--json"]
            if arguments.mode != "cache":
                # `files` is a file per image named after its URL (`named`); tar shards keep the bytes as
                # they came here: the list's length is what varies.
                layout = ["named"] if arguments.mode == "files" else ["tar", "--disable-all-reencoding"]
                command += ["-o", str(output), "--output-format", *layout] + (["--no-cache"] if arguments.no_cache else [])
            start = time.perf_counter()
            completed = subprocess.run(["/usr/bin/time", "-f", "%M", *command], capture_output=True, text=True, check=True)
            seconds = time.perf_counter() - start
            summary = json.loads(completed.stdout.strip().splitlines()[-1])
            peak = int(completed.stderr.strip().splitlines()[-1]) / 1024
            print(json.dumps({"urls": length, "mode": arguments.mode + (" --no-cache" if arguments.no_cache else ""), "peak_rss_mb": round(peak, 1), "seconds": round(seconds, 1),
                              "succeeded": summary["succeeded"], "failed": summary["failed"]}), flush=True)
            shutil.rmtree(cache, ignore_errors=True)
            shutil.rmtree(output, ignore_errors=True)
    finally:
        subprocess.run(["nginx", "-c", str(work / "nginx.conf"), "-p", str(work), "-s", "stop"], check=False)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
