#!/usr/bin/env python3
"""Peer side of the `download` comparison: curl --parallel --parallel-max N over the same URL
list, bodies to /dev/null. Prints {"operations": URLs, "seconds": wall time}."""
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def main():
    url_list, parallel = Path(sys.argv[1]), int(sys.argv[2])
    urls = url_list.read_text().split()
    config = tempfile.NamedTemporaryFile("w", suffix=".curl", delete=False)
    for url in urls:
        config.write(f'url = "{url}"\noutput = "/dev/null"\n')
    config.close()
    start = time.perf_counter()
    subprocess.run(["curl", "--silent", "--fail", "--parallel", "--parallel-max", str(parallel), "-K", config.name], check=True)
    print(json.dumps({"operations": len(urls), "seconds": time.perf_counter() - start}))


if __name__ == "__main__":
    main()
