#!/usr/bin/env python3
"""The image proxy beside its peers, in one run: `webimage serve` against thumbor 7 (PyPI, its
default Pillow engine, two processes) and nginx's image_filter module (libgd), all on 127.0.0.1.

Parts (all by default; name some to run only those):
  throughput  a 2048x1365 photo-like JPEG q90 from a local nginx, fit into 512x512, JPEG q80,
              every request processed (ours gets a cachebuster per request; thumbor keeps no
              results; image_filter keeps nothing), `wrk -t1 -c16`, the three sides alternating
              REPEATS times; requests/s, p50 and p99 latency, median of the repeats. Beside them,
              the floor: what TurboJPEG alone takes to decode that file at 1/4 scale, on each core.
  memory      peak RSS of a fresh server while `wrk -c4` asks for fit-500 thumbnails of a
              7360x4912 JPEG, each request processed; thumbor's processes summed beside it.
  cache       a result-cache hit against nginx serving the same bytes as a static file
              (`wrk -t1 -c16`), with the floor beside them: Hummingbird alone answering with the
              same bytes from memory (Benchmarks' HTTPFloor); and a 304 revalidation's latency on
              one connection.
  formats     per output format (JPEG q80, WebP q75, AVIF q65 from a 2048x1365 JPEG; PNG from the
              same pixels as PNG), fit 512x512, every request processed, `wrk -c8`: ours, thumbor and
              libvips alone (pyvips-binary, two processes, no HTTP, SECONDS each repeat) with each
              result's size; beside the JPEG and WebP rows, their codec floor (peers/format_floor.c,
              two processes: libjpeg-turbo decoding to planes and libjpeg-turbo or libwebp encoding
              them, our path's codec work with nothing else); then the PNG codec floors
              (peers/png_floor.c: libpng, zlib and libdeflate alone) and the WebP encoder's
              (peers/webp_floor.py: Debian's libwebp and libvips' webpsave alone).
  embedding   the proxy embedded in an application against `webimage serve`, same URLs: the
              throughput part's processed resize (`wrk -t1 -c16`, alternating REPEATS times) through
              `webimage serve`, through ImageProxyMiddleware in a Hummingbird application and through
              ImageProxyVaporMiddleware in a Vapor one (Benchmarks' EmbeddedProxy, each with its
              framework's default HTTP server); then each one's memory per connection: RSS with 200
              idle keep-alive connections that each had one result-cache hit, less RSS before them.
  png-kinds   several kinds of 2048x1365 PNG (photograph, camera grain, with alpha, screenshot, line
              art in a palette, interlaced, 16-bit) fit into 512x512 as PNG: ours against libvips
              alone (its defaults), with each source's libpng and libdeflate decode floor.
  high-bit-depth  a 16-bit PNG and a 10-bit AVIF of the photograph fit into 512x512 keeping their depth:
              ours with ph:1 against libvips alone keeping it (load, resize, save), and ours at ph:0.
  soak        SOAK_MINUTES of `wrk -c16` over 1,000 distinct variants with a 50 MB result cache:
              5xx count, the cache's entries and the server's RSS sampled every 10 s; growth
              is the last minute's mean RSS against the minute after warm-up (the first fifth).

With --baseline BINARY the throughput, formats and png-kinds parts run that webimage build beside this one (same flags,
URLs and alternation): a before-and-after in one run.

Usage: scripts/compare/serve.py [PART ...] [--repeats N] [--seconds S] [--soak-minutes M] [--json FILE] [--baseline BINARY]
"""
import argparse
import ctypes
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from datetime import date
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from run import ROOT, built_peer, encoded_photo, free_port, machine, wait_for_listener  # noqa: E402

WEBIMAGE = ROOT / ".build" / "release" / "webimage"
HTTP_FLOOR = ROOT / "Benchmarks" / ".build" / "release" / "HTTPFloor"
EMBEDDED_PROXY = ROOT / "Benchmarks" / ".build" / "release" / "EmbeddedProxy"
IMAGE_FILTER_MODULE = "/usr/lib/nginx/modules/ngx_http_image_filter_module.so"
PROCESSES: list = []


def start(command: list, port: int, log: Path) -> subprocess.Popen:
    process = subprocess.Popen(command, stdout=log.open("w"), stderr=subprocess.STDOUT, start_new_session=True)
    PROCESSES.append(process)
    wait_for_listener(port, attempts=400)
    return process


def stop(process: subprocess.Popen):
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def start_nginx(workdir: Path, root: Path) -> int:
    """One nginx, two workers: the origin (static files) and image_filter under /resize/."""
    port = free_port()
    config = workdir / "nginx.conf"
    config.write_text(f"""load_module {IMAGE_FILTER_MODULE};
worker_processes 2;
pid {workdir}/nginx.pid;
error_log {workdir}/nginx-error.log;
events {{ worker_connections 1024; }}
http {{
    access_log off;
    sendfile on;
    keepalive_requests 1000000;
    types {{ image/jpeg jpg jpeg; image/png png; image/avif avif; }}
    server {{
        listen 127.0.0.1:{port};
        root {root};
        location /resize/ {{
            alias {root}/;
            image_filter resize 512 512;
            image_filter_jpeg_quality 80;
            image_filter_buffer 16M;
        }}
    }}
}}
""")
    subprocess.run(["nginx", "-c", str(config), "-p", str(workdir)], check=True)
    wait_for_listener(port)
    PROCESSES.append(lambda: subprocess.run(["nginx", "-c", str(config), "-p", str(workdir), "-s", "stop"], check=False))
    return port


def start_ours(workdir: Path, name: str, *flags: str, binary: Path = WEBIMAGE) -> tuple:
    port = free_port()
    process = start([str(binary), "serve", "--bind", f"127.0.0.1:{port}", "--allow-unsigned", "--allow-loopback-sources",
                     "--result-cache-dir", str(workdir / name), "--log-level", "warning", *flags], port, workdir / f"{name}.log")
    return process, port


def start_thumbor(workdir: Path) -> tuple:
    port = free_port()
    config = workdir / "thumbor.conf"
    config.write_text(f"ALLOW_UNSAFE_URL = True\nQUALITY = 80\nRESULT_STORAGE = None\n"
                      f"STORAGE = 'thumbor.storages.file_storage'\nFILE_STORAGE_ROOT_PATH = '{workdir}/thumbor-storage'\n")
    process = start(["thumbor", "--ip", "127.0.0.1", "--port", str(port), "--processes", "2", "-c", str(config), "-l", "warning"],
                    port, workdir / "thumbor.log")
    return process, port


def wrk(url: str, seconds: float, connections: int = 16, script: str = None, headers: tuple = ()) -> dict:
    """One wrk run: requests/s, p50 and p99 in ms, and the count of non-2xx/3xx answers."""
    command = ["wrk", "-t1", f"-c{connections}", f"-d{seconds:g}s", "--latency"]
    for header in headers:
        command += ["-H", header]
    if script:
        command += ["-s", script]
    output = subprocess.run([*command, url], check=True, capture_output=True, text=True).stdout

    def milliseconds(label):
        value, unit = re.search(rf"{label}%\s+([\d.]+)(us|ms|s)\b", output).groups()
        return float(value) * {"us": 0.001, "ms": 1, "s": 1000}[unit]

    errors = re.search(r"Non-2xx or 3xx responses: (\d+)", output)
    return {"requests": int(re.search(r"(\d+) requests in", output).group(1)),
            "rate": float(re.search(r"Requests/sec:\s+([\d.]+)", output).group(1)), "p50": milliseconds("50"),
            "p99": milliseconds("99"), "errors": int(errors.group(1)) if errors else 0}


def lua_script(workdir: Path, name: str, body: str) -> str:
    path = workdir / f"{name}.lua"
    path.write_text(body)
    return str(path)


def cachebusting(workdir: Path, template: str) -> str:
    """A wrk script whose every request has its own cachebuster in TEMPLATE's `{cb}`, unique
    across runs too (wrk's Lua random numbers repeat from run to run): a fresh script each call."""
    before, after = template.split("{cb}")
    run = uuid.uuid4().hex[:12]
    return lua_script(workdir, f"cachebust-{run}", f'counter = 0\nrequest = function()\n  counter = counter + 1\n'
                      f'  return wrk.format("GET", "{before}{run}-" .. counter .. "{after}")\nend\n')


def median_of(runs: list) -> dict:
    return {key: statistics.median(run[key] for run in runs) for key in ("rate", "p50", "p99")} | {"errors": sum(r["errors"] for r in runs)}


def decode_floor(path: Path, rounds: int = 100) -> float:
    """Milliseconds TurboJPEG alone takes to decode PATH at 1/4 scale to RGBA on one core."""
    turbo = ctypes.CDLL("libturbojpeg.so.0")
    turbo.tjInitDecompress.restype = ctypes.c_void_p
    turbo.tjDecompress2.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_ulong, ctypes.c_void_p] + [ctypes.c_int] * 5
    handle = turbo.tjInitDecompress()
    data = path.read_bytes()
    pixels = ctypes.create_string_buffer(512 * 342 * 4)
    started = time.perf_counter()
    for _ in range(rounds):
        assert turbo.tjDecompress2(handle, data, len(data), pixels, 512, 0, 342, 7, 0) == 0
    return (time.perf_counter() - started) / rounds * 1000


def photo_with_servers(workdir: Path, name: str, width: int, height: int) -> tuple:
    """A WIDTHxHEIGHT JPEG q90 on a fresh nginx, and fresh ours and thumbor beside it."""
    photo = encoded_photo(width, height, "JPEG", quality=90)(workdir / "www")
    origin = start_nginx(workdir, workdir / "www")
    ours, ours_port = start_ours(workdir, name)
    thumbor, thumbor_port = start_thumbor(workdir)
    return photo, origin, (ours, ours_port), (thumbor, thumbor_port)


def alternated(sides: dict, args) -> tuple:
    """Each side ({name: (url, maker of its wrk script)}) warmed up for 2 s (sources cached,
    workers and pools started), then run args.repeats times for args.seconds, the sides in turn
    so that drift hits all alike: the warm-ups, every run, and each side's medians."""
    warm_ups = {name: wrk(url, 2, script=script()) for name, (url, script) in sides.items()}
    runs = {name: [] for name in sides}
    for _ in range(args.repeats):
        for name, (url, script) in sides.items():
            runs[name].append(wrk(url, args.seconds, script=script()))
    return warm_ups, runs, {name: median_of(values) for name, values in runs.items()}


def throughput(workdir: Path, args, report: dict):
    photo, origin, (ours, ours_port), (thumbor, thumbor_port) = photo_with_servers(workdir, "throughput", 2048, 1365)
    source = f"127.0.0.1:{origin}/{photo.name}"
    # Each side: its URL and a maker of its wrk script (ours busts its result cache per request;
    # thumbor keeps no results and image_filter nothing, so they take the same URL every time).
    sides = {
        "webimage serve": (f"http://127.0.0.1:{ours_port}",
                           lambda: cachebusting(workdir, f"/unsafe/rs:fit:512:512/q:80/cb:{{cb}}/plain/http://{source}@jpg")),
        "thumbor 7 (2 processes)": (f"http://127.0.0.1:{thumbor_port}/unsafe/fit-in/512x512/filters:quality(80)/{source}", lambda: None),
        "nginx image_filter (2 workers)": (f"http://127.0.0.1:{origin}/resize/{photo.name}", lambda: None),
    }
    baseline = None
    if args.baseline:
        # Another build of ours beside this one, same flags and URLs: a before-and-after in one run.
        baseline, baseline_port = start_ours(workdir, "baseline", binary=args.baseline)
        sides["webimage serve (baseline)"] = (
            f"http://127.0.0.1:{baseline_port}",
            lambda: cachebusting(workdir, f"/unsafe/rs:fit:512:512/q:80/cb:{{cb}}/plain/http://{source}@jpg"))
    warm_ups, runs, results = alternated(sides, args)
    floor = decode_floor(photo)
    processed = processing_count(ours_port)
    print(f"\nthroughput: {photo.stat().st_size // 1024} KB 2048x1365 JPEG q90 -> fit 512x512, JPEG q80, every request processed, "
          f"wrk -t1 -c16, {args.repeats} x {args.seconds} s alternating (medians)")
    for name, result in results.items():
        print(f"  {name:32} {result['rate']:8.1f} req/s   p50 {result['p50']:6.1f} ms   p99 {result['p99']:6.1f} ms   "
              f"non-2xx {result['errors']}")
    ours_rate = results["webimage serve"]["rate"]
    sent = warm_ups["webimage serve"]["requests"] + sum(run["requests"] for run in runs["webimage serve"])
    print(f"  webimage serve processed {processed:,} images for {sent:,} requests (its own count, warm-up included)")
    for name in list(sides)[1:]:
        print(f"  ratio ours / {name}: {ours_rate / results[name]['rate']:.2f}x")
    print(f"  floor: TurboJPEG alone decodes the file at 1/4 in {floor:.2f} ms, so 2 cores decode at most "
          f"{2000 / floor:.0f} images/s before any HTTP, resizing or encoding")
    report["throughput"] = results | {"decode_floor_ms": floor}
    for process in (ours, thumbor, baseline):
        if process:
            stop(process)


def processing_count(port: int) -> int:
    """How many images the server processed, by its own /metrics: every request, or a cache answered."""
    metrics = subprocess.run(["curl", "-sf", f"http://127.0.0.1:{port}/metrics"], check=True, capture_output=True, text=True).stdout
    return int(float(re.search(r"^webimage_server_processing_duration_seconds_count (\S+)$", metrics, re.M).group(1)))


def peak_rss_kb(pids: list) -> int:
    """VmHWM (peak resident set) summed over PIDS."""
    total = 0
    for pid in pids:
        status = Path(f"/proc/{pid}/status").read_text()
        total += int(re.search(r"VmHWM:\s+(\d+) kB", status).group(1))
    return total


def process_tree(pid: int) -> list:
    children = subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True).stdout.split()
    return [pid] + [p for child in children for p in process_tree(int(child))]


def memory(workdir: Path, args, report: dict):
    big, origin, (ours, ours_port), (thumbor, thumbor_port) = photo_with_servers(workdir, "memory", 7360, 4912)
    source = f"127.0.0.1:{origin}/{big.name}"
    wrk(f"http://127.0.0.1:{ours_port}", args.seconds, connections=4,
        script=cachebusting(workdir, f"/unsafe/rs:fit:500:500/cb:{{cb}}/plain/http://{source}@jpg"))
    ours_peak = peak_rss_kb([ours.pid])
    wrk(f"http://127.0.0.1:{thumbor_port}/unsafe/fit-in/500x500/{source}", args.seconds, connections=4)
    thumbor_peak = peak_rss_kb(process_tree(thumbor.pid))
    print(f"\nmemory: peak RSS serving fit-500 thumbnails of a {big.stat().st_size // 1024} KB 7360x4912 JPEG, 4 concurrent, "
          f"{args.seconds} s each")
    print(f"  webimage serve                   {ours_peak / 1024:8.1f} MB")
    print(f"  thumbor 7 (2 processes, summed)  {thumbor_peak / 1024:8.1f} MB")
    report["memory"] = {"ours_mb": ours_peak / 1024, "thumbor_mb": thumbor_peak / 1024}
    for process in (ours, thumbor):
        stop(process)


def cache(workdir: Path, args, report: dict):
    photo = encoded_photo(2048, 1365, "JPEG", quality=90)(workdir / "www")
    origin = start_nginx(workdir, workdir / "www")
    ours, ours_port = start_ours(workdir, "cache")
    url = f"http://127.0.0.1:{ours_port}/unsafe/rs:fit:512:512/q:80/plain/http://127.0.0.1:{origin}/{photo.name}@jpg"
    answer = subprocess.run(["curl", "-sf", "-D", "-", "-o", str(workdir / "www" / "result.jpg"), url],
                            check=True, capture_output=True, text=True).stdout
    etag = re.search(r"(?i)^etag:\s*(.+?)\s*$", answer, re.M).group(1)
    floor_port = free_port()
    start([str(HTTP_FLOOR), str(workdir / "www" / "result.jpg"), str(floor_port)], floor_port, workdir / "floor.log")
    sides = {"webimage serve, result-cache hit": url, "nginx, static file": f"http://127.0.0.1:{origin}/result.jpg",
             "Hummingbird alone, bytes in memory": f"http://127.0.0.1:{floor_port}/result.jpg"}
    baseline = None
    if args.baseline:
        # Another build of ours beside this one, its cache filled by one request: a before-and-after in one run.
        baseline, baseline_port = start_ours(workdir, "cache-baseline", binary=args.baseline)
        baseline_url = url.replace(f":{ours_port}/", f":{baseline_port}/", 1)
        subprocess.run(["curl", "-sf", "-o", "/dev/null", baseline_url], check=True)
        sides["webimage serve (baseline), result-cache hit"] = baseline_url
    runs = {name: [] for name in sides}
    for _ in range(args.repeats):
        for name, side in sides.items():
            runs[name].append(wrk(side, args.seconds))
    revalidation = median_of([wrk(url, args.seconds, connections=1, headers=(f"If-None-Match: {etag}",))
                              for _ in range(args.repeats)])
    results = {name: median_of(values) for name, values in runs.items()}
    size = (workdir / "www" / "result.jpg").stat().st_size
    print(f"\ncache: the same {size // 1024} KB result, wrk -t1 -c16, {args.repeats} x {args.seconds} s alternating (medians)")
    for name, result in results.items():
        print(f"  {name:36} {result['rate']:9.0f} req/s   p50 {result['p50']:6.2f} ms   non-2xx {result['errors']}")
    hit_rate = results["webimage serve, result-cache hit"]["rate"]
    for name in list(sides)[1:]:
        print(f"  ratio ours / {name}: {hit_rate / results[name]['rate']:.2f}x")
    print(f"  304 revalidation (If-None-Match, one connection): p50 {revalidation['p50']:.3f} ms, "
          f"p99 {revalidation['p99']:.3f} ms, {revalidation['rate']:.0f} req/s")
    report["cache"] = results | {"revalidation": revalidation}
    for process in (ours, baseline):
        if process:
            stop(process)


def entry_bytes(path: Path) -> int:
    """The bytes of a disk cache's entries: the files in its two-hex-digit folders (what its
    size limit counts), not its journal or a temporary file being written."""
    return sum(entry.stat().st_size for folder in path.glob("[0-9a-f][0-9a-f]") for entry in folder.iterdir() if entry.is_file())


def directory_bytes(path: Path) -> int:
    return sum(entry.stat().st_size for entry in path.rglob("*") if entry.is_file())


def soak(workdir: Path, args, report: dict):
    photo = encoded_photo(2048, 1365, "JPEG", quality=90)(workdir / "www")
    origin = start_nginx(workdir, workdir / "www")
    limit = 50 * 1024 * 1024
    ours, ours_port = start_ours(workdir, "soak", "--result-cache-size", str(limit))
    # 1,000 sizes from 400 to 1399 px wide: about 65 MB of results, so the cache must evict.
    script = lua_script(workdir, "variants", 'counter = 0\nrequest = function()\n  counter = counter % 1000 + 1\n'
                        f'  return wrk.format("GET", "/unsafe/rs:fit:" .. (399 + counter) .. ":2000/q:80/plain/'
                        f'http://127.0.0.1:{origin}/{photo.name}@jpg")\nend\n')
    seconds = int(args.soak_minutes * 60)
    load = subprocess.Popen(["wrk", "-t1", "-c16", f"-d{seconds:g}s", "-s", script, f"http://127.0.0.1:{ours_port}"],
                            stdout=subprocess.PIPE, text=True)
    samples = []
    started = time.monotonic()
    while load.poll() is None:
        time.sleep(10)
        status = Path(f"/proc/{ours.pid}/status").read_text()
        rss = int(re.search(r"VmRSS:\s+(\d+) kB", status).group(1)) / 1024
        results = workdir / "soak" / "results"
        samples.append({"second": round(time.monotonic() - started), "rss_mb": rss,
                        "entries_mb": entry_bytes(results) / 1024 / 1024, "directory_mb": directory_bytes(results) / 1024 / 1024})
    output = load.stdout.read()
    requests = int(re.search(r"(\d+) requests in", output).group(1))
    errors = re.search(r"Non-2xx or 3xx responses: (\d+)", output)
    metrics = subprocess.run(["curl", "-sf", f"http://127.0.0.1:{ours_port}/metrics"], capture_output=True, text=True).stdout
    server_errors = sum(float(value) for value in re.findall(r'status="5\d\d"[^}]*}\s+([\d.e+]+)', metrics))
    # Warm-up is the first fifth of the run: the memory tier of results fills (64 MB of about
    # 65 MB of variants) and the allocator's arenas grow. The resident set then moves by tens of
    # megabytes from sample to sample with the memory tier's churn, so growth compares the mean of
    # the minute after warm-up with the mean of the last minute.
    warm_up = seconds / 5
    first = [s["rss_mb"] for s in samples if warm_up <= s["second"] < warm_up + 60]
    last = [s["rss_mb"] for s in samples if s["second"] >= samples[-1]["second"] - 60]
    growth = (statistics.mean(last) - statistics.mean(first)) / statistics.mean(first) * 100
    largest_cache = max(s["entries_mb"] for s in samples)
    largest_directory = max(s["directory_mb"] for s in samples)
    print(f"\nsoak: {args.soak_minutes} min of wrk -c16 over 1,000 variants, result cache limit 50 MB")
    print(f"  {requests:,} requests, non-2xx {int(errors.group(1)) if errors else 0}, 5xx by the server's metrics {server_errors:.0f}")
    print(f"  result cache entries: at most {largest_cache:.2f} MB over {len(samples)} samples (limit 50 MB); "
          f"with its journal and files being written, at most {largest_directory:.2f} MB")
    print(f"  RSS: mean {statistics.mean(first):.1f} MB in the minute after {warm_up:.0f} s of warm-up, "
          f"{statistics.mean(last):.1f} MB in the last minute ({growth:+.1f}%), peak {max(s['rss_mb'] for s in samples):.1f} MB")
    report["soak"] = {"requests": requests, "server_errors": server_errors, "largest_cache_mb": largest_cache,
                      "largest_directory_mb": largest_directory,
                      "rss_growth_percent": growth, "samples": samples}
    stop(ours)


# serve.py's `formats` rows: label, source format, our output extension and quality, libvips's save
# suffix, thumbor's filters. libvips keeps its own defaults otherwise (PNG: compression 6, no
# filter, so its files are 2.7 times ours; WebP effort 4; AVIF effort 4), as the issue's
# measurement did; the last row saves PNG with imgproxy's settings.
FORMAT_ROWS = (
    ("JPEG q80", "JPEG", "jpg", 80, ".jpg[Q=80]", "quality(80)"),
    ("WebP q75", "JPEG", "webp", 75, ".webp[Q=75]", "format(webp):quality(75)"),
    ("AVIF q65", "JPEG", "avif", 65, ".avif[Q=65]", "format(avif):quality(65)"),
    ("PNG (PNG source)", "PNG", "png", None, ".png", "format(png)"),
    # The same request against libvips saving as imgproxy asks it to (vips/vips.c, vips_pngsave_go:
    # every filter tried per row), which is what makes files of the size ours are.
    ("PNG, imgproxy's save", "PNG", "png", None, ".png[filter=all]", "format(png)"),
)


def two_processes(command: list, environment: dict | None = None) -> dict:
    """COMMAND in two processes at once (both cores), each printing {"operations", "seconds",
    "bytes"}: their summed rate over the longer one's time, and the result's bytes."""
    workers = [subprocess.Popen(command, stdout=subprocess.PIPE, text=True, env=environment) for _ in range(2)]
    results = [json.loads(worker.communicate()[0]) for worker in workers]
    elapsed = max(result["seconds"] for result in results)
    return {"rate": sum(result["operations"] for result in results) / elapsed, "bytes": results[0]["bytes"]}


def vips_alone(path: Path, suffix: str, seconds: float, keep_depth: bool = False) -> dict:
    """libvips alone in two processes at once, no HTTP, for SECONDS (peers/format_vips.py; KEEP_DEPTH
    keeps 16 bits): images/s and result bytes."""
    command = [sys.executable, str(Path(__file__).resolve().parent / "peers" / "format_vips.py"), str(path), suffix, str(seconds)]
    command += ["--keep-depth"] if keep_depth else []
    # One thread each, as imgproxy runs libvips (VIPS_CONCURRENCY=1): the two processes are the parallelism.
    return two_processes(command, os.environ | {"VIPS_CONCURRENCY": "1"})


def png_floor(path: Path) -> dict:
    """peers/png_floor.c: libpng, zlib and libdeflate alone on the PNG row's source and result."""
    binary = built_peer("png_floor.c", "-lpng16", "-lz", "-ldeflate")
    return json.loads(subprocess.run([str(binary), str(path), "20"], check=True, capture_output=True, text=True).stdout)


def response_bytes(url: str) -> int:
    import urllib.request
    with urllib.request.urlopen(url, timeout=60) as response:
        return len(response.read())


def formats(workdir: Path, args, report: dict):
    """Each output format: ours (every request processed), thumbor, and libvips alone."""
    www = workdir / "www"
    sources = {name: encoded_photo(2048, 1365, name, **({"quality": 90} if name == "JPEG" else {}))(www) for name in ("JPEG", "PNG")}
    origin = start_nginx(workdir, www)
    ours, ours_port = start_ours(workdir, "formats")
    thumbor, thumbor_port = start_thumbor(workdir)
    baseline = start_ours(workdir, "baseline", binary=args.baseline) if args.baseline else None
    # The JPEG and WebP rows' codec floor.
    floor_binary = built_peer("format_floor.c", "-lturbojpeg", "-lwebp")
    results = {}
    for label, source_format, extension, quality, vips_suffix, thumbor_filters in FORMAT_ROWS:
        if args.rows and not any(label.startswith(prefix) for prefix in args.rows.split(",")):
            continue
        source = f"127.0.0.1:{origin}/{sources[source_format].name}"
        options = "rs:fit:512:512" + (f"/q:{quality}" if quality else "")
        ours_path = f"/unsafe/{options}/cb:{{cb}}/plain/http://{source}@{extension}"
        sides = {"ours": (ours_port, ours_path)}
        if baseline:
            sides["baseline"] = (baseline[1], ours_path)
        thumbor_url = f"http://127.0.0.1:{thumbor_port}/unsafe/fit-in/512x512/filters:{thumbor_filters}/{source}"
        sizes = {name: response_bytes(f"http://127.0.0.1:{port}" + path.replace("{cb}", "size")) for name, (port, path) in sides.items()}
        try:
            sizes["thumbor"] = response_bytes(thumbor_url)
        except Exception as error:  # thumbor without this format's encoder
            print(f"  thumbor cannot answer {label}: {error}")
        rows = {name: [] for name in sides} | ({"thumbor": []} if "thumbor" in sizes else {})
        vips_runs, floor_runs = [], []
        # The rows whose codec work the floor program does: ours decodes the JPEG to planes for them.
        floor_command = ([str(floor_binary), str(sources[source_format]), extension, str(quality), str(args.seconds)]
                         if extension in ("jpg", "webp") and source_format == "JPEG" else None)
        for name, (port, path) in sides.items():  # warm-up: source cached, workers started
            wrk(f"http://127.0.0.1:{port}", 2, connections=8, script=cachebusting(workdir, path))
        for _ in range(args.repeats):
            for name, (port, path) in sides.items():
                rows[name].append(wrk(f"http://127.0.0.1:{port}", args.seconds, connections=8, script=cachebusting(workdir, path)))
            if "thumbor" in rows:
                rows["thumbor"].append(wrk(thumbor_url, args.seconds, connections=8))
            vips_runs.append(vips_alone(sources[source_format], vips_suffix, args.seconds))
            if floor_command:
                floor_runs.append(two_processes(floor_command))
        row = {name: median_of(runs) | {"bytes": sizes[name]} for name, runs in rows.items()}
        row["libvips alone"] = {"rate": statistics.median(run["rate"] for run in vips_runs), "bytes": vips_runs[0]["bytes"]}
        if floor_runs:
            row["codec floor"] = {"rate": statistics.median(run["rate"] for run in floor_runs), "bytes": floor_runs[0]["bytes"]}
        results[label] = row
    print(f"\nformats: 2048x1365 photo (JPEG q90 / PNG) -> fit 512x512, every request processed, wrk -t1 -c8, "
          f"{args.repeats} x {args.seconds} s alternating (medians); libvips alone: 2 processes, thumbnail_buffer + save, no HTTP; "
          f"codec floor: 2 processes, libjpeg-turbo's decode to planes and the encode alone (peers/format_floor.c)")
    for label, row in results.items():
        cells = "   ".join(f"{name} {side['rate']:7.1f}/s {side['bytes'] / 1024:6.1f} KB" for name, side in row.items())
        ratios = f"ours / libvips {row['ours']['rate'] / row['libvips alone']['rate']:.2f}x"
        if "codec floor" in row:
            ratios += (f", codec floor / libvips {row['codec floor']['rate'] / row['libvips alone']['rate']:.2f}x, "
                       f"ours / codec floor {row['ours']['rate'] / row['codec floor']['rate']:.0%}")
        print(f"  {label:18} {cells}   {ratios}")
    floor = png_floor(sources["PNG"])
    print(f"  PNG codec floors, one core: libpng decodes the source in {floor['libpng_decode_ms']:.1f} ms (zlib inflate alone "
          f"{floor['zlib_inflate_ms']:.1f} ms, libdeflate {floor['libdeflate_inflate_ms']:.1f} ms); the {floor['result']} result: "
          f"libpng level 6 adaptive {floor['libpng_encode_ms']:.1f} ms ({floor['libpng_encode_bytes'] / 1024:.1f} KB), "
          f"libdeflate level 6 on the same rows {floor['libdeflate_deflate_ms']:.1f} ms ({floor['libdeflate_deflate_bytes'] / 1024:.1f} KB)")
    webp = json.loads(subprocess.run([sys.executable, str(Path(__file__).resolve().parent / "peers" / "webp_floor.py"),
                                      str(sources["JPEG"]), "75", "20"], check=True, capture_output=True, text=True).stdout)
    print(f"  WebP encoder floor, one core, the same {webp['result']} pixels at q75: Debian's libwebp (ours) "
          f"{webp['debian_libwebp_ms']:.1f} ms ({webp['debian_libwebp_bytes'] / 1024:.1f} KB), libvips' webpsave "
          f"{webp['vips_webpsave_ms']:.1f} ms ({webp['vips_webpsave_bytes'] / 1024:.1f} KB)")
    report["formats"] = results | {"png_floor": floor, "webp_floor": webp}
    for process in (ours, thumbor, baseline[0] if baseline else None):
        if process:
            stop(process)


def start_embedded(workdir: Path, framework: str) -> tuple:
    """EmbeddedProxy's FRAMEWORK application (hummingbird or vapor) with the proxy at its root."""
    port = free_port()
    process = start([str(EMBEDDED_PROXY), framework, str(port), str(workdir / f"embedded-{framework}")], port,
                    workdir / f"embedded-{framework}.log")
    return process, port


def resident_kb(pid: int) -> int:
    return int(re.search(r"VmRSS:\s+(\d+) kB", Path(f"/proc/{pid}/status").read_text()).group(1))


def memory_per_connection(pid: int, port: int, path: str, connections: int = 200) -> float:
    """KB of resident memory each idle keep-alive connection holds: RSS with CONNECTIONS open
    connections that each had one answer to PATH (a result-cache hit), less RSS before them."""
    import http.client
    warm = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    for _ in range(50):  # the hit path's buffers and caches made before the baseline is read
        warm.request("GET", path)
        warm.getresponse().read()
    warm.close()
    time.sleep(0.5)
    before = resident_kb(pid)
    held = []
    for _ in range(connections):
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        connection.request("GET", path)
        response = connection.getresponse()
        response.read()
        assert response.status == 200, response.status
        held.append(connection)
    time.sleep(0.5)
    after = resident_kb(pid)
    for connection in held:
        connection.close()
    return (after - before) / connections


def embedding(workdir: Path, args, report: dict):
    photo = encoded_photo(2048, 1365, "JPEG", quality=90)(workdir / "www")
    origin = start_nginx(workdir, workdir / "www")
    source = f"127.0.0.1:{origin}/{photo.name}"
    servers = {"webimage serve": start_ours(workdir, "embedding"),
               "Hummingbird app, ImageProxyMiddleware": start_embedded(workdir, "hummingbird"),
               "Vapor app, ImageProxyVaporMiddleware": start_embedded(workdir, "vapor")}
    def script():
        return cachebusting(workdir, f"/unsafe/rs:fit:512:512/q:80/cb:{{cb}}/plain/http://{source}@jpg")
    _, _, results = alternated({name: (f"http://127.0.0.1:{port}", script) for name, (_, port) in servers.items()}, args)
    hit = f"/unsafe/rs:fit:64:64/plain/http://{source}@jpg"
    for name, (process, port) in servers.items():
        results[name]["kb_per_connection"] = memory_per_connection(process.pid, port, hit)
    print(f"\nembedding: the throughput part's request (2048x1365 JPEG q90 -> fit 512x512, JPEG q80, every request processed), "
          f"wrk -t1 -c16, {args.repeats} x {args.seconds} s alternating (medians); memory per idle keep-alive connection")
    for name, result in results.items():
        print(f"  {name:38} {result['rate']:8.1f} req/s   p50 {result['p50']:6.1f} ms   p99 {result['p99']:6.1f} ms   "
              f"non-2xx {result['errors']}   {result['kb_per_connection']:6.1f} KB per connection")
    vapor = results["Vapor app, ImageProxyVaporMiddleware"]["rate"]
    for name in list(servers)[:2]:
        print(f"  ratio Vapor / {name}: {vapor / results[name]['rate']:.2f}x")
    report["embedding"] = results
    for process, _ in servers.values():
        stop(process)


def ours_beside_vips(workdir: Path, port: int, path: str, args, vips_side, baseline_port: int = None) -> dict:
    """Ours answering PATH (a `{cb}` in it busts the cache: every request processed; `wrk -t1 -c8`
    after a 2 s warm-up), the --baseline build the same way when BASELINE_PORT is given, and
    VIPS_SIDE (a call making one libvips-alone run), alternating REPEATS times: {"ours": median and
    result bytes, "baseline": the same, "libvips alone": median rate and bytes}."""
    ports = {"ours": port} | ({"baseline": baseline_port} if baseline_port else {})
    sizes = {side: response_bytes(f"http://127.0.0.1:{side_port}" + path.replace("{cb}", "size")) for side, side_port in ports.items()}
    runs = {side: [] for side in ports}
    vips_runs = []
    for side_port in ports.values():
        wrk(f"http://127.0.0.1:{side_port}", 2, connections=8, script=cachebusting(workdir, path))
    for _ in range(args.repeats):
        for side, side_port in ports.items():
            runs[side].append(wrk(f"http://127.0.0.1:{side_port}", args.seconds, connections=8, script=cachebusting(workdir, path)))
        vips_runs.append(vips_side())
    return {side: median_of(runs[side]) | {"bytes": sizes[side]} for side in ports} | {
        "libvips alone": {"rate": statistics.median(run["rate"] for run in vips_runs), "bytes": vips_runs[0]["bytes"]}}


def png_sources(www: Path, width: int = 2048, height: int = 1365) -> dict:
    """The kinds of PNG the `png-kinds` part measures, each WIDTHxHEIGHT: the formats part's
    photograph; one with camera grain (unblurred noise over gradients, as the issue's 2 MB file);
    the grainy one with an alpha gradient; a screenshot (flat panels, text, thin rules); line art
    (black strokes on white, a 16-colour palette); the photograph Adam7-interlaced; and at 16
    bits a channel (libvips writes these two)."""
    import pyvips
    from PIL import Image, ImageDraw, ImageFilter
    photograph = encoded_photo(width, height, "PNG")(www)
    noise = Image.effect_noise((width, height), 48).convert("L")
    red = Image.linear_gradient("L").resize((width, height))
    grain = Image.merge("RGB", (Image.blend(red, noise, 0.4), noise, Image.blend(red.transpose(Image.Transpose.ROTATE_90).resize((width, height)), noise, 0.4)))
    sources = {"photograph": photograph, "camera grain": www / "grain.png"}
    grain.save(sources["camera grain"])
    translucent = grain.copy()
    translucent.putalpha(Image.linear_gradient("L").transpose(Image.Transpose.ROTATE_90).resize((width, height)))
    sources["grain with alpha"] = www / "grain-alpha.png"
    translucent.save(sources["grain with alpha"])
    screen = Image.new("RGB", (width, height), (246, 247, 249))
    draw = ImageDraw.Draw(screen)
    for index in range(40):
        x, y = (index * 211) % width, (index * 137) % height
        draw.rectangle((x, y, x + 300, y + 90), fill=(255, 255, 255), outline=(200, 204, 210))
        draw.text((x + 12, y + 12), f"Row {index}: settings, status and a longer label", fill=(30, 34, 40))
        draw.line((x, y + 60, x + 300, y + 60), fill=(0, 120, 215), width=2)
    sources["screenshot"] = www / "screenshot.png"
    screen.save(sources["screenshot"])
    art = Image.new("L", (width, height), 255)
    pen = ImageDraw.Draw(art)
    for index in range(300):
        x, y = (index * 173) % width, (index * 97) % height
        pen.ellipse((x, y, x + 40 + index % 200, y + 30 + index % 150), outline=0, width=3)
    sources["line art (palette)"] = www / "line-art.png"
    art.filter(ImageFilter.SMOOTH).quantize(16).save(sources["line art (palette)"])
    vips = pyvips.Image.new_from_file(str(photograph))
    sources["interlaced photograph"] = www / "interlaced.png"
    vips.pngsave(str(sources["interlaced photograph"]), interlace=True)
    sources["16-bit photograph"] = www / "sixteen.png"
    (vips.cast("ushort") * 257).cast("ushort").copy(interpretation="rgb16").pngsave(str(sources["16-bit photograph"]))
    return sources


def png_kinds(workdir: Path, args, report: dict):
    """Each kind of PNG (``png_sources``) fit into 512x512 as PNG: ours (every request
    processed, `wrk -c8`) against libvips alone (two processes, its defaults, as the formats
    part's PNG row), alternating REPEATS times; beside them the decode floor of the source,
    libpng's and libdeflate's (peers/png_floor.c, one core)."""
    www = workdir / "www"
    www.mkdir(exist_ok=True)
    sources = png_sources(www)
    origin = start_nginx(workdir, www)
    ours, ours_port = start_ours(workdir, "png-kinds")
    baseline = start_ours(workdir, "png-kinds-baseline", binary=args.baseline) if args.baseline else None
    results = {}
    for kind, source in sources.items():
        path = f"/unsafe/rs:fit:512:512/cb:{{cb}}/plain/http://127.0.0.1:{origin}/{source.name}@png"
        row = ours_beside_vips(workdir, ours_port, path, args, lambda: vips_alone(source, ".png", args.seconds),
                               baseline_port=baseline[1] if baseline else None)
        results[kind] = {"source_bytes": source.stat().st_size} | row | {"floor": png_floor(source)}
    print(f"\npng-kinds: 2048x1365 PNGs -> fit 512x512 PNG, every request processed, wrk -t1 -c8, {args.repeats} x {args.seconds} s "
          "alternating (medians); libvips alone: 2 processes, thumbnail_buffer + pngsave at its defaults, no HTTP; "
          "decode floor: one core, libpng to 8-bit RGBA and libdeflate's inflate of the image data alone (peers/png_floor.c)")
    for kind, row in results.items():
        floor = row["floor"]
        print(f"  {kind:22} {row['source_bytes'] / 1e6:5.2f} MB  ours {row['ours']['rate']:6.1f}/s ({row['ours']['bytes'] / 1024:5.1f} KB)"
              f"  libvips {row['libvips alone']['rate']:6.1f}/s ({row['libvips alone']['bytes'] / 1024:5.1f} KB)"
              f"  ours / libvips {row['ours']['rate'] / row['libvips alone']['rate']:.2f}x"
              f"  decode floor: libpng {floor['libpng_decode_ms']:.1f} ms, libdeflate inflate {floor['libdeflate_inflate_ms']:.1f} ms"
              + (f"  baseline {row['baseline']['rate']:6.1f}/s ({row['baseline']['bytes'] / 1024:5.1f} KB),"
                 f" ours / baseline {row['ours']['rate'] / row['baseline']['rate']:.2f}x" if "baseline" in row else ""))
    report["png_kinds"] = results
    stop(ours)
    if baseline:
        stop(baseline[0])


def high_bit_depth(workdir: Path, args, report: dict):
    """The 16-bit path: the 2048x1365 photograph at 16 bits a channel as PNG, and as a 10-bit AVIF
    (libvips' heifsave, Q=90), fit into 512x512 keeping the depth: ours with `ph:1` (16-bit PNG,
    10-bit AVIF at q:65; every request processed, `wrk -c8`) against libvips alone keeping it
    (peers/format_vips.py --keep-depth, two processes; PNG at its defaults and with every filter
    as imgproxy saves, AVIF at ours' encoder speed), alternating REPEATS times; and the 16-bit PNG
    made 8-bit (`ph:0`) against libvips' thumbnail_buffer, the png-kinds part's 16-bit row."""
    import pyvips
    www = workdir / "www"
    www.mkdir(exist_ok=True)
    sixteen = png_sources(www)["16-bit photograph"]
    ten = www / "ten.avif"
    pyvips.Image.new_from_file(str(sixteen)).write_to_file(str(ten) + "[Q=90,bitdepth=10]")
    origin = start_nginx(workdir, www)
    ours, ours_port = start_ours(workdir, "high-bit-depth")
    # libvips's AVIF effort 3 is aom's speed 6 (heifsave: speed = 9 - effort), ours by default.
    # The last row is png-kinds' 16-bit row: 8-bit results, libvips' thumbnail_buffer.
    rows = (("16-bit PNG -> 16-bit PNG", sixteen, "ph:1", "png", ".png"),
            ("the same, libvips with every filter", sixteen, "ph:1", "png", ".png[filter=all]"),
            ("10-bit AVIF -> 10-bit AVIF", ten, "ph:1/q:65", "avif", ".avif[Q=65,bitdepth=10,effort=3]"),
            ("16-bit PNG -> 8-bit PNG (ph:0)", sixteen, "ph:0", "png", ".png"))
    results = {}
    for label, source, options, extension, vips_suffix in rows:
        path = f"/unsafe/rs:fit:512:512/{options}/cb:{{cb}}/plain/http://127.0.0.1:{origin}/{source.name}@{extension}"
        vips_side = lambda: vips_alone(source, vips_suffix, args.seconds, keep_depth=options.startswith("ph:1"))
        results[label] = {"source_bytes": source.stat().st_size} | ours_beside_vips(workdir, ours_port, path, args, vips_side)
    print(f"\nhigh-bit-depth: 2048x1365 photograph -> fit 512x512 keeping its depth, every request processed, wrk -t1 -c8, "
          f"{args.repeats} x {args.seconds} s alternating (medians); libvips alone: 2 processes, load + resize + save, no HTTP")
    for label, row in results.items():
        vips = row["libvips alone"]
        print(f"  {label:36} ours {row['ours']['rate']:6.1f}/s ({row['ours']['bytes'] / 1024:6.1f} KB)"
              f"  libvips {vips['rate']:6.1f}/s ({vips['bytes'] / 1024:6.1f} KB)  ours / libvips {row['ours']['rate'] / vips['rate']:.2f}x")
    report["high_bit_depth"] = results
    stop(ours)


PARTS = {"throughput": throughput, "memory": memory, "cache": cache, "soak": soak, "formats": formats, "embedding": embedding,
         "png-kinds": png_kinds, "high-bit-depth": high_bit_depth}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("parts", nargs="*", help=f"parts to run: {', '.join(PARTS)} (default: all)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seconds", type=int, default=8)
    parser.add_argument("--soak-minutes", type=float, default=10)
    parser.add_argument("--json", type=Path, help="also write the results to this file")
    parser.add_argument("--rows", help="formats: only the rows whose labels start with these (comma-separated), e.g. JPEG,WebP")
    parser.add_argument("--baseline", type=Path,
                        help="throughput, cache, formats and png-kinds: another webimage binary run beside this build's")
    args = parser.parse_args()
    unknown = set(args.parts) - set(PARTS)
    if unknown:
        parser.error(f"unknown parts: {', '.join(sorted(unknown))}")
    subprocess.run(["swift", "build", "-c", "release", "--product", "webimage"], cwd=ROOT, check=True)
    if "cache" in (args.parts or PARTS):  # only the cache part measures Hummingbird's floor
        subprocess.run(["swift", "build", "-c", "release", "--product", "HTTPFloor"], cwd=ROOT / "Benchmarks", check=True)
    if "embedding" in (args.parts or PARTS):
        subprocess.run(["swift", "build", "-c", "release", "--product", "EmbeddedProxy"], cwd=ROOT / "Benchmarks", check=True)
    subprocess.run([str(ROOT / "scripts" / "install-deps.sh"), "nginx", "libnginx-mod-http-image-filter", "wrk", "curl"], check=True)
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "thumbor", "pillow", "pyvips", "pyvips-binary"], check=True)
    print(f"{date.today()} on {machine()}")
    report = {"date": str(date.today()), "machine": machine()}
    with tempfile.TemporaryDirectory() as temporary:
        for name in args.parts or PARTS:
            workdir = Path(temporary) / name
            (workdir / "www").mkdir(parents=True)
            # nginx's workers run as an unprivileged user when it starts as root.
            for directory in (Path(temporary), workdir, workdir / "www"):
                directory.chmod(0o755)
            try:
                PARTS[name](workdir, args, report)
            finally:
                while PROCESSES:
                    process = PROCESSES.pop()
                    process() if callable(process) else stop(process)
    if args.json:
        args.json.write_text(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
