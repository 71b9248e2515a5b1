"""Reproducible draws by a seeded 64-bit hash key per id.

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
apply it again; the result equals one application to the whole table.
"""

from __future__ import annotations

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
