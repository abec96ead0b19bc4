#!/usr/bin/env python3
"""What tracing costs the image proxy, in one run: the CPU one result-cache hit takes (from the
server's own /proc/PID/stat around each `wrk -t1 -c16` round), for two or more sides alternating
ROUNDS times, medians reported. CPU per request is steadier than requests/s on a shared 2-core
machine, whose throughput drifts by 10% between runs.

Sides (each a `webimage serve` with `--log-level warning`, the same photo from a local origin):
  off        no OTEL_* variable: no tracer, no span
  always     every request traced and exported over OTLP/HTTP (protobuf) to a local sink
  ratio      OTEL_TRACES_SAMPLER=parentbased_traceidratio at 1%
  baseline   another webimage binary (--baseline BINARY), untraced: a before-and-after

Usage: scripts/compare/tracing.py [--rounds N] [--seconds S] [--baseline BINARY] [--binary BINARY]
"""
import argparse
import http.server
import os
import statistics
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from run import ROOT, encoded_photo, free_port, machine  # noqa: E402


class Sink(http.server.BaseHTTPRequestHandler):
    """An OTLP/HTTP endpoint that takes every export and keeps nothing."""

    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


class QuietFiles(http.server.SimpleHTTPRequestHandler):
    """The origin: the photo, without a log line per request."""

    def log_message(self, *args):
        pass


def cpu_seconds(pid: int) -> float:
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--seconds", type=int, default=6)
    parser.add_argument("--binary", type=Path, default=ROOT / ".build" / "release" / "webimage")
    parser.add_argument("--baseline", type=Path)
    args = parser.parse_args()
    subprocess.run([str(ROOT / "scripts" / "install-deps.sh"), "wrk", "curl"], check=True)
    with tempfile.TemporaryDirectory() as temporary:
        work = Path(temporary)
        photo = encoded_photo(2048, 1365, "JPEG", quality=90)(work)
        origin = http.server.ThreadingHTTPServer(("127.0.0.1", 0), lambda *a: QuietFiles(*a, directory=str(photo.parent)))
        sink = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Sink)
        for server in (origin, sink):
            threading.Thread(target=server.serve_forever, daemon=True).start()
        exporter = {"OTEL_EXPORTER_OTLP_ENDPOINT": f"http://127.0.0.1:{sink.server_port}", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf"}
        sides = {
            "off": (args.binary, {}),
            "always": (args.binary, exporter),
            "ratio": (args.binary, {**exporter, "OTEL_TRACES_SAMPLER": "parentbased_traceidratio", "OTEL_TRACES_SAMPLER_ARG": "0.01"}),
        }
        if args.baseline:
            sides["baseline"] = (args.baseline, {})
        path = f"/unsafe/rs:fit:300:300/plain/http://127.0.0.1:{origin.server_port}/{photo.name}"
        running = {}
        for name, (binary, extra) in sides.items():
            port = free_port()
            environment = {key: value for key, value in os.environ.items() if not key.startswith(("OTEL_", "WEBIMAGE_", "IMGPROXY_"))}
            process = subprocess.Popen(
                [str(binary), "serve", "--bind", f"127.0.0.1:{port}", "--allow-unsigned", "--allow-loopback-sources",
                 "--result-cache-dir", str(work / name), "--log-level", "warning"],
                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env={**environment, **extra})
            process.stdout.readline()
            subprocess.run(["curl", "-sf", "-o", "/dev/null", f"http://127.0.0.1:{port}{path}"], check=True)
            running[name] = (process, port)
        cpu = {name: [] for name in running}
        rate = {name: [] for name in running}
        print(f"tracing: CPU per result-cache hit, wrk -t1 -c16, {args.rounds} x {args.seconds} s alternating (medians), on {machine()}")
        for _ in range(args.rounds):
            for name, (process, port) in running.items():
                before = cpu_seconds(process.pid)
                output = subprocess.run(["wrk", "-t1", "-c16", f"-d{args.seconds}s", f"http://127.0.0.1:{port}{path}"],
                                        capture_output=True, text=True, check=True).stdout
                used = cpu_seconds(process.pid) - before
                requests = int(next(line for line in output.splitlines() if "requests in" in line).split()[0])
                cpu[name].append(used / requests * 1e6)
                rate[name].append(requests / args.seconds)
        for process, _ in running.values():
            process.terminate()
            process.wait()
        off = statistics.median(cpu["off"])
        for name in running:
            median = statistics.median(cpu[name])
            print(f"  {name:9} {statistics.median(rate[name]):8.0f} req/s  {median:6.1f} us CPU per hit  ({median / off:.2f}x off)")


if __name__ == "__main__":
    main()
