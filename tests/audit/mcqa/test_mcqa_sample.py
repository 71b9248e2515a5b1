"""One seeded draw for every audit: nested, independent of order, per benchmark, by the shared hash key."""
from __future__ import annotations

import numpy as np

from audit.mcqa.items import McqaItem
from audit.mcqa.sample import sample_items
from audit.stats.draws import hash_keys, sample_positions, stream_ids


def test_positions_are_the_n_smallest_hash_keys_in_input_order():
    ids = [f"q{i}" for i in range(50)]
    keys = hash_keys(stream_ids(ids, "b"), 7)
    assert sample_positions(ids, 10, 7, stream="b") == sorted(np.argsort(keys, kind="stable")[:10].tolist())


def test_a_draw_is_nested_order_free_and_depends_on_seed_and_stream():
    ids = [f"q{i}" for i in range(50)]
    small, large = sample_positions(ids, 10, 7, "b"), sample_positions(ids, 20, 7, "b")
    assert len(small) == 10 and set(small) < set(large) and small == sorted(small)
    shuffled = ids[::-1]
    assert {shuffled[i] for i in sample_positions(shuffled, 10, 7, "b")} == {ids[i] for i in small}
    assert sample_positions(ids, 10, 8, "b") != small and sample_positions(ids, 10, 7, "c") != small
    assert sample_positions(ids, 100, 7, "b") == list(range(50)) and sample_positions(ids, None, 7) == list(range(50))


def test_items_are_drawn_per_benchmark():
    ids = [f"q{i}" for i in range(5)]
    items = [McqaItem(i, bench, "q", ("a", "b"), 0) for bench in ("x", "y") for i in ids]
    assert [(i.benchmark, i.id) for i in sample_items(items, 2, 7)] == \
        [("x", ids[j]) for j in sample_positions(ids, 2, 7, "x")] + [("y", ids[j]) for j in sample_positions(ids, 2, 7, "y")]
