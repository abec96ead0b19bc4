"""Writes Parquet lists with pyarrow for the reader's tests, and beside each the rows as pyarrow
itself reads them back (`NAME.expected.jsonl`, `Table.to_pylist()`), which the tests compare the
Swift reader's rows with. Every combination the issue names: compression (none, snappy, gzip,
zstd), data pages v1 and v2, dictionary or not, the value encodings pyarrow writes (PLAIN,
RLE_DICTIONARY, DELTA_BINARY_PACKED, DELTA_LENGTH_BYTE_ARRAY, DELTA_BYTE_ARRAY,
BYTE_STREAM_SPLIT), every physical type, nulls, DataComp's list<list<double>> face boxes (null,
empty and nested-empty lists too), several row groups and pages, and a folder of part files.

Usage: make_parquet.py OUTPUT_FOLDER
"""
import itertools
import json
import os
import sys

import pyarrow as pa
import pyarrow.parquet as pq

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
ROWS = 200


def table():
    urls = [f"http://a.test/{i}.jpg" if i % 17 else None for i in range(ROWS)]
    boxes = []
    for i in range(ROWS):
        if i % 11 == 0:
            boxes.append(None)
        elif i % 7 == 0:
            boxes.append([])
        elif i % 13 == 0:
            boxes.append([[0.1, 0.2, 0.3, 0.4], None, []])
        else:
            boxes.append([[i / 1000, 0.25, 0.5 + i / 10000, 0.75]] * (i % 3))
    return pa.table(
        {
            "url": pa.array(urls, pa.string()),
            "URL": pa.array([f"https://b.test/p/{i % 40}" for i in range(ROWS)], pa.string()),
            "TEXT": pa.array([None if i % 5 == 0 else f"caption {i} ünïcode ☕" for i in range(ROWS)], pa.string()),
            "uid": pa.array([f"{i:032x}" for i in range(ROWS)], pa.string()),
            "original_width": pa.array([None if i % 9 == 0 else 100 + i for i in range(ROWS)], pa.int32()),
            "original_height": pa.array([(1 << 40) + i for i in range(ROWS)], pa.int64()),
            "similarity": pa.array([i / 7 for i in range(ROWS)], pa.float64()),
            "pwatermark": pa.array([None if i % 4 == 0 else i / 3 for i in range(ROWS)], pa.float32()),
            "nsfw": pa.array([None if i % 6 == 0 else i % 2 == 0 for i in range(ROWS)], pa.bool_()),
            "sha256": pa.array([f"{i:02x}".encode() * 3 + b"hash" for i in range(ROWS)], pa.binary()),
            "key": pa.array([f"{i:08d}".encode() for i in range(ROWS)], pa.binary(8)),
            "face_bboxes": pa.array(boxes, pa.list_(pa.list_(pa.float64()))),
            "tags": pa.array([None if i % 8 == 0 else [f"t{i % 3}", None, "x"][: i % 4] for i in range(ROWS)], pa.list_(pa.string())),
        }
    )


def write(name, data, **options):
    path = os.path.join(out, name + ".parquet")
    pq.write_table(data, path, row_group_size=128, data_page_size=512, **options)
    back = pq.read_table(path)
    with open(os.path.join(out, name + ".expected.jsonl"), "w") as file:
        for row in back.to_pylist():
            file.write(json.dumps({k: v.decode("latin-1") if isinstance(v, bytes) else v for k, v in row.items()}, ensure_ascii=False) + "\n")


data = table()
names = []
for compression, version, dictionary in itertools.product(["NONE", "SNAPPY", "GZIP", "ZSTD"], ["1.0", "2.0"], [True, False]):
    name = f"{compression.lower()}-v{version[0]}-{'dict' if dictionary else 'plain'}"
    write(name, data, compression=compression, data_page_version=version, use_dictionary=dictionary)
    names.append(name)

# The non-dictionary encodings pyarrow writes, column by column.
encodings = {
    "original_width": "DELTA_BINARY_PACKED",
    "original_height": "DELTA_BINARY_PACKED",
    "url": "DELTA_LENGTH_BYTE_ARRAY",
    "TEXT": "DELTA_BYTE_ARRAY",
    "uid": "DELTA_BYTE_ARRAY",
    "similarity": "BYTE_STREAM_SPLIT",
    "pwatermark": "BYTE_STREAM_SPLIT",
}
for version in ["1.0", "2.0"]:
    name = f"delta-v{version[0]}"
    write(name, data, compression="SNAPPY", data_page_version=version, use_dictionary=False, column_encoding=encodings)
    names.append(name)

# Parquet format 1.0, whose dictionary pages are PLAIN_DICTIONARY.
write("format1-dict", data, compression="SNAPPY", version="1.0", use_dictionary=True)
names.append("format1-dict")

# A folder of part files: one list.
parts = os.path.join(out, "parts")
os.makedirs(parts, exist_ok=True)
for index in range(3):
    pq.write_table(data.slice(index * 80, 80), os.path.join(parts, f"part-{index:05d}.parquet"), compression="ZSTD")
with open(os.path.join(out, "parts.expected.jsonl"), "w") as file:
    for row in data.to_pylist():
        file.write(json.dumps({k: v.decode("latin-1") if isinstance(v, bytes) else v for k, v in row.items()}, ensure_ascii=False) + "\n")

with open(os.path.join(out, "names.json"), "w") as file:
    json.dump(names, file)
