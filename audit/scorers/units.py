"""Unit conversion at the precision the answer states ("5 miles" -> "8 km").

Why "stated precision": a valid variant must not claim more precision than the original; "5 miles"
is "8 km", not "8.04672 km". Precision is read from the number as written:

- multiplicative units keep the number of significant digits ("5" -> 1, "26.2" -> 3,
  "0.50" -> 2); every digit of an integer counts, so "10 miles" -> "16 km" (2 digits) rather
  than the misleading "20 km";
- temperatures (an affine scale, where significant digits make no sense) keep the number of
  decimal places ("98.6 °F" -> "37.0 °C", "32 °F" -> "0 °C").

Abbreviations count only right after a number, and ambiguous ones are left out:
the second number of a range or product ("3 to 5 miles", "2 x 4 ft") is not converted alone; "in" needs a full
stop ("5 in."), "m" must not follow a currency sign ("$5 m" is five million), bare "F"/"C" are not
temperatures. Metric output uses symbols (km, m, kg, °C) so the variant does not also change
spelling (metre/meter); US output uses words, singular for exactly 1.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Unit:
    """A source unit: its aliases after a number, the target it converts to, and how."""

    system: str  # "us" or "metric": the system of *this* unit
    aliases: tuple[str, ...]
    target_singular: str
    target_plural: str
    factor: float = 1.0
    affine: str | None = None  # "f_to_c" or "c_to_f" for temperatures


UNITS: tuple[Unit, ...] = (
    Unit("us", ("miles per hour", "mph"), "km/h", "km/h", 1.609344),
    Unit("us", ("miles", "mile", "mi"), "km", "km", 1.609344),
    Unit("us", ("feet", "foot", "ft"), "m", "m", 0.3048),
    Unit("us", ("inches", "inch", "in."), "cm", "cm", 2.54),
    Unit("us", ("yards", "yard", "yds", "yd"), "m", "m", 0.9144),
    Unit("us", ("pounds", "pound", "lbs", "lb"), "kg", "kg", 0.45359237),
    Unit("us", ("ounces", "ounce", "oz"), "g", "g", 28.349523125),
    Unit("us", ("gallons", "gallon", "gal"), "L", "L", 3.785411784),
    Unit("us", ("degrees Fahrenheit", "degree Fahrenheit", "°F", "° F", "Fahrenheit"), "°C", "°C", affine="f_to_c"),
    Unit(
        "metric",
        ("kilometres per hour", "kilometers per hour", "km/h", "kph"),
        "mile per hour",
        "miles per hour",
        1 / 1.609344,
    ),
    Unit("metric", ("kilometres", "kilometers", "kilometre", "kilometer", "km"), "mile", "miles", 1 / 1.609344),
    Unit("metric", ("centimetres", "centimeters", "centimetre", "centimeter", "cm"), "inch", "inches", 1 / 2.54),
    Unit("metric", ("metres", "meters", "metre", "meter", "m"), "foot", "feet", 1 / 0.3048),
    Unit("metric", ("kilograms", "kilogram", "kg"), "pound", "pounds", 1 / 0.45359237),
    Unit("metric", ("grams", "gram", "g"), "ounce", "ounces", 1 / 28.349523125),
    Unit("metric", ("litres", "liters", "litre", "liter", "L"), "gallon", "gallons", 1 / 3.785411784),
    Unit(
        "metric",
        ("degrees Celsius", "degree Celsius", "°C", "° C", "Celsius", "centigrade"),
        "°F",
        "°F",
        affine="c_to_f",
    ),
)

_RANGE_BEFORE = re.compile(r"\d\s*(?:[-–]|to|and|or|x|×|by)\s*$", re.IGNORECASE)
_ALIAS_TO_UNIT = {alias.lower(): unit for unit in UNITS for alias in unit.aliases}
_CASE_SENSITIVE = frozenset(["L", "m", "g"])  # "L" only upper case; "m"/"g" only lower case
_ALIASES = sorted((a for u in UNITS for a in u.aliases), key=len, reverse=True)
_NUMBER = r"(?P<sign>[-−])?(?P<int>\d{1,3}(?:,\d{3})+|\d+)(?:\.(?P<frac>\d+))?"
_QUANTITY = re.compile(
    r"(?<![\w.,$£€¥\-−–])"
    + _NUMBER
    + r"(?P<sep>[ \-]|\u00a0)?(?P<unit>"
    + "|".join(re.escape(a) for a in _ALIASES)
    + r")(?![\w/°])",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Conversion:
    """One converted quantity: the character range in the original and its replacement."""

    start: int
    end: int
    replacement: str
    direction: str  # "to_metric" or "to_us"


def significant_digits(integer_part: str, fraction: str | None) -> int:
    """Significant digits of a written number; integer digits all count (see module docstring)."""
    digits = integer_part.replace(",", "") + (fraction or "")
    stripped = digits.lstrip("0")
    return max(1, len(stripped))


def _format(value: float, decimals: int, grouped: bool) -> str:
    decimals = max(0, decimals)
    rounded = round(value, decimals)
    if rounded == 0:
        rounded = 0.0  # no "-0"
    text = f"{rounded:,.{decimals}f}" if grouped else f"{rounded:.{decimals}f}"
    return text


def _round_significant(value: float, digits: int, grouped: bool) -> str:
    if value == 0:
        return "0"
    decimals = digits - 1 - math.floor(math.log10(abs(value)))
    text = _format(value, decimals, grouped)
    # rounding can carry into a new digit (9.96 -> "10.0"); recompute once on the rounded value
    rounded = float(text.replace(",", ""))
    if rounded != 0 and math.floor(math.log10(abs(rounded))) != math.floor(math.log10(abs(value))):
        text = _format(rounded, digits - 1 - math.floor(math.log10(abs(rounded))), grouped)
    return text


def _accept_alias(alias: str, match: re.Match, text: str) -> bool:
    canonical = next(a for a in _ALIASES if a.lower() == alias.lower())
    if canonical in _CASE_SENSITIVE and alias != canonical:
        return False
    if _RANGE_BEFORE.search(text[: match.start()]):
        return False  # "3 to 5 miles", "2 x 4 ft": converting one end would change the meaning
    if canonical == "m" and match.start() > 0 and text[: match.start()].rstrip()[-1:] in "$£€¥":
        return False
    return True


def convert_units(text: str) -> list[Conversion]:
    """Every convertible quantity in ``text`` with its conversion at the stated precision."""
    conversions = []
    for m in _QUANTITY.finditer(text):
        alias = m.group("unit")
        if not _accept_alias(alias, m, text):
            continue
        unit = _ALIAS_TO_UNIT[alias.lower()]
        sign = -1.0 if m.group("sign") else 1.0
        integer, fraction = m.group("int"), m.group("frac")
        if m.group("sign") and not unit.affine:
            continue  # a negative distance or weight is not a quantity to convert
        value = sign * float(integer.replace(",", "") + ("." + fraction if fraction else ""))
        grouped = "," in integer
        if unit.affine == "f_to_c":
            number = _format((value - 32.0) * 5.0 / 9.0, len(fraction or ""), grouped)
        elif unit.affine == "c_to_f":
            number = _format(value * 9.0 / 5.0 + 32.0, len(fraction or ""), grouped)
        else:
            number = _round_significant(value * unit.factor, significant_digits(integer, fraction), grouped)
        name = unit.target_singular if number == "1" else unit.target_plural
        direction = "to_metric" if unit.system == "us" else "to_us"
        conversions.append(Conversion(m.start(), m.end(), f"{number} {name}", direction))
    return conversions
