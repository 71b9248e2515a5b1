"""Detection stage, item labels and benchmark metrics on a hand-computed four-item benchmark."""
from __future__ import annotations

import pyarrow as pa
import pytest

from audit.conventions.detect import ConventionDetector, DetectorConfig
from audit.conventions.labels import label_items
from audit.conventions.metrics import (
    merge_counts,
    summarize,
    summary_table,
)
from audit.conventions.stage import ConventionStage
from audit.stats.bootstrap import BootstrapConfig
from connectors.benchmarks.schema import ITEM_SCHEMA

ITEMS = pa.Table.from_pylist([
    {"id": "a", "benchmark": "toy", "question": "My favourite colour.", "passage": None,
     "instructions": None, "options": ["at 7 pm", "at noon"], "gold": ["at 7 pm"]},
    {"id": "b", "benchmark": "toy", "question": "Run 5 km on 12/05/2021.", "passage": None,
     "instructions": None, "options": [], "gold": ["5 km"]},
    {"id": "c", "benchmark": "toy", "question": "What color?", "passage": None,
     "instructions": None, "options": None, "gold": []},
    {"id": "d", "benchmark": "toy", "question": "Nothing here at 7:30.", "passage": None,
     "instructions": None, "options": None, "gold": None},
], schema=ITEM_SCHEMA)
CONFIG = BootstrapConfig(n_replicates=10_000, seed=2026)


@pytest.fixture(scope="module")
def stage() -> ConventionStage:
    return ConventionStage()


def test_signals_keep_field_element_offsets_and_repeats(stage):
    signals = stage.detector(ITEMS)
    rows = [(s["item_id"], s["field"], s["element"], s["start"], s["end"], s["text"], s["category"],
             s["variety"], s["repeats_option"]) for s in signals.to_pylist()]
    assert rows == [
        ("a", "question", 0, 3, 12, "favourite", "spelling", "other", False),
        ("a", "question", 0, 13, 19, "colour", "spelling", "other", False),
        ("a", "options", 0, 3, 7, "7 pm", "time", "american", False),
        ("a", "gold", 0, 3, 7, "7 pm", "time", "american", True),
        ("b", "question", 0, 4, 8, "5 km", "unit", "other", False),
        ("b", "question", 0, 12, 22, "12/05/2021", "numeric_date", "ambiguous", False),
        ("b", "gold", 0, 0, 4, "5 km", "unit", "other", False),
        ("c", "question", 0, 5, 10, "color", "spelling", "american", False),
        ("d", "question", 0, 16, 20, "7:30", "time", "neutral", False),
    ]


def test_item_labels(stage):
    labels = stage.process(ITEMS).labels.to_pylist()
    assert [(r["item_id"], r["label"], r["n_american"], r["n_other"], r["n_american_excl_spelling"],
             r["n_other_excl_spelling"], r["n_ambiguous"], r["n_neutral"]) for r in labels] == [
        ("a", "mixed", 1, 2, 1, 0, 0, 0),
        ("b", "other_only", 0, 2, 0, 2, 1, 0),
        ("c", "american_only", 1, 0, 0, 0, 0, 0),
        ("d", "no_match", 0, 0, 0, 0, 0, 1),
    ]


def test_without_options_a_gold_repeat_counts():
    detector = ConventionDetector(DetectorConfig(fields=("question", "gold")))
    signals = detector(ITEMS)
    labels = label_items(ITEMS, signals).to_pylist()
    assert labels[0]["n_american"] == 1  # the gold "7 pm", options not scanned


def test_summary_by_hand(stage):
    result = stage.process(ITEMS)
    (summary,) = summarize(merge_counts([result.counts]), result.labels, CONFIG)
    assert (summary.n_items, summary.n_covered, summary.coverage) == (4, 3, 0.75)
    assert (summary.n_american, summary.n_other) == (2, 4)
    assert summary.american_share == pytest.approx(1 / 3)
    assert summary.skew == pytest.approx(-1 / 3)
    assert summary.american_share_excl_spelling == pytest.approx(1 / 3)
    assert (summary.n_ambiguous, summary.n_neutral) == (1, 1)
    assert summary.labels == {"american_only": 1, "other_only": 1, "mixed": 1, "no_match": 1}
    cats = {k: (v.american, v.other) for k, v in summary.by_category.items() if v.american or v.other}
    assert cats == {"spelling": (1, 2), "time": (1, 0), "unit": (0, 2)}
    fields = {k: (v.american, v.other) for k, v in summary.by_field.items() if v.american or v.other}
    assert fields == {"question": (1, 3), "options": (1, 0), "gold": (1, 1)}  # repeats included
    # Coverage over resamples of 4 items is k/4, k ~ Binomial(4, 3/4): P(k<=0)=1/256 < 2.5% <
    # P(k<=1)=13/256 and P(k<=3)=175/256 < 97.5%, so the exact percentile interval is [1/4, 1].
    assert (summary.coverage_ci.low, summary.coverage_ci.high) == (0.25, 1.0)
    assert summary.share_ci.low <= summary.american_share <= summary.share_ci.high
    assert summary.skew_ci == (2 * summary.share_ci.low - 1, 2 * summary.share_ci.high - 1)
    again = summarize(merge_counts([result.counts]), result.labels, CONFIG)[0]
    assert again.share_ci == summary.share_ci  # seeded


def test_partial_counts_merge_to_the_whole(stage):
    whole = stage.process(ITEMS)
    parts = [stage.process(ITEMS.slice(0, 1)), stage.process(ITEMS.slice(1, 3))]
    merged = merge_counts([p.counts for p in reversed(parts)])
    key = ["benchmark", "dimension", "key", "variety"]
    assert merged.sort_by([(k, "ascending") for k in key]).to_pylist() == \
        merge_counts([whole.counts]).sort_by([(k, "ascending") for k in key]).to_pylist()
    labels = pa.concat_tables([p.labels for p in parts])
    assert summarize(merged, labels, CONFIG)[0].coverage == 0.75


def test_mismatched_labels_are_an_error(stage):
    result = stage.process(ITEMS)
    with pytest.raises(ValueError, match="benchmark 'toy': counts have 4 items, labels 1"):
        summarize(merge_counts([result.counts]), result.labels.slice(0, 1), CONFIG)


def test_summary_table_has_one_row_per_benchmark(stage):
    other = ITEMS.set_column(1, "benchmark", pa.array(["other"] * 4))
    results = [stage.process(ITEMS), stage.process(other)]
    summaries = summarize(merge_counts([r.counts for r in results]),
                          pa.concat_tables([r.labels for r in results]), BootstrapConfig(n_replicates=200))
    table = summary_table(summaries)
    assert table.column("benchmark").to_pylist() == ["other", "toy"]
    assert table.column("coverage").to_pylist() == [0.75, 0.75]


def test_a_batch_without_signals():
    empty = ITEMS.slice(3, 1).set_column(2, "question", pa.array(["plain words"]))
    result = ConventionStage().process(empty)
    assert result.signals.num_rows == 0
    assert result.labels.column("label").to_pylist() == ["no_match"]
    (summary,) = summarize(merge_counts([result.counts]), result.labels, BootstrapConfig(n_replicates=100))
    assert summary.coverage == 0.0 and summary.n_american + summary.n_other == 0


def test_detector_config_rejects_unknown_fields():
    with pytest.raises(ValueError, match="fields must be a non-empty subset"):
        DetectorConfig(fields=("answer",))
