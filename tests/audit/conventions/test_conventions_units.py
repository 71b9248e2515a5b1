"""Measurement units: US customary vs metric, only after a quantity."""
from __future__ import annotations

import pyarrow as pa
import pytest

from audit.conventions.units import find_units


def found(text: str) -> list[tuple[str, str, str]]:
    return [(text[h.start:h.end], h.variety, h.detail) for h in find_units(pa.array([text]))]


@pytest.mark.parametrize("text, expected", [
    ("it is 5 in. long", [("5 in.", "american", "inch")]),
    ("5 ft and ten miles", [("5 ft", "american", "foot"), ("ten miles", "american", "mile")]),
    ("a 6-foot wall", [("6-foot", "american", "foot")]),
    ("3 square feet", [("3 square feet", "american", "foot")]),
    ("12 lbs, 8 oz, 2 gallons", [("12 lbs", "american", "pound"), ("8 oz", "american", "ounce"),
                                 ("2 gallons", "american", "gallon")]),
    ("98.6°F or 30 degrees Fahrenheit", [("98.6°F", "american", "fahrenheit"),
                                         ("30 degrees Fahrenheit", "american", "fahrenheit")]),
    ("65 mph", [("65 mph", "american", "mph")]),
    ("measured in Fahrenheit", [("Fahrenheit", "american", "fahrenheit")]),
    ("30 °C, in Celsius", [("30 °C", "other", "celsius"), ("Celsius", "other", "celsius")]),
    ("5 kilometers and 5 kilometres", [("5 kilometers", "other", "kilometre"),
                                       ("5 kilometres", "other", "kilometre")]),
    ("10 km/h, 20 m/s, 2 L, 50 mL, 1,000 grams", [
        ("10 km/h", "other", "km/h"), ("20 m/s", "other", "metre"), ("2 L", "other", "litre"),
        ("50 mL", "other", "millilitre"), ("1,000 grams", "other", "gram")]),
    ("a 100 m sprint, then 5 mm.", [("100 m", "other", "metre"), ("5 mm", "other", "millimetre")]),
])
def test_units_after_a_quantity(text, expected):
    assert found(text) == expected


@pytest.mark.parametrize("text", [
    "stay in the house", "5 in the box", "my feet hurt", "pound the table",
    "the yard is big", "miles away", "a 5G network", "£5 m budget", "5 MM", "the meter is broken",
])
def test_not_units(text):
    assert found(text) == []
