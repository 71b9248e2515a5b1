"""Flagging, reviewer labels and validation against expert labels (checked against scipy)."""
from __future__ import annotations

from math import comb

import numpy as np
import pandas as pd
import pytest
from scipy.stats import fisher_exact

from audit.landscape.flags import attach_review_labels, check_review_labels, flag_candidates, wrong_counts
from audit.landscape.validate import match_reference, normalize_text, validate_flags, validation_by_threshold


def test_hypergeometric_p_value_equals_hand_sum_and_fishers_exact_test():
    # N = 20 matched items, B = 5 expert-bad, n = 6 flagged, x = 3 of the flags are bad
    bad = np.zeros(20, dtype=bool)
    bad[:5] = True
    flagged = np.zeros(20, dtype=bool)
    flagged[[0, 1, 2, 10, 11, 12]] = True
    v = validate_flags(flagged, bad)
    hand = sum(comb(5, x) * comb(15, 6 - x) for x in range(3, 6)) / comb(20, 6)
    assert v.p_value == pytest.approx(hand, rel=1e-12)
    table = [[3, 3], [2, 12]]  # flagged/not x bad/ok
    assert v.p_value == pytest.approx(fisher_exact(table, alternative="greater").pvalue, rel=1e-9)
    assert (v.precision, v.recall, v.base_rate) == (0.5, 0.6, 0.25)
    assert v.enrichment == pytest.approx(2.0) and v.true_positives == 3 and v.n_flagged == 6


def test_no_flags_or_no_bad_items_give_nan_ratios_not_errors():
    v = validate_flags([False] * 4, [True, False, False, False])
    assert np.isnan(v.precision) and v.recall == 0.0 and np.isnan(v.enrichment) and v.p_value == 1.0


def test_wrong_counts_and_flags_m_of_m():
    correct = pd.DataFrame({"source_id": ["a"] * 3 + ["b"] * 3 + ["c"] * 3,
                            "model": ["m1", "m2", "m3"] * 3,
                            "correct": [0, 0, 1, 1, 1, 0, 0, 0, np.nan]})
    counts = wrong_counts(correct)
    assert counts.to_dict("list") == {"source_id": ["a", "b", "c"], "n_models": [3, 3, 2], "n_wrong": [2, 1, 2]}
    assert flag_candidates(counts, 2)["flagged"].tolist() == [True, False, True]
    with pytest.raises(ValueError, match="more than one answer"):
        wrong_counts(pd.concat([correct, correct.iloc[:1]]))


def test_review_labels_follow_the_taxonomy_and_attach_to_candidates():
    counts = flag_candidates(pd.DataFrame({"source_id": ["a", "b"], "n_models": [3, 3], "n_wrong": [3, 0]}), 2)
    labels = pd.DataFrame({"source_id": ["a"], "review_label": ["actionable"], "review_subtype": ["wrong_groundtruth"]})
    out = attach_review_labels(counts, labels)
    assert out.loc[0, "review_subtype"] == "wrong_groundtruth" and pd.isna(out.loc[1, "review_label"])
    assert attach_review_labels(counts)["review_label"].isna().all()
    with pytest.raises(ValueError, match="row 0, field 'review_subtype': 'typo' is not a subtype of 'actionable'"):
        check_review_labels(labels.assign(review_subtype="typo"))
    with pytest.raises(ValueError, match="row 0, field 'review_label'"):
        check_review_labels(labels.assign(review_label="maybe"))
    with pytest.raises(ValueError, match="not candidates"):
        attach_review_labels(counts, labels.assign(source_id="b"))


def test_matching_by_normalised_text_disambiguates_by_options_or_counts_as_ambiguous():
    ref = pd.DataFrame({
        "question": ["What  is 2+2?", "Pick one.", "Pick one.", "Same twice", "Same twice"],
        "options": [["3", "4"], ["x", "y"], ["u", "v"], ["p", "q"], ["p", "q"]],
        "expert_bad": [False, True, False, False, True],
    })
    items = pd.DataFrame({"source_id": ["i1", "i2", "i3", "i4"],
                          "question": ["what is 2+2?", "PICK ONE.", "Same twice", "Unknown"],
                          "options": [["3", "4"], ["X", "y"], ["p", "q"], ["a", "b"]]})
    m = match_reference(items, ref)
    assert m.match.tolist() == ["question", "question+options", "ambiguous", "none"]
    assert m.ref_index.tolist()[:2] == [0, 1] and m.expert_bad.tolist()[:2] == [False, True]
    assert normalize_text("  Ｆｕｌｌ\u00a0width ") == "full width"


def test_validation_by_threshold_uses_only_matched_answered_items():
    counts = pd.DataFrame({"source_id": ["a", "b", "c", "d"], "n_models": [4] * 4, "n_wrong": [4, 3, 1, 0]})
    matches = pd.DataFrame({"source_id": ["a", "b", "c", "d"], "ref_index": [0, 1, 2, None],
                            "match": ["question"] * 3 + ["none"], "expert_bad": [True, False, True, None]})
    table = validation_by_threshold(counts, matches, [1, 3, 4])
    assert table.n_matched.tolist() == [3, 3, 3]
    assert table.n_flagged.tolist() == [3, 2, 1] and table.true_positives.tolist() == [2, 1, 1]
    assert table.recall.tolist() == [1.0, 0.5, 0.5] and table.precision.tolist()[1] == 0.5
