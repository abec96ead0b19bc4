#!/usr/bin/env python3
"""A network that looks like the internet, on loopback, for the `crawl` comparison (issue 58):
one DNS server and one HTTP origin in a single asyncio process.

- DNS on 127.0.0.53:53 (UDP): `hNNNN.crawl.test` answers an A record after a delay of its own
  (10-150 ms, as a recursive resolver's miss takes); a share of the names are NXDOMAIN (dead
  domains), any other name is NXDOMAIN too, so nothing leaves the machine. AAAA: no records.
- HTTP on 127.0.0.1:PORT, keep-alive, the host told by `Host:`. Each host has one behaviour,
  drawn once from BEHAVIOURS with a fixed seed, and a latency before its first byte (20-250 ms):
  an image; an image dripped over ~2 s; a 404, 500 or 429; a redirect to the image; an HTML page;
  the connection closed mid-body; headers and half the body, then nothing; nothing at all after
  the request. Refusing hosts resolve to 127.0.0.2, where nothing listens (ECONNREFUSED).
- The list: URLS rows over HOSTS host names, a few hosts holding many rows and most one or two,
  as a web crawl's list does; written as a caption CSV (url, caption) img2dataset reads.

Usage: internet.py WORKDIR PORT HOSTS URLS   (prints "ready" when both servers listen)
"""
import asyncio
import csv
import random
import socket
import struct
import sys
import zlib
from pathlib import Path

from photos import photo_jpeg

DNS_ADDRESS = "127.0.0.53"
REFUSING_ADDRESS = "127.0.0.2"
SUFFIX = ".crawl.test"

# (behaviour, share of hosts)
BEHAVIOURS = [
    ("image", 0.70), ("drip", 0.05), ("refuse", 0.04), ("nxdomain", 0.04), ("silent", 0.03), ("stall", 0.02),
    ("404", 0.04), ("500", 0.02), ("429", 0.02), ("redirect", 0.02), ("truncate", 0.01), ("html", 0.01),
]


class Internet:
    def __init__(self, hosts: int, seed: int = 58):
        generator = random.Random(seed)
        names, weights = zip(*BEHAVIOURS)
        self.behaviour = [generator.choices(names, weights)[0] for _ in range(hosts)]
        self.latency = [generator.uniform(0.02, 0.25) for _ in range(hosts)]
        self.dns_delay = [generator.uniform(0.01, 0.15) for _ in range(hosts)]
        self.images = [photo_jpeg(seed, 640, 480, discs=30, radii=(12, 120), blur=4) for seed in range(8)]

    def host_index(self, name: str):
        name = name.lower().rstrip(".")
        if not (name.startswith("h") and name.endswith(SUFFIX)):
            return None
        digits = name[1:-len(SUFFIX)]
        if not digits.isdigit() or int(digits) >= len(self.behaviour):
            return None
        return int(digits)

    # DNS

    def dns_answer(self, query: bytes):
        """(delay, response) for a query, or None for a packet that is not one."""
        if len(query) < 12:
            return None
        ident, _, count = struct.unpack(">HHH", query[:6])
        if count != 1:
            return None
        offset, labels = 12, []
        while offset < len(query) and query[offset] != 0:
            length = query[offset]
            labels.append(query[offset + 1:offset + 1 + length].decode("ascii", "replace"))
            offset += 1 + length
        question = query[12:offset + 5]
        if len(question) < offset - 12 + 5:
            return None
        qtype = struct.unpack(">H", query[offset + 1:offset + 3])[0]
        index = self.host_index(".".join(labels))
        delay = self.dns_delay[index] if index is not None else 0.01
        if index is None or self.behaviour[index] == "nxdomain":
            return delay, struct.pack(">HHHHHH", ident, 0x8183, 1, 0, 0, 0) + question
        if qtype != 1:  # AAAA and the rest: the name is there, without such records
            return delay, struct.pack(">HHHHHH", ident, 0x8180, 1, 0, 0, 0) + question
        address = REFUSING_ADDRESS if self.behaviour[index] == "refuse" else "127.0.0.1"
        answer = b"\xc0\x0c" + struct.pack(">HHIH", 1, 1, 300, 4) + socket.inet_aton(address)
        return delay, struct.pack(">HHHHHH", ident, 0x8180, 1, 1, 0, 0) + question + answer

    # HTTP

    async def serve(self, reader, writer):
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                lines = head.decode("latin-1").split("\r\n")
                path = lines[0].split(" ")[1] if len(lines[0].split(" ")) > 1 else "/"
                headers = {line.split(":", 1)[0].strip().lower(): line.split(":", 1)[1].strip() for line in lines[1:] if ":" in line}
                index = self.host_index(headers.get("host", "").split(":")[0])
                keep = await self.respond(index, path, headers.get("host", ""), writer)
                if not keep or headers.get("connection", "").lower() == "close":
                    break
        except (asyncio.IncompleteReadError, ConnectionError, asyncio.LimitOverrunError):
            pass
        finally:
            writer.close()

    async def respond(self, index, path: str, host: str, writer) -> bool:
        """Answers one request as the host behaves; returns whether the connection stays open."""
        if index is None:
            writer.write(b"HTTP/1.1 421 Misdirected Request\r\nContent-Length: 0\r\n\r\n")
            return True
        await asyncio.sleep(self.latency[index])
        behaviour = self.behaviour[index]
        image = self.images[zlib.crc32(path.encode()) % len(self.images)]
        if behaviour == "redirect" and not path.startswith("/moved/"):
            writer.write(f"HTTP/1.1 302 Found\r\nLocation: http://{host}/moved{path}\r\nContent-Length: 0\r\n\r\n".encode())
            return True
        if behaviour in ("404", "500", "429"):
            reason = {"404": "Not Found", "500": "Internal Server Error", "429": "Too Many Requests"}[behaviour]
            body = f"<html><body>{reason}</body></html>".encode()
            writer.write(f"HTTP/1.1 {behaviour} {reason}\r\nContent-Type: text/html\r\nContent-Length: {len(body)}\r\n\r\n".encode() + body)
            return True
        if behaviour == "html":
            body = b"<html><body>" + b"<p>a page, not an image</p>" * 200 + b"</body></html>"
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: %d\r\n\r\n" % len(body) + body)
            return True
        if behaviour == "silent":
            await asyncio.sleep(3600)
            return False
        head = b"HTTP/1.1 200 OK\r\nContent-Type: image/jpeg\r\nContent-Length: %d\r\n\r\n" % len(image)
        if behaviour == "stall":
            writer.write(head + image[:len(image) // 2])
            await writer.drain()
            await asyncio.sleep(3600)
            return False
        if behaviour == "truncate":
            writer.write(head + image[:len(image) // 2])
            await writer.drain()
            return False
        if behaviour == "drip":
            writer.write(head)
            step = len(image) // 8 + 1
            for start in range(0, len(image), step):
                writer.write(image[start:start + step])
                await writer.drain()
                await asyncio.sleep(0.25)
            return True
        writer.write(head + image)
        await writer.drain()
        return True


class DNSProtocol(asyncio.DatagramProtocol):
    def __init__(self, internet: Internet):
        self.internet = internet
        self.transport = None

    def connection_made(self, transport):
        self.transport = transport

    def datagram_received(self, data, address):
        answer = self.internet.dns_answer(data)
        if answer is not None:
            delay, response = answer
            asyncio.get_running_loop().call_later(delay, self.transport.sendto, response, address)


def write_list(workdir: Path, hosts: int, urls: int, seed: int = 5800) -> Path:
    """URLS rows over HOSTS names: the host of row i drawn with weight 1/(rank+1), so a few hosts
    hold many rows and most hold one or two."""
    generator = random.Random(seed)
    weights = [1 / (rank + 1) ** 0.9 for rank in range(hosts)]
    path = workdir / "crawl.csv"
    with open(path, "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["url", "caption"])
        for (row, host) in enumerate(generator.choices(range(hosts), weights, k=urls)):
            writer.writerow([f"http://h{host:04d}{SUFFIX}:{PORT}/img/{row}.jpg", f"image {row}, from host {host}"])
    return path


async def main(workdir: Path, port: int, hosts: int, urls: int):
    internet = Internet(hosts)
    write_list(workdir, hosts, urls)
    loop = asyncio.get_running_loop()
    await loop.create_datagram_endpoint(lambda: DNSProtocol(internet), local_addr=(DNS_ADDRESS, 53))
    server = await asyncio.start_server(internet.serve, "127.0.0.1", port, backlog=4096)
    (workdir / "resolv.conf").write_text(f"nameserver {DNS_ADDRESS}\noptions timeout:2 attempts:2\n")
    print("ready", flush=True)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    PORT = int(sys.argv[2])
    asyncio.run(main(Path(sys.argv[1]), PORT, int(sys.argv[3]), int(sys.argv[4])))
