"""Progress people can trust: the expected total is known before the scan for CSV, JSONL and WebDataset
inputs, and the last line always says done = expected."""
from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from connectors.io.fs import expand
from connectors.io.row_counts import count_files, count_rows
from jobs.common.cli.config import RunOptions
from jobs.common.runtime.progress import Progress
from jobs.geo.config import CorpusConfig, GeoConfig
from jobs.geo.run import run
from tests.builders import write_tar

CAPTIONS = ["Street food in Bangkok", "Tokyo at night", "a dog", "Lions in Kenya", "Paris in spring"]


def _inputs(root: Path) -> list[CorpusConfig]:
    """40 CSV rows (one caption spans two lines inside quotes), 30 JSONL rows, 24 WebDataset samples in 2 tars."""
    root.mkdir(parents=True, exist_ok=True)
    rows = [f'"{c} {i}"' for i in range(40) for c in CAPTIONS[i % 5:i % 5 + 1]]
    rows[7] = '"a caption written\nover two lines"'
    (root / "c.csv").write_text("caption\n" + "\n".join(rows) + "\n")
    (root / "j.jsonl").write_text("".join(json.dumps({"caption": f"{CAPTIONS[i % 5]} {i}"}) + "\n" for i in range(30)))
    for t in range(2):
        write_tar(root / f"{t:05d}.tar", [(f"{t}{i:04d}", f"{CAPTIONS[i % 5]} {i}".encode(), {"url": "http://a.th/x"})
                                          for i in range(12)])
    return [CorpusConfig(name="csv", paths=[str(root / "c.csv")], format="csv", text="caption"),
            CorpusConfig(name="jsonl", paths=[str(root / "j.jsonl")], format="jsonl", text="caption"),
            CorpusConfig(name="wds", paths=[str(root / "*.tar")], format="webdataset", text="txt", url="url")]


def test_expected_rows_from_the_bytes(tmp_path):
    _inputs(tmp_path)
    csv, jsonl = expand(str(tmp_path / "c.csv"), (".csv",))[0], expand(str(tmp_path / "j.jsonl"), (".jsonl",))[0]
    assert count_rows(csv, "csv").rows == 41  # 42 lines less the header: the quoted newline is why it is an expectation
    assert count_rows(jsonl, "jsonl").rows == 30 and not count_rows(jsonl, "jsonl").sampled
    tars = expand(str(tmp_path / "*.tar"), (".tar",))
    assert [count_rows(t, "webdataset").rows for t in tars] == [12, 12]
    sampled = count_rows(jsonl, "jsonl", exact_bytes=0, sample_bytes=200)
    assert sampled.sampled and 20 <= sampled.rows <= 40  # scaled from the first 200 bytes
    many = count_files([jsonl] * 3, "jsonl", max_files=1)
    assert [c.rows for c in many.values()] == [30] and count_rows(csv, "parquet") is None
    (tmp_path / "bad.csv.gz").write_bytes(b"\x1f\x8b not gzip")
    assert count_rows(expand(str(tmp_path / "bad.csv.gz"), (".gz",))[0], "csv") is None  # the reader will name it


@pytest.mark.parametrize("executor", ["local", "ray"])
def test_csv_jsonl_and_webdataset_totals_are_known_before_the_end(ray_local, tmp_path, capsys, executor):
    out = run(GeoConfig(corpus=_inputs(tmp_path / "in"), bootstrap=0),
              RunOptions(out=str(tmp_path / "runs"), executor=executor))
    manifest = json.loads((Path(out) / "manifest.json").read_text())
    samples = manifest["timings"]["progress"]
    true_rows = 40 + 30 + 24
    assert manifest["rows"]["in"] == true_rows and manifest["executor"] == executor
    first, last = samples[0], samples[-1]
    assert first["rows"] == 0 and first["expected_rows"] == 41 + 30 + 24 and first["estimated"]  # before any shard is done
    assert last["rows"] == last["expected_rows"] == true_rows and not last["estimated"]
    lines = [line for line in capsys.readouterr().err.splitlines() if line.startswith("[geo]")]
    assert f"{true_rows}/{true_rows} rows (100.0%)" in lines[-1] and "ETA done" in lines[-1]
    assert not any("unknown" in line for line in lines)


def test_progress_lines_bar_and_unknown_sizes():
    stream = io.StringIO()
    p = Progress("job", 100, 3, stream=stream, unknown_shards=1, estimated_shards=1, interval_s=0)
    p.start()
    p.update(60, planned=50, estimated=True)  # an estimate replaced by the real count
    p.update(40, planned=50)
    p.update(7)  # the shard nobody could size
    p.emit()
    lines = stream.getvalue().splitlines()
    assert p.samples[0] == {"t_s": 0.0, "rows": 0, "shards": 0, "expected_rows": None, "estimated": True}  # not printed
    assert "60 of ≥ 110 rows (+1 shard(s) of unknown size)" in lines[0] and "100 of ≥ 100 rows" in lines[1]
    assert "107/107 rows (100.0%)" in lines[-1] and "ETA done" in lines[-1]
    tty = io.StringIO()
    bar = Progress("job", 10, 2, stream=tty, tty=True, interval_s=0)
    bar.start()
    bar.update(5, planned=5)
    bar.update(5, planned=5)
    bar.emit()
    text = tty.getvalue()
    assert text.count("\r") == 2 and text.endswith("\n") and "|████████████████████████|" in text  # redrawn in place
