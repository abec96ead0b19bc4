#!/usr/bin/env python3
"""The network's floor for the `crawl` comparison: the same rows fetched 256 at once with nothing
else done (no decoding, resizing, encoding or writing), in asyncio with the system resolver on 256
threads and its answers kept per host, the same 10 s timeout between two reads, one redirect
followed. A row succeeds when it ends in a whole 200 with an image type. What no crawler at that
concurrency can beat on this network. Prints {"operations": successes, "seconds": wall time,
"check": {"rows", "successes", "success_rate"}}.

Usage: crawl_floor.py CSV   (run inside crawl_side.py's namespace, which names the DNS server)
"""
import asyncio
import csv
import json
import socket
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from urllib.parse import urlsplit

CONCURRENCY = 256
TIMEOUT = 10


async def fetch(url: str, resolve) -> bool:
    for _ in range(2):  # the URL, then one redirect
        parts = urlsplit(url)
        address = await resolve(parts.hostname)
        reader, writer = await asyncio.wait_for(asyncio.open_connection(address, parts.port or 80), TIMEOUT)
        try:
            writer.write(f"GET {parts.path or '/'} HTTP/1.1\r\nHost: {parts.netloc}\r\nConnection: close\r\n\r\n".encode())
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), TIMEOUT)
            lines = head.decode("latin-1").split("\r\n")
            status = int(lines[0].split(" ")[1])
            headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:] if ":" in line)}
            if status in (301, 302, 303, 307, 308) and "location" in headers:
                url = headers["location"]
                continue
            length = int(headers.get("content-length", "0"))
            received = 0
            while received < length:
                piece = await asyncio.wait_for(reader.read(65536), TIMEOUT)
                if not piece:
                    return False
                received += len(piece)
            return status == 200 and headers.get("content-type", "").startswith("image/")
        finally:
            writer.close()
    return False


async def main(path: str):
    urls = [row["url"] for row in csv.DictReader(open(path))]
    loop = asyncio.get_running_loop()
    threads = ThreadPoolExecutor(CONCURRENCY)
    answers: dict = {}

    async def resolve(host: str) -> str:
        if host not in answers:
            answers[host] = loop.run_in_executor(threads, socket.gethostbyname, host)
        return await answers[host]

    queue = iter(urls)
    successes = 0

    async def worker():
        nonlocal successes
        for url in queue:
            try:
                # Awaited first: `successes += await ...` would read the count before the await.
                succeeded = await fetch(url, resolve)
                successes += succeeded
            except (OSError, asyncio.TimeoutError, asyncio.IncompleteReadError, ValueError, IndexError):
                pass

    start = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(CONCURRENCY)))
    elapsed = time.perf_counter() - start
    threads.shutdown(wait=False, cancel_futures=True)
    print(json.dumps({"operations": successes, "seconds": elapsed,
                      "check": {"rows": len(urls), "successes": successes, "success_rate": round(successes / len(urls), 4)}}))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
