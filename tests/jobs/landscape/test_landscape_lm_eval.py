"""``benchaudit landscape --from-lm-eval``: lm-eval --log_samples files (written here in lm-eval's own
format) give the Ptop1, Hnorm and MPD computed by hand from their log-likelihoods, with no model run."""
from __future__ import annotations

import json
import math
from itertools import combinations
from pathlib import Path

import pytest

from connectors.runs.tables import read_table
from jobs.cli import main
from tests.builders import LN, A, B, write_lm_eval_runs

pytestmark = pytest.mark.ray  # a landscape over lm-eval logs reads them with Ray Data


def hnorm(p: list[float]) -> float:
    """By hand: entropy of the non-top options renormalised, over log(K - 1)."""
    top = max(range(len(p)), key=lambda i: p[i])
    rest = [x / (1 - p[top]) for i, x in enumerate(p) if i != top]
    return 0.0 if len(p) == 2 else -sum(q * LN(q) for q in rest if q > 0) / LN(len(p) - 1)


def softmax(lls: list[float]) -> list[float]:
    z = sum(math.exp(x) for x in lls)
    return [math.exp(x) / z for x in lls]


@pytest.fixture
def lm_eval_dir(tmp_path) -> Path:
    return write_lm_eval_runs(tmp_path / "lm-eval")


def test_points_mpd_and_flags_equal_hand_values_with_no_model_run(lm_eval_dir, tmp_path, capsys):
    assert main(["landscape", "--from-lm-eval", str(lm_eval_dir), "--out", str(tmp_path / "runs")]) == 0
    run_dir = Path(capsys.readouterr().out.split("manifest: ")[1].strip()).parent
    summary = json.loads((run_dir / "summary.json").read_text())
    manifest = json.loads((run_dir / "manifest.json").read_text())

    rows = {r["model"]: r for r in summary["table"]}
    for model, lls in (("org/model-a", A), ("org/model-b", B)):
        ps = [softmax(ll) for ll in lls]
        points = [(max(p), hnorm(p)) for p in ps]
        pairs = list(combinations(points, 2))
        assert rows[model]["mpd"] == pytest.approx(sum(math.dist(a, b) for a, b in pairs) / len(pairs), abs=1e-12)
        assert rows[model]["mean_ptop1"] == pytest.approx(sum(p for p, _ in points) / 3, abs=1e-12)
        assert rows[model]["mean_hnorm"] == pytest.approx(sum(h for _, h in points) / 3, abs=1e-12)
        assert rows[model]["accuracy"] == pytest.approx(1 / 3) and rows[model]["n_items"] == 3
        assert summary["points"]["arc_easy"]["models"][model] == [[round(p, 4), round(h, 4)] for p, h in points]
    assert hnorm(softmax(A[0])) == pytest.approx(1.5 * LN(2) / LN(3))  # the hand formula itself, on p = .5 .25 .125 .125

    # labelled as continuation log-likelihoods, in the summary and the report
    assert summary["probability"] == "continuations" and "continuation" in summary["probability_note"]
    assert "lm-eval&#x27;s per-option continuation log-likelihoods" in (run_dir / "report.html").read_text()

    # logs hold no noise run: flags from the logged answers; doc 1, the one item both models miss, ranks first, but two
    # models right on a third of the items cannot outweigh a gold label, so nothing is flagged
    assert summary["flags"]["from"] == "lm_eval_logs"
    ranked = read_table(str(run_dir), "candidates").to_pandas().sort_values("score", ascending=False)
    assert ranked["source_id"].iloc[0] == "arc_easy:1" and ranked["n_wrong"].iloc[0] == 2
    assert summary["flags"]["candidates"] == [] and not ranked["flagged"].any()
    rejected = read_table(str(run_dir), "rejected").to_pylist()
    assert [(r["id"], r["reason"].endswith("line 4: gold_index_out_of_range: answer index 7 outside the 4 options")) for r in rejected] == \
        [("arc_easy:3", True), ("arc_easy:3", True)]
    assert manifest["ray"] is not None and manifest["probability"] == "continuations"  # one Ray Data pass
    assert {r["model"]: r["metrics"]["acc,none"] for r in manifest["lm_eval"]["runs"]} == {"org/model-a": 1 / 3, "org/model-b": 1 / 3}


def test_sample_keeps_the_same_documents_for_every_model_and_model_flags_are_refused(lm_eval_dir, tmp_path, capsys):
    assert main(["landscape", "--from-lm-eval", str(lm_eval_dir), "--sample", "2", "--out", str(tmp_path / "runs")]) == 0
    run_dir = Path(capsys.readouterr().out.split("manifest: ")[1].strip()).parent
    scores = read_table(str(run_dir), "scores").to_pylist()
    ids = {m: sorted(r["source_id"] for r in scores if r["model"] == m) for m in ("org/model-a", "org/model-b")}
    assert len(ids["org/model-a"]) == 2 and ids["org/model-a"] == ids["org/model-b"]
    assert main(["landscape", "--from-lm-eval", str(lm_eval_dir), "--model", "hf:/x", "--out", str(tmp_path)]) == 2
    assert "--model cannot apply" in capsys.readouterr().err
