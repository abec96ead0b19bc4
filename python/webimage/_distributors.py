"""Where the slices of a list run: local processes, Spark tasks or Ray tasks. Each slice is one
`webimage prefetch --shard I/N` run; the engines schedule and retry, the command resumes."""

import math
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import partial
from typing import List, Optional

from ._command import CommandError, UsageError, run as run_command


@dataclass
class Plan:
    """A call's work: the command's arguments and how to cut the list into slices."""

    arguments: List[str]
    processes_count: int
    retries: int
    shard_size: int
    subjob_size: int
    # The list's rows; None when the slices do not depend on them (local processes).
    rows: Optional[int] = None

    def slices(self, parallelism: int) -> int:
        """For a cluster: one slice per `subjob_size` shards of the list, but at least one per core
        of the cluster (`parallelism`) and at most one per shard, so that every core has work and
        no slice is empty."""
        shards = max(1, math.ceil(self.rows / self.shard_size))
        by_subjob = math.ceil(shards / self.subjob_size)
        return max(1, min(max(by_subjob, parallelism), shards))

    def commands(self, slices: int) -> List[List[str]]:
        """The command of each slice: `--shard I/N`, or the whole list for one."""
        if slices == 1:
            return [self.arguments]
        return [self.arguments + [f"--shard={index}/{slices}"] for index in range(slices)]


def run(distributor: str, plan: Plan) -> None:
    """Runs the plan's slices on `distributor`; returns when all are done."""
    if distributor == "pyspark":
        _on_spark(plan)
    elif distributor == "ray":
        _on_ray(plan)
    else:
        _on_processes(plan.commands(plan.processes_count), plan.processes_count, plan.retries)


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


def _on_spark(plan: Plan) -> None:
    """One Spark task per slice, on the caller's active SparkSession (as img2dataset takes it),
    else on a local one of `processes_count` cores made for the call. A task that fails after its
    own reruns fails as a Spark task does: Spark retries it (`spark.task.maxFailures`)."""
    from pyspark.sql import SparkSession  # pylint: disable=import-outside-toplevel

    spark = SparkSession.getActiveSession()
    owned = spark is None
    if owned:
        spark = SparkSession.builder.master(f"local[{plan.processes_count}]").appName("webimage").getOrCreate()
    try:
        commands = plan.commands(plan.slices(spark.sparkContext.defaultParallelism))
        spark.sparkContext.parallelize(commands, len(commands)).foreach(partial(run_slice, retries=plan.retries))
    finally:
        if owned:
            spark.stop()


def _on_ray(plan: Plan) -> None:
    """One Ray task per slice on the connected cluster (`ray.init()` first, or Ray starts a local
    one). A failed task, its command's exit or its worker's death, is retried by Ray up to
    `retries` times."""
    import ray  # pylint: disable=import-outside-toplevel

    if not ray.is_initialized():
        ray.init()
    commands = plan.commands(plan.slices(int(ray.cluster_resources().get("CPU", 1))))
    task = ray.remote(max_retries=plan.retries, retry_exceptions=[CommandError])(run_slice)
    ray.get([task.remote(command) for command in commands])
