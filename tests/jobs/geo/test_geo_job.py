"""The geo job end to end on a session-scoped local Ray: counts, groups, bad input, resume."""
from __future__ import annotations

import json
import random
from collections import Counter
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from audit.geo.aggregate import summarize
from audit.geo.stage import GeoPartial, GeoStage
from jobs.common.cli.config import RunOptions
from jobs.common.runtime.errors import JobError
from jobs.geo.config import CorpusConfig, GeoConfig
from jobs.geo.run import run
from tests.builders import write_tar

pytestmark = pytest.mark.ray


def make_corpus(root: Path, captions: list[str], files: int, group_values: list[str] | None = None) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    per = -(-len(captions) // files)
    for i in range(files):
        chunk = captions[i * per:(i + 1) * per]
        hosts = ["http://x.jp/a", "http://y.com", "http://z.co.uk/b"]
        cols = {"text": chunk, "url": [random.Random(j).choice(hosts) for j in range(len(chunk))]}
        if group_values:
            cols["lang"] = [group_values[(i * per + j) % len(group_values)] for j in range(len(chunk))]
        pq.write_table(pa.table(cols), root / f"part-{i:03d}.parquet", row_group_size=1000)
    return root


def corpus(name: str, path: Path, **kw) -> CorpusConfig:
    return CorpusConfig(name=name, paths=[str(path)], format="parquet", text="text", url="url", **kw)


def load(run_dir: str) -> tuple[dict, dict]:
    d = Path(run_dir)
    return json.loads((d / "summary.json").read_text()), json.loads((d / "manifest.json").read_text())


def one_process(lexicon, captions, urls=None, groups=None) -> GeoPartial:
    """The whole corpus resolved in one process, one batch: the reference for the distributed run."""
    n = len(captions)
    items = pa.record_batch({
        "record_id": [str(i) for i in range(n)], "text": captions, "context": pa.nulls(n, pa.string()),
        "url": urls if urls is not None else pa.nulls(n, pa.string()),
        "group": groups if groups is not None else pa.nulls(n, pa.string()), "skip_reason": pa.nulls(n, pa.string()),
    })
    return GeoStage(lexicon.entries).process(items)[1]


def test_multi_file_scan_equals_one_process(ray_local, tmp_path, real_captions, paper_lexicon):
    captions = random.Random(7).sample(real_captions, 12_000)
    src = make_corpus(tmp_path / "c", captions, files=5)
    cfg = GeoConfig(corpus=[corpus("real", src)], lexicon_profile="paper", shard_rows=1000, bootstrap=100,
                    write_records=True)
    out = run(cfg, RunOptions(out=str(tmp_path / "runs"), executor="ray"))  # 12,000 rows would stay in the driver
    summary, manifest = load(out)
    urls = pa.concat_tables([pq.read_table(p) for p in sorted(src.glob("*.parquet"))]).column("url").to_pylist()
    expected = one_process(paper_lexicon, captions, urls)
    got = summary["corpora"]["real"]
    ref = summarize(expected)
    for key in ("outcomes", "country_counts", "resolved_records", "usable_records", "top3_concentration"):
        assert got[key] == ref[key], key
    assert got["tld"]["country_counts"] == ref["tld"]["country_counts"]
    assert manifest["shards"]["total"] == 15 and manifest["rows"]["in"] == 12_000
    # per-record Parquet: one row per caption, the same assignments
    records = pq.read_table(Path(out) / "data" / "records")
    assert records.num_rows == 12_000
    assert Counter(records.column("country").drop_null().to_pylist()) == Counter(ref["country_counts"])
    assert (Path(out) / "_SUCCESS").exists() and not list(Path(out).parent.glob(".*.partial"))


def test_manifest_and_report(ray_local, tmp_path):
    src = make_corpus(tmp_path / "c", ["Lions in Kenya", "Tokyo <b>by</b> night", "a dog"] * 10, files=2,
                      group_values=["<script>x</script>", "en"])
    cfg = GeoConfig(corpus=[corpus("tiny", src)], group_column="lang", bootstrap=50)
    out = run(cfg, RunOptions(out=str(tmp_path / "runs"), run_id="r1"))
    assert out.endswith("geo/r1")
    summary, m = load(out)
    for key in ("job", "config", "seed", "inputs", "lexicon", "indicators", "packages", "started_at", "finished_at", "timings",
                "rows", "shards"):
        assert key in m, key
    assert m["lexicon"]["sha256"] == summary["lexicon"]["sha256"] and len(m["lexicon"]["sha256"]) == 64
    assert m["packages"]["ray"] and m["timings"]["scan_s"] > 0 and m["seed"] == 2026
    assert m["inputs"]["tiny"]["expected_rows"] == 30
    html = (Path(out) / "report.html").read_text()
    assert "<script>x</script>" not in html and "&lt;script&gt;x&lt;/script&gt;" in html
    assert "<svg" in html and "Top " in html
    with pytest.raises(Exception, match="already exists"):
        run(cfg, RunOptions(out=str(tmp_path / "runs"), run_id="r1"))


def test_group_by_gives_each_group_the_whole_analysis(ray_local, tmp_path, real_captions, paper_lexicon):
    captions = random.Random(3).sample(real_captions, 3000) + ["Trip to Japan"] * 50 + ["Paris, France"] * 30
    langs = ["en", "fr", "de"]
    src = make_corpus(tmp_path / "g", captions, files=3, group_values=langs)
    cfg = GeoConfig(corpus=[corpus("g", src)], group_column="lang", lexicon_profile="paper", bootstrap=0)
    out = run(cfg, RunOptions(out=str(tmp_path / "runs")))
    summary, _ = load(out)
    block = summary["corpora"]["g"]
    assert set(block["groups"]) == set(langs)
    groups = pa.concat_tables([pq.read_table(p) for p in sorted(src.glob("*.parquet"))]).column("lang").to_pylist()
    for lang in langs:
        subset = [c for c, g in zip(captions, groups) if g == lang]
        ref = summarize(one_process(paper_lexicon, subset))
        assert block["groups"][lang]["country_counts"] == ref["country_counts"]
        assert block["groups"][lang]["usable_records"] == len(subset)
    assert sum(block["groups"][g]["resolved_records"] for g in langs) == block["resolved_records"]


def test_bad_input_counted_by_reason(ray_local, tmp_path):
    d = tmp_path / "bad"
    d.mkdir()
    pq.write_table(pa.table({"text": pa.array([b"Kenya", None, b" ", b"\xff\xfe", b"Peru " + b"z" * 1_000_000], pa.binary()),
                             "url": ["u"] * 5}), d / "a.parquet")
    (d / "b.parquet").write_bytes(b"PAR1 garbage")
    j = tmp_path / "bad.jsonl"
    j.write_text("\n".join([json.dumps({"caption": "Oslo in winter", "url": "http://a.no/x"}), json.dumps({"caption": 42}),
                            "{broken", json.dumps({"url": "no caption"}), json.dumps(["not", "an", "object"])]) + "\n")
    corpora = [corpus("bad", d), CorpusConfig(name="j", paths=[str(j)], format="jsonl", text="caption", url="url")]
    cfg = GeoConfig(corpus=corpora, bootstrap=0)
    with pytest.raises(ValueError, match=r"b\.parquet: unreadable"):
        run(cfg, RunOptions(out=str(tmp_path / "runs")))
    # skipping is bounded: by default no whole input and at most 1% of rows may be skipped
    with pytest.raises(JobError, match=r"1 input\(s\) skipped, over --max-skipped-inputs 0 \(first: \S*b\.parquet"):
        run(cfg, RunOptions(out=str(tmp_path / "runs"), on_error="skip"))
    with pytest.raises(JobError, match=r"70\.00% of rows skipped or unread \(7 of 10\), over --max-skipped 0\.01"):
        run(cfg, RunOptions(out=str(tmp_path / "runs"), on_error="skip", max_skipped_inputs=1))
    out = run(cfg, RunOptions(out=str(tmp_path / "runs"), on_error="skip", max_skipped_inputs=1, max_skipped=0.7))
    summary, m = load(out)
    assert m["rows"]["skipped_by_reason"] == {
        "null_text": 1, "empty_text": 1, "invalid_utf8": 1, "non_string_text": 1, "invalid_json": 1, "missing_field": 1,
        "not_an_object": 1}
    assert m["rows"]["in"] == 10 and m["rows"]["out"] == 3
    assert m["skip_limits"] == {"skipped_share": 0.7, "skipped_inputs": 1, "max_skipped": 0.7, "max_skipped_inputs": 1}
    assert summary["corpora"]["bad"]["country_counts"] == {"KE": 1, "PE": 1}  # the 1 MB caption resolved
    assert summary["corpora"]["j"]["country_counts"] == {"NO": 1} and summary["corpora"]["j"]["tld"]["country_counts"] == {"NO": 1}
    assert m["shards"]["failed"][0]["file"].endswith("b.parquet")
    assert "b.parquet" in (Path(out) / "report.html").read_text()


def test_webdataset_corpus(ray_local, tmp_path):
    for shard in range(2):
        write_tar(tmp_path / f"{shard:05d}.tar", [(f"{shard}{i:04d}", f"Street food in Bangkok {i}".encode(), {"url": f"http://a.th/{i}"})
                                                  for i in range(20)])
    cfg = GeoConfig(corpus=[CorpusConfig(name="wds", paths=[str(tmp_path / "*.tar")], format="webdataset", text="txt", url="url")],
                    bootstrap=0)
    summary, m = load(run(cfg, RunOptions(out=str(tmp_path / "runs"))))
    assert summary["corpora"]["wds"]["country_counts"] == {"TH": 40} and m["shards"]["total"] == 2
    assert summary["corpora"]["wds"]["tld"]["agreement"]["agreement"] == 1.0


def test_missing_column_fails_before_any_work(ray_local, tmp_path):
    pq.write_table(pa.table({"caption": ["x"]}), tmp_path / "a.parquet")
    with pytest.raises(ValueError, match=r"a\.parquet: mapped column\(s\) \['text', 'url'\] not found"):
        run(GeoConfig(corpus=[corpus("x", tmp_path / "a.parquet")]), RunOptions(out=str(tmp_path / "runs")))
    assert not (tmp_path / "runs").exists()


def write_tsv_shards(d: Path, captions: list[str], per: int) -> None:
    d.mkdir(parents=True, exist_ok=True)
    captions = [" ".join(c.split()) for c in captions]  # one caption per line, no tabs inside
    for i in range(0, len(captions), per):
        lines = [f"{c}\thttp://a.{'fr' if j % 3 else 'jp'}/{j}" for j, c in enumerate(captions[i:i + per])]
        (d / f"s{i // per:03d}.tsv").write_text("\n".join(lines) + "\n", encoding="utf-8")


def test_shard_failing_mid_scan_then_resume_gives_identical_totals(ray_local, tmp_path, real_captions):
    captions = random.Random(11).sample(real_captions, 6000)
    d = tmp_path / "tsv"
    write_tsv_shards(d, captions, 1000)
    good = (d / "s005.tsv").read_bytes()
    (d / "s005.tsv").unlink()
    (d / "s005.tsv.gz").write_bytes(b"\x1f\x8b not really gzip")  # fails when read, not when planned
    # the small lexicon (each run's workers compile it: seconds less than the default gazetteer's)
    cfg = GeoConfig(corpus=[CorpusConfig(name="t", paths=[str(d)], preset="cc3m")], lexicon_profile="paper", bootstrap=0)
    opts = RunOptions(out=str(tmp_path / "runs"), run_id="resumable")
    with pytest.raises(JobError, match=r"geo: \S+s005\.tsv\.gz: .*[Gg]zip") as failure:
        run(cfg, opts)
    assert failure.value.partial.endswith(".resumable.partial") and not failure.value.resumable  # bad input: no resume hint
    assert "Traceback" in (tmp_path / "runs" / "geo" / ".resumable.partial" / "error.log").read_text()
    partial = tmp_path / "runs" / "geo" / ".resumable.partial"
    assert list((partial / "shards").glob("*.json")), "finished shards must survive the failure"
    import gzip

    (d / "s005.tsv.gz").write_bytes(gzip.compress(good))  # repaired: a new shard id, so it is rerun
    out = run(cfg, RunOptions(out=str(tmp_path / "runs"), run_id="resumable", resume=True))
    summary, m = load(out)
    assert m["shards"]["resumed"] >= 1 and m["shards"]["resumed"] + m["shards"]["run"] == 6
    clean_summary, _ = load(run(cfg, RunOptions(out=str(tmp_path / "runs"), run_id="clean")))
    for key in ("outcomes", "country_counts", "usable_records"):
        assert summary["corpora"]["t"][key] == clean_summary["corpora"]["t"][key]
    assert summary["corpora"]["t"]["usable_records"] == 6000


def test_killed_run_resumes_and_reproduces_totals(ray_local, tmp_path, real_captions):
    """A real interruption: the CLI process (with its own local Ray) is killed mid-scan."""
    import os
    import signal
    import subprocess
    import sys
    import time

    captions = random.Random(5).choices(real_captions, k=60_000)  # 40 shards: enough to stop part way
    d = tmp_path / "tsv"
    write_tsv_shards(d, captions, 1500)
    out_root = tmp_path / "runs"
    args = [sys.executable, "-m", "jobs.cli", "geo", "--corpus", f"t:cc3m:{d}", "--bootstrap", "0", "--out", str(out_root),
            "--lexicon-profile", "paper", "--run-id", "killed", "--num-cpus", "1"]  # the small lexicon: faster worker starts
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    shards_dir = out_root / "geo" / ".killed.partial" / "shards"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and len(list(shards_dir.glob("*.json"))) < 2:
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    done_before = len(list(shards_dir.glob("*.json")))
    assert 2 <= done_before < 40, "the run must be interrupted part way"
    assert not (out_root / "geo" / "killed").exists()

    from jobs.cli import main

    assert main(args[3:-2] + ["--resume"]) == 0  # the same command, resumed (in this process's Ray)
    summary, m = load(str(out_root / "geo" / "killed"))
    cfg = GeoConfig(corpus=[CorpusConfig(name="t", paths=[str(d)], preset="cc3m")], lexicon_profile="paper", bootstrap=0)
    assert m["shards"]["resumed"] >= done_before and m["shards"]["resumed"] + m["shards"]["run"] == 40
    clean, _ = load(run(cfg, RunOptions(out=str(out_root), run_id="clean")))
    for key in ("outcomes", "country_counts", "usable_records"):
        assert summary["corpora"]["t"][key] == clean["corpora"]["t"][key]
    assert m["rows"]["in"] == 60_000


def test_joins_a_running_cluster_by_address(ray_local, tmp_path):
    """A second driver process joins the session's Ray (4 logical CPUs, more than this machine
    has) by address, as `--address auto` or an explicit address does on a cluster."""
    import subprocess
    import sys

    address = ray_local.get_runtime_context().gcs_address
    src = make_corpus(tmp_path / "c", ["Rome", "Lima", "a cat"] * 20, files=2)
    cmd = [sys.executable, "-m", "jobs.cli", "geo", "--input", str(src), "--text-column", "text", "--url-column", "url",
           "--bootstrap", "0", "--lexicon-profile", "paper", "--out", str(tmp_path / "runs"), "--run-id", "joined",
           "--address", address]  # the small lexicon: what is tested is joining the cluster
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    summary, m = load(str(tmp_path / "runs" / "geo" / "joined"))
    assert m["ray"]["address"] == address and m["ray"]["cluster_cpus"] == 4.0
    assert summary["corpora"]["corpus"]["country_counts"] == {"IT": 20, "PE": 20}


def test_gazetteer_profile_with_an_evidence_floor(ray_local, tmp_path):
    captions = ["Cabin for rent in Gimli, MB", "1402 Oak Ridge Dr, Kerrville, TX 78028", "Mid-century Danish style sideboard",
                "Gimli sunset", "a dog on a sofa"]
    src = make_corpus(tmp_path / "c", captions * 4, files=1)
    cfg = GeoConfig(corpus=[corpus("g", src)], lexicon_profile="gazetteer", write_records=True, bootstrap=0)
    out = run(cfg, RunOptions(out=str(tmp_path / "runs")))
    summary, m = load(out)
    strict = GeoConfig(corpus=[corpus("g", src)], lexicon_profile="gazetteer", min_evidence="country_region_address", bootstrap=0)
    strict_summary, strict_m = load(run(strict, RunOptions(out=str(tmp_path / "runs"))))
    assert m["lexicon"]["profile"] == "gazetteer" and strict_m["evidence"]["min_evidence"] == "country_region_address"
    # the floor keeps the corroborated and address records and drops the bare town and the demonym
    assert summary["corpora"]["g"]["country_counts"] == {"CA": 8, "US": 4, "DK": 4}
    assert strict_summary["corpora"]["g"]["country_counts"] == {"CA": 4, "US": 4}
    assert sum(m["evidence"]["tiers"]["g"].values()) == summary["corpora"]["g"]["resolved_records"]
    tiers = pq.read_table(Path(out) / "data" / "records" / "corpus=g").column("tier").to_pylist()
    assert {"corroborated", "bare_town", "demonym"} <= set(tiers) and None in tiers
