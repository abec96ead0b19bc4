#!/usr/bin/env python3
"""Peer side of `decode-jxl`: Debian's djxl (libjxl 0.7, the library the coder uses) decoding the
file ROUNDS times to pixels in memory (`--num_reps`, no output file) on one thread; it reports the
geometric mean of its own timings, which are turned back into megapixels and seconds."""
import json
import re
import subprocess
import sys


def main():
    path, rounds = sys.argv[1], int(sys.argv[2])
    result = subprocess.run(["djxl", path, f"--num_reps={rounds}", "--num_threads=1"], check=True, capture_output=True, text=True)
    match = re.search(r"(\d+) x (\d+), (?:geomean: )?([\d.]+) MP/s", result.stdout + result.stderr)
    width, height, rate = int(match.group(1)), int(match.group(2)), float(match.group(3))
    megapixels = width * height * rounds / 1e6
    print(json.dumps({"operations": megapixels, "seconds": megapixels / rate}))


if __name__ == "__main__":
    main()
