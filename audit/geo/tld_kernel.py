"""The ccTLD rule (``audit.geo.tld._TLD_RE``) as one compiled pass over a URL column's bytes.

Why compiled: the rule needs each URL's host, and finding it with whole-column numpy passes cost
~0.3 µs a URL (a pass per separator over every byte), a third of what resolving the caption
costs; a loop that stops at the host's end reads ~20 bytes a URL and costs ~0.03 µs. numba ships
as wheels (its LLVM included), so this needs no compiler on a user's machine; the machine code is
cached beside this file (or in the user's cache directory when that is read-only), so a worker
compiles it once, not per process.

Rows the loop cannot decide exactly by itself are flagged for the expression (RE2): a ``@``
before the host ends (user info lets the expression try other host starts), and a first or last
byte that is not printable ASCII (trimming Unicode whitespace is left to Arrow's own kernel).
"""
from __future__ import annotations

import numpy as np
from numba import njit

_NO_MATCH = -2  # the expression does not match (−1: it does, on a two-letter label that is no country's)


@njit(cache=True, nogil=True)
def _letter(c) -> bool:
    return (65 <= c <= 90) or (97 <= c <= 122)


@njit(cache=True, nogil=True)
def _label(data, host, end, pairs) -> int:
    r"""``[^/?#:]*\.XX\.?`` over [host, end) (no separator inside, by the caller): XX's country index."""
    size = end - host
    if size >= 4 and data[end - 1] == 46 and data[end - 4] == 46 and _letter(data[end - 3]) and _letter(data[end - 2]):
        at = end - 3
    elif size >= 3 and _letter(data[end - 1]) and _letter(data[end - 2]) and data[end - 3] == 46:
        at = end - 2
    else:
        return _NO_MATCH
    return pairs[((data[at] | 32) - 97) * 26 + (data[at + 1] | 32) - 97]


@njit(cache=True, nogil=True)
def tld_pass(data: np.ndarray, offsets: np.ndarray, pairs: np.ndarray, out: np.ndarray, flagged: np.ndarray) -> None:
    """For each row [offsets[r], offsets[r+1]) of ``data``: ``out[r]`` the index into the ccTLD table
    (``pairs``: by (first − 'a')·26 + (second − 'a')), −1 for none; ``flagged[r]`` for the expression.

    What the expression implies for a row without ``@`` in its host: the scheme part
    ``[A-Za-z][A-Za-z0-9+.-]*://`` matches at most one way (its class holds no ``:``) and is tried
    first; the host part ``[^/?#:]*\\.XX\\.?`` cannot cross a ``/?#:`` and must be followed by one or
    by the end, so XX is the two letters before the first of them (before a last dot, if any);
    when that fails after a scheme, the expression goes without it, and the first ``:`` ends the host.
    """
    for r in range(len(offsets) - 1):
        s, e = offsets[r], offsets[r + 1]
        out[r] = -1
        if s == e:
            continue
        if not (33 <= data[s] <= 126 and 33 <= data[e - 1] <= 126):
            flagged[r] = True
            continue
        host, scheme, k = s, False, s
        if _letter(data[s]):
            k = s + 1
            while k < e:
                c = data[k]
                if not (_letter(c) or 48 <= c <= 57 or c == 43 or c == 45 or c == 46):  # [A-Za-z0-9+.-]
                    break
                k += 1
            if k + 3 <= e and data[k] == 58 and data[k + 1] == 47 and data[k + 2] == 47:  # "://"
                scheme, host = True, k + 3
        end, i = e, host
        while i < e:  # the host ends at the first of / : ? #; user info may hold ":" but no / ? #
            c = data[i]
            if c == 47 or c == 63 or c == 35:
                if end == e:
                    end = i
                break
            if c == 58 and end == e:
                end = i
            elif c == 64:
                flagged[r] = True
                break
            i += 1
        if flagged[r]:
            continue
        code = _label(data, host, end, pairs)
        if code == _NO_MATCH and scheme:
            code = _label(data, s, k, pairs)
        out[r] = max(code, -1)
