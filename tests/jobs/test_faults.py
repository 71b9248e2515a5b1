"""Fault injection through the jobs: nothing lost, nothing silent, run directories that cannot collide.

Every fixture is built here from the recipes of the hardening issue. Manifests count rows as
``rows.in`` (every row a reader produced, usable or skipped, ``rows.skipped_by_reason`` the skipped
ones) and ``rows.unread`` (lines of byte ranges a parser gave up on): for a complete run
``rows.in + rows.unread`` is the input's true row count.
"""
from __future__ import annotations

import importlib.util
import json
import os
import random
import subprocess
import sys
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from jobs.cli import main
from jobs.common.cli.config import RunOptions
from jobs.common.inputs.benchmarks import BenchmarkConfig
from jobs.common.runtime.errors import JobError
from jobs.conventions.config import ConventionsConfig
from jobs.conventions.run import run as run_conventions
from jobs.geo.config import CorpusConfig, GeoConfig
from jobs.geo.run import run as run_geo
from tests.builders import small_disk, write_tar

pytestmark = pytest.mark.ray
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
SKIP_ALL = {"on_error": "skip", "max_skipped": 1.0, "max_skipped_inputs": 99}


def load(run_dir: str) -> tuple[dict, dict]:
    d = Path(run_dir)
    return json.loads((d / "summary.json").read_text()), json.loads((d / "manifest.json").read_text())


def geo(name: str, path: Path, **kw) -> GeoConfig:
    """A geo run of one corpus with the ``paper`` lexicon: these tests are about reading and counting rows, and the
    country names they resolve are in every profile; the default gazetteer would add seconds of building per run."""
    return GeoConfig(corpus=[CorpusConfig(name=name, paths=[str(path)], **kw)], bootstrap=0, lexicon_profile="paper")


def cli(*args: str, timeout: int = 300) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "jobs.cli", *args], capture_output=True, text=True, timeout=timeout)


# ---- readers, through the job ---------------------------------------------------------------------
def test_invalid_utf8_in_parquet_costs_one_row(ray_local, tmp_path):
    raw = pa.array([b"Japan ok"] * 999 + ["Italy \ud800".encode("utf-8", "surrogatepass")], pa.binary())
    pq.write_table(pa.table({"text": raw.view(pa.string())}), tmp_path / "u.parquet")
    summary, m = load(run_geo(geo("u", tmp_path / "u.parquet", format="parquet", text="text"), RunOptions(out=str(tmp_path / "r"))))
    assert m["rows"]["in"] == 1000 and m["rows"]["skipped_by_reason"] == {"invalid_utf8": 1} and m["rows"]["out"] == 999
    assert summary["corpora"]["u"]["country_counts"] == {"JP": 999}


def test_a_stray_csv_quote_loses_no_rows(ray_local, tmp_path):
    lines = ["caption,url", "Lions in Kenya,http://a.ke/1", '"Unterminated quote in Peru,http://a.pe/2']
    lines += [f"Trip {i} to Chile,http://a.cl/{i}" for i in range(10_000)]
    (tmp_path / "q.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    summary, m = load(run_geo(geo("q", tmp_path / "q.csv", format="csv", text="caption", url="url"), RunOptions(out=str(tmp_path / "r"))))
    assert m["rows"]["in"] + m["rows"]["unread"] == 10_002  # every row read or counted unread
    assert m["rows"]["in"] == 10_002 and m["rows"]["skipped_by_reason"] == {"malformed_row": 1} and m["rows"]["unread"] == 0
    assert summary["corpora"]["q"]["country_counts"] == {"KE": 1, "CL": 10_000}  # the rows after the quote are read


def tar_of_20(path: Path) -> None:
    write_tar(path, [(f"{i:03d}", f"Street food in Hanoi {i}".encode(), {"url": f"http://a.vn/{i}"}) for i in range(20)])


def test_a_truncated_tar_is_never_read_as_complete(ray_local, tmp_path):
    d = tmp_path / "wds"
    d.mkdir()
    tar_of_20(d / "00000.tar")
    tar_of_20(d / "00001.tar")
    os.truncate(d / "00001.tar", 20480)
    cfg = geo("w", d, format="webdataset", text="txt", url="url")
    with pytest.raises(JobError, match=r"00001\.tar: .*(truncated|cut|end-of-archive|damaged)"):
        run_geo(cfg, RunOptions(out=str(tmp_path / "r")))
    summary, m = load(run_geo(cfg, RunOptions(out=str(tmp_path / "r"), **SKIP_ALL)))
    assert [Path(f["file"]).name for f in m["shards"]["failed"]] == ["00001.tar"]  # unreadable, never "ok"
    assert m["rows"]["in"] == 20 and summary["corpora"]["w"]["country_counts"] == {"VN": 20}


def test_skip_cannot_hide_a_run_that_read_nothing(ray_local, tmp_path):
    d = tmp_path / "only"
    d.mkdir()
    tar_of_20(d / "00000.tar")
    os.truncate(d / "00000.tar", 20480)
    with pytest.raises(JobError, match=r"no usable rows"):
        run_geo(geo("w", d, format="webdataset", text="txt"), RunOptions(out=str(tmp_path / "r"), **SKIP_ALL))
    proc = cli("geo", "--input", str(d), "--format", "webdataset", "--text-column", "txt", "--on-error", "skip",
               "--lexicon-profile", "paper", "--out", str(tmp_path / "r2"), "--num-cpus", "1")
    assert proc.returncode != 0 and "no usable rows (read 0, skipped 0, unread 0, inputs skipped 1)" in proc.stderr
    assert not list((tmp_path / "r2").glob("geo/[!.]*"))  # no complete run for a scheduler to publish


def test_one_bad_benchmark_line_is_one_counted_row(ray_local, tmp_path):
    lines = (FIXTURES / "benchmarks" / "arc_challenge_slice.jsonl").read_text().splitlines()
    good = [json.loads(x) for x in lines]
    rows = [json.dumps({**good[i % len(good)], "id": f"q{i}"}) for i in range(200)]
    rows[57] = '{"id": "q57", "question": broken'
    (tmp_path / "arc.jsonl").write_text("\n".join(rows) + "\n")
    cfg = ConventionsConfig(benchmark=[BenchmarkConfig(name="arc", preset="arc", paths=[str(tmp_path / "arc.jsonl")])], bootstrap=100)
    with pytest.raises(JobError, match=r"arc\.jsonl: line 58: invalid JSON"):
        run_conventions(cfg, RunOptions(out=str(tmp_path / "r")))
    _, m = load(run_conventions(cfg, RunOptions(out=str(tmp_path / "r"), on_error="skip")))
    assert m["rows"]["in"] == 200 and m["rows"]["skipped_by_reason"] == {"invalid_json": 1} and m["rows"]["out"] == 199


# ---- run ids, locks, resume -----------------------------------------------------------------------
def test_identical_commands_started_together_get_two_complete_runs(tmp_path):
    args = [sys.executable, "-m", "jobs.cli", "geo", "--limit", "200", "--bootstrap", "0", "--out", str(tmp_path), "--num-cpus", "1"]
    procs = [subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(2)]
    outs = [p.communicate(timeout=300) for p in procs]
    assert all(p.returncode == 0 for p in procs), [o[1][-2000:] for o in outs]
    runs = sorted(p.name for p in (tmp_path / "geo").iterdir())
    assert len(runs) == 2 and not any(r.startswith(".") for r in runs)  # two distinct, complete runs
    assert all((tmp_path / "geo" / r / "_SUCCESS").exists() for r in runs)


def test_resume_aimed_at_a_live_run_is_refused(ray_local, tmp_path, real_captions, capsys):
    d = tmp_path / "tsv"
    d.mkdir()
    captions = random.Random(5).choices(real_captions, k=40_000)
    for i in range(0, len(captions), 1000):
        (d / f"s{i // 1000:03d}.tsv").write_text("\n".join(f"{' '.join(c.split())}\thttp://a.fr/{j}" for j, c in
                                                          enumerate(captions[i:i + 1000])) + "\n")
    args = ["geo", "--corpus", f"t:cc3m:{d}", "--bootstrap", "0", "--out", str(tmp_path / "r"), "--run-id", "live", "--num-cpus", "1"]
    proc = subprocess.Popen([sys.executable, "-m", "jobs.cli", *args], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    try:
        lock = tmp_path / "r" / "geo" / ".live.partial" / "_LOCK"
        deadline = time.monotonic() + 120
        while not lock.exists() and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.05)
        assert lock.exists(), "the first run should hold its lock"
        assert main([*args, "--resume"]) == 2
        assert f"run live is in use by process {proc.pid}" in capsys.readouterr().err
    finally:
        os.killpg(proc.pid, 9)
        proc.wait()


def test_a_mistyped_resume_run_id_starts_nothing(tmp_path, capsys):
    (tmp_path / "geo" / ".20261201T000000.000Z-abcdef.partial").mkdir(parents=True)
    assert main(["geo", "--out", str(tmp_path), "--resume", "--run-id", "typo"]) == 2
    err = capsys.readouterr().err
    assert "no unfinished run 'typo'" in err and "resumable runs: 20261201T000000.000Z-abcdef" in err
    assert sorted(p.name for p in (tmp_path / "geo").iterdir()) == [".20261201T000000.000Z-abcdef.partial"]


def test_a_corrupt_done_marker_is_named(ray_local, tmp_path):
    bad = tmp_path / "bad.tsv.gz"
    bad.write_bytes(b"\x1f\x8b not gzip")
    shipped = Path(__file__).resolve().parents[2] / "connectors" / "samples" / "cc3m_val_captions.tsv"
    cfg = GeoConfig(corpus=[CorpusConfig(name="ok", paths=[str(shipped)], preset="cc3m"),
                            CorpusConfig(name="bad", paths=[str(bad)], preset="cc3m")], bootstrap=0)
    with pytest.raises(JobError):  # a partial run: the good shard finished, the bad one stopped the job
        run_geo(cfg, RunOptions(out=str(tmp_path), run_id="r1", num_cpus=1))
    markers = list((tmp_path / "geo" / ".r1.partial" / "shards").glob("*.json"))
    assert markers
    markers[0].write_text("{not json")
    with pytest.raises(JobError, match=rf"{markers[0].name}: unreadable done-marker"):
        run_geo(cfg, RunOptions(out=str(tmp_path), run_id="r1", resume=True))


# ---- addresses ------------------------------------------------------------------------------------
def test_an_address_nobody_answers_fails_fast_leaving_nothing(tmp_path):
    started = time.monotonic()
    proc = cli("geo", "--address", "127.0.0.1:1", "--out", str(tmp_path / "r"), timeout=60)
    assert time.monotonic() - started < 35
    err = [line for line in proc.stderr.splitlines() if line.strip()]
    assert proc.returncode != 0 and len(err) == 1 and "127.0.0.1:1" in err[0], proc.stderr
    assert not (tmp_path / "r").exists()
    client = cli("geo", "--address", "ray://127.0.0.1:1", "--out", str(tmp_path / "r"), timeout=60)
    # without ray[client] the error says to install it; with it (the cluster and test extras), nobody answers
    expected = "no Ray answered at 127.0.0.1:1" if importlib.util.find_spec("grpc") else "ray[client]"
    assert client.returncode != 0 and expected in client.stderr and not (tmp_path / "r").exists()


# ---- smaller items --------------------------------------------------------------------------------
def test_drop_json_on_one_line_is_read_the_same_by_every_job(ray_local, tmp_path):
    data = json.loads((FIXTURES / "benchmarks" / "drop_allennlp_fixture.json").read_text())
    one_line = tmp_path / "drop.json"
    one_line.write_text(json.dumps(data))
    cfg = ConventionsConfig(benchmark=[BenchmarkConfig(name="drop", preset="drop", paths=[str(one_line)])], bootstrap=100)
    summary, _ = load(run_conventions(cfg, RunOptions(out=str(tmp_path / "r"))))
    assert summary["table"][0]["n_items"] == 19
    assert main(["scorers", "--benchmark", f"drop:drop:{one_line}", "--bootstrap", "100", "--out", str(tmp_path / "s")]) == 0
    cut = tmp_path / "cut.json"
    cut.write_text(json.dumps(data)[:500])
    with pytest.raises(Exception, match=r"cut\.json"):
        run_conventions(ConventionsConfig(benchmark=[BenchmarkConfig(name="d", preset="drop", paths=[str(cut)])]),
                        RunOptions(out=str(tmp_path / "r")))


def test_bom_and_glob_characters_in_real_file_names(ray_local, tmp_path):
    (tmp_path / "bom.csv").write_bytes("\ufeffcaption\nLions in Kenya\n".encode())
    summary, _ = load(run_geo(geo("b", tmp_path / "bom.csv", format="csv", text="caption"), RunOptions(out=str(tmp_path / "r"))))
    assert summary["corpora"]["b"]["country_counts"] == {"KE": 1}
    pq.write_table(pa.table({"text": ["Tokyo at night"]}), tmp_path / "data[1].parquet")
    summary, _ = load(run_geo(geo("g", tmp_path / "data[1].parquet", format="parquet", text="text"), RunOptions(out=str(tmp_path / "r"))))
    assert summary["corpora"]["g"]["country_counts"] == {"JP": 1}


def test_duplicate_question_ids_in_answers_are_refused(tmp_path, capsys):
    (tmp_path / "a.csv").write_text("question_id,answer\nq1,yes\nq1,no\n")
    tqa = FIXTURES / "benchmarks" / "truthfulqa_slice.csv"
    assert main(["scorers", "--benchmark", f"t:truthfulqa:{tqa}", "--answers", f"m={tmp_path / 'a.csv'}", "--out", str(tmp_path)]) == 2
    assert "a.csv" in capsys.readouterr().err


def test_disk_full_mid_run_is_one_line_and_leaves_no_temporaries(tmp_path):
    with small_disk(tmp_path / "tiny", "120k") as mount:
        proc = cli("geo", "--write-records", "--bootstrap", "0", "--out", str(mount), "--num-cpus", "1")
        err = [line for line in proc.stderr.splitlines() if line.strip() and not line.startswith(("[geo]", "[ray]"))]
        assert proc.returncode == 1 and len(err) <= 3 and "No space left on device" in err[0], proc.stderr
        assert f": {mount}/geo/." in err[0] and ".parquet: No space left on device" in err[0]  # the output, named
        assert "_captions." not in err[0]  # not the input file the shard was reading
        assert "ray::" not in proc.stderr and "--resume" in proc.stderr  # disk full is transient: resuming helps
        assert not list(mount.rglob("*.tmp-*")) and not list(mount.rglob("*.parquet.tmp"))


def test_invalid_coreset_inputs_leave_nothing_on_disk(tmp_path, capsys):
    pq.write_table(pa.table({"id": [1, 2, 3], "label": [0, 2, 1], "score": [0.1, 0.5, 0.9]}), tmp_path / "t.parquet")
    assert main(["coreset", "build", "--input", str(tmp_path / "t.parquet"), "--tau", "0.5", "--out", str(tmp_path / "r")]) == 2
    assert "label" in capsys.readouterr().err and not (tmp_path / "r").exists()


def test_prediction_jsonl_errors_name_file_and_row(design, tmp_path, capsys):
    out, _ = design
    (tmp_path / "p.jsonl").write_text('{"id": 0, "prediction": 1}\n{"id": 1, "prediction": \n')
    assert main(["coreset", "estimate", "--design", out, "--predictions", f"m={tmp_path / 'p.jsonl'}", "--out", str(tmp_path / "r")]) == 2
    err = capsys.readouterr().err
    assert "p.jsonl" in err and ("line 2" in err or "row 1" in err) and not (tmp_path / "r").exists()


# ---- random corruptions ---------------------------------------------------------------------------
def corrupt(data: bytes, rng: random.Random) -> bytes:
    kind = rng.choice(["truncate", "flip", "quote", "nul"])
    at = rng.randrange(1, len(data))
    if kind == "truncate":
        return data[:at]
    if kind == "flip":
        return data[:at] + bytes([data[at] ^ 0x5A]) + data[at + 1:]
    return data[:at] + (b'"' if kind == "quote" else b"\x00") + data[at:]


def true_rows(fmt: str, data: bytes, n: int) -> int:
    """Rows the corrupted file really holds: its non-empty lines for line formats, else the rows written."""
    lines = [line for line in data.split(b"\n") if line.strip()]
    return {"csv": len(lines) - 1, "jsonl": len(lines)}.get(fmt, n)


@pytest.mark.parametrize("fmt", ["csv", "jsonl", "parquet", "webdataset"])
def test_random_corruptions_never_report_a_short_read_as_complete(ray_local, tmp_path, fmt):
    rng = random.Random(sum(map(ord, fmt)))
    n = 300
    texts = [f"Photo {i} of the market in Lima" for i in range(n)]
    for trial in range(3):
        d = tmp_path / f"{fmt}{trial}"
        d.mkdir()
        name, kw = {"csv": ("c.csv", {"format": "csv", "text": "caption"}), "jsonl": ("c.jsonl", {"format": "jsonl", "text": "caption"}),
                    "parquet": ("c.parquet", {"format": "parquet", "text": "caption"}),
                    "webdataset": ("c.tar", {"format": "webdataset", "text": "txt"})}[fmt]
        if fmt == "csv":
            (d / name).write_text("caption\n" + "\n".join(texts) + "\n")
        elif fmt == "jsonl":
            (d / name).write_text("\n".join(json.dumps({"caption": t}) for t in texts) + "\n")
        elif fmt == "parquet":
            pq.write_table(pa.table({"caption": texts}), d / name, row_group_size=100)
        else:
            write_tar(d / name, [(f"{i:04d}", t.encode(), {}) for i, t in enumerate(texts)])
        broken = corrupt((d / name).read_bytes(), rng)
        (d / name).write_bytes(broken)
        try:
            _, m = load(run_geo(geo("x", d, **kw), RunOptions(out=str(tmp_path / "r"), **SKIP_ALL)))
        except (JobError, ValueError) as exc:  # refused, with a message naming the file
            assert name in str(exc) or "no usable rows" in str(exc), exc
            continue
        if m["shards"]["failed"]:
            assert all(f["file"].endswith(name) for f in m["shards"]["failed"])  # counted unreadable, by name
            continue
        assert m["rows"]["in"] + m["rows"]["unread"] == true_rows(fmt, broken, n), (fmt, trial, m["rows"])
