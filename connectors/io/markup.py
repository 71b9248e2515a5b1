"""Data written into files people open: Markdown they render, CSV they load into a spreadsheet.

Why: an item id, a plan or benchmark name, a caption or a trace is data from inputs anyone may
write (a shared run root, a downloaded benchmark). Written verbatim, an id holding a newline and
``## FORGED`` forges a heading, ``| … | **improved** |`` a metric row, ``<img onerror=…>`` reaches
any viewer that renders HTML; a CSV cell starting with ``=``, ``+``, ``-`` or ``@`` is a formula
a spreadsheet runs (CSV injection). Every Markdown and CSV writer for people passes its data
through ``md_text`` / ``csv_frame`` (the CSV's data files in ``data/`` stay verbatim).
"""
from __future__ import annotations

import html
import re
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pandas only where a frame is written: the CLI parsers import md_text
    import pandas as pd

_SPACE = re.compile(r"\s+")  # newlines, CR, tabs, U+2028 ...: one line of text
_MD_SPECIAL = re.compile(r"([\\`*_\[\]|#~!])")  # emphasis, code, links/images, table cells, headings
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def md_text(value: Any) -> str:
    """``value`` as one line of literal Markdown text, safe in a heading, a list item or a table cell:
    whitespace runs (newlines included) become one space, HTML is escaped (``&lt;``), and Markdown's
    marks (``* _ ` [ ] | # ~ ! \\``) are backslash-escaped, so it renders as the characters it holds."""
    text = _SPACE.sub(" ", str(value)).strip()
    return _MD_SPECIAL.sub(r"\\\1", html.escape(text, quote=False))


def csv_cell(value: Any) -> Any:
    """A text cell a spreadsheet would run as a formula (``=``, ``+``, ``-``, ``@``, tab, CR first) gets
    a leading ``'``, which spreadsheets show as text; anything else is unchanged."""
    return "'" + value if isinstance(value, str) and value.startswith(FORMULA_START) else value


def csv_uncell(value: Any) -> Any:
    """A cell of a sheet written by ``csv_cell`` and loaded back (a reviewer's sheet) as the value it was."""
    return value[1:] if isinstance(value, str) and value.startswith("'") and value[1:].startswith(FORMULA_START) else value


def csv_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with every text cell and column name through ``csv_cell``: what a CSV for people is written from."""
    import pandas as pd

    out = frame.rename(columns=lambda c: csv_cell(c) if isinstance(c, str) else c)
    for column in out.columns:
        if out[column].dtype == object or isinstance(out[column].dtype, pd.StringDtype):
            out[column] = out[column].map(csv_cell)
    return out
