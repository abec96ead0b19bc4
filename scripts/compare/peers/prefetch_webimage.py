#!/usr/bin/env python3
"""Our side of the `prefetch` comparison: `webimage prefetch -j N` (release build) over the URL
list into an empty cache directory. Prints {"operations": images loaded, "seconds": wall time of
the whole process}."""
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]


def main():
    url_list, parallel = Path(sys.argv[1]), int(sys.argv[2])
    with tempfile.TemporaryDirectory() as cache:
        start = time.perf_counter()
        completed = subprocess.run(
            [str(ROOT / ".build" / "release" / "webimage"), "prefetch", "-i", str(url_list), "-j", str(parallel), "--cache-dir", cache, "--json"],
            check=True, capture_output=True, text=True)
        elapsed = time.perf_counter() - start
    summary = json.loads(completed.stdout.strip().splitlines()[-1])
    assert summary["failed"] == 0 and summary["succeeded"] == summary["total"], summary
    print(json.dumps({"operations": summary["succeeded"], "seconds": elapsed}))


if __name__ == "__main__":
    main()
