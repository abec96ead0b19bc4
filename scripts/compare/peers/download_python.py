#!/usr/bin/env python3
"""Both sides of the `distributor-*` comparisons: the same Python call, img2dataset's
`download(...)` keyword arguments, made to `webimage.download` (the installed wheel) or to
`img2dataset.download`, with one distributor: img2dataset's standard job on a caption CSV
(256 px center crops, jpg q95, webdataset shards), 2 processes x 16 threads. Spark runs in local
mode (`local[2]`) and Ray as a local cluster of 2 CPUs, both bound to 127.0.0.1 and started
before the clock (a cluster is up before a job comes). Prints {"operations": samples written,
"seconds": the call's wall time, "check": what the shards hold}.

Usage: download_python.py webimage|img2dataset multiprocessing|pyspark|ray CSV SHARD_SIZE
"""
import json
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from dataset_check import shard_check  # noqa: E402


def engine(distributor: str):
    """Starts the engine; returns its stop."""
    os.environ["RAY_USAGE_STATS_ENABLED"] = "0"
    os.environ["SPARK_LOCAL_IP"] = "127.0.0.1"
    os.environ["PYSPARK_PYTHON"] = sys.executable
    if distributor == "pyspark":
        from pyspark.sql import SparkSession
        session = (SparkSession.builder.master("local[2]").appName("compare")
                   .config("spark.driver.host", "127.0.0.1").config("spark.driver.bindAddress", "127.0.0.1")
                   .config("spark.ui.enabled", "false").getOrCreate())
        return session.stop
    if distributor == "ray":
        import ray
        ray.init(num_cpus=2, include_dashboard=False, _node_ip_address="127.0.0.1", log_to_driver=False)
        return ray.shutdown
    return lambda: None


def main():
    tool, distributor, csv, shard_size = sys.argv[1], sys.argv[2], Path(sys.argv[3]), int(sys.argv[4])
    os.environ["NO_ALBUMENTATIONS_UPDATE"] = "1"
    if tool == "webimage":
        from webimage import download
    else:
        from img2dataset import download
    stop = engine(distributor)
    try:
        with tempfile.TemporaryDirectory() as output:
            start = time.perf_counter()
            download(url_list=str(csv), input_format="csv", url_col="url", caption_col="caption", output_folder=output,
                     output_format="webdataset", processes_count=2, thread_count=16, image_size=256,
                     resize_mode="center_crop", encode_format="jpg", encode_quality=95,
                     number_sample_per_shard=shard_size, timeout=30, retries=0, distributor=distributor)
            elapsed = time.perf_counter() - start
            check = shard_check(Path(output))
    finally:
        stop()
    assert check["samples"] > 0, f"{tool} wrote nothing"
    print(json.dumps({"operations": check["samples"], "seconds": elapsed, "check": check}))


if __name__ == "__main__":
    main()
