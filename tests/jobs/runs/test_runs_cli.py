"""``benchaudit runs list|show|compare`` over real runs, two of them finishing at once into one store."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from jobs.cli import main

ROOT = Path(__file__).resolve().parents[3]


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "jobs.cli", *args], capture_output=True, text=True, cwd=ROOT, timeout=300)


def _id_time(run_id: str) -> str:
    """``20261201T030000.123Z-abcdef`` -> ``2026-12-01T03:00:00.123``: the moment a run id was made from."""
    t = run_id.split("Z-")[0]
    return f"{t[:4]}-{t[4:6]}-{t[6:8]}T{t[9:11]}:{t[11:13]}:{t[13:15]}{t[15:19]}"


def _geo(out: Path, *args: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "jobs.cli", "geo", "--bootstrap", "0", "--out", str(out), "--num-cpus", "1",
                             *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT)


@pytest.mark.ray
def test_two_runs_finishing_together_are_both_recorded_and_comparable(tmp_path, capsys):
    procs = [_geo(tmp_path, "--limit", str(n)) for n in (200, 300)]
    outs = [p.communicate(timeout=300) for p in procs]
    assert all(p.returncode == 0 for p in procs), [o[1][-2000:] for o in outs]
    listed = json.loads(cli("runs", "list", "--out", str(tmp_path), "--json").stdout)
    assert len(listed) == 2 and {r["status"] for r in listed} == {"complete"}  # both present, both whole
    assert sorted(r["run_id"] for r in listed) == sorted(p.name for p in (tmp_path / "geo").iterdir())
    for r in listed:
        assert r["job"] == "geo" and r["code_version"].startswith("0.1.0+") and r["finished_at"] >= r["started_at"]
        assert set(r["inputs"]) == {"coco2017_val", "cc3m_val"} and r["inputs"]["coco2017_val"]["fingerprint"]
        manifest = json.loads((Path(r["path"]) / "manifest.json").read_text())
        assert r["config_hash"] == manifest["config_hash"] and r["code_version"] == manifest["code_version"]
        assert r["config"] == manifest["config_non_default"] == {"bootstrap": 0, "limit": manifest["limit"]}
        assert _id_time(r["run_id"]) == r["started_at"][:23]  # the id says when the run started
        summary = json.loads((Path(r["path"]) / "summary.json").read_text())
        assert r["headline"] == summary["headline"]
    rows = {r["run_id"]: r["headline"] for r in listed}
    older, newer = sorted(listed, key=lambda r: r["started_at"])

    assert main(["runs", "list", "--out", str(tmp_path)]) == 0
    table = capsys.readouterr().out.splitlines()
    assert table[0].split() == ["RUN", "ID", "JOB", "STATUS", "STARTED", "(UTC)", "CONFIG", "INPUTS", "HEADLINE", "CODE",
                                "PATH"] and len(table) == 3
    for r in listed:  # each line tells its run apart: its options, its inputs and its first headline metric
        line = next(t for t in table if t.startswith(r["run_id"]))
        cov = [h["value"] for h in r["headline"] if h["metric"] == "coverage"]
        assert f"bootstrap=0 limit={r['config']['limit']}" in line and "coco2017_val,cc3m_val" in line
        assert f"coverage: coco2017_val {cov[0]:.4g}, cc3m_val {cov[1]:.4g}" in line

    assert main(["runs", "show", "--out", str(tmp_path), "--run-id", newer["run_id"][:22]]) == 0
    shown = capsys.readouterr().out
    assert f"run {newer['run_id']}  job geo  complete" in shown and "coverage" in shown
    assert f"options   bootstrap=0 limit={newer['config']['limit']}" in shown
    assert main(["runs", "show", "--out", str(tmp_path)]) == 0  # no --run-id: the latest run
    assert f"run {newer['run_id']}  job geo" in capsys.readouterr().out

    # the two runs read different numbers of captions: no like-for-like run to compare with, and the error says
    # which run has other options and how to compare with it anyway
    assert main(["runs", "compare", "--out", str(tmp_path), "--run-id", newer["run_id"]]) == 2
    err = capsys.readouterr().err
    assert f"has no earlier complete geo run with the same options (bootstrap=0 limit={newer['config']['limit']})" in err
    assert f"{older['run_id']} (limit {older['config']['limit']} → {newer['config']['limit']})" in err and "--base" in err
    assert main(["runs", "compare", "--out", str(tmp_path), "--base", older["run_id"]]) == 0  # the latest run by default
    text = capsys.readouterr().out.splitlines()
    assert text[0] == (f"warning: the two runs' options differ (limit {older['config']['limit']} → {newer['config']['limit']}): "
                       "the deltas mix a change of configuration with any change over time")
    assert text[1].startswith(f"geo: {newer['run_id']} against {older['run_id']}")
    assert main(["runs", "compare", "--out", str(tmp_path), "--base", older["run_id"], "--json"]) == 0
    compared = json.loads(capsys.readouterr().out)
    assert compared["config_differences"] == [{"option": "limit", "base": older["config"]["limit"],
                                               "run": newer["config"]["limit"]}]
    pairs = {(m["input"], m["metric"]): m for m in compared["metrics"]}
    old_cov = next(h["value"] for h in rows[older["run_id"]] if (h["input"], h["metric"]) == ("coco2017_val", "coverage"))
    new_cov = next(h["value"] for h in rows[newer["run_id"]] if (h["input"], h["metric"]) == ("coco2017_val", "coverage"))
    assert pairs[("coco2017_val", "coverage")]["delta"] == pytest.approx(new_cov - old_cov)

    # a third run with the first one's options: by default it is compared with that one, not with the run just before it
    third = _geo(tmp_path, "--limit", str(older["config"]["limit"]))
    assert third.wait(timeout=300) == 0, third.stderr.read()[-2000:]
    assert main(["runs", "compare", "--out", str(tmp_path), "--json"]) == 0
    compared = json.loads(capsys.readouterr().out)
    assert compared["base"] == older["run_id"] and compared["run"] not in rows and compared["config_differences"] == []
    assert {m["status"] for m in compared["metrics"]} == {"unchanged"}  # the same captions, the same numbers

    assert main(["runs", "compare", "--out", str(tmp_path), "--run-id", older["run_id"]]) == 2
    assert "has no earlier complete geo run" in capsys.readouterr().err
    assert main(["runs", "show", "--out", str(tmp_path), "--run-id", "nosuch"]) == 2
    assert "no run 'nosuch'" in capsys.readouterr().err


def test_lookups_say_what_their_run_id_defaults_to(capsys):
    """``--run-id`` of show and compare names a recorded run: its help shows that, not how a new run's id is made."""
    for command, default in (("show", "the latest run"), ("compare", "the latest complete run")):
        with pytest.raises(SystemExit):
            main(["runs", command, "--help"])
        text = " ".join(capsys.readouterr().out.split())
        assert f"(a unique prefix of its id is enough) (default: {default})" in text and "UTC time" not in text


def test_an_empty_store_says_so(tmp_path, capsys):
    assert main(["runs", "list", "--out", str(tmp_path)]) == 0
    assert capsys.readouterr().out.strip() == f"no runs recorded in {tmp_path}/_runs"


def test_odd_entries_are_left_out_with_a_warning_naming_each_file_and_never_hide_the_history(tmp_path):
    from connectors.runs.store import RunEntry, record_run

    store = tmp_path / "_runs"
    for i, rid in enumerate(("r1", "r2")):
        record_run(str(store), RunEntry(run_id=rid, job="geo", status="complete", path=str(tmp_path / "geo" / rid),
                                        started_at=f"2026-12-0{i + 1}T00:00:00",
                                        headline=[{"input": "coco", "metric": "coverage", "value": 0.1 * (i + 1),
                                                   "ci_low": None, "ci_high": None}]))
    entries = store / "entries" / "geo"
    good = (entries / "r1.json").read_text()
    odd = {"array.json": "[1, 2, 3]", "truncated.json": good[: len(good) // 2],
           "typed.json": good.replace('"r1"', '"r3"').replace("0.1", '"high"'),
           "number-id.json": good.replace('"run_id": "r1"', '"run_id": 5'),
           "missing.json": json.dumps({"run_id": "r4", "job": "geo"}), "latin1.json": "é".encode("latin-1")}
    for name, text in odd.items():
        (entries / name).write_bytes(text if isinstance(text, bytes) else text.encode())
    (tmp_path / "geo" / "r9").mkdir(parents=True)  # a finished run directory whose manifest is not an object
    for name, text in (("_SUCCESS", ""), ("manifest.json", "[]")):
        (tmp_path / "geo" / "r9" / name).write_text(text)

    listed = cli("runs", "list", "--out", str(tmp_path), "--json")
    assert listed.returncode == 0, listed.stderr
    assert [r["run_id"] for r in json.loads(listed.stdout)] == ["r1", "r2"]
    warnings = [line for line in listed.stderr.splitlines() if line.strip()]
    assert len(warnings) == len(odd) and all(line.startswith("run store: skipping unreadable entry ") for line in warnings)
    for name, why in (("array.json", "expected a JSON object, got an array"), ("truncated.json", ""),
                      ("typed.json", "field 'headline[0].value': expected a number or null, got a string"),
                      ("number-id.json", "field 'run_id': expected a string, got a number"),
                      ("missing.json", "missing field(s) ['status', 'path']"), ("latin1.json", "utf-8")):
        assert any(str(entries / name) in line and why in line for line in warnings), (name, warnings)
    assert cli("runs", "show", "--out", str(tmp_path), "--run-id", "r2").returncode == 0
    compared = cli("runs", "compare", "--out", str(tmp_path), "--run-id", "r2", "--json")
    assert compared.returncode == 0 and json.loads(compared.stdout)["base"] == "r1"
    index = cli("report", "index", "--out", str(tmp_path))
    assert index.returncode == 0 and "runs: skipping" in index.stderr and str(tmp_path / "geo" / "r9") in index.stderr


def test_a_build_is_named_after_the_moment_it_started(ray_local, tmp_path, capsys):
    """A coreset build reads and draws its whole design before its run directory exists; its id still
    carries its start time, the same moment ``runs list`` shows."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(0)
    pq.write_table(pa.table({"id": np.arange(2_000), "label": (rng.random(2_000) < 0.05).astype(int),
                             "score": rng.random(2_000)}), tmp_path / "t.parquet")
    assert main(["coreset", "build", "--input", str(tmp_path / "t.parquet"), "--tau", "0.5", "--out", str(tmp_path)]) == 0
    capsys.readouterr()
    assert main(["runs", "list", "--out", str(tmp_path), "--json"]) == 0
    (entry,) = json.loads(capsys.readouterr().out)
    manifest = json.loads((Path(entry["path"]) / "manifest.json").read_text())
    assert _id_time(entry["run_id"]) == entry["started_at"][:23] == manifest["started_at"][:23]


def test_a_run_root_that_does_not_exist_is_named_not_an_empty_history(tmp_path, capsys):
    """``runs list --out /missing`` said "no runs recorded": a typo in --out read as an empty history."""
    missing = tmp_path / "missing"
    for command in ("list", "show", "compare"):
        assert main(["runs", command, "--out", str(missing)]) == 2
        err = capsys.readouterr().err
        assert f"--out {missing}: the folder does not exist" in err, err
    assert not missing.exists()  # a command that only reads creates nothing


def test_compare_without_a_comparable_run_never_blames_a_base_nobody_gave(tmp_path, capsys):
    from connectors.runs.store import RunEntry, record_run

    record_run(str(tmp_path / "_runs"), RunEntry(run_id="r1", job="geo", status="complete", path=str(tmp_path / "geo" / "r1"),
                                                 started_at="2026-12-01T00:00:00", config={"limit": 5}))
    assert main(["runs", "compare", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "--base:" not in err and "run r1 has no earlier complete geo run with the same options (limit=5)" in err, err
    assert "give --base RUN_ID" not in err  # there is nothing else to name either
