#!/usr/bin/env python3
"""Peer side of the `download` comparison: wrk with 16 connections on one thread, cycling through
the same URL list for a few seconds. Prints {"operations": requests, "seconds": duration}."""
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from urllib.parse import urlparse


def main():
    url_list, connections = Path(sys.argv[1]), int(sys.argv[2])
    urls = url_list.read_text().split()
    paths = [urlparse(url).path for url in urls]
    base = urls[0][: -len(paths[0])]
    script = tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False)
    script.write("paths = {" + ",".join(f'"{p}"' for p in paths) + "}\ncounter = 0\n"
                 "request = function()\n  counter = counter % #paths + 1\n"
                 "  return wrk.format(nil, paths[counter])\nend\n")
    script.close()
    output = subprocess.run(["wrk", f"-c{connections}", "-t1", "-d4s", "-s", script.name, base + "/"],
                            check=True, capture_output=True, text=True).stdout
    requests = int(re.search(r"(\d+) requests in", output).group(1))
    seconds = float(re.search(r"requests in ([\d.]+)s", output).group(1))
    print(json.dumps({"operations": requests, "seconds": seconds}))


if __name__ == "__main__":
    main()
