"""Reproducible draws by a seeded 64-bit hash key per id: the one sampling function of every audit.

HT-Coreset's strata, the traces sample, the landscape's items and the contamination audit's
questions are all drawn here: ``hash_keys`` gives each id its key, and a draw keeps the smallest
keys (per stratum: ``smallest_keys_per_stratum``; ``n`` of a list: ``sample_positions``).

Why: a draw that depends on row order or on how a table is split into blocks cannot be
reproduced on another cluster size. Giving every id a key ``hash(seed, id)`` and keeping the
``n_h`` smallest keys of each stratum is simple random sampling without replacement (keys are
exchangeable pseudo-random numbers) and depends only on the ids, the strata and the seed.

Keys:
- integer ids: ``splitmix64(id XOR splitmix64(seed))``. splitmix64 is a bijection on 64-bit
  words, so distinct ids never share a key;
- string ids: pandas' keyed SipHash-2-4 (``pandas.util.hash_array`` with a 16-byte key derived
  from the seed), vectorised in C at ~13M strings/s. A test pins known keys so a change in pandas
  would be caught. Equal keys (probability ~n^2 / 2^65) are ordered by id, so the draw stays a
  function of the table and seed alone.

Selection is mergeable: apply ``smallest_keys_per_stratum`` per block, concatenate the survivors,
apply it again; the result equals one application to the whole table. ``block_candidates`` and
``draw_in_blocks`` add a per-stratum key limit so the driver receives about ``n_h`` rows per stratum
whatever the number of blocks; ``key_partitions`` and ``equal_keys`` find ids repeated across blocks.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import pandas as pd
from pandas.util import hash_array

_MASK64 = (1 << 64) - 1


def splitmix64(x: np.ndarray) -> np.ndarray:
    """Vectorised splitmix64 finaliser (Steele, Lea and Flood 2014) on uint64 words."""
    z = np.asarray(x, dtype=np.uint64) + np.uint64(0x9E3779B97F4A7C15)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


def _check_seed(seed: int) -> int:
    if not isinstance(seed, (int, np.integer)) or not 0 <= int(seed) <= _MASK64:
        raise ValueError(f"seed must be an integer in [0, 2**64), got {seed!r}")
    return int(seed)


def hash_keys(ids: object, seed: int) -> np.ndarray:
    """uint64 sort key per id; integer or string ids only."""
    seed = _check_seed(seed)
    arr = np.asarray(ids)
    if arr.dtype.kind in "iu":
        words = arr.astype(np.int64).view(np.uint64) if arr.dtype.kind == "i" else arr.astype(np.uint64)
        return splitmix64(words ^ splitmix64(np.array([seed], dtype=np.uint64))[0])
    if arr.dtype.kind in "UO" or isinstance(arr.dtype, pd.StringDtype):
        objects = arr.astype(object)
        if pd.isna(objects).any():
            raise ValueError("id column has missing values; expected an integer or string id on every row")
        return hash_array(objects, encoding="utf8", hash_key=f"{seed:016x}", categorize=False)
    raise ValueError(f"id column must hold integers or strings, got dtype {arr.dtype}")


def smallest_keys_per_stratum(
    keys: np.ndarray, strata: np.ndarray, take: np.ndarray, ids: object | None = None
) -> np.ndarray:
    """Indices of the ``take[h]`` smallest keys within each stratum code ``h`` (sorted by stratum, key).

    ``ids`` breaks equal keys; it is needed only for string ids (integer-id keys are distinct).
    """
    keys = np.asarray(keys, dtype=np.uint64)
    strata = np.asarray(strata, dtype=np.int64)
    take = np.asarray(take, dtype=np.int64)
    if len(keys) != len(strata):
        raise ValueError(f"keys and strata differ in length: {len(keys)} vs {len(strata)}")
    if len(strata) and (strata.min() < 0 or strata.max() >= len(take)):
        raise ValueError(f"stratum codes must lie in [0, {len(take)}), got [{strata.min()}, {strata.max()}]")
    order = np.lexsort((keys, strata))
    s_sorted, k_sorted = strata[order], keys[order]
    tied = (s_sorted[1:] == s_sorted[:-1]) & (k_sorted[1:] == k_sorted[:-1])
    if tied.any():
        if ids is None:
            raise ValueError("equal hash keys within a stratum; pass ids to break the tie")
        id_rank = pd.factorize(np.asarray(ids), sort=True)[0]
        order = np.lexsort((id_rank, keys, strata))
        s_sorted = strata[order]
    start = np.searchsorted(s_sorted, np.arange(len(take)), side="left")
    rank = np.arange(len(order)) - start[s_sorted]
    return order[rank < take[s_sorted]]


def stream_ids(ids: Sequence[str], stream: str) -> np.ndarray:
    """String ids prefixed by a stream name (a benchmark), so two benchmarks whose ids coincide
    ("0", "1", ...) are drawn independently under one seed."""
    return np.array([f"{stream}\x1f{i}" for i in ids], dtype=object) if stream else np.asarray(list(ids), dtype=object)


def sample_positions(ids: Sequence[str], n: int | None, seed: int, stream: str = "") -> list[int]:
    """Positions of ``n`` of ``ids`` (unique strings) drawn by seeded hash key, in input order; every
    position when ``n`` is None or not smaller than the list.

    Why a hash and not a shuffle: the draw does not depend on file order or on how the input was
    split, a larger ``n`` contains the smaller draw, every model of a run sees the same items, and
    adding items keeps every earlier choice that still ranks.
    """
    if n is None or n >= len(ids):
        return list(range(len(ids)))
    if n < 1:
        raise ValueError(f"sample size must be at least 1, got {n}")
    keyed = stream_ids(ids, stream)
    chosen = smallest_keys_per_stratum(hash_keys(keyed, seed), np.zeros(len(ids), np.int64), np.array([n]), keyed)
    return sorted(chosen.tolist())


# ---- drawing from blocks without shipping them: candidates below a per-stratum key limit ----------

LIMIT_SIGMAS = 8.0  # margin of the candidate limits, in binomial standard deviations


def candidate_limits(population: np.ndarray, take: np.ndarray, sigmas: float = LIMIT_SIGMAS) -> np.ndarray:
    """Per-stratum key limit (uint64) below which the ``take[h]`` smallest of ``N_h`` keys lie, almost surely.

    Why: a block keeping its ``take[h]`` smallest keys per stratum sends up to blocks x take rows to
    the driver. Keys are uniform on [0, 2**64), so the number at or below ``L`` is binomial with mean
    ``N_h L / 2**64``; choosing that mean ``take + sigmas sqrt(take) + sigmas**2`` makes a shortfall
    an 8-sigma event while the driver receives about ``take`` rows per stratum. A shortfall is
    detected and redone (``draw_in_blocks``), so the limit affects cost, never the result. Census and
    empty strata get the full key range.
    """
    population = np.asarray(population, dtype=np.int64)
    take = np.asarray(take, dtype=np.int64)
    limits = np.full(len(population), _MASK64, dtype=np.uint64)
    for h, (big_n, t) in enumerate(zip(population.tolist(), take.tolist())):
        if 0 < t < big_n:
            expected = t + sigmas * np.sqrt(t) + sigmas**2
            if expected < big_n:
                limits[h] = min(_MASK64, int(max(expected, 0.0) / big_n * 2.0**64))
    return limits


def block_candidates(
    keys: np.ndarray, strata: np.ndarray, take: np.ndarray, limits: np.ndarray, ids: object | None = None
) -> np.ndarray:
    """Per-block partial: indices of rows that can still be drawn (key within the stratum's limit and
    among the block's ``take[h]`` smallest). Concatenate the blocks' rows, then ``draw_in_blocks``."""
    keys = np.asarray(keys, dtype=np.uint64)
    strata = np.asarray(strata, dtype=np.int64)
    inside = np.flatnonzero(keys <= np.asarray(limits, dtype=np.uint64)[strata])
    block_ids = None if ids is None else np.asarray(ids)[inside]
    return inside[smallest_keys_per_stratum(keys[inside], strata[inside], take, block_ids)]


def draw_in_blocks(
    candidates_fn: Callable[[np.ndarray], pd.DataFrame],
    population: np.ndarray,
    take: np.ndarray,
    sigmas: float = LIMIT_SIGMAS,
) -> tuple[pd.DataFrame, int]:
    """The draw over a table seen only through ``candidates_fn(limits)``; returns the drawn rows and passes.

    ``candidates_fn`` returns every block's ``block_candidates`` rows as one frame with columns
    ``key`` (uint64), ``stratum`` (code) and ``id`` (plus any payload, kept). A stratum with fewer
    candidates than ``take`` had its limit set too low; it is reopened to the full key range and the
    pass repeated, so the result always equals ``smallest_keys_per_stratum`` over the whole table.
    """
    take = np.asarray(take, dtype=np.int64)
    limits = candidate_limits(population, take, sigmas)
    for passes in (1, 2):
        candidates = candidates_fn(limits)
        found = np.bincount(candidates["stratum"].to_numpy(np.int64), minlength=len(take))
        short = found < take
        if not short.any():
            break
        if passes == 2:
            raise RuntimeError(
                f"strata {np.flatnonzero(short).tolist()} hold {found[short].tolist()} rows, fewer than the "
                f"planned {take[short].tolist()}; the table changed between passes"
            )
        limits = np.where(short, np.uint64(_MASK64), limits)
    keep = smallest_keys_per_stratum(
        candidates["key"].to_numpy(np.uint64), candidates["stratum"].to_numpy(np.int64), take, candidates["id"].to_numpy()
    )
    return candidates.iloc[keep].reset_index(drop=True), passes


# ---- duplicate ids across blocks: a range-partitioned merge of the keys -----------------------------


def key_partitions(keys: np.ndarray, parts: int) -> list[np.ndarray]:
    """Per-block partial: the sorted keys split into ``parts`` equal ranges of the 64-bit key space.

    Merging range r of every block and looking for equal neighbours (``equal_keys``) finds keys that
    occur twice anywhere in the table while no process holds more than about 1/parts of the keys.
    """
    if parts < 1:
        raise ValueError(f"parts must be >= 1, got {parts}")
    ordered = np.sort(np.asarray(keys, dtype=np.uint64))
    edges = np.array([(r * (1 << 64)) // parts for r in range(1, parts)], dtype=np.uint64)
    return np.split(ordered, np.searchsorted(ordered, edges, side="left"))


def equal_keys(parts: list[np.ndarray]) -> np.ndarray:
    """Keys occurring more than once across the given pieces of one range (distinct values, sorted)."""
    merged = np.sort(np.concatenate(parts)) if parts else np.array([], dtype=np.uint64)
    return np.unique(merged[1:][merged[1:] == merged[:-1]])
