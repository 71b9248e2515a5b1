"""Measurement units: US customary (American) vs metric (other).

A unit counts only after a quantity (digits, a fraction or a number word, optionally joined by a
hyphen: "5 ft", "ten-mile", "3 square feet"), because without one "feet" is a body part, "pound"
a verb or a currency, "yard" a garden and "in" a preposition. The temperature scales are the
exception: "Fahrenheit", "Celsius" and "centigrade" name the convention on their own.

Abbreviations are matched case-sensitively ("5 mm", not "5 MM"); "in" needs its period ("5 in.")
and "m" must not follow a currency sign ("$5 m" is five million). Rates and densities count by
their numerator ("20 m/s" is metres). "kilometer" is a metric unit here; that it is spelt the
American way is the spelling detector's signal, not a US unit. Known limit: "5 pounds" may be
sterling, not weight; it counts as a US unit.
"""
from __future__ import annotations

import re

import pyarrow as pa

from audit.conventions.signals import Hit, candidates

_US_WORDS = {
    "mile": "mile", "miles": "mile", "foot": "foot", "feet": "foot", "inch": "inch",
    "inches": "inch", "yard": "yard", "yards": "yard", "pound": "pound", "pounds": "pound",
    "ounce": "ounce", "ounces": "ounce", "gallon": "gallon", "gallons": "gallon",
    "quart": "quart", "quarts": "quart", "fahrenheit": "fahrenheit",
}
_US_ABBREV = {
    "mi": "mile", "ft": "foot", "in.": "inch", "yd": "yard", "yds": "yard", "lb": "pound",
    "lbs": "pound", "oz": "ounce", "gal": "gallon", "mph": "mph", "°F": "fahrenheit",
}
_METRIC_STEMS = {
    "kilomet": "kilometre", "centimet": "centimetre", "millimet": "millimetre", "met": "metre",
    "millilit": "millilitre", "lit": "litre",
}
_METRIC_WORDS = {
    "kilogram": "kilogram", "kilogramme": "kilogram", "gram": "gram", "gramme": "gram",
    "milligram": "milligram", "tonne": "tonne", "hectare": "hectare", "celsius": "celsius",
    "centigrade": "celsius",
}
_METRIC_ABBREV = {
    "km": "kilometre", "cm": "centimetre", "mm": "millimetre", "m": "metre", "kg": "kilogram",
    "g": "gram", "mg": "milligram", "L": "litre", "ml": "millilitre", "mL": "millilitre",
    "km/h": "km/h", "kph": "km/h", "°C": "celsius",
}
_NUMBER_WORDS = (
    "one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen|"
    "sixteen|seventeen|eighteen|nineteen|twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety|"
    "hundred|thousand|million|billion|dozen|half"
)
_US_FULL = r"miles?|feet|foot|inch(?:es)?|yards?|pounds?|ounces?|gallons?|quarts?"
_METRIC_FULL = (
    r"(?:kilo|centi|milli)?met(?:er|re)s?|(?:kilo|milli)?gram(?:me)?s?|(?:milli)?lit(?:er|re)s?"
    r"|tonnes?|hectares?"
)
_ABBREV = r"mi|ft|yds?|lbs?|oz|gal|mph|km/h|kph|km|cm|mm|kg|mg|mL|ml|L|m|g"  # and "in."
_SCALES = r"fahrenheit|celsius|centigrade"
_DEGREES = r"°\s?[CF]\b|(?i:degrees?)\s+(?:[CF]\b|(?i:" + _SCALES + r")\b)"
PREFILTER = (
    rf"(?i:(?:\d|\b(?:{_NUMBER_WORDS}))\s?-?\s?(?:(?:square|sq\.|cubic|cu\.)\s)?"
    rf"(?:(?:{_US_FULL}|{_METRIC_FULL}|{_ABBREV}|in)\b|°|degree)|{_SCALES})"
)
_MEASURE = re.compile(
    rf"(?P<cur>[$£€¥]\s?)?(?<![\w.,/])(?P<qty>\d+(?:,\d{{3}})*(?:\.\d+)?(?:/\d+)?|(?i:{_NUMBER_WORDS}))"
    r"(?:\s?-\s?|\s)?(?:(?i:square|sq\.|cubic|cu\.)\s)?"
    rf"(?P<unit>{_DEGREES}|(?i:{_US_FULL}|{_METRIC_FULL})\b\.?|in\.|(?:{_ABBREV})(?:/[A-Za-z]+\^?\d?)?(?![\w/])\.?)"
    rf"|(?P<scale>\b(?i:{_SCALES})\b)"
)


def classify_unit(token: str) -> tuple[str, str] | None:
    """(variety, canonical unit) for a unit token written after a quantity, else None."""
    if token.lower().startswith("degree"):
        scale = token.split()[-1]
        token = {"F": "°F", "C": "°C"}.get(scale, scale)
    token = token.replace(" ", "")
    if token.endswith(".") and token != "in.":  # a sentence's full stop after "5 mm."
        token = token[:-1]
    if "/" in token and token not in _METRIC_ABBREV:  # a rate or density: m/s, g/cm^3
        token = token.split("/")[0]
    if token in _US_ABBREV:
        return "american", _US_ABBREV[token]
    if token in _METRIC_ABBREV:
        return "other", _METRIC_ABBREV[token]
    word = token.lower()
    if word in _US_WORDS:
        return "american", _US_WORDS[word]
    singular = word.removesuffix("s")
    if singular in _METRIC_WORDS:
        return "other", _METRIC_WORDS[singular]
    for stem, unit in _METRIC_STEMS.items():
        if singular in (stem + "er", stem + "re"):
            return "other", unit
    return None


def find_units(texts: pa.StringArray) -> list[Hit]:
    """Measurement-unit signals in each string of ``texts``."""
    hits: list[Hit] = []
    for unit_index, string in candidates(texts, PREFILTER):
        for match in _MEASURE.finditer(string):
            if match.group("scale"):
                variety = "american" if match.group("scale").lower() == "fahrenheit" else "other"
                hits.append(Hit(unit_index, match.start(), match.end(), "unit", variety,
                                "fahrenheit" if variety == "american" else "celsius"))
                continue
            token = match.group("unit")
            decided = classify_unit(token)
            if decided is None or (decided[1] == "metre" and token == "m" and match.group("cur")):
                continue
            end = match.end() - (token.endswith(".") and token != "in.")  # not the full stop
            hits.append(Hit(unit_index, match.start("qty"), end, "unit", *decided))
    return hits
