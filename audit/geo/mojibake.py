"""Repair of UTF-8 text that was decoded as cp1252 or Latin-1 on its way ("CafÃ©" for "Café").

Mojibake hides names from the resolver ("SÃ£o Paulo", "ZÃ¼rich"). The repair is the inverse of the
accident: encode the damaged run back to bytes with cp1252 (Latin-1 for the five bytes cp1252 leaves
undefined) and decode those bytes as UTF-8. It is applied only where it yields valid UTF-8, so text
that merely contains "Ã" stays as it is. Detection is one vectorised RE2 pass over the batch: a
UTF-8 lead byte seen as a cp1252 character followed by continuation bytes seen the same way; only
the (rare) records it flags are repaired in Python. ftfy does more (and is ~10× slower here); this
covers the round trip that web captions suffer, and a second pass repairs the text that suffered it twice.
"""
from __future__ import annotations

import re

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from audit.geo.normalize import non_ascii_rows

# cp1252's characters for the bytes 0x80–0x9F (five are undefined and decode as C1 controls in Latin-1).
_CP1252_HIGH = "€\x81‚ƒ„…†‡ˆ‰Š‹Œ\x8dŽ\x8f\x90‘’“”•–—˜™š›œ\x9džŸ"
_CONT = "\u00a0-\u00bf" + "".join(sorted(set(_CP1252_HIGH)))  # what a continuation byte 0x80–0xBF looks like
_LEAD2, _LEAD3, _LEAD4 = "\u00c2-\u00df", "\u00e0-\u00ef", "\u00f0-\u00f4"
_RUN = f"(?:[{_LEAD2}][{_CONT}]|[{_LEAD3}][{_CONT}]{{2}}|[{_LEAD4}][{_CONT}]{{3}})"
_RE2_DETECT = _RUN  # the same class syntax works in RE2 and Python re
_RUNS = re.compile(f"{_RUN}+")
_TO_BYTE = {ch: 0x80 + i for i, ch in enumerate(_CP1252_HIGH)}


def _to_bytes(run: str) -> bytes | None:
    out = bytearray()
    for ch in run:
        code = ord(ch)
        if code < 0x100:
            out.append(code)
        elif ch in _TO_BYTE:
            out.append(_TO_BYTE[ch])
        else:
            return None
    return bytes(out)


def repair_text(text: str) -> str:
    """Each mojibake run of ``text`` replaced by what it decodes to, where that is valid UTF-8; and
    once more where the first repair leaves mojibake that it made: text that went through the
    accident twice ("SÃƒÂ£o" → "SÃ£o" → "São"). A second pass only: a third round trip was not seen
    in the captions measured, and each pass must yield valid UTF-8, so clean text is never touched."""
    once = _RUNS.sub(_fix, text)
    return _RUNS.sub(_fix, once) if once != text else once


def _fix(m: re.Match) -> str:
    raw = _to_bytes(m.group(0))
    if raw is None:
        return m.group(0)
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return m.group(0)


def repair_mojibake(texts: pa.Array, non_ascii: pa.BooleanArray | None = None) -> tuple[pa.Array, int]:
    """(texts with mojibake repaired, number of records changed). Nulls stay null. ``non_ascii``:
    which records hold non-ASCII text, when the caller knows already (the repair never makes one ASCII)."""
    if isinstance(texts, pa.ChunkedArray):
        texts = texts.combine_chunks()
    if non_ascii is None:
        non_ascii = non_ascii_rows(texts)
    if not pc.any(non_ascii).as_py():
        return texts, 0  # mojibake is never ASCII: most batches stop here
    rows = pc.indices_nonzero(non_ascii)  # only those records are searched
    damaged = pc.filter(rows, pc.match_substring_regex(pc.take(texts, rows), _RE2_DETECT))
    if not len(damaged):
        return texts, 0
    flagged = np.zeros(len(texts), dtype=bool)
    flagged[damaged.to_numpy()] = True
    flagged = pa.array(flagged)
    before = pc.filter(texts, flagged).to_pylist()
    after = [repair_text(t) for t in before]
    changed = sum(a != b for a, b in zip(before, after))
    if not changed:
        return texts, 0
    return pc.replace_with_mask(texts, flagged, pa.array(after, pa.string())), changed
