"""Design construction: strata rules, weights from realised membership, exactness of HT metrics."""

import numpy as np
import pytest

from audit.coreset.design import (
    DesignConfig,
    DesignManifest,
    build_design,
    design_table,
    plan_design,
)
from audit.coreset.estimate import estimate, strata_sample
from audit.coreset.metrics import metric_values
from audit.coreset.percentile import count_below, exact_percentiles, values_in_buckets
from audit.coreset.strata import (
    assign_strata,
    difficulty,
    easy_difficulty,
    easy_percentiles,
    ensemble_score,
    stratum_counts,
    stratum_names,
)
from audit.coreset.validate import align_predictions
from audit.stats.draws import hash_keys, smallest_keys_per_stratum

TAU = 0.5


def _table(seed=0, n=20_000):
    """Constructor scores: confident negatives, a handful of hard ones, positives mostly above tau."""
    rng = np.random.default_rng(seed)
    labels = np.zeros(n, dtype=bool)
    labels[rng.choice(n, 60, replace=False)] = True
    p = rng.beta(1, 30, n)
    hard = rng.choice(np.flatnonzero(~labels), 20, replace=False)
    p[hard] = rng.uniform(0.3, 0.9, 20)
    p[labels] = rng.beta(5, 2, labels.sum())
    return np.arange(n) * 3 + 1, labels, p


def test_strata_follow_the_published_rules():
    labels = np.array([1, 0, 0, 0, 0, 0], dtype=bool)
    p = np.array([0.1, 0.45, 0.40, 0.5 - 0.3, 0.05, 0.39])
    d = difficulty(p)
    bounds = np.array([d[4], d[3]])  # easy_1: d < b1, easy_2: b1 <= d < b2, easy_3: d >= b2
    codes = assign_strata(labels, p, 0.4, bounds)
    assert codes.tolist() == [0, 1, 1, 4, 3, 4]
    assert easy_percentiles(3) == (33.0, 67.0)
    assert stratum_names(3) == ("positive", "hard_negative", "easy_1", "easy_2", "easy_3")


def test_exactness_when_every_constructor_positive_and_miss_is_kept_at_weight_one():
    ids, labels, p = _table()
    config = DesignConfig(tau=TAU, seed=0)
    design, manifest = build_design(ids, labels, p, config, source="toy.parquet")
    hard = manifest.strata.index("hard_negative")
    assert manifest.sample[hard] == manifest.population[hard]  # hard stratum is a census
    constructor = p >= TAU
    assert not np.any(constructor & ~labels & (p < config.hard_cut))  # every FP lies in the hard stratum
    preds = constructor[(design["id"].to_numpy() - 1) // 3]
    s = strata_sample(design, manifest, preds)
    got = estimate(s, metrics=("precision", "recall", "f1")).set_index("metric")["estimate"]
    tp, fp, fn = np.sum(constructor & labels), np.sum(constructor & ~labels), np.sum(~constructor & labels)
    for metric in ("precision", "recall", "f1"):
        full = float(metric_values(metric, tp, fp, fn, labels.mean()))
        assert abs(got[metric] - full) < 1e-12, metric


def test_design_table_weights_and_manifest():
    ids, labels, p = _table(seed=1)
    design, manifest = build_design(ids, labels, p, DesignConfig(tau=TAU, seed=9))
    assert list(design.columns) == ["id", "stratum", "label", "pi", "w"]
    assert manifest.budget == 120 and sum(manifest.sample[1:]) == 120
    by = design.groupby("stratum")
    for name, N, n in zip(manifest.strata, manifest.population, manifest.sample):
        if n == 0:
            continue
        rows = by.get_group(name)
        assert len(rows) == n
        assert np.all(rows["w"] == N / n) and np.all(rows["pi"] == n / N)
    assert design.loc[~design["label"], "w"].sum() == pytest.approx(labels.size - labels.sum(), rel=1e-12)
    assert design.loc[design["label"], "w"].eq(1).all() and design["label"].sum() == labels.sum()
    assert manifest.to_dict()["seed"] == 9 and len(manifest.easy_bounds) == 2


def test_same_seed_same_design_other_seed_other_design():
    ids, labels, p = _table(seed=2)
    a, _ = build_design(ids, labels, p, DesignConfig(tau=TAU, seed=1))
    b, _ = build_design(ids[::-1], labels[::-1], p[::-1], DesignConfig(tau=TAU, seed=1))
    c, _ = build_design(ids, labels, p, DesignConfig(tau=TAU, seed=2))
    assert set(a["id"]) == set(b["id"]) and set(a["id"]) != set(c["id"])


def test_multiple_scorer_columns_are_averaged():
    ids, labels, p = _table(seed=3)
    two = np.column_stack([p, p])
    a, ma = build_design(ids, labels, two, DesignConfig(tau=TAU, seed=0))
    b, mb = build_design(ids, labels, p, DesignConfig(tau=TAU, seed=0))
    assert a.equals(b) and ma.easy_bounds == mb.easy_bounds


def test_design_without_hard_stratum_and_realised_counts_check():
    ids, labels, p = _table(seed=4)
    design, manifest = build_design(ids, labels, p, DesignConfig(tau=TAU, use_hard_stratum=False, seed=0))
    assert manifest.population[1] == 0 and manifest.hard_cut is None
    assert (design["stratum"] == "hard_negative").sum() == 0
    codes = np.zeros(3, int)
    with pytest.raises(ValueError, match="differ from the plan"):
        design_table(np.arange(3), codes, manifest)


def test_predictions_are_aligned_by_id_and_checked():
    ids, labels, p = _table(seed=5)
    design, manifest = build_design(ids, labels, p, DesignConfig(tau=TAU, seed=0))
    order = np.random.default_rng(0).permutation(len(design))
    pred_ids = design["id"].to_numpy()[order]
    values = (p[(pred_ids - 1) // 3] >= TAU).astype(int)
    aligned = align_predictions(design["id"], pred_ids, values, "id", "llm.jsonl")
    assert np.array_equal(aligned, (p[(design["id"].to_numpy() - 1) // 3] >= TAU).astype(int))
    with pytest.raises(ValueError, match=r"llm.jsonl: column 'id' lacks 1 of the"):
        align_predictions(design["id"], pred_ids[1:], values[1:], "id", "llm.jsonl")
    with pytest.raises(ValueError, match=r"llm.jsonl: column 'id' has 1 id\(s\) not in the design"):
        align_predictions(design["id"], np.append(pred_ids, -7), np.append(values, 0), "id", "llm.jsonl")
    with pytest.raises(ValueError, match=r"llm.jsonl: column 'id' repeats 1 id"):
        align_predictions(design["id"], np.append(pred_ids, pred_ids[0]), np.append(values, 0), "id", "llm.jsonl")
    bad = aligned.astype(float)
    bad[3] = np.nan
    with pytest.raises(ValueError, match=r"llm.jsonl: column 'verdict' has 1 missing"):
        strata_sample(design, manifest, bad, source="llm.jsonl", run_columns=("verdict",))


def test_inconsistent_design_weights_raise():
    ids, labels, p = _table(seed=6)
    design, manifest = build_design(ids, labels, p, DesignConfig(tau=TAU, seed=0))
    tampered = design.assign(w=design["w"] * 1.01)
    with pytest.raises(ValueError, match="column 'w'"):
        strata_sample(tampered, manifest, np.zeros(len(design), int))


@pytest.mark.parametrize(
    "field,value",
    [
        ("tau", 0.0),
        ("hard_cut_fraction", 1.5),
        ("hard_reserve_fraction", -0.1),
        ("budget_multiplier", 0),
        ("n_easy_strata", 0),
        ("seed", -1),
    ],
)
def test_config_is_validated_at_construction(field, value):
    with pytest.raises(ValueError, match=f"DesignConfig.{field}" if field != "n_easy_strata" else "n_easy_strata"):
        DesignConfig(**{"tau": TAU, "seed": 0, field: value})


def test_plan_rejects_budget_larger_than_negatives():
    config = DesignConfig(tau=TAU, budget_multiplier=10, seed=0)
    with pytest.raises(ValueError, match="toy.parquet: negative budget of 100 rows is larger than the 50"):
        plan_design(config, np.array([10, 0, 20, 20, 10]), np.array([0.1, 0.2]), "toy.parquet")


def test_distributed_path_over_blocks_equals_the_in_memory_build():
    """The per-block functions a Ray job calls, merged as the job would, give the same design."""
    ids, labels, p = _table(seed=7)
    scores = np.column_stack([p, np.clip(p + 0.01, 0, 1)])
    config = DesignConfig(tau=TAU, seed=3)
    blocks = [(ids[i], labels[i], scores[i]) for i in np.array_split(np.arange(len(ids)), 9)]
    pools = [easy_difficulty(y, ensemble_score(s), config.hard_cut) for _, y, s in blocks]
    bounds = exact_percentiles(
        lambda edges: sum(count_below(d, edges) for d in pools),
        lambda lo, hi: np.concatenate([values_in_buckets(d, lo, hi) for d in pools]),
        n=sum(len(d) for d in pools),
        percentiles=config.easy_percentiles,
        minimum=min(d.min() for d in pools),
        maximum=max(d.max() for d in pools),
        fetch_limit=50,
    )
    block_codes = [assign_strata(y, ensemble_score(s), config.hard_cut, bounds) for _, y, s in blocks]
    manifest = plan_design(config, sum(stratum_counts(c, config.n_easy_strata) for c in block_codes), bounds)
    survivors = []
    for (block_ids, _, _), codes in zip(blocks, block_codes):
        keep = smallest_keys_per_stratum(hash_keys(block_ids, config.seed), codes, manifest.take, block_ids)
        survivors.append((block_ids[keep], codes[keep]))
    merged_ids = np.concatenate([i for i, _ in survivors])
    merged_codes = np.concatenate([c for _, c in survivors])
    keep = smallest_keys_per_stratum(hash_keys(merged_ids, config.seed), merged_codes, manifest.take, merged_ids)
    distributed = design_table(merged_ids[keep], merged_codes[keep], manifest)

    in_memory, manifest_mem = build_design(ids, labels, scores, config)
    assert manifest == manifest_mem
    assert DesignManifest.from_dict(manifest.to_dict()) == manifest
    key = ["stratum", "id"]
    assert distributed.sort_values(key).reset_index(drop=True).equals(in_memory.sort_values(key).reset_index(drop=True))
