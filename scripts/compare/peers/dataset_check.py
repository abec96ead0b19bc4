"""What both sides of the `dataset` comparison wrote, to compare them: the samples in the tar
shards (an image, its caption and its record), their sizes, and a SHA-256 of the sorted
(url, caption) pairs, so that the same count and the same captions show as equal lines."""
import hashlib
import json
import struct
import tarfile
from pathlib import Path


def jpeg_size(data: bytes):
    """(width, height) from a JPEG's SOF segment."""
    offset = 2
    while offset < len(data):
        marker, length = data[offset + 1], struct.unpack(">H", data[offset + 2:offset + 4])[0]
        if marker in (0xC0, 0xC1, 0xC2):
            height, width = struct.unpack(">HH", data[offset + 5:offset + 9])
            return width, height
        offset += 2 + length
    return None


def shard_check(folder: Path) -> dict:
    pairs, sizes = [], set()
    for shard in sorted(folder.glob("*.tar")):
        members = {}
        with tarfile.open(shard) as archive:
            for member in archive.getmembers():
                key, _, extension = member.name.partition(".")
                members.setdefault(key, {})[extension] = archive.extractfile(member).read()
        for sample in members.values():
            record = json.loads(sample["json"])
            pairs.append((record["url"], sample["txt"].decode()))
            sizes.add(jpeg_size(sample["jpg"]))
    digest = hashlib.sha256(json.dumps(sorted(pairs)).encode()).hexdigest()
    return {"samples": len(pairs), "sizes": sorted(str(size) for size in sizes), "captions_sha256": digest[:16]}


def stats_check(folder: Path) -> dict:
    """The rows, successes and success rate over a dataset's `_stats.json` files, which both tools
    write in img2dataset's form; and the reasons of the failures, most common first."""
    count, successes, reasons = 0, 0, {}
    for path in folder.glob("*_stats.json"):
        stats = json.loads(path.read_text())
        count += stats["count"]
        successes += stats["successes"]
        for reason, number in stats.get("status_dict", {}).items():
            if reason != "success":
                reasons[reason[:60]] = reasons.get(reason[:60], 0) + number
    top = sorted(reasons.items(), key=lambda item: -item[1])[:6]
    return {"rows": count, "successes": successes, "success_rate": round(successes / count, 4) if count else 0,
            "failures": dict(top)}
