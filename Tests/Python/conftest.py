"""The Python tests' origin and checks. They run against the installed wheel (scripts/python-tests.sh
installs it into a fresh virtual environment), never against the build folder, on 127.0.0.1 only."""

import collections
import json
import os
import signal
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

FIXTURES = Path(__file__).resolve().parents[1] / "WebImageTestSupport" / "Fixtures"
JPEG = (FIXTURES / "gradient.jpg").read_bytes()

# Nothing may leave the machine: Ray would report usage to its makers, Spark would bind outside.
os.environ["RAY_USAGE_STATS_ENABLED"] = "0"
os.environ["SPARK_LOCAL_IP"] = "127.0.0.1"


class Origin:
    """An HTTP/1.1 server on 127.0.0.1 serving a JPEG at /img/N.jpg, counting requests per path.
    A path passed to `hold` is answered only after `release`, the first time it is asked for:
    a run is then caught in the middle of a shard, and `held` is set when it is."""

    def __init__(self):
        self.requests = collections.Counter()
        self.lock = threading.Lock()
        self.held = threading.Event()
        self.released = threading.Event()
        self.hold_path = None
        origin = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self):  # noqa: N802 (http.server's name)
                with origin.lock:
                    origin.requests[self.path] += 1
                    first = origin.requests[self.path] == 1
                if self.path == origin.hold_path and first:
                    origin.held.set()
                    origin.released.wait(120)
                    return
                if not self.path.startswith("/img/"):
                    self.send_error(404)
                    return
                self.send_response(200)
                self.send_header("Content-Type", "image/jpeg")
                self.send_header("Content-Length", str(len(JPEG)))
                self.end_headers()
                self.wfile.write(JPEG)

            def log_message(self, *_):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.server.server_port}{path}"

    def hold(self, path: str) -> None:
        self.hold_path = path

    def close(self):
        self.released.set()
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def origin():
    server = Origin()
    yield server
    server.close()


def write_list(folder: Path, origin: Origin, count: int) -> tuple:
    """A CSV of `count` image URLs with captions; returns its path and the URLs."""
    urls = [origin.url(f"/img/{index}.jpg") for index in range(count)]
    path = folder / "list.csv"
    path.write_text("url,caption\n" + "".join(f"{url},caption {index}\n" for index, url in enumerate(urls)))
    return path, urls


def samples(output: Path) -> collections.Counter:
    """How many times each URL is a sample of the files layout (its KEY.json beside KEY.jpg)."""
    found = collections.Counter()
    for record in output.glob("*/*.json"):
        data = json.loads(record.read_text())
        assert data["status"] == "success", data
        assert record.with_suffix(".jpg").is_file(), record
        found[data["url"]] += 1
    return found


def stats_total(output: Path) -> int:
    """The rows the shards' _stats.json files count (a shard with its stats is whole)."""
    return sum(json.loads(path.read_text())["count"] for path in output.glob("*_stats.json"))


class KillWhenHeld:
    """A worker dying mid-shard: once the origin holds its row, every `webimage prefetch` writing
    into `output` is SIGKILLed and the row let go. `join()` says how many were killed, for the
    test's own thread to assert (an assertion in this thread would not fail the test)."""

    def __init__(self, origin: Origin, output: Path):
        self.killed = 0
        self.thread = threading.Thread(target=self._run, args=(origin, output))
        self.thread.start()

    def _run(self, origin: Origin, output: Path) -> None:
        if origin.held.wait(180):
            self.killed = kill_runs_into(output)
        origin.released.set()

    def join(self) -> int:
        self.thread.join()
        return self.killed


def kill_runs_into(output: Path) -> int:
    """SIGKILLs every `webimage prefetch` process writing into `output`: a worker dying mid-shard.
    Returns how many were killed."""
    killed = 0
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            arguments = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"prefetch" in arguments and any(str(output).encode() in argument for argument in arguments):
            try:
                os.kill(int(entry.name), signal.SIGKILL)
                killed += 1
            except ProcessLookupError:
                pass
    return killed
