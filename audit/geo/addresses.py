"""Postal addresses in captions: a state or province code with its postcode, or a UK postcode.

Patterns follow the published formats: USPS ZIP codes after a state code ("TX 78028", ZIP+4 too),
Canada Post postal codes after a province code ("MB R0C 1B0"), Australia Post 4-digit postcodes after
a state ("Vic 3134"), and Royal Mail postcodes (BS 7666 outward + inward code, "DT1 1XJ"). A code and a
postcode must also agree on the published first-digit / first-letter areas (a ZIP starting with 7 is
in AR, LA, OK or TX; a Canadian code starting with R is in Manitoba; an Australian 3xxx is in
Victoria), which keeps "WA 6000" Australian and "WA 98101" American.

Vectorised: a cheap RE2 prefilter keeps the records holding four adjacent digits, a UK inward code
or a Canadian postal code,
then one ``extract_regex`` per format over those records; only the records that match are touched
in Python.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from audit.geo.gazetteer import AU_STATES

# USPS national areas: the first ZIP digit of each state (Publication 65, "ZIP Code areas").
ZIP_AREA = {
    "0": "CT MA ME NH NJ RI VT", "1": "DE NY PA", "2": "DC MD NC SC VA WV", "3": "AL FL GA MS TN",
    "4": "IN KY MI OH", "5": "IA MN MT ND SD WI", "6": "IL KS MO NE", "7": "AR LA OK TX",
    "8": "AZ CO ID NM NV UT WY", "9": "AK CA HI OR WA",
}
US_ZIP_FIRST = {st: d for d, states in ZIP_AREA.items() for st in states.split()}
# Canada Post forward sortation areas: first letter → province or territory.
CA_POSTAL_FIRST = {"A": "NL", "B": "NS", "C": "PE", "E": "NB", "G": "QC", "H": "QC", "J": "QC", "K": "ON", "L": "ON",
                   "M": "ON", "N": "ON", "P": "ON", "R": "MB", "S": "SK", "T": "AB", "V": "BC", "X": "NT NU", "Y": "YT"}
# Australia Post: first postcode digit → state (ACT: 02xx, 26xx, 29xx; NT: 08xx, 09xx).
AU_POST_FIRST = {"NSW": "12", "ACT": "02", "VIC": "38", "QLD": "49", "SA": "5", "WA": "6", "TAS": "7", "NT": "0"}

_US = r"\b(?P<st>" + "|".join(sorted(US_ZIP_FIRST)) + r")\.?,?\s+(?P<zip>\d{5})(?:-\d{4})?\b"
_CA = (r"\b(?P<pr>AB|BC|MB|NB|NL|NS|NT|NU|ON|PE|QC|SK|YT)\.?,?\s+"
       r"(?P<pc>[ABCEGHJ-NPRSTVXY]\d[ABCEGHJ-NPRSTV-Z] ?\d[ABCEGHJ-NPRSTV-Z]\d)\b")
_AU = r"\b(?P<st>" + "|".join(sorted({*AU_STATES, *AU_STATES.values()})) + r")\.?,?\s+(?P<pc>\d{4})\b"
_UK = r"\b(?P<pc>(?:[A-PR-UWYZ][A-HK-Y]?\d[A-HJKMNPR-Y\d]?|GIR) \d[ABD-HJLNP-UW-Z]{2})\b"
_PREFILTER = r"\d{4}|\d[A-Z]{2}\b|[A-Z]\d[A-Z] ?\d[A-Z]\d"


@dataclass(frozen=True)
class Address:
    row: int
    country: str
    alias: str  # the matched text, as written: "TX 78028"
    admin1: str | None  # ISO 3166-2 of the state or province, when the format names one


def _matches(texts: pa.Array, pattern: str) -> list[tuple[int, dict]]:
    found = pc.extract_regex(texts, pattern)
    ok = pc.is_valid(found)
    idx = pc.indices_nonzero(ok).to_pylist()
    return list(zip(idx, pc.filter(found, ok).to_pylist())) if idx else []


def find_addresses(texts: pa.Array) -> list[Address]:
    """The first address of each format in each record (NFKC text in its original case)."""
    from audit.geo.normalize_kernel import rows_with_digit  # numba: loaded where addresses are read

    texts = pc.fill_null(texts, "")
    if isinstance(texts, pa.ChunkedArray):
        texts = texts.combine_chunks()
    if texts.type != pa.string():
        texts = texts.cast(pa.string())
    digits = np.flatnonzero(rows_with_digit(texts))  # the regex below reads only these
    if len(digits) == 0:
        return []
    sub = pc.take(texts, pa.array(digits))
    keep = np.flatnonzero(pc.match_substring_regex(sub, _PREFILTER).to_numpy(zero_copy_only=False))
    if len(keep) == 0:
        return []
    rows = digits[keep].tolist()
    sub = pc.take(sub, pa.array(keep))
    out: list[Address] = []
    for i, m in _matches(sub, _US):
        if US_ZIP_FIRST[m["st"]] == m["zip"][0]:
            out.append(Address(rows[i], "US", f"{m['st']} {m['zip']}", f"US-{m['st']}"))
    for i, m in _matches(sub, _CA):
        if m["pr"] in CA_POSTAL_FIRST[m["pc"][0]].split():
            out.append(Address(rows[i], "CA", f"{m['pr']} {m['pc']}", f"CA-{m['pr']}"))
    states = {v.upper(): k for k, v in AU_STATES.items()} | {k: k for k in AU_STATES}
    for i, m in _matches(sub, _AU):
        st = states.get(m["st"].upper())
        if st and m["pc"][0] in AU_POST_FIRST[st] and (st != "ACT" or m["pc"][:2] in ("02", "26", "29")):
            out.append(Address(rows[i], "AU", f"{m['st']} {m['pc']}", f"AU-{st}"))
    for i, m in _matches(sub, _UK):
        out.append(Address(rows[i], "GB", m["pc"], None))
    return out
