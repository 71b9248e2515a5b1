"""The question sample: eligibility, seeded hash draw independent of order and batching, real items."""
from __future__ import annotations

import itertools
import random
from pathlib import Path

import pyarrow as pa
import pytest

from audit.mcqa.items import from_row
from audit.mcqa.sample import draw_sample, sample_items
from audit.stats.draws import hash_keys, stream_ids
from connectors.benchmarks.read import read_benchmark
from connectors.benchmarks.schema import ITEM_SCHEMA
from connectors.benchmarks.spec import BenchmarkSpec

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "benchmarks"


def item(i: int | str, options=("a", "b", "c", "d"), gold=("c",)) -> dict:
    return {"id": str(i), "benchmark": "toy", "question": f"question {i}", "passage": None, "instructions": None,
            "options": list(options), "gold": list(gold)}


def table(items: list[dict]) -> pa.Table:
    return pa.Table.from_pylist(items, schema=ITEM_SCHEMA)


def test_sample_is_the_n_smallest_shared_hash_keys_of_askable_ids():
    items = [item(i) for i in range(300)] + [item(f"bad{i}", options=()) for i in range(7)]
    sample = draw_sample([table(items)], n=25, seed=42)
    keys = hash_keys(stream_ids([str(i) for i in range(300)], "toy"), 42)  # the benchmark is the key's stream
    by_hand = sorted(range(300), key=lambda i: (int(keys[i]), str(i)))[:25]
    assert sample.ids == tuple(str(i) for i in by_hand)  # in draw order: ascending key
    assert sample.population == 307 and sample.skipped == {"too_few_options": 7}
    manifest = sample.manifest()
    assert manifest["eligible"] == 300 and manifest["skipped"]["too_few_options"]["count"] == 7 and manifest["seed"] == 42


def test_sample_ignores_file_order_and_batching_and_depends_on_seed():
    items = [item(i) for i in range(120)]
    reference = draw_sample([table(items)], n=10, seed=42)
    rng = random.Random(0)
    for _ in range(5):
        shuffled = items[:]
        rng.shuffle(shuffled)
        cuts = sorted(rng.sample(range(1, 120), 6))
        batches = [table(shuffled[a:b]) for a, b in itertools.pairwise([0, *cuts, 120])]
        assert draw_sample(batches, n=10, seed=42).ids == reference.ids
    assert draw_sample([table(items)], n=10, seed=43).ids != reference.ids
    # a larger sample extends the smaller one: the first 10 are the same questions
    assert draw_sample([table(items)], n=30, seed=42).ids[:10] == reference.ids


def test_sample_refuses_too_few_eligible_items_and_repeated_ids():
    items = [item(i) for i in range(5)] + [item("x", gold=())]
    with pytest.raises(ValueError, match=r"asked for 6 questions but only 5 of 6 items are askable \(1 no_gold\)"):
        draw_sample([table(items)], n=6)
    with pytest.raises(ValueError, match="'3' occurs more than once"):
        draw_sample([table(items[:4]), table([item(3)])], n=2)


def test_real_arc_items_are_drawn_and_lettered():
    items = read_benchmark(BenchmarkSpec(str(FIXTURES / "arc_challenge_slice.jsonl"), preset="arc"))
    sample = draw_sample(items.to_batches(max_chunksize=7), n=5, seed=42)
    assert len(sample.ids) == 5 and len(set(sample.ids)) == 5
    assert set(sample.ids) <= set(items.column("id").to_pylist())
    golds = dict(zip(items.column("id").to_pylist(), items.column("gold").to_pylist()))
    for drawn in sample.items:
        assert drawn.gold_label in drawn.labels and drawn.options[drawn.gold] == golds[drawn.id][0]


def test_the_streamed_draw_is_the_landscapes_draw_and_strict_refuses_a_short_benchmark():
    """One sampler: the contamination audit's streamed draw holds the items the landscape's in-memory draw
    picks from the same benchmark and seed; under strict mode a benchmark with fewer items is an error."""
    rows = [item(i) for i in range(200)]
    streamed = draw_sample([table(rows[:70]), table(rows[70:])], n=15, seed=9)
    in_memory = sample_items([from_row(r) for r in rows], 15, 9)
    assert sorted(streamed.ids) == sorted(i.id for i in in_memory)
    assert len(sample_items([from_row(r) for r in rows[:5]], 15, 9)) == 5  # not strict: all of a short benchmark
    with pytest.raises(ValueError, match=r"toy: asked for 15 questions but only 5 of 5 items are askable"):
        sample_items([from_row(r) for r in rows[:5]], 15, 9, strict=True)
