"""The HT-Coreset jobs end to end on the session-scoped local Ray: build, estimate, study, bad input, CLI."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import datetime
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from audit.coreset.design import DesignConfig, build_design
from audit.coreset.metrics import metric_values
from audit.stats.choices import DEFAULT_SEED
from jobs.cli import main
from jobs.common.cli.config import RunOptions
from jobs.coreset.config import BuildConfig, DirectionConfig, StudyJobConfig


def run_build(cfg, opts):
    from jobs.coreset.build import run  # imports Ray: only when a test runs it, never while tests are collected

    return run(cfg, opts)


def run_study(cfg, opts):
    from jobs.coreset.study import run

    return run(cfg, opts)

pytestmark = pytest.mark.ray

TAU = 0.5
DESIGN_COLUMNS = ["id", "stratum", "label", "pi", "w"]


def make_table(n: int = 30_000, seed: int = 0) -> pd.DataFrame:
    """Two scorer columns; ~100 hard negatives (a census at budget 2x); positives mostly above tau."""
    rng = np.random.default_rng(seed)
    y = rng.random(n) < 0.01
    p = np.where(y, rng.beta(5, 2, n), rng.beta(1, 40, n))
    hard = rng.choice(np.flatnonzero(~y), 100, replace=False)
    p[hard] = rng.uniform(0.3, 0.9, 100)
    return pd.DataFrame({
        "target_id": rng.permutation(n) * 7 + 11, "is_positive": y.astype(np.int8),
        "p_a": p, "p_b": np.clip(p + rng.normal(0, 0.01, n), 0, 1),
        "typology": rng.choice(["fan-in", "cycle", "smurfing"], n),
    })


def write_parquet(frame: pd.DataFrame, root: Path, files: int, row_group_size: int) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    for i, part in enumerate(np.array_split(np.arange(len(frame)), files)):
        pq.write_table(pa.Table.from_pandas(frame.iloc[part], preserve_index=False), root / f"part-{i}.parquet",
                       row_group_size=row_group_size)
    return root


def build_config(path: Path, **kw) -> BuildConfig:
    args = {"input": [str(path)], "id_column": "target_id", "label_column": "is_positive", "score_columns": ["p_a", "p_b"],
            "group_column": "typology", "tau": TAU, "seed": 42, **kw}
    return BuildConfig(**args)


def load(run_dir: str) -> tuple[dict, dict]:
    d = Path(run_dir)
    return json.loads((d / "summary.json").read_text()), json.loads((d / "manifest.json").read_text())


def sorted_design(path: Path) -> pd.DataFrame:
    return pd.read_parquet(path)[DESIGN_COLUMNS].sort_values(["stratum", "id"]).reset_index(drop=True)


@pytest.fixture(scope="module")
def table() -> pd.DataFrame:
    return make_table()


@pytest.fixture(scope="module")
def built(ray_local, tmp_path_factory, table) -> tuple[str, Path]:
    root = tmp_path_factory.mktemp("coreset")
    src = write_parquet(table, root / "targets", files=3, row_group_size=1_500)
    out = run_build(build_config(src, shard_rows=1_500), RunOptions(out=str(root / "runs"), run_id="many-blocks"))
    return out, root


def test_build_equals_the_in_memory_design_whatever_the_blocks(built, table):
    out, root = built
    in_memory, manifest = build_design(table["target_id"].to_numpy(), table["is_positive"].to_numpy(),
                                       table[["p_a", "p_b"]].to_numpy(), DesignConfig(tau=TAU, seed=42))
    expected = in_memory.sort_values(["stratum", "id"]).reset_index(drop=True)
    many = sorted_design(Path(out) / "data" / "design")
    assert many.equals(expected)
    assert json.loads((Path(out) / "design.json").read_text()) == json.loads(json.dumps(manifest.to_dict()))
    # the same table, shuffled and re-split into 2 files of large row groups, read as whole-file shards
    shuffled = write_parquet(table.sample(frac=1.0, random_state=3), root / "reshuffled", files=2, row_group_size=8_000)
    assert main(["coreset", "build", "--input", str(shuffled), "--id-column", "target_id", "--label-column", "is_positive",
                 "--score-columns", "p_a,p_b", "--tau", str(TAU), "--seed", "42", "--shard-rows", "100000000",
                 "--out", str(root / "runs"), "--run-id", "few-blocks"]) == 0
    few = root / "runs" / "coreset-build" / "few-blocks"
    assert sorted_design(few / "data" / "design").equals(expected)
    _, m_many = load(out)
    _, m_few = load(str(few))
    assert m_many["passes"]["blocks"] >= 20 and m_few["passes"]["blocks"] == 2
    # another seed draws another sample from the same strata
    other = run_build(build_config(root / "targets", seed=43), RunOptions(out=str(root / "runs"), run_id="seed-43"))
    assert set(pd.read_parquet(Path(other) / "data" / "design")["id"]) != set(many["id"])


def test_string_ids_and_other_design_rules_match_the_in_memory_build(ray_local, tmp_path, table):
    small = table.iloc[:12_000].assign(target_id=lambda d: "edge-" + d["target_id"].astype(str))
    src = write_parquet(small.drop(columns="typology"), tmp_path / "t", files=3, row_group_size=1_000)
    cfg = build_config(src, group_column=None, hard_stratum=False, easy_strata=4, budget_multiplier=3.0, shard_rows=2_000)
    out = run_build(cfg, RunOptions(out=str(tmp_path / "runs")))
    expected, _ = build_design(small["target_id"].to_numpy(object), small["is_positive"].to_numpy(),
                               small[["p_a", "p_b"]].to_numpy(), cfg.design_config())
    assert sorted_design(Path(out) / "data" / "design").equals(expected.sort_values(["stratum", "id"]).reset_index(drop=True))
    summary, _ = load(out)
    assert [s["stratum"] for s in summary["strata"]][-1] == "easy_4" and summary["strata"][1]["population"] == 0


def test_build_run_directory_summary_manifest_and_report(built, table):
    out, _ = built
    summary, m = load(out)
    design = pd.read_parquet(Path(out) / "data" / "design")
    n_pos = int(table["is_positive"].sum())
    assert summary["targets"] == len(table) and summary["positives"] == n_pos and summary["budget"] == 2 * n_pos
    assert summary["coreset_rows"] == len(design) == 3 * n_pos and summary["reduction"] == pytest.approx(len(table) / len(design))
    strata = {s["stratum"]: s for s in summary["strata"]}
    assert strata["positive"]["census"] and strata["hard_negative"]["census"]  # ~100 hard negatives < the 30% reserve
    assert summary["negative_weight_sum"] == pytest.approx(len(table) - n_pos, rel=1e-12)
    assert set(design["group_value"]) == {"fan-in", "cycle", "smurfing"} and design["score"].between(0, 1).all()
    for key in ("config", "inputs", "seeds", "rows", "timings", "packages", "ray", "passes"):
        assert key in m, key
    assert m["seeds"]["draw_seed"] == 42 and len(m["inputs"]["fingerprint"]) == 64 and m["rows"]["in"] == len(table)
    assert m["passes"]["candidate_rows_shipped"] < 2 * len(design)  # not blocks x budget
    html = (Path(out) / "report.html").read_text()
    assert "hard_negative" in html and "<svg" in html and f"{len(table):,}" in html


def test_estimate_is_exact_for_the_construction_scorer_and_contrasts_are_paired(built, table, tmp_path):
    out, _ = built
    design = pd.read_parquet(Path(out) / "data" / "design")
    p = table[["p_a", "p_b"]].to_numpy().mean(axis=1)
    scorer = design[["id"]].assign(prediction=(design["score"] >= TAU).astype(int))
    scorer.to_csv(tmp_path / "scorer.csv", index=False)
    rng = np.random.default_rng(0)
    runs = pd.concat([design[["id"]].assign(prediction=(rng.random(len(design)) < 0.2).astype(int), seed=s) for s in range(3)])
    runs.to_json(tmp_path / "llm.jsonl", orient="records", lines=True)
    args = ["coreset", "estimate", "--design", out, "--predictions", f"scorer={tmp_path / 'scorer.csv'}",
            "--predictions", f"same={tmp_path / 'scorer.csv'}", "--predictions", f"llm={tmp_path / 'llm.jsonl'}",
            "--run-column", "seed", "--out", str(tmp_path / "runs"), "--run-id", "est"]
    assert main(args) == 0
    summary, m = load(str(tmp_path / "runs" / "coreset-estimate" / "est"))
    est = {(r["predictor"], r["metric"]): r for r in summary["estimates"]}
    y, pred = table["is_positive"].to_numpy() == 1, p >= TAU
    tp, fp, fn = np.sum(y & pred), np.sum(~y & pred), np.sum(y & ~pred)
    for metric in ("precision", "recall", "f1"):
        assert abs(est[("scorer", metric)]["estimate"] - float(metric_values(metric, tp, fp, fn, y.mean()))) < 1e-12
    llm = est[("llm", "f1")]
    assert llm["run_sd"] > 0 and llm["lower"] <= llm["estimate"] <= llm["upper"]
    assert llm["subset_unweighted"] > 2 * llm["estimate"]  # random alarms look far better without weights
    assert est[("llm", "recall")]["se"] == 0 and est[("llm", "f1")]["se"] > 0
    assert est[("scorer", "f1")]["predict_all_floor"] == pytest.approx(2 * y.sum() / (len(y) + y.sum()))
    pairs = {(c["a"], c["b"], c["metric"]): c for c in summary["contrasts"]}
    same = pairs[("scorer", "same", "f1")]
    assert same["difference"] == 0 and same["se"] == 0 and same["lower"] < 0 < same["upper"]
    assert pairs[("scorer", "llm", "f1")]["se"] > 0
    assert summary["predictors"]["llm"]["runs"] == ["0", "1", "2"]
    assert {g["group"] for g in summary["predictors"]["scorer"]["group_recall"]} == {"fan-in", "cycle", "smurfing"}
    assert m["seeds"]["design_seed"] == 42 and set(m["inputs"]["predictions"]) == {"scorer", "same", "llm"}
    estimates = pd.read_parquet(tmp_path / "runs" / "coreset-estimate" / "est" / "data" / "estimates")
    assert len(estimates) == 3 * 5 and {"lower", "upper", "subset_unweighted", "predict_all_floor"} <= set(estimates.columns)
    html = (tmp_path / "runs" / "coreset-estimate" / "est" / "report.html").read_text()
    assert "conservative 95% interval" in html and "Paired contrasts" in html


def test_study_progress_counts_the_table_once_whatever_the_directions(ray_local, tmp_path):
    """Two directions over a 4,000-row table: progress said 8,000 rows (rows x directions)."""
    rng = np.random.default_rng(3)
    n = 4_000
    y = rng.random(n) < 0.05
    cols = {"label": y.astype(int), **{f"{fam}_0": np.clip(0.6 * y + 0.4 * rng.random(n), 0, 1) for fam in "ab"}}
    src = write_parquet(pd.DataFrame(cols), tmp_path / "table", files=1, row_group_size=2_000)
    assert main(["coreset", "study", "--input", str(src), "--dataset", "toy", "--draws", "10", "--direction", "a->b:a_0:b_0",
                 "--direction", "b->a:b_0:a_0", "--tau", "0.5", "--prediction-threshold", "0.5", "--out", str(tmp_path / "runs"),
                 "--run-id", "s"]) == 0
    _, m = load(str(tmp_path / "runs" / "coreset-study" / "s"))
    samples = m["timings"]["progress"]
    assert {s["expected_rows"] for s in samples} == {n} and max(s["rows"] for s in samples) == n == samples[-1]["rows"]
    assert samples[-1]["shards"] == 2  # one per direction


def test_study_writes_the_protocol_before_any_result(ray_local, tmp_path):
    rng = np.random.default_rng(2)
    n = 40_000
    y = rng.random(n) < 0.005
    risk = rng.normal(0, 1, n) + 4 * y
    cols = {"label": y.astype(int)}
    for fam in "ab":
        base = risk + 0.2 * rng.normal(0, 1, n)
        for j in range(2):
            cols[f"{fam}_{j}"] = 1 / (1 + np.exp(-4 * (base + 0.08 * rng.normal(0, 1, n) - 3.4)))
    src = write_parquet(pd.DataFrame(cols), tmp_path / "table", files=2, row_group_size=5_000)
    assert main(["coreset", "study", "--input", str(src), "--dataset", "toy", "--draws", "60", "--direction",
                 "a->b:a_0,a_1:b_0,b_1", "--tau", "0.5", "--prediction-threshold", "0.5", "--out", str(tmp_path / "runs"),
                 "--run-id", "s"]) == 0
    out = tmp_path / "runs" / "coreset-study" / "s"
    summary, m = load(str(out))
    protocol = json.loads((out / "protocol.json").read_text())
    assert protocol["draws"] == 60 and protocol["cases"][0]["direction"] == "a->b" and "SeedSequence" in protocol["seeds"]["rule"]
    written, first = (datetime.fromisoformat(m["protocol"][k]) for k in ("written_at", "first_result_at"))
    assert written < first
    assert os.path.getmtime(out / "protocol.json") <= os.path.getmtime(out / "data" / "sampler_study" / "part-0.parquet")
    table = pd.read_parquet(out / "data" / "sampler_study")
    assert set(table["sampler"]) == {"uniform_ht", "difficulty_ht", "ht_coreset", "ht_coreset_unweighted"}
    assert len(table) == 4 * 3 and (table.loc[table["metric"] == "recall", "rmse"] == 0).all()
    assert summary["f1_rmse_ranking"][0]["order"][0] == "ht_coreset"
    assert len(pd.read_parquet(out / "data" / "draws")) == 60 * 4 * 3
    assert m["seeds"]["root_seed"] == DEFAULT_SEED and m["protocol"]["sha256"] == summary["protocol_sha256"]
    html = (out / "report.html").read_text()
    assert "F1 RMSE by sampler" in html and "<svg" in html
    with pytest.raises(ValueError, match=r"table: negative budget of \d+ rows is larger than the \d+ negatives"):
        run_study(StudyJobConfig(input=[str(src)], budget_multipliers=[1e6], prediction_threshold=0.5, direction=[DirectionConfig(
            name="a->b", construction_scores=["a_0"], tau=0.5, predictions=["b_0"])]),
            RunOptions(out=str(tmp_path / "runs"), run_id="too-big"))
    assert not (tmp_path / "runs" / "coreset-study" / ".too-big.partial").exists()  # refused before the protocol


def _error(args: list[str], capsys) -> str:
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return err


def test_bad_targets_name_the_file_and_column(ray_local, tmp_path, capsys):
    good = make_table(6_000, seed=5)
    base = ["--id-column", "target_id", "--label-column", "is_positive", "--score-columns", "p_a,p_b", "--tau", "0.5",
            "--out", str(tmp_path / "runs")]

    def case(name: str, frame: pd.DataFrame, extra: list[str] = ()) -> str:
        d = write_parquet(frame, tmp_path / name, files=2, row_group_size=1_000)
        (d / "part-1.parquet").rename(d / f"{name}.parquet")
        return _error(["coreset", "build", "--input", str(d), *base, *extra], capsys)

    assert "column(s) ['p_b'] not found" in case("nocol", good.drop(columns="p_b"))
    bad = good.copy()
    bad.loc[bad.index[-1], "is_positive"] = 2
    assert "nonbinary.parquet: column 'is_positive' is not binary" in case("nonbinary", bad)
    bad = good.assign(p_a=good["p_a"].where(good.index != good.index[-2], np.nan))
    assert "nan.parquet: column 'p_a' has 1 NaN score" in case("nan", bad)
    assert "column 'is_positive' has no positive rows" in case("nopos", good.assign(is_positive=0))
    assert "larger than the" in case("budget", good, ["--budget-multiplier", "1000"])
    dup = pd.concat([good, good.iloc[:3]], ignore_index=True)
    assert "column 'target_id' repeats 3 id(s)" in case("dup", dup)
    assert "--on-error skip is not supported" in _error(["coreset", "build", "--input", str(tmp_path / "nopos"), *base,
                                                         "--on-error", "skip"], capsys)
    assert not (tmp_path / "runs" / "coreset-build").exists() or not any(
        p.name[0] != "." for p in (tmp_path / "runs" / "coreset-build").iterdir())


def test_bad_predictions_name_the_file_and_column(built, tmp_path, capsys):
    out, _ = built
    ids = pd.read_parquet(Path(out) / "data" / "design")["id"]
    base = ["coreset", "estimate", "--design", out, "--out", str(tmp_path / "runs")]
    pd.DataFrame({"id": ids[1:], "prediction": 0}).to_csv(tmp_path / "short.csv", index=False)
    assert f"short.csv: column 'id' lacks 1 of the {len(ids)} design id(s)" in _error(
        [*base, "--predictions", f"m={tmp_path / 'short.csv'}"], capsys)
    pd.DataFrame({"id": [*ids, -5], "prediction": 0}).to_parquet(tmp_path / "extra.parquet")
    assert "extra.parquet: column 'id' has 1 id(s) not in the design" in _error(
        [*base, "--predictions", f"m={tmp_path / 'extra.parquet'}"], capsys)
    pd.DataFrame({"id": ids, "verdict": "yes"}).to_json(tmp_path / "text.jsonl", orient="records", lines=True)
    err = _error([*base, "--predictions", f"m={tmp_path / 'text.jsonl'}", "--prediction-column", "verdict"], capsys)
    assert "text.jsonl: column 'verdict' is not binary" in err
    pd.DataFrame({"id": ids, "prediction": [None] + [1] * (len(ids) - 1)}).to_csv(tmp_path / "gap.csv", index=False)
    assert "gap.csv: column 'prediction' has 1 missing value" in _error([*base, "--predictions", f"m={tmp_path / 'gap.csv'}"], capsys)
    assert main([*base, "--predictions", f"m={tmp_path / 'gap.csv'}", "--missing", "negative", "--run-id", "gap"]) == 0
    summary, m = load(str(tmp_path / "runs" / "coreset-estimate" / "gap"))
    assert summary["predictors"]["m"]["missing_counted_negative"] == 1
    assert m["rows"]["skipped_by_reason"]["missing_prediction_counted_negative"] == 1


def test_cli_help_lists_the_three_commands_and_their_options():
    out = subprocess.run([sys.executable, "-m", "jobs.cli", "coreset", "build", "--help"], capture_output=True, text=True,
                         check=True).stdout
    for flag in ("--input", "--score-columns", "--tau", "--hard-reserve-fraction", "--seed", "--address", "--num-cpus"):
        assert flag in out
    with pytest.raises(SystemExit):
        main(["coreset", "estimate", "--help"])
    with pytest.raises(SystemExit):
        main(["coreset", "study", "--help"])
    assert main(["coreset"]) == 2


ROOT = Path(__file__).resolve().parents[3]
INTERRUPTIBLE = ("import signal, sys; signal.signal(signal.SIGINT, signal.default_int_handler); "  # Ctrl-C as from a terminal
                 "from jobs.cli import main; sys.exit(main(sys.argv[1:]))")


def test_a_build_stopped_mid_read_is_finished_by_resume_with_the_same_design(ray_local, tmp_path, table, capsys):
    """Ctrl-C on a build after a few shards: the run directory holds the shards read so far, an unknown
    run id is refused before anything is read, and ``--resume`` reads only the rest and draws the
    design an uninterrupted build draws."""
    import signal
    import time

    part = table.iloc[:6_000]
    src = write_parquet(part, tmp_path / "targets", files=4, row_group_size=250)  # 24 shards of one row group
    out = tmp_path / "runs"
    args = ["coreset", "build", "--input", str(src), "--id-column", "target_id", "--label-column", "is_positive",
            "--score-columns", "p_a,p_b", "--tau", str(TAU), "--seed", "42", "--shard-rows", "250", "--out", str(out)]
    proc = subprocess.Popen([sys.executable, "-c", INTERRUPTIBLE, *args, "--run-id", "r1", "--num-cpus", "1"], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    markers = out / "coreset-build" / ".r1.partial" / "shards"
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline and proc.poll() is None and len(list(markers.glob("*.json"))) < 3:
        time.sleep(0.02)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode != 0, err[-2000:]
    finished = {p.stem for p in markers.glob("*.json")}
    assert 3 <= len(finished) < 24, f"the interruption should land mid-read ({len(finished)} of 24 shards done)"

    capsys.readouterr()
    assert main([*[a if a != str(src) else str(tmp_path / "missing") for a in args], "--resume", "--run-id", "nosuch"]) == 2
    err = capsys.readouterr().err
    assert "no unfinished run 'nosuch'" in err and "resumable runs: r1" in err and "missing" not in err

    assert main([*args, "--resume", "--run-id", "r1"]) == 0
    done = out / "coreset-build" / "r1"
    manifest = json.loads((done / "manifest.json").read_text())
    assert manifest["shards"] == {"total": 24, "resumed": len(finished), "run": 24 - len(finished)}
    expected, _ = build_design(part["target_id"].to_numpy(), part["is_positive"].to_numpy(), part[["p_a", "p_b"]].to_numpy(),
                               DesignConfig(tau=TAU, seed=42))
    assert sorted_design(done / "data" / "design").equals(expected.sort_values(["stratum", "id"]).reset_index(drop=True))
    assert not (done / "prepared").exists() and manifest["rows"]["in"] == len(part)
