"""The Python examples of README.md and docs/crawling.md, run as written (from their
`from webimage import download` on; img2dataset's call beside it in the docs is its own), in a
folder holding the `captions.csv` they name, of images on the test origin."""

import json
import os
import re
from pathlib import Path

import pytest

from conftest import write_list

REPO = Path(__file__).resolve().parents[2]


def examples(document: str) -> list:
    blocks = re.findall(r"```python\n(.*?)```", (REPO / document).read_text(), flags=re.S)
    return [block[block.index("from webimage import download"):] for block in blocks if "from webimage import" in block]


@pytest.mark.parametrize("document", ["README.md", "docs/crawling.md"])
def test_examples_run(document, origin, tmp_path):
    found = examples(document)
    assert found, f"{document} has no Python example"
    for index, example in enumerate(found):
        folder = tmp_path / str(index)
        folder.mkdir()
        list_path, urls = write_list(folder, origin, 5)
        os.rename(list_path, folder / "captions.csv")
        cwd = os.getcwd()
        os.chdir(folder)
        try:
            exec(compile(example, f"{document} example {index}", "exec"), {})  # pylint: disable=exec-used
        finally:
            os.chdir(cwd)
        records = [json.loads(line) for path in (folder / "dataset").glob("*.jsonl") for line in path.read_text().splitlines()]
        assert sorted(record["url"] for record in records if record["status"] == "success") == sorted(urls)
        assert list((folder / "dataset").glob("*.tar")), f"{document} example {index} wrote no shard"
