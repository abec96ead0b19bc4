"""`download()`: img2dataset's Python call, run by the `webimage prefetch` command."""

import json
import math
import os
import shutil
import warnings
from typing import List, Optional, Union

from . import _distributors
from ._command import run

# img2dataset's arguments that change nothing here, with why (a warning names each one given a
# value other than img2dataset's default).
_WITHOUT_EFFECT = {
    "upscale_interpolation": ("lanczos", "Lanczos-3 enlarges"),
    "downscale_interpolation": ("area", "a widened bilinear filter shrinks"),
    "enable_wandb": (False, "no Weights & Biases reporting"),
    "wandb_project": ("img2dataset", "no Weights & Biases reporting"),
    "oom_shard_count": (5, "shard names have five digits"),
}

_DISTRIBUTORS = ("multiprocessing", "pyspark", "ray")
_INCREMENTAL_MODES = ("incremental", "overwrite")


def download(
    url_list: Union[str, List[str]],
    image_size: int = 256,
    output_folder: str = "images",
    processes_count: int = 1,
    resize_mode: str = "border",
    resize_only_if_bigger: bool = False,
    upscale_interpolation: str = "lanczos",
    downscale_interpolation: str = "area",
    encode_quality: int = 95,
    encode_format: str = "jpg",
    skip_reencode: bool = False,
    output_format: str = "files",
    input_format: str = "txt",
    url_col: str = "url",
    caption_col: Optional[str] = None,
    bbox_col: Optional[str] = None,
    thread_count: int = 256,
    number_sample_per_shard: int = 10000,
    extract_exif: bool = True,
    save_additional_columns: Optional[List[str]] = None,
    timeout: int = 10,
    enable_wandb: bool = False,
    wandb_project: str = "img2dataset",
    oom_shard_count: int = 5,
    compute_hash: Optional[str] = "sha256",
    verify_hash: Optional[List[str]] = None,
    distributor: str = "multiprocessing",
    subjob_size: int = 1000,
    retries: int = 0,
    disable_all_reencoding: bool = False,
    min_image_size: int = 0,
    max_image_area: float = float("inf"),
    max_aspect_ratio: float = float("inf"),
    incremental_mode: str = "incremental",
    max_shard_retry: int = 1,
    user_agent_token: Optional[str] = None,
    disallowed_header_directives: Optional[List[str]] = None,
) -> None:
    """Downloads, resizes and writes the images of `url_list` into `output_folder` in
    img2dataset's layout, with img2dataset's arguments, names, defaults and meanings (its
    `img2dataset.download`). Returns when every shard is whole.

    The work is done by the `webimage prefetch` command this package carries. `distributor`
    spreads the list: "multiprocessing" over `processes_count` local processes, "pyspark" over
    the active SparkSession's tasks (one per `subjob_size` shards; a local one of
    `processes_count` cores when none is active), "ray" over Ray tasks. Each task takes a slice of
    the list by a stable hash of each URL and writes its own shards into the one output (a
    folder, `s3://` or `gs://`); a task that fails is run again up to `max_shard_retry` times and
    redoes only its unfinished shards, as does a call made again with the same arguments.

    Raises `TypeError` for an argument img2dataset does not have, `ValueError` (a
    ``UsageError``) for a value the command refuses, and ``CommandError`` when a run failed; the
    command's progress and warnings go to `sys.stderr` (a Spark or Ray task's to its log).
    """
    given = dict(locals())
    _warn_without_effect(given)
    if distributor not in _DISTRIBUTORS:
        raise ValueError(f"Distributor {distributor} not supported (multiprocessing, pyspark or ray)")
    if incremental_mode not in _INCREMENTAL_MODES:
        raise ValueError(
            f"incremental_mode {incremental_mode!r} is not supported: 'incremental' (a rerun skips finished shards) "
            "or 'overwrite' (the output folder is removed first)"
        )
    for name in ("processes_count", "subjob_size", "number_sample_per_shard"):
        if not isinstance(given[name], int) or given[name] < 1:
            raise ValueError(f"{name} takes a whole number from 1, not {given[name]!r}")
    if not isinstance(max_shard_retry, int) or max_shard_retry < 0:
        raise ValueError(f"max_shard_retry takes a whole number from 0, not {max_shard_retry!r}")
    url_list, output_folder = _absolute(url_list), _absolute(output_folder)
    if incremental_mode == "overwrite":
        _remove_output(output_folder)
    arguments = ["prefetch"] + _command_arguments({**given, "url_list": url_list, "output_folder": output_folder})
    plan = _distributors.Plan(
        arguments=arguments, processes_count=processes_count, retries=max_shard_retry, shard_size=number_sample_per_shard,
        subjob_size=subjob_size, rows=None if distributor == "multiprocessing" else _count_rows(url_list, input_format, url_col),
    )
    _distributors.run(distributor, plan)


def _warn_without_effect(given: dict) -> None:
    for name, (default, reason) in _WITHOUT_EFFECT.items():
        if given[name] != default:
            warnings.warn(f"{name} is img2dataset's and has no effect here: {reason}", stacklevel=3)


def _absolute(path):
    """A local path made absolute (the tasks of a cluster may run elsewhere), each of a list of
    them; a bucket as it is."""
    if isinstance(path, (list, tuple)):
        return [_absolute(item) for item in path]
    return path if "://" in path else os.path.abspath(path)


def _remove_output(output_folder: str) -> None:
    if "://" in output_folder:
        raise ValueError(
            "incremental_mode='overwrite' removes a local output folder; empty the bucket's prefix yourself, "
            "or use 'incremental' (a rerun skips finished shards)"
        )
    shutil.rmtree(output_folder, ignore_errors=True)


# The arguments handed to the command as they are, in img2dataset's command-line spelling (the
# command translates its names and Python Fire's values).
_PASSED = (
    "url_list", "image_size", "output_folder", "resize_mode", "resize_only_if_bigger", "encode_quality",
    "encode_format", "skip_reencode", "output_format", "input_format", "url_col", "caption_col", "bbox_col",
    "thread_count", "number_sample_per_shard", "extract_exif", "save_additional_columns", "timeout",
    "compute_hash", "verify_hash", "retries", "disable_all_reencoding", "min_image_size", "max_image_area",
    "max_aspect_ratio", "user_agent_token", "disallowed_header_directives",
)


def _command_arguments(given: dict) -> List[str]:
    """`--name=value` for each argument with a value: booleans as True/False, lists as JSON
    (img2dataset's Fire spelling); None and infinity leave the command's default (none, no bound).
    Downloads go into the output only, not the command's disk cache, as img2dataset's do."""
    arguments = ["--no-cache", "--json"]
    for name in _PASSED:
        value = given[name]
        if name == "compute_hash" and value is None:
            value = "none"
        if name == "thread_count":
            # img2dataset's threads per process; the command takes at most 256 downloads at once.
            value = max(1, min(int(value), 256))
        if value is None or (isinstance(value, float) and math.isinf(value)):
            continue
        arguments.append(f"--{name}={_fire_text(value)}")
    return arguments


def _fire_text(value) -> str:
    if isinstance(value, bool):
        return "True" if value else "False"
    if isinstance(value, (list, tuple)):
        return json.dumps([str(item) for item in value])
    return str(value)


def _count_rows(url_list, input_format: str, url_col: str) -> int:
    """The list's rows, counted by the command as it reads them (a cluster's slices are sized by them)."""
    listing = [f"--{name}={_fire_text(value)}" for name, value in
               (("url_list", url_list), ("input_format", input_format), ("url_col", url_col))]
    return json.loads(run(["prefetch", "--count-rows", "--json"] + listing))["rows"]
