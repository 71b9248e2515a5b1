"""Sampler study: protocol first, exact counts-only draws, reproducible seeds, expected ranking."""

import json

import numpy as np
import pytest

from audit.coreset.allocation import allocate
from audit.coreset.estimate import StrataSample, estimate
from audit.coreset.strata import stratum_counts
from audit.coreset.study import (
    HeldOutCase,
    StudyConfig,
    design_seeds,
    design_strata,
    draw_pattern_counts,
    pattern_table,
    run_study,
    stable_key,
    study_protocol,
)


def _families(n=60_000, seed=0, runs=3):
    """Two scorer families sharing a latent risk; labels rare; returns labels and per-run probabilities."""
    rng = np.random.default_rng(seed)
    y = rng.random(n) < 0.004
    z = rng.normal(0, 1, n) + 4.0 * y
    fams = {}
    for name in "ab":
        base = z + 0.2 * rng.normal(0, 1, n)
        fams[name] = np.column_stack(
            [1 / (1 + np.exp(-4 * (base + 0.08 * rng.normal(0, 1, n) - 3.2))) for _ in range(runs)]
        )
    return y, fams


@pytest.fixture(scope="module")
def case():
    y, fams = _families()
    return HeldOutCase("toy", "a->b", y, fams["a"].mean(axis=1), 0.5, fams["b"] >= 0.5)


def test_protocol_is_complete_and_serialisable_before_any_result(case):
    config = StudyConfig(root_seed=20260930, draws=50, budget_multipliers=(2.0, 4.0))
    protocol = study_protocol(config, [case])
    text = json.dumps(protocol)
    assert protocol["draws"] == 50 and protocol["seeds"]["root_seed"] == 20260930
    n_pos = int(case.labels.sum())
    assert protocol["cases"][0]["budgets"] == {"2.0": 2 * n_pos, "4.0": 4 * n_pos}
    assert set(protocol["samplers"]) == {"uniform_ht", "difficulty_ht", "ht_coreset", "ht_coreset_unweighted"}
    assert "SeedSequence" in text


def test_reproducible_and_each_draw_seeded_on_its_own(case):
    short, draws_short = run_study(StudyConfig(root_seed=20260930, draws=20), [case])
    again, _ = run_study(StudyConfig(root_seed=20260930, draws=20), [case])
    assert short.equals(again)
    _, draws_long = run_study(StudyConfig(root_seed=20260930, draws=40), [case])
    first = draws_long[draws_long["draw"] < 20].reset_index(drop=True)
    assert np.array_equal(first["estimate"].to_numpy(), draws_short["estimate"].to_numpy())
    assert stable_key("ht_coreset") == stable_key("ht_coreset") != stable_key("uniform")


def test_counts_only_draw_equals_the_row_level_estimator(case):
    """Rebuild rows matching one simulated draw; the row-level estimator must agree exactly."""
    config = StudyConfig(root_seed=20260930, draws=3, metrics=("precision", "f1", "fp"))
    _, per_draw = run_study(config, [case])
    codes, n_easy = design_strata(config, case, "ht_coreset")
    population = stratum_counts(codes, n_easy)[1:]
    budget = 2 * int(case.labels.sum())
    sample = allocate(population, budget, config.hard_reserve_fraction)
    table = pattern_table(codes, case.predictions)
    counts = draw_pattern_counts(table, sample, design_seeds(config, case, budget, "ht_coreset"), config.draws)
    y, preds = case.labels, case.predictions
    for d in range(config.draws):
        negatives, strata = [], []
        for g, c in enumerate(counts[d]):
            bits = table.bits[g].astype(bool)
            rows = np.flatnonzero(~y & (codes - 1 == table.stratum[g]) & np.all(preds == bits, axis=1))[:c]
            negatives.append(preds[rows])
            strata.append(np.full(c, table.stratum[g]))
        s = StrataSample(
            tp=preds[y].sum(axis=0),
            fn=y.sum() - preds[y].sum(axis=0),
            population=population,
            sample=sample,
            strata=np.concatenate(strata),
            negatives=np.vstack(negatives).astype(float),
        )
        rows = estimate(s, metrics=config.metrics).set_index("metric")
        mine = per_draw[(per_draw["sampler"] == "ht_coreset") & (per_draw["draw"] == d)].set_index("metric")
        for metric in config.metrics:
            for col in ("estimate", "se", "lower", "upper"):
                assert mine.loc[metric, col] == pytest.approx(rows.loc[metric, col], rel=1e-9, abs=1e-12), (
                    d,
                    metric,
                    col,
                )


def test_ht_fp_is_unbiased_under_the_pattern_draws(case):
    summary, _ = run_study(StudyConfig(root_seed=20260930, draws=1_500, samplers=("uniform_ht", "ht_coreset"), metrics=("fp",)), [case])
    for _, row in summary.iterrows():
        mcse = row["sd"] / np.sqrt(1_500)
        assert abs(row["signed_bias"]) < 4 * mcse + 1e-9, row["sampler"]


def test_ranking_and_the_cost_of_dropping_weights(case):
    summary, _ = run_study(StudyConfig(root_seed=20260930, draws=300), [case])
    f1 = summary[summary["metric"] == "f1"].set_index("sampler")
    assert f1.loc["ht_coreset", "rmse"] < f1.loc["uniform_ht", "rmse"]
    assert f1.loc["ht_coreset", "rmse"] < f1.loc["difficulty_ht", "rmse"]
    assert f1.loc["ht_coreset", "coverage95"] >= 0.95
    recall = summary[summary["metric"] == "recall"]
    assert np.all(recall["rmse"] == 0)  # exact under the positive census
    # a predictor unrelated to the scorer (false alarms spread over the easy pool): weights matter
    rng = np.random.default_rng(5)
    scattered = case.predictions | (rng.random(case.predictions.shape) < 0.01)
    llm = HeldOutCase("toy", "a->llm", case.labels, case.construction_score, 0.5, scattered)
    s2, _ = run_study(StudyConfig(root_seed=20260930, draws=300, samplers=("ht_coreset", "ht_coreset_unweighted")), [llm])
    p = s2[s2["metric"] == "precision"].set_index("sampler")
    assert p.loc["ht_coreset_unweighted", "signed_bias"] > 0.3  # the subset looks far better than the table
    assert abs(p.loc["ht_coreset", "signed_bias"]) < 0.05


def test_a_full_census_budget_is_exact(case):
    n_neg = int((~case.labels).sum())
    mult = n_neg / int(case.labels.sum())
    summary, _ = run_study(StudyConfig(root_seed=20260930, draws=2, samplers=("uniform_ht",), budget_multipliers=(mult,)), [case])
    assert np.all(summary["rmse"] < 1e-12) and np.all(summary["coverage95"] == 1)


def test_config_and_case_validation(case):
    with pytest.raises(ValueError, match="StudyConfig.samplers"):
        StudyConfig(root_seed=20260930, samplers=("stratified",))
    with pytest.raises(ValueError, match="StudyConfig.draws"):
        StudyConfig(root_seed=20260930, draws=1)
    with pytest.raises(ValueError, match="toy a->b: column 'prediction run 0' is not binary"):
        HeldOutCase("toy", "a->b", case.labels, case.construction_score, 0.5, np.full(len(case.labels), 2))
    with pytest.raises(ValueError, match="toy a->b: column 'construction_score' has 1 NaN"):
        HeldOutCase(
            "toy", "a->b", case.labels, np.where(np.arange(len(case.labels)) == 0, np.nan, 0.1), 0.5, case.predictions
        )
