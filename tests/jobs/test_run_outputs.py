"""Every job's outputs, loaded the way users load them: pandas, DuckDB and pyarrow datasets on ``data/<table>/``.

The runs (``tests/jobs/sample_runs.py``) each have two inputs, so the Hive partitions (``corpus=``,
``benchmark=``, ``system=``) must come back as a column with both values, and every reader must
agree on rows and columns with the manifest's ``data`` block.
"""
from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pandas as pd
import pyarrow.dataset as pads
import pytest

from connectors.runs.tables import SQL_RESERVED
from jobs.common.runtime.summaries import SCHEMA_VERSION
from tests.jobs.sample_runs import HOSTILE, JOBS, SYSTEM_B

pytestmark = pytest.mark.ray

# job -> table -> (partition key, its values) for the jobs whose runs take named inputs
PARTITIONS = {
    "geo": {"records": ("corpus", {"csv_corpus", "jsonl corpus"})},
    "conventions": {"items": ("benchmark", {"truthfulqa", "arc"}), "signals": ("benchmark", {"truthfulqa", "arc"})},
    "scorers": {t: ("system", {"model_a", SYSTEM_B}) for t in ("pairs", "variants", "sensitivity")},
    "landscape": {"scores": ("model", {"org/model-a", f"org/model-b {HOSTILE}"})},
}
TABLES = {"geo": {"records"}, "conventions": {"items", "signals"}, "scorers": {"pairs", "variants", "sensitivity"},
          "docs": {"evidence", "proposals"}, "coreset-build": {"design"}, "coreset-estimate": {"estimates", "contrasts"},
          "coreset-study": {"sampler_study", "draws"}, "traces": {"trace_audit", "sample"},
          "landscape": {"scores", "rejected", "candidates"}, "contamination": {"cells"}}


def _json(run: Path, name: str) -> dict:
    return json.loads((run / name).read_text())


@pytest.mark.parametrize("job", JOBS)
def test_every_table_loads_the_same_in_pandas_duckdb_and_pyarrow(sample_runs, job):
    run = sample_runs[job]
    manifest = _json(run, "manifest.json")
    assert set(manifest["data"]) == TABLES[job]
    for table, facts in manifest["data"].items():
        folder = run / "data" / table
        frame = pd.read_parquet(folder)
        db = duckdb.sql(f"SELECT * FROM read_parquet('{folder}/**/*.parquet', hive_partitioning=true)").df()
        ds = pads.dataset(folder, format="parquet", partitioning="hive").to_table()
        assert len(frame) == len(db) == ds.num_rows == facts["rows"] > 0, table
        assert set(frame.columns) == set(db.columns) == set(ds.column_names), table
        assert not {c.lower() for c in frame.columns} & SQL_RESERVED, table  # an unquoted query never trips on a keyword
        key, values = PARTITIONS.get(job, {}).get(table, (None, None))
        assert facts["partitioning"] == ([key] if key else [])
        if key:
            assert set(frame[key].astype(str)) == set(db[key]) == set(ds.column(key).to_pylist()) == values, table
            # the value is in the folder name, not repeated inside the files
            part = next(folder.glob(f"{key}=*/*.parquet"))
            assert key not in pd.read_parquet(part).columns


def test_rows_and_columns_are_the_ones_each_job_promises(sample_runs):
    geo = pd.read_parquet(sample_runs["geo"] / "data" / "records")
    assert geo.groupby("corpus", observed=True).size().to_dict() == {"csv_corpus": 60, "jsonl corpus": 60}
    assert {"record_id", "group_value", "country", "outcome", "score", "tld_country", "matches", "tier", "text"} <= set(geo.columns)
    # ids relative to the input's root, never a path of the machine that ran the job
    assert set(geo["record_id"].str.split("#").str[0]) == {"a.csv", "part-0.jsonl"}
    row = geo[(geo["corpus"] == "csv_corpus") & (geo["record_id"] == "a.csv#0")].iloc[0]
    assert (row["text"], row["country"]) == ("Street food in Bangkok, Thailand", "TH")  # --records-text keeps the caption
    conv = duckdb.sql(f"SELECT benchmark, count(*) AS n FROM read_parquet('{sample_runs['conventions']}/data/items/**/*.parquet', "
                      "hive_partitioning=true) GROUP BY benchmark ORDER BY benchmark").fetchall()
    assert conv == [("arc", 31), ("truthfulqa", 23)]
    signals = pd.read_parquet(sample_runs["conventions"] / "data" / "signals")
    assert {"char_start", "char_end", "text", "category", "variety"} <= set(signals.columns)
    assert (signals["char_end"] > signals["char_start"]).all()
    design = pd.read_parquet(sample_runs["coreset-build"] / "data" / "design")
    assert len(design) == _json(sample_runs["coreset-build"], "summary.json")["coreset_rows"] and "group_value" in design
    estimates = pd.read_parquet(sample_runs["coreset-estimate"] / "data" / "estimates")
    assert len(estimates) == 2 * 5 and {"predictor", "metric", "estimate", "lower", "upper"} <= set(estimates.columns)
    proposals = pd.read_parquet(sample_runs["docs"] / "data" / "proposals")
    assert len(proposals) == 3 * 6 and set(proposals["resource"]) == {"hf_card_detailed", "croissant_rai", "hostile"}
    audit = pd.read_parquet(sample_runs["traces"] / "data" / "trace_audit")
    assert len(audit) == 2 * 3  # models x rubric steps


@pytest.mark.parametrize("job", JOBS)
def test_every_summary_has_a_versioned_table_and_tidy_headline(sample_runs, job):
    summary = _json(sample_runs[job], "summary.json")
    assert summary["schema_version"] == SCHEMA_VERSION and summary["job"] == job and summary["table"]
    headline = pd.DataFrame(summary["headline"])
    assert list(headline.columns) == ["input", "metric", "value", "ci_low", "ci_high"] and len(headline) > 0
    assert headline["value"].notna().any()
    both = headline.dropna(subset=["ci_low", "ci_high"])
    assert ((both["ci_low"] <= both["value"] + 1e-12) & (both["value"] <= both["ci_high"] + 1e-12)).all()


def test_the_index_is_written_after_every_run_and_by_report_index(sample_runs, tmp_path, capsys):
    from jobs.cli import main

    root = sample_runs["geo"].parents[1]
    auto = (root / "index.html").read_text()  # rewritten by each run's commit: the last run's view holds them all
    for job, run in sample_runs.items():
        assert f'href="{job}/{run.name}/report.html"' in auto
    target = tmp_path / "elsewhere.html"
    assert main(["report", "index", "--out", str(root), "--to", str(target)]) == 0
    assert capsys.readouterr().out.strip() == f"{len(sample_runs) + 1} run(s) of {root} → {target}"  # + the earlier docs run
    html = target.read_text()
    assert html.count("<svg") >= 1 and "docs · " in html  # the docs trend over its two runs
    assert "<script" not in html
