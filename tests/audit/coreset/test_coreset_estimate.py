"""HT estimators: exhaustive enumeration of every draw, hand-computed values, paired contrasts."""

from itertools import combinations

import numpy as np
import pytest

from audit.coreset.estimate import (
    StrataSample,
    estimate,
    ht_confusion,
    ht_false_positives,
    paired_contrast,
    stratified_covariance,
)
from audit.coreset.metrics import fp_gradient, metric_values

# population: 3 positives (census) and two negative strata of 4 rows; two prediction runs
TP, FN = np.array([2, 1]), np.array([1, 2])
STRATA_ROWS = [
    np.array([[1, 1], [0, 1], [0, 0], [1, 0]]),  # stratum A: FP per run 2, 2
    np.array([[0, 0], [1, 1], [0, 1], [0, 0]]),  # stratum B: FP per run 1, 2
]
TRUE_FP = np.array([3.0, 4.0])


def _all_draws(strata_rows, sample):
    """Every equally likely draw of SRS without replacement, independently per stratum."""
    per_stratum = [list(combinations(range(len(rows)), n)) for rows, n in zip(strata_rows, sample)]
    for picks in (
        np.array(np.meshgrid(*[np.arange(len(p)) for p in per_stratum], indexing="ij")).reshape(len(sample), -1).T
    ):
        chosen = [per_stratum[h][i] for h, i in enumerate(picks)]
        negatives = np.vstack([strata_rows[h][list(c)] for h, c in enumerate(chosen)])
        strata = np.concatenate([np.full(len(c), h) for h, c in enumerate(chosen)])
        yield (
            chosen,
            StrataSample(
                tp=TP,
                fn=FN,
                population=np.array([len(r) for r in strata_rows]),
                sample=np.array(sample),
                strata=strata,
                negatives=negatives.astype(float),
            ),
        )


def _truth(metric):
    return float(metric_values(metric, TP, TRUE_FP, FN, 3 / 11).mean())


def test_exhaustive_two_srs_strata_n4_choose_2():
    draws = list(_all_draws(STRATA_ROWS, [2, 2]))
    assert len(draws) == 36
    fp = np.array([ht_false_positives(s) for _, s in draws])
    assert np.allclose(fp.mean(axis=0), TRUE_FP, atol=1e-12)  # HT FP unbiased
    included = np.zeros((2, 4))
    for chosen, s in draws:
        for h, c in enumerate(chosen):
            included[h, list(c)] += 1
        assert np.all(s.sample / s.population == 0.5)
    assert np.all(included / 36 == 0.5)  # every inclusion probability is 0.5
    tables = [estimate(s).set_index("metric") for _, s in draws]
    recall = np.array([t.loc["recall", "estimate"] for t in tables])
    assert np.all(recall == _truth("recall")) and np.all([t.loc["recall", "se"] == 0 for t in tables])
    precision = np.array([t.loc["precision", "estimate"] for t in tables])
    assert precision.mean() > _truth("precision")  # ratio estimator: Jensen gives a positive bias
    for metric in ("fp", "precision", "f1", "lift"):
        truth = _truth(metric)
        covered = [t.loc[metric, "lower"] - 1e-12 <= truth <= t.loc[metric, "upper"] + 1e-12 for t in tables]
        assert np.mean(covered) >= 0.95, metric


@pytest.mark.parametrize(
    "strata_rows,sample",
    [
        (STRATA_ROWS, [2, 2]),
        ([STRATA_ROWS[0], np.array([[1, 0], [0, 1], [1, 1]])], [2, 3]),  # second stratum is a census
        ([np.array([[1, 0], [0, 0], [1, 1], [0, 1], [1, 1]]), STRATA_ROWS[1]], [3, 1 + 1]),
    ],
)
def test_stratified_covariance_is_unbiased_over_all_draws(strata_rows, sample):
    draws = list(_all_draws(strata_rows, sample))
    totals = np.array([ht_false_positives(s) for _, s in draws])
    true_cov = np.cov(totals.T, ddof=0)  # draws are equally likely
    est = np.mean([stratified_covariance(s.negatives, s.strata, s.population, s.sample) for _, s in draws], axis=0)
    assert np.allclose(est, true_cov, atol=1e-12, rtol=0)
    # the SE of the run-mean FP is then unbiased in variance too
    se2 = np.mean([estimate(s).set_index("metric").loc["fp", "se"] ** 2 for _, s in draws])
    assert se2 == pytest.approx(np.var(totals.mean(axis=1)), abs=1e-12)


def test_hand_computed_single_run():
    # stratum 0: N=10, n=2, drawn predictions [1, 0]; stratum 1: N=20, n=4, drawn [1, 1, 0, 0]
    s = StrataSample(
        tp=np.array([3]),
        fn=np.array([1]),
        population=np.array([10, 20]),
        sample=np.array([2, 4]),
        strata=np.array([0, 0, 1, 1, 1, 1]),
        negatives=np.array([[1], [0], [1], [1], [0], [0]], dtype=float),
    )
    # FP = 10/2 * 1 + 20/4 * 2 = 15; N = 4 + 30 = 34
    assert ht_confusion(s)[["tp", "fp", "fn", "tn"]].iloc[0].tolist() == [3, 15, 1, 15]
    t = estimate(s).set_index("metric")
    assert t.loc["precision", "estimate"] == pytest.approx(3 / 18)
    assert t.loc["recall", "estimate"] == pytest.approx(3 / 4)
    assert t.loc["f1", "estimate"] == pytest.approx(6 / 22)
    assert t.loc["lift", "estimate"] == pytest.approx((3 / 18) / (4 / 34))
    # Var(FP) = 10^2 (1 - 2/10) 0.5 / 2 + 20^2 (1 - 4/20) (1/3) / 4 = 20 + 26.667
    var_fp = 20 + 80 / 3
    assert t.loc["fp", "se"] == pytest.approx(np.sqrt(var_fp))
    assert t.loc["precision", "se"] == pytest.approx(3 / 18**2 * np.sqrt(var_fp))
    assert t.loc["f1", "se"] == pytest.approx(6 / 22**2 * np.sqrt(var_fp))
    # floor: predict all positive, 4 positives of 34
    assert t.loc["precision", "predict_all_floor"] == pytest.approx(4 / 34)
    assert t.loc["f1", "predict_all_floor"] == pytest.approx(8 / 38)
    assert t.loc["recall", "predict_all_floor"] == 1.0 and t.loc["lift", "predict_all_floor"] == 1.0
    # unweighted subset: FP = 3 drawn positives among 6 drawn negatives
    assert t.loc["precision", "subset_unweighted"] == pytest.approx(3 / 6)
    assert np.isnan(t.loc["precision", "run_sd"])


def test_run_mean_se_keeps_shared_row_covariance_and_run_sd_is_separate():
    _, s = next(_all_draws(STRATA_ROWS, [2, 2]))
    t = estimate(s).set_index("metric")
    fp = ht_false_positives(s)
    cov = stratified_covariance(s.negatives, s.strata, s.population, s.sample)
    for metric in ("precision", "f1"):
        g = fp_gradient(metric, TP, fp, FN, s.prevalence) / 2
        assert t.loc[metric, "se"] == pytest.approx(np.sqrt(g @ cov @ g), abs=1e-15)
        per_run = metric_values(metric, TP, fp, FN, s.prevalence)
        assert t.loc[metric, "run_sd"] == pytest.approx(np.std(per_run, ddof=1))


def test_paired_contrast_identical_is_exactly_zero_but_envelope_straddles_zero():
    _, s = next(_all_draws(STRATA_ROWS, [2, 2]))
    c = paired_contrast(s, s, "f1")
    assert c.difference == 0.0 and c.se == 0.0
    assert c.lower < 0 < c.upper


def test_paired_contrast_se_equals_direct_scalar_linearisation():
    _, a = next(_all_draws(STRATA_ROWS, [2, 2]))
    # a one-run predictor on the same rows
    b = StrataSample(
        np.array([2]), np.array([1]), a.population, a.sample, a.strata, np.array([[0.0], [1.0], [1.0], [0.0]])
    )
    c = paired_contrast(a, b, "precision")
    g_a = fp_gradient("precision", a.tp, ht_false_positives(a), a.fn, a.prevalence) / a.runs
    g_b = fp_gradient("precision", b.tp, ht_false_positives(b), b.fn, b.prevalence) / b.runs
    z = a.negatives @ g_a - b.negatives @ g_b
    assert c.se == pytest.approx(np.sqrt(stratified_covariance(z, a.strata, a.population, a.sample)[0, 0]))
    p_a = metric_values("precision", a.tp, ht_false_positives(a), a.fn, a.prevalence).mean()
    p_b = metric_values("precision", b.tp, ht_false_positives(b), b.fn, b.prevalence).mean()
    assert c.difference == pytest.approx(p_a - p_b)


def test_full_census_gives_point_bounds():
    s = StrataSample(
        tp=np.array([2]),
        fn=np.array([1]),
        population=np.array([3]),
        sample=np.array([3]),
        strata=np.zeros(3, int),
        negatives=np.array([[1.0], [0.0], [0.0]]),
    )
    t = estimate(s).set_index("metric")
    assert t.loc["fp", "lower"] == t.loc["fp", "upper"] == 1
    assert t.loc["f1", "upper"] - t.loc["f1", "lower"] <= 2e-12  # outward rounding only
    assert t.loc["f1", "se"] == 0


def test_contrast_needs_the_same_rows():
    _, a = next(_all_draws(STRATA_ROWS, [2, 2]))
    b = StrataSample(a.tp, a.fn, a.population, a.sample, a.strata[::-1].copy(), a.negatives)
    with pytest.raises(ValueError, match="same design rows"):
        paired_contrast(a, b, "f1")


def test_sparse_strata_flags_sampled_strata_with_few_positive_predictions():
    from audit.coreset.estimate import SPARSE_COUNT, sparse_strata

    # stratum 0 is a census (n = N: never flagged), 1 has 6 positive predictions, 2 has 1 in run b
    strata = np.array([0] * 3 + [1] * 8 + [2] * 8)
    negatives = np.zeros((19, 2))
    negatives[3:9, :] = 1
    negatives[11, 0] = 1
    negatives[11:18, 0] = 1
    negatives[12, 1] = 1
    s = StrataSample(tp=np.array([2.0, 2.0]), fn=np.array([0.0, 0.0]), population=np.array([3, 100, 100]),
                     sample=np.array([3, 8, 8]), strata=strata, negatives=negatives)
    assert SPARSE_COUNT == 5
    assert sparse_strata(s, ("positives", "hard", "t1", "t2")) == [{"stratum": "t2", "positive_predictions_per_run": [7, 1]}]
