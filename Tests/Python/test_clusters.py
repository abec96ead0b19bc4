"""`distributor="pyspark"` and `distributor="ray"`: the list's slices as tasks of a Spark session in
local mode (local[2], Debian's headless JRE) and of a local Ray cluster, on the test origin. A
task whose command dies in the middle of a shard is retried by the engine itself (Spark's
`local[2,2]` allows a task two attempts, Ray's `max_retries` is `max_shard_retry`) and redoes
only its unfinished shards."""

import os
import sys

import pytest

import webimage
from conftest import KillWhenHeld, samples, stats_total, write_list


@pytest.fixture(scope="module")
def spark():
    from pyspark.sql import SparkSession  # pylint: disable=import-outside-toplevel

    # Executors' Python: this environment's, which has the wheel.
    os.environ["PYSPARK_PYTHON"] = sys.executable
    session = (
        SparkSession.builder.master("local[2,2]").appName("webimage-tests")
        .config("spark.driver.host", "127.0.0.1").config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.ui.enabled", "false").getOrCreate()
    )
    yield session
    session.stop()


@pytest.fixture(scope="module")
def ray_cluster():
    import ray  # pylint: disable=import-outside-toplevel

    ray.init(num_cpus=2, include_dashboard=False, _node_ip_address="127.0.0.1", log_to_driver=True)
    yield ray
    ray.shutdown()


def test_a_cluster_gets_a_slice_per_subjob_but_one_per_core_at_least():
    from webimage._distributors import Plan  # pylint: disable=import-outside-toplevel

    def slices(rows, shard_size, subjob_size, cores):
        return Plan([], 1, 0, shard_size, subjob_size, rows).slices(cores)

    # LAION-400M's 413M rows in img2dataset's defaults (10,000 a shard, 1,000 shards a subjob).
    assert slices(413_000_000, 10_000, 1_000, 160) == 160
    assert slices(413_000_000, 10_000, 100, 160) == 413
    assert slices(40, 4, 2, 2) == 5
    assert slices(2_000, 1_000, 1_000, 16) == 2, "never more slices than shards"
    assert slices(0, 10_000, 1_000, 16) == 1


@pytest.mark.parametrize("distributor", ["pyspark", "ray"])
def test_tasks_share_the_list(distributor, origin, tmp_path, request):
    """40 rows, 4 a shard, 2 shards a task: five tasks, each its slice; every URL once."""
    request.getfixturevalue("spark" if distributor == "pyspark" else "ray_cluster")
    url_list, urls = write_list(tmp_path, origin, 40)
    webimage.download(str(url_list), input_format="csv", caption_col="caption", output_folder=str(tmp_path / "out"),
                      distributor=distributor, number_sample_per_shard=4, subjob_size=2, thread_count=8)
    assert samples(tmp_path / "out") == {url: 1 for url in urls}
    assert stats_total(tmp_path / "out") == 40
    assert set(origin.requests.values()) == {1}


@pytest.mark.parametrize("distributor", ["pyspark", "ray"])
def test_a_task_killed_mid_shard_is_retried_by_the_engine(distributor, origin, tmp_path, request):
    request.getfixturevalue("spark" if distributor == "pyspark" else "ray_cluster")
    url_list, urls = write_list(tmp_path, origin, 24)
    origin.hold("/img/17.jpg")
    output = tmp_path / "out"
    killer = KillWhenHeld(origin, output)
    # Spark retries the failed task (no reruns inside it); Ray retries it max_shard_retry times.
    webimage.download(str(url_list), input_format="csv", output_folder=str(output), distributor=distributor,
                      number_sample_per_shard=3, subjob_size=2, thread_count=4,
                      max_shard_retry=0 if distributor == "pyspark" else 1)
    assert killer.join() >= 1
    assert samples(output) == {url: 1 for url in urls}
    assert stats_total(output) == 24
