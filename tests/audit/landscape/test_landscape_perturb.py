"""Perturbations are pure seeded functions of the item; circular evaluation and the summary table."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from audit.landscape.perturb import MASK, NONE_OF_THE_ABOVE, SCORE_SUFFIX, city_pool, perturb
from audit.landscape.summary import circular_correct, result_rows, summarize
from audit.mcqa.items import McqaItem

ITEM = McqaItem("q1", "geo", "Which city is the capital of France, Paris or Lyon?", ("Lyon", "Paris", "Nice", "Lille"), gold=1)


def test_noise_never_uses_a_city_named_in_the_stem_or_correct_option():
    pool = ("Paris", "Lyon", "North Paris", "Lagos", "Lima", "Osaka", "Cairo")
    seen = set()
    for seed in range(40):
        out, rejected = perturb([ITEM], "noise", seed=seed, pool=pool)
        after = out[0]
        assert rejected == [] and after.gold == 1 and after.options[1] == "Paris"
        cities = [o for i, o in enumerate(after.options) if i != after.gold]
        assert len(set(cities)) == 3 and set(cities) <= {"Lagos", "Lima", "Osaka", "Cairo"}
        assert after.perturbation == "noise" and after.note.startswith("noise: A->")
        seen.update(cities)
    assert seen == {"Lagos", "Lima", "Osaka", "Cairo"}  # seeded choice, not a fixed order
    out, rejected = perturb([ITEM], "noise", seed=0, pool=pool[:5])
    assert out == [] and rejected[0].detail == "noise: only 2 of 3 cities in the pool are unrelated to the item"


def test_default_city_pool_is_the_most_populous_plain_names():
    pool = city_pool()
    assert len(pool) == 1000 and len(set(pool)) == 1000
    assert pool[:3] == ("Shanghai", "Beijing", "Shenzhen") and "Paris" in pool
    out, _ = perturb([ITEM], "noise", seed=1)
    assert all(o in pool for i, o in enumerate(out[0].options) if i != 1) and "Lyon" not in out[0].options


def test_perturbations_do_not_depend_on_the_batch_or_its_order():
    other = McqaItem("q9", "geo", "Another?", ("w", "x", "y", "z"), gold=0)
    alone, _ = perturb([ITEM], "noise", seed=3)
    mixed, _ = perturb([other, ITEM], "noise", seed=3)
    assert alone[0] == mixed[1]
    assert perturb([ITEM], "noise", seed=4)[0][0].options != alone[0].options


def test_mask_keeps_function_words_and_punctuation():
    out = perturb([ITEM], "mask", seed=1, rate=1.0)[0][0]
    assert out.question == f"Which {MASK} is the {MASK} of {MASK}, {MASK} or {MASK}?"
    half = perturb([ITEM], "mask", seed=1, rate=0.5)[0][0]
    assert half.question.count(MASK) == 2 and half.note == "mask: 2 of 5 content words"
    assert perturb([ITEM], "mask", seed=1, rate=0.5)[0][0] == half


def test_no_answer_score_bias_and_answer_moves():
    na = perturb([ITEM], "no_answer", seed=0)[0][0]
    assert na.options == ("Lyon", NONE_OF_THE_ABOVE, "Nice", "Lille") and na.gold == 1
    sb = perturb([ITEM], "score_bias", seed=0)[0][0]
    suffixed = [i for i, o in enumerate(sb.options) if o.endswith(SCORE_SUFFIX)]
    assert len(suffixed) == 1 and suffixed[0] != sb.gold and sb.gold == 1
    a = perturb([ITEM], "answer_a", seed=0)[0][0]
    assert a.options == ("Paris", "Lyon", "Nice", "Lille") and a.gold == 0
    d = perturb([ITEM], "answer_d", seed=0)[0][0]
    assert d.options == ("Lyon", "Lille", "Nice", "Paris") and d.gold == 3
    three = McqaItem("t", "b", "Q?", ("x", "y", "z"), gold=0)
    out, rejected = perturb([three], "answer_d", seed=0)
    assert out == [] and rejected[0].detail == "answer_d: 3 options, no option D"


def test_circular_gives_all_k_rotations_with_the_gold_following_its_option():
    out, _ = perturb([ITEM], "circular", seed=0)
    assert [o.id for o in out] == ["q1#rot0", "q1#rot1", "q1#rot2", "q1#rot3"]
    assert all(o.options[o.gold] == "Paris" for o in out) and {o.source_id for o in out} == {"q1"}
    assert [o.gold for o in out] == [1, 0, 3, 2]


def _scored(items, preds):
    rows = []
    for it, p in zip(items, preds):
        lp = [math.log(0.1)] * it.k
        lp[p] = math.log(0.7)
        rows.append({"benchmark": it.benchmark, "perturbation": it.perturbation, "id": it.id, "source_id": it.source_id,
                     "variant": it.variant, "k": it.k, "gold": it.gold, "option_logprobs": lp, "error": None})
    return pd.DataFrame(rows)


def test_circular_item_is_correct_only_when_every_rotation_is():
    other = McqaItem("q2", "geo", "Q?", ("a", "b", "c", "d"), gold=0)
    rot, _ = perturb([ITEM, other], "circular", seed=0)
    preds = [r.gold for r in rot]
    preds[5] = (preds[5] + 1) % 4  # q2 wrong under one rotation
    res = result_rows(_scored(rot, preds), "m")
    table = circular_correct(res)
    assert list(table.all_correct) == [True, False] and table.complete.all()
    summary = summarize(res)
    assert summary.accuracy.tolist() == [0.5]


def test_summary_accuracy_relative_change_mpd_and_per_item_errors():
    items = [McqaItem(f"q{i}", "b", "Q?", ("a", "b", "c", "d"), gold=0) for i in range(4)]
    noisy, _ = perturb(items, "no_answer", seed=0)
    base = _scored(items, [0, 0, 0, 1])
    pert = _scored(noisy, [0, 1, 1, 1])
    pert.loc[3, "option_logprobs"] = [float("nan")] * 4
    res = pd.concat([result_rows(base, "m"), result_rows(pert, "m")])
    assert res.error.tolist()[-1] == "NaN log-probs"
    table = summarize(res).set_index("perturbation")
    assert table.loc["none", "accuracy"] == 0.75 and table.loc["no_answer", "accuracy"] == pytest.approx(1 / 3)
    assert table.loc["no_answer", "relative_change"] == pytest.approx((1 / 3 - 0.75) / 0.75)
    assert table.loc["no_answer", "n_errors"] == 1 and table.loc["none", "n_errors"] == 0
    p = 0.7 / 1.0  # every scored point is the same: MPD 0
    assert table.loc["none", "mean_ptop1"] == pytest.approx(p) and table.loc["none", "mpd"] == 0.0
    assert np.isclose(table.loc["none", "mean_hnorm"], 1.0)
