"""Reads dataset shards' Parquet tables the way their users do, with pyarrow and with Hugging
Face `datasets` (offline: files on disk only), and prints what each saw as JSON: the schema,
and per row the key, the status and the image column's SHA-256, with the image itself in
base64 when it is small (bytes are not JSON).
Usage: read_shards.py IMAGE_COLUMN FILE...
"""
import base64
import hashlib
import json
import os
import sys

os.environ["HF_DATASETS_OFFLINE"] = "1"
os.environ["HF_HUB_OFFLINE"] = "1"

import datasets  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402

column, files = sys.argv[1], sys.argv[2:]


def summary(row):
    image = row.get(column)
    return {
        "key": row["key"],
        "status": row["status"],
        "image_sha256": None if image is None else hashlib.sha256(image).hexdigest(),
        "image": None if image is None or len(image) > 65536 else base64.b64encode(image).decode("ascii"),
    }


table = pq.read_table(files)
hf = datasets.load_dataset("parquet", data_files=files, split="train", cache_dir=os.environ.get("HF_CACHE_DIR"))
print(
    json.dumps(
        {
            "schema": [[field.name, str(field.type)] for field in table.schema],
            "pyarrow": [summary(row) for row in table.to_pylist()],
            "datasets_columns": hf.column_names,
            "datasets": [summary(row) for row in hf],
        }
    )
)
