"""Numeric and written dates, clock times."""
from __future__ import annotations

import pyarrow as pa
import pytest

from audit.conventions.dates import find_dates
from audit.conventions.times import find_times


def found(find, text: str) -> list[tuple[str, str, str]]:
    return [(text[h.start:h.end], h.variety, h.detail) for h in find(pa.array([text]))]


@pytest.mark.parametrize("text, expected", [
    ("on 12/25/2021", [("12/25/2021", "american", "MM/DD/YYYY")]),
    ("on 25/12/2021", [("25/12/2021", "other", "DD/MM/YYYY")]),
    ("on 12/05/2021", [("12/05/2021", "ambiguous", "NN/NN/YYYY")]),
    ("on 25.12.2021", [("25.12.2021", "other", "DD.MM.YYYY")]),
    ("on 3/14/21", [("3/14/21", "american", "MM/DD/YYYY")]),
    ("on 2021-12-25", [("2021-12-25", "neutral", "YYYY-MM-DD")]),
    ("version 1.2.10, pages 3-4-10, 45/67/2020, score 40/41/2020", []),
])
def test_numeric_dates(text, expected):
    assert found(find_dates, text) == expected


@pytest.mark.parametrize("text, expected", [
    ("Signed on April 21, 2025.", [("April 21, 2025", "american", "month day")]),
    ("April 21 is late.", [("April 21", "american", "month day")]),
    ("on July 4th", [("July 4th", "american", "month day")]),
    ("Born 21 April 2025.", [("21 April 2025", "other", "day month")]),
    ("on the 21st of April", [("the 21st of April", "other", "day month")]),
    ("on 5 May", [("5 May", "other", "day month")]),
    ("It ended on March 20.", [("March 20", "american", "month day")]),
    ("It ended on March 20, 1990", [("March 20, 1990", "american", "month day")]),
    # "March"/"may" as verbs are not dates
    ("They march 20 miles.", []),
    ("March 20 miles north.", []),
    ("May 5 people come?", []),
    ("You may 5 times", []),
    ("April 45 and in April 2020", []),
])
def test_written_dates(text, expected):
    assert found(find_dates, text) == expected


@pytest.mark.parametrize("text, expected", [
    ("at 7 pm", [("7 pm", "american", "12-hour")]),
    ("at 7:30 p.m. sharp", [("7:30 p.m.", "american", "12-hour")]),
    ("at 11AM", [("11AM", "american", "12-hour")]),
    ("at 19:00", [("19:00", "other", "24-hour")]),
    ("at 19.00 h", [("19.00 h", "other", "24-hour")]),
    ("at 07:30 hrs", [("07:30 hrs", "other", "24-hour")]),
    ("at 19h30", [("19h30", "other", "24-hour")]),
    ("at 00:15", [("00:15", "other", "24-hour")]),
    ("at 7:30", [("7:30", "neutral", "hh:mm")]),
    ("at 12:45", [("12:45", "neutral", "hh:mm")]),
    # not times
    ("Tim has no time", []),
    ("5 amps, 3 times", []),
    ("it costs 19.00 dollars", []),
    ("ratio 2:1, 1:30:45.5x", []),
])
def test_times(text, expected):
    assert found(find_times, text) == expected
