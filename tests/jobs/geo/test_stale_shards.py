"""A shard is reused only for the content it was computed from: a caption file edited in place at
equal size with its modification time put back (an in-place fix, ``cp -p``, ``rsync -t``, a
restore) is read again under ``--resume`` and under ``reaudit``; its old counts never come back.

Small corpora on the in-process executor: the reuse decision is the runner's, not Ray's.
"""
from __future__ import annotations

import gzip
import json
import os
from pathlib import Path

import pytest
import yaml

from jobs.common.cli.config import RunOptions
from jobs.common.runtime.errors import JobError
from jobs.geo.config import CorpusConfig, GeoConfig
from jobs.geo.run import run

ROWS = 40


def captions(country: str) -> str:
    """Conceptual Captions' layout (caption<TAB>url, no header): a file the planner does not open."""
    return "".join(f"a street market in {country}, photo {i:02d}\thttp://example.org/{i:02d}\n" for i in range(ROWS))


def edit_keeping_size_and_time(path: Path, text: str) -> None:
    """Rewrite ``path`` with ``text`` (same length) and put its old modification time back."""
    before = path.stat()
    assert len(text.encode()) == before.st_size
    path.write_text(text)
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = path.stat()
    assert (after.st_size, after.st_mtime_ns) == (before.st_size, before.st_mtime_ns)


def counts(run_dir: str) -> dict:
    summary = json.loads((Path(run_dir) / "summary.json").read_text())
    return summary["corpora"]["c"]["country_counts"]


def corpus_dir(tmp_path: Path) -> Path:
    d = tmp_path / "corpus"
    d.mkdir()
    (d / "a.tsv").write_text(captions("Norway"))
    (d / "b.tsv").write_text(captions("Norway"))
    return d


def test_resume_rereads_a_file_edited_at_equal_size_and_time(tmp_path):
    d = corpus_dir(tmp_path)
    good_b = (d / "b.tsv").read_bytes()
    (d / "b.tsv").unlink()
    (d / "b.tsv.gz").write_bytes(b"\x1f\x8b not really gzip")  # fails when read, after a.tsv's shard is done
    cfg = GeoConfig(corpus=[CorpusConfig(name="c", paths=[str(d)], preset="cc3m")], bootstrap=0)
    opts = RunOptions(out=str(tmp_path / "runs"), run_id="r", executor="local")
    with pytest.raises(JobError, match=r"b\.tsv\.gz"):
        run(cfg, opts)
    partial = tmp_path / "runs" / "geo" / ".r.partial"
    assert len(list((partial / "shards").glob("*.json"))) == 1  # a.tsv's shard finished before the failure

    edit_keeping_size_and_time(d / "a.tsv", captions("France"))  # "France" and "Norway": six letters each
    (d / "b.tsv.gz").write_bytes(gzip.compress(good_b))
    resumed = run(cfg, RunOptions(out=str(tmp_path / "runs"), run_id="r", resume=True, executor="local"))
    fresh = run(cfg, RunOptions(out=str(tmp_path / "runs"), run_id="fresh", executor="local"))
    assert counts(resumed) == counts(fresh) == {"FR": ROWS, "NO": ROWS}  # France from a.tsv, Norway from b.tsv
    manifest = json.loads((Path(resumed) / "manifest.json").read_text())
    assert manifest["shards"]["resumed"] == 0 and manifest["shards"]["run"] == 2
    records = list((Path(resumed) / "shards").glob("*.json"))
    assert len(records) == 2  # the stale shard's done-marker went with it


def test_reaudit_does_not_reuse_the_shard_of_a_file_edited_at_equal_size_and_time(tmp_path):
    from jobs.reaudit.config import ReauditConfig
    from jobs.reaudit.run import reaudit

    d = corpus_dir(tmp_path)
    plan = tmp_path / "plan.yaml"
    plan.write_text(yaml.safe_dump({"name": "weekly", "schedule": "0 3 * * 1",
                                    "corpora": [{"name": "c", "paths": [str(d)], "preset": "cc3m"}],
                                    "audits": [{"job": "geo", "options": {"bootstrap": 0}}]}))
    opts = RunOptions(out=str(tmp_path / "runs"), executor="local")
    _, _, failed = reaudit(ReauditConfig(plan=str(plan)), opts)
    assert not failed

    edit_keeping_size_and_time(d / "a.tsv", captions("France"))
    _, diff, failed = reaudit(ReauditConfig(plan=str(plan)), opts)
    audit = diff["audits"]["geo"]
    assert not failed and audit["action"] == "rerun" and "inputs changed: c" in "; ".join(audit["reasons"])
    assert audit["work"]["shards"] == {"total": 2, "resumed": 1, "run": 1}  # b.tsv reused, a.tsv read again
    rerun = tmp_path / "runs" / "geo" / audit["run_id"]
    cfg = GeoConfig(corpus=[CorpusConfig(name="c", paths=[str(d)], preset="cc3m")], bootstrap=0)
    fresh = run(cfg, RunOptions(out=str(tmp_path / "fresh"), executor="local"))
    assert counts(str(rerun)) == counts(fresh) == {"FR": ROWS, "NO": ROWS}
