"""Hash-key draws: reproducible whatever the partitioning, and simple random sampling."""

import numpy as np
import pandas as pd
import pytest

from audit.stats.draws import (
    block_candidates,
    candidate_limits,
    draw_in_blocks,
    equal_keys,
    hash_keys,
    key_partitions,
    smallest_keys_per_stratum,
    splitmix64,
)


def _draw_in_chunks(ids, strata, take, seed, n_chunks, rng):
    cuts = np.sort(rng.choice(np.arange(1, len(ids)), size=n_chunks - 1, replace=False)) if n_chunks > 1 else []
    survivors_ids, survivors_strata = [], []
    for chunk_ids, chunk_strata in zip(np.split(ids, cuts), np.split(strata, cuts)):
        keep = smallest_keys_per_stratum(hash_keys(chunk_ids, seed), chunk_strata, take, chunk_ids)
        survivors_ids.append(chunk_ids[keep])
        survivors_strata.append(chunk_strata[keep])
    merged_ids, merged_strata = np.concatenate(survivors_ids), np.concatenate(survivors_strata)
    keep = smallest_keys_per_stratum(hash_keys(merged_ids, seed), merged_strata, take, merged_ids)
    return set(merged_ids[keep].tolist())


@pytest.mark.parametrize("id_kind", ["int", "str"])
def test_same_ids_and_seed_give_the_same_sample_for_any_chunking(id_kind):
    rng = np.random.default_rng(0)
    n = 5_000
    ids = rng.permutation(n) * 7 + 3
    ids = ids if id_kind == "int" else np.array([f"edge-{i}" for i in ids], dtype=object)
    strata = rng.integers(0, 4, n)
    take = np.array([50, 0, 200, 4_000])
    whole = set(ids[smallest_keys_per_stratum(hash_keys(ids, 11), strata, take, ids)].tolist())
    assert len(whole) == 50 + 0 + 200 + int(np.sum(strata == 3))  # stratum 3 is smaller than its take
    for n_chunks in (1, 2, 7, 40):
        assert _draw_in_chunks(ids, strata, take, 11, n_chunks, rng) == whole
    shuffled = rng.permutation(n)
    again = smallest_keys_per_stratum(hash_keys(ids[shuffled], 11), strata[shuffled], take, ids[shuffled])
    assert set(ids[shuffled][again].tolist()) == whole
    other_seed = set(ids[smallest_keys_per_stratum(hash_keys(ids, 12), strata, take, ids)].tolist())
    assert other_seed != whole


def test_inclusion_frequency_is_n_over_N_across_seeds():
    ids = np.arange(10)
    counts = np.zeros(10)
    seeds = 4_000
    for seed in range(seeds):
        counts[smallest_keys_per_stratum(hash_keys(ids, seed), np.zeros(10, int), np.array([3]))] += 1
    # each id is drawn with probability 0.3; binomial SD over 4000 seeds is 0.0072
    assert np.all(np.abs(counts / seeds - 0.3) < 0.03)


def test_splitmix64_reference_value_and_pinned_string_keys():
    # first output of the reference splitmix64 generator from state 0 (Vigna's splitmix64.c)
    assert int(splitmix64(np.array([0], dtype=np.uint64))[0]) == 0xE220A8397B1DCDAF
    # pinned: a change here means pandas changed its keyed hash and draws would not reproduce
    assert hash_keys(np.array(["a", "b"], dtype=object), 3).tolist() == [15614521633475188211, 6601667921995069926]


def test_integer_keys_are_distinct_and_negative_ids_work():
    ids = np.arange(-50_000, 50_000)
    keys = hash_keys(ids, 5)
    assert len(np.unique(keys)) == len(ids)


def test_equal_keys_are_broken_by_id():
    keys = np.array([5, 5, 5, 1], dtype=np.uint64)
    ids = np.array(["c", "a", "b", "z"], dtype=object)
    keep = smallest_keys_per_stratum(keys, np.zeros(4, int), np.array([2]), ids)
    assert ids[keep].tolist() == ["z", "a"]
    with pytest.raises(ValueError, match="pass ids"):
        smallest_keys_per_stratum(keys, np.zeros(4, int), np.array([2]))


def test_bad_ids_and_seeds_raise():
    with pytest.raises(ValueError, match="integers or strings"):
        hash_keys(np.array([1.5, 2.5]), 0)
    with pytest.raises(ValueError, match="missing"):
        hash_keys(np.array(["a", None], dtype=object), 0)
    with pytest.raises(ValueError, match="seed"):
        hash_keys(np.array([1]), -1)


def _blocks_fn(ids, strata, seed, n_blocks, calls):
    """``candidates_fn`` over in-memory blocks, the way the build job runs it on Ray."""
    parts = np.array_split(np.arange(len(ids)), n_blocks)

    def fn(limits):
        calls.append(limits.copy())
        frames = []
        for rows in parts:
            keys = hash_keys(ids[rows], seed)
            keep = block_candidates(keys, strata[rows], take, limits, ids[rows])
            frames.append(pd.DataFrame({"key": keys[keep], "stratum": strata[rows][keep], "id": ids[rows][keep]}))
        return pd.concat(frames, ignore_index=True)

    rng = np.random.default_rng(1)
    take = np.array([0, 30, 500, rng.integers(1, 10)])
    return fn, take


@pytest.mark.parametrize("id_kind", ["int", "str"])
def test_draw_in_blocks_equals_the_whole_table_draw_and_ships_about_take_rows(id_kind):
    rng = np.random.default_rng(3)
    n = 40_000
    ids = rng.permutation(n) * 5 + 1
    ids = ids if id_kind == "int" else np.array([f"t{i}" for i in ids], dtype=object)
    strata = rng.integers(0, 4, n)
    calls = []
    fn, take = _blocks_fn(ids, strata, 21, 13, calls)
    population = np.bincount(strata, minlength=4)
    drawn, passes = draw_in_blocks(fn, population, take)
    whole = ids[smallest_keys_per_stratum(hash_keys(ids, 21), strata, take, ids)]
    assert passes == 1 and sorted(drawn["id"].tolist()) == sorted(whole.tolist())
    shipped = len(fn(calls[0]))
    assert shipped < take.sum() + 4 * (8 * np.sqrt(take.max()) + 64) + 13  # not 13 blocks x take


def test_too_tight_limits_are_detected_and_reopened():
    rng = np.random.default_rng(4)
    ids = np.arange(20_000)
    strata = rng.integers(0, 4, len(ids))
    calls = []
    fn, take = _blocks_fn(ids, strata, 5, 7, calls)
    population = np.bincount(strata, minlength=4)
    drawn, passes = draw_in_blocks(fn, population, take, sigmas=-20.0)  # limits far below the take-th key
    whole = ids[smallest_keys_per_stratum(hash_keys(ids, 5), strata, take)]
    assert passes == 2 and sorted(drawn["id"].tolist()) == sorted(whole.tolist())
    assert np.any(calls[1] > calls[0]) and np.all(calls[1] >= calls[0])


def test_candidate_limits_open_census_strata_and_scale_with_take():
    limits = candidate_limits(np.array([10, 1_000_000, 1_000_000, 0]), np.array([10, 100, 10_000, 0]))
    assert limits[0] == np.iinfo(np.uint64).max and limits[3] == np.iinfo(np.uint64).max
    assert limits[1] < limits[2] < np.iinfo(np.uint64).max
    assert abs(float(limits[2]) / 2.0**64 * 1e6 - (10_000 + 8 * 100 + 64)) < 1


def test_repeated_ids_across_blocks_are_found_by_range_merge():
    ids = np.arange(100_000)
    blocks = np.array_split(ids, 6)
    blocks[4] = np.append(blocks[4], [17, 99_999])  # two ids repeated in another block
    per_block = [key_partitions(hash_keys(b, 0), 5) for b in blocks]
    assert all(len(p) == 5 for p in per_block)
    assert sum(len(piece) for p in per_block for piece in p) == sum(len(b) for b in blocks)
    found = np.concatenate([equal_keys([p[r] for p in per_block]) for r in range(5)])
    assert sorted(found.tolist()) == sorted(hash_keys(np.array([17, 99_999]), 0).tolist())
    clean = [key_partitions(hash_keys(b, 0), 3) for b in np.array_split(ids, 4)]
    assert all(len(equal_keys([p[r] for p in clean])) == 0 for r in range(3))
