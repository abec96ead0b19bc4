"""Where the slices of a list run: local processes, Spark tasks or Ray tasks. Each slice is one
`webimage prefetch --shard I/N` run; the engines schedule and retry, the command resumes."""

from concurrent.futures import ThreadPoolExecutor
from functools import partial
from typing import List

from ._command import CommandError, UsageError, run as run_command


def run(distributor: str, arguments: List[str], slices: int, processes_count: int, retries: int) -> None:
    """Runs `arguments` once per slice of `slices` on `distributor`; returns when all are done."""
    commands = [arguments + [f"--shard={index}/{slices}"] for index in range(slices)] if slices > 1 else [arguments]
    if distributor == "pyspark":
        _on_spark(commands, processes_count, retries)
    elif distributor == "ray":
        _on_ray(commands, retries)
    else:
        _on_processes(commands, processes_count, retries)


def run_slice(arguments: List[str], retries: int = 0) -> str:
    """One slice: the command, run again up to `retries` times after a failure (it resumes: the
    finished shards are kept). A refused argument is not retried. Returns its summary line."""
    failures = 0
    while True:
        try:
            return run_command(arguments)
        except UsageError:
            raise
        except CommandError:
            failures += 1
            if failures > retries:
                raise


def _on_processes(commands: List[List[str]], processes_count: int, retries: int) -> None:
    # A thread per running command: each waits on its child process, which does the work.
    with ThreadPoolExecutor(max_workers=max(1, processes_count)) as pool:
        futures = [pool.submit(run_slice, command, retries) for command in commands]
    errors = [future.exception() for future in futures if future.exception() is not None]
    if errors:
        raise errors[0]


def _on_spark(commands: List[List[str]], processes_count: int, retries: int) -> None:
    """One Spark task per slice, on the caller's active SparkSession (as img2dataset takes it),
    else on a local one of `processes_count` cores made for the call. A task that fails after its
    own reruns fails as a Spark task does: Spark retries it (`spark.task.maxFailures`)."""
    from pyspark.sql import SparkSession  # pylint: disable=import-outside-toplevel

    spark = SparkSession.getActiveSession()
    owned = spark is None
    if owned:
        spark = SparkSession.builder.master(f"local[{processes_count}]").appName("webimage").getOrCreate()
    try:
        spark.sparkContext.parallelize(commands, len(commands)).foreach(partial(run_slice, retries=retries))
    finally:
        if owned:
            spark.stop()


def _on_ray(commands: List[List[str]], retries: int) -> None:
    """One Ray task per slice on the connected cluster (`ray.init()` first, or Ray starts a local
    one). A failed task, its command's exit or its worker's death, is retried by Ray up to
    `retries` times."""
    import ray  # pylint: disable=import-outside-toplevel

    task = ray.remote(max_retries=retries, retry_exceptions=[CommandError])(run_slice)
    ray.get([task.remote(command) for command in commands])
