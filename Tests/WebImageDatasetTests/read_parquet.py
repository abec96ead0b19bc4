"""Reads a Parquet file with pyarrow and prints its schema and rows as JSON (bytes as text):
the check that a table this project writes is one pyarrow reads.
Usage: read_parquet.py FILE
"""
import json
import sys

import pyarrow.parquet as pq

table = pq.read_table(sys.argv[1])
print(json.dumps({"schema": {field.name: str(field.type) for field in table.schema}, "rows": table.to_pylist()}))
