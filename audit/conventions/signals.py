"""What a convention signal is, and the prefilter step every regex detector shares.

A signal is one match a reviewer can check: which item, field and list element it sits in, its
character offsets in that string, the text as written, the convention class (``category``), the
variety it points to and a short ``detail`` (the inventory pair, the date order, the unit).

Only ``american`` and ``other`` signals enter shares and item labels. ``ambiguous`` (12/05/2021)
and ``neutral`` (ISO dates, a bare 7:30) are kept so a reviewer sees why an item has no label.
"""
from __future__ import annotations

from typing import NamedTuple

import pyarrow as pa
import pyarrow.compute as pc

CATEGORIES = ("spelling", "lexical", "numeric_date", "written_date", "time", "unit")
VARIETIES = ("american", "other", "ambiguous", "neutral")
COUNTED = ("american", "other")

SIGNAL_SCHEMA = pa.schema([
    ("benchmark", pa.string()),
    ("item_id", pa.string()),
    ("row", pa.int32()),  # item row in the batch the signal came from
    ("field", pa.string()),
    ("element", pa.int32()),  # index in a list field (options, gold); 0 for text fields
    ("start", pa.int32()),  # character offsets in that string
    ("end", pa.int32()),
    ("text", pa.string()),
    ("category", pa.string()),
    ("variety", pa.string()),
    ("detail", pa.string()),
    ("repeats_option", pa.bool_()),  # a gold string equal to one of the item's options
])


class Hit(NamedTuple):
    """One match inside one string of the flat text array a detector scans."""

    unit: int
    start: int
    end: int
    category: str
    variety: str
    detail: str


def candidates(texts: pa.StringArray, prefilter: str) -> list[tuple[int, str]]:
    """(index, string) of the strings where the RE2 ``prefilter`` matches.

    Why: RE2 over the whole Arrow array runs at hundreds of MB/s, while Python ``re`` is ~10x
    slower; the prefilter is a superset of every match, so exact rules run on few strings.
    """
    mask = pc.fill_null(pc.match_substring_regex(texts, prefilter), False)
    indices = pc.indices_nonzero(mask).to_pylist()
    return list(zip(indices, pc.filter(texts, mask).to_pylist()))
