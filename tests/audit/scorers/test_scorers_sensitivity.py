"""Paired variant-minus-original differences, hand-computed on tiny inputs."""

import pandas as pd
import pytest

from audit.scorers.sensitivity import (
    GoldReferences,
    SensitivityConfig,
    gold_answers_table,
    run_sensitivity,
    score_pairs,
)
from audit.stats.bootstrap import BootstrapConfig

INVENTORY = {"gray": "grey", "favorite": "favourite", "color": "colour", "labor": "labour"}
GOLDS = {
    qid: GoldReferences.of(qid, [answer])
    for qid, answer in [
        ("q1", "grey"), ("q2", "favorite color red"), ("q3", "April 21, 2025"), ("q4", "5 miles"),
        ("q5", "The Labour Party"),
    ]
}  # fmt: skip
FAST = SensitivityConfig(bootstrap=BootstrapConfig(n_replicates=2000))


@pytest.fixture(scope="module")
def gold_run():
    answers = gold_answers_table(GOLDS).table
    return run_sensitivity(answers, GOLDS, INVENTORY, FAST, source="golds")


def _pair(pairs, qid, scorer, metric):
    row = pairs[(pairs.question_id == qid) & (pairs.scorer == scorer) & (pairs.metric == metric)]
    assert len(row) == 1
    return row.iloc[0]


def test_variants_include_rejections(gold_run):
    variants = gold_run.variants.set_index("question_id")
    assert variants.loc["q5", "status"] == "rejected"
    assert variants.loc["q5", "reason"] == "alters Title Case name 'Labour Party'; alters protected name 'Labour Party'"
    assert set(gold_run.pairs["question_id"]) == {"q1", "q2", "q3", "q4"}  # rejected variants are not scored


@pytest.mark.parametrize(
    ("qid", "scorer", "metric", "variant_score"),
    [
        ("q1", "drop", "em", 0.0), ("q1", "drop", "f1", 0.0), ("q1", "exact", "em", 0.0),
        ("q2", "drop", "f1", 0.33), ("q2", "squad", "f1", 1 / 3), ("q2", "squad", "em", 0.0),
        ("q3", "drop", "em", 0.0), ("q3", "drop", "f1", 1.0), ("q3", "squad", "f1", 1.0), ("q3", "exact", "em", 0.0),
        ("q4", "drop", "f1", 0.0), ("q4", "squad", "f1", 0.0),
    ],
)  # fmt: skip
def test_pair_scores(gold_run, qid, scorer, metric, variant_score):
    row = _pair(gold_run.pairs, qid, scorer, metric)
    assert row.original_score == 1.0  # a gold answer earns full marks against itself
    assert row.variant_score == pytest.approx(variant_score)
    assert row.difference == pytest.approx(variant_score - 1.0)


def test_summary_means_per_type_and_overall(gold_run):
    summary = gold_run.summary.set_index(["scorer", "metric", "transformation_type"])
    drop_f1 = summary.loc[("drop", "f1", "all")]
    assert drop_f1.n_pairs == 4 and drop_f1.n_questions == 4
    assert drop_f1.mean_difference == pytest.approx((-1 - 0.67 + 0 - 1) / 4)
    assert drop_f1.mean_variant == pytest.approx((0 + 0.33 + 1 + 0) / 4)
    assert drop_f1.share_changed == pytest.approx(3 / 4)
    assert drop_f1.ci_low <= drop_f1.mean_difference <= drop_f1.ci_high
    assert drop_f1.seed == 2026 and drop_f1.n_replicates == 2000
    assert summary.loc[("squad", "f1", "spelling")].mean_difference == pytest.approx((-1 - 2 / 3) / 2)
    assert summary.loc[("drop", "em", "date")].mean_difference == -1.0
    date_f1 = summary.loc[("drop", "f1", "date")]
    assert (date_f1.mean_difference, date_f1.ci_low, date_f1.ci_high) == (0.0, 0.0, 0.0)
    assert date_f1.n_undefined > 0  # resamples without q3 have no date pair
    assert set(gold_run.summary["transformation_type"]) == {"all", "spelling", "date", "unit"}


def test_model_outputs_can_gain_credit():
    outputs = pd.DataFrame({"question_id": ["q1"], "answer": ["gray"]})  # a model answering in US spelling
    result = run_sensitivity(outputs, GOLDS, INVENTORY, FAST, source="outputs.csv")
    row = _pair(result.pairs, "q1", "exact", "em")
    assert (row.original_score, row.variant_score, row.transformation) == (0.0, 1.0, "spelling:to_other")


def test_unknown_question_ids_name_source_and_row():
    outputs = pd.DataFrame({"question_id": ["q1", "q9"], "answer": ["grey", "x"]})
    with pytest.raises(ValueError, match=r"outputs\.csv: data row 2: unknown question_id 'q9'"):
        run_sensitivity(outputs, GOLDS, INVENTORY, FAST, source="outputs.csv")
    variants = pd.DataFrame(
        [
            {
                "question_id": "zz",
                "original": "a",
                "variant": "b",
                "transformation": "unit:to_us",
                "status": "accepted",
                "reason": "",
            }
        ]
    )
    with pytest.raises(ValueError, match=r"variants\.csv: data row 1: unknown question_id 'zz'"):
        score_pairs(variants, GOLDS, ["exact"], source="variants.csv")


def test_truthfulqa_scorer_uses_incorrect_references():
    golds = {"t1": GoldReferences.of("t1", ["My favorite color is blue"], ["My favorite color is red"])}
    answers = pd.DataFrame({"question_id": ["t1"], "answer": ["My favorite color is blue"]})
    config = SensitivityConfig(scorers=("truthfulqa",), bootstrap=BootstrapConfig(n_replicates=200))
    result = run_sensitivity(answers, golds, INVENTORY, config)
    acc = _pair(result.pairs, "t1", "truthfulqa", "rouge1_acc")
    assert acc.original_score == 1.0
    assert _pair(result.pairs, "t1", "truthfulqa", "bleu_max").difference < 0  # similarity drops
    no_incorrect = {"t1": GoldReferences.of("t1", ["blue"])}
    with pytest.raises(ValueError, match="question 't1'.*incorrect reference"):
        run_sensitivity(answers, no_incorrect, INVENTORY, config)


def test_gold_table_skips_multi_span_golds_with_reason():
    golds = {"a": GoldReferences.of("a", [["Joe", "John"]]), "b": GoldReferences.of("b", ["grey"])}
    gold = gold_answers_table(golds)
    assert gold.table.to_dict("records") == [{"question_id": "b", "answer": "grey"}]
    assert gold.skipped.to_dict("records") == [{"question_id": "a", "reason": "multi-span gold answer (2 spans)"}]
    with pytest.raises(ValueError, match="no gold answers"):
        GoldReferences.of("c", [])
    with pytest.raises(ValueError, match="unknown or no scorers"):
        SensitivityConfig(scorers=("bleurt",))
