"""`webimage.download()` with img2dataset's arguments (img2dataset 1.47's `main.download`
signature and defaults), on the default distributor: local processes."""

import inspect
import json

import pytest

import webimage
from conftest import KillWhenHeld, samples, stats_total, write_list


def test_img2dataset_signature():
    """The same parameters, in the same order, with the same defaults as img2dataset 1.47's."""
    parameters = inspect.signature(webimage.download).parameters
    expected = {
        "url_list": inspect.Parameter.empty, "image_size": 256, "output_folder": "images", "processes_count": 1,
        "resize_mode": "border", "resize_only_if_bigger": False, "upscale_interpolation": "lanczos",
        "downscale_interpolation": "area", "encode_quality": 95, "encode_format": "jpg", "skip_reencode": False,
        "output_format": "files", "input_format": "txt", "url_col": "url", "caption_col": None, "bbox_col": None,
        "thread_count": 256, "number_sample_per_shard": 10000, "extract_exif": True, "save_additional_columns": None,
        "timeout": 10, "enable_wandb": False, "wandb_project": "img2dataset", "oom_shard_count": 5,
        "compute_hash": "sha256", "verify_hash": None, "distributor": "multiprocessing", "subjob_size": 1000,
        "retries": 0, "disable_all_reencoding": False, "min_image_size": 0, "max_image_area": float("inf"),
        "max_aspect_ratio": float("inf"), "incremental_mode": "incremental", "max_shard_retry": 1,
        "user_agent_token": None, "disallowed_header_directives": None,
    }
    assert list(parameters) == list(expected)
    assert {name: parameter.default for name, parameter in parameters.items()} == expected


def test_files_layout_with_img2dataset_defaults(origin, tmp_path):
    """img2dataset's defaults: 256x256 with a border, JPEG, the files layout, sha256 in each record."""
    url_list, urls = write_list(tmp_path, origin, 12)
    webimage.download(str(url_list), input_format="csv", caption_col="caption", output_folder=str(tmp_path / "out"),
                      number_sample_per_shard=5)
    output = tmp_path / "out"
    assert samples(output) == {url: 1 for url in urls}
    assert sorted(path.name for path in output.glob("*_stats.json")) == ["00000_stats.json", "00001_stats.json", "00002_stats.json"]
    first = sorted((output / "00000").glob("*.json"))[0]
    record = json.loads(first.read_text())
    assert (record["width"], record["height"]) == (256, 256)
    assert len(record["sha256"]) == 64
    assert first.with_suffix(".txt").read_text() == "caption 0"


def test_url_list_as_a_folder_or_a_list_of_files(origin, tmp_path):
    """As img2dataset's reader takes them: a folder's files of the input format in name order, or a
    list of files; rows numbered across them, so both make the same dataset."""
    folder = tmp_path / "lists"
    folder.mkdir()
    urls = [origin.url(f"/img/{index}.jpg") for index in range(7)]
    (folder / "part-0.csv").write_text("url\n" + "".join(f"{url}\n" for url in urls[:4]))
    (folder / "part-1.csv").write_text("url\n" + "".join(f"{url}\n" for url in urls[4:]))
    (folder / "notes.txt").write_text("not a list")
    webimage.download(str(folder), input_format="csv", output_folder=str(tmp_path / "a"), number_sample_per_shard=3)
    webimage.download([str(folder / "part-0.csv"), str(folder / "part-1.csv")], input_format="csv",
                      output_folder=str(tmp_path / "b"), number_sample_per_shard=3)
    for name in ("a", "b"):
        assert samples(tmp_path / name) == {url: 1 for url in urls}
        keys = {json.loads(path.read_text())["url"]: path.stem for path in (tmp_path / name).glob("*/*.json")}
        assert [keys[url] for url in urls] == ["000000", "000001", "000002", "000010", "000011", "000012", "000020"]


def test_a_datacomp_parquet_list(origin, tmp_path):
    """DataComp's call (its download_upstream.py: a folder of Parquet parts, uid saved, faces
    blurred by bbox_col): rows from both parts, each record with its uid and its boxes."""
    import pyarrow  # pylint: disable=import-outside-toplevel
    import pyarrow.parquet as parquet  # pylint: disable=import-outside-toplevel

    folder = tmp_path / "metadata"
    folder.mkdir()
    urls = [origin.url(f"/img/{index}.jpg") for index in range(6)]
    boxes = [[[0.1, 0.1, 0.5, 0.5]], [], None, [[0.0, 0.0, 1.0, 1.0]], [[0.2, 0.3, 0.4, 0.6]], []]
    for part, rows in enumerate((range(0, 3), range(3, 6))):
        table = pyarrow.table({
            "uid": [f"{index:032x}" for index in rows], "url": [urls[index] for index in rows],
            "text": [f"text {index}" for index in rows],
            "face_bboxes": pyarrow.array([boxes[index] for index in rows], type=pyarrow.list_(pyarrow.list_(pyarrow.float64()))),
        })
        parquet.write_table(table, folder / f"part-{part}.parquet")
    webimage.download(url_list=str(folder), input_format="parquet", url_col="url", caption_col="text",
                      save_additional_columns=["uid"], bbox_col="face_bboxes", output_format="webdataset",
                      output_folder=str(tmp_path / "shards"), image_size=64, resize_mode="keep_ratio_largest",
                      resize_only_if_bigger=True, skip_reencode=True, number_sample_per_shard=4)
    records = [json.loads(line) for path in (tmp_path / "shards").glob("*.jsonl") for line in path.read_text().splitlines()]
    # A shard's records are in the order its rows finished: by key, they are in the list's order.
    records.sort(key=lambda record: record["key"])
    assert [record["uid"] for record in records] == [f"{index:032x}" for index in range(6)]
    assert all(record["status"] == "success" for record in records), records
    assert [record["face_bboxes"] for record in records] == boxes


def test_a_rerun_skips_finished_shards_and_overwrite_starts_again(origin, tmp_path):
    url_list, urls = write_list(tmp_path, origin, 6)
    arguments = dict(input_format="csv", output_folder=str(tmp_path / "out"), number_sample_per_shard=3)
    webimage.download(str(url_list), **arguments)
    webimage.download(str(url_list), **arguments)
    assert all(origin.requests[f"/img/{index}.jpg"] == 1 for index in range(6))
    webimage.download(str(url_list), incremental_mode="overwrite", **arguments)
    assert all(origin.requests[f"/img/{index}.jpg"] == 2 for index in range(6))
    assert samples(tmp_path / "out") == {url: 1 for url in urls}


def test_processes_share_the_list(origin, tmp_path):
    """Three local processes, each a slice of the list by URL hash, into one folder: every URL
    downloaded once and a sample once."""
    url_list, urls = write_list(tmp_path, origin, 30)
    webimage.download(str(url_list), input_format="csv", output_folder=str(tmp_path / "out"), processes_count=3,
                      thread_count=4, number_sample_per_shard=4)
    assert samples(tmp_path / "out") == {url: 1 for url in urls}
    assert stats_total(tmp_path / "out") == 30
    assert set(origin.requests.values()) == {1}


def test_a_killed_process_is_rerun_and_resumes(origin, tmp_path):
    """A process killed in the middle of a shard fails its slice; max_shard_retry=1 runs the slice
    again, which keeps its finished shards and redoes the rest: every sample lands once."""
    url_list, urls = write_list(tmp_path, origin, 20)
    origin.hold("/img/13.jpg")
    output = tmp_path / "out"
    killer = KillWhenHeld(origin, output)
    webimage.download(str(url_list), input_format="csv", output_folder=str(output), processes_count=2,
                      number_sample_per_shard=3, max_shard_retry=1)
    assert killer.join() >= 1
    assert samples(output) == {url: 1 for url in urls}
    assert stats_total(output) == 20


def test_a_failed_call_raises_and_the_same_call_again_completes(origin, tmp_path):
    """No reruns (max_shard_retry=0): a process killed mid-shard fails the call with the signal
    named; the same call made again resumes, and every sample lands once."""
    url_list, urls = write_list(tmp_path, origin, 12)
    origin.hold("/img/7.jpg")
    output = tmp_path / "out"
    arguments = dict(input_format="csv", output_folder=str(output), processes_count=2, number_sample_per_shard=3,
                     max_shard_retry=0)
    killer = KillWhenHeld(origin, output)
    with pytest.raises(webimage.CommandError, match="killed by signal 9") as failure:
        webimage.download(str(url_list), **arguments)
    assert killer.join() >= 1
    assert failure.value.returncode == -9
    webimage.download(str(url_list), **arguments)
    assert samples(output) == {url: 1 for url in urls}
    assert stats_total(output) == 12


def test_errors_are_python_exceptions(origin, tmp_path):
    url_list, _ = write_list(tmp_path, origin, 2)
    with pytest.raises(TypeError):
        webimage.download(str(url_list), no_such_argument=1)  # pylint: disable=unexpected-keyword-arg
    with pytest.raises(ValueError, match="--resize-mode"):
        webimage.download(str(url_list), input_format="csv", output_folder=str(tmp_path / "a"), resize_mode="sideways")
    with pytest.raises(webimage.CommandError, match="missing.csv"):
        webimage.download(str(tmp_path / "missing.csv"), input_format="csv", output_folder=str(tmp_path / "b"))
    with pytest.raises(ValueError, match="Distributor"):
        webimage.download(str(url_list), distributor="dask")


def test_arguments_without_effect_warn_by_name(origin, tmp_path):
    url_list, urls = write_list(tmp_path, origin, 2)
    with pytest.warns(UserWarning, match="oom_shard_count") as caught:
        webimage.download(str(url_list), input_format="csv", output_folder=str(tmp_path / "out"), oom_shard_count=8,
                          upscale_interpolation="bicubic")
    named = sorted(str(warning.message).split(" ")[0] for warning in caught if warning.category is UserWarning)
    assert named == ["oom_shard_count", "upscale_interpolation"]
    assert samples(tmp_path / "out") == {url: 1 for url in urls}
