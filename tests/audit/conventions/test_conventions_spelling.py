"""Whole-word, case-insensitive spelling signals."""
from __future__ import annotations

import pyarrow as pa
import pytest

from audit.conventions.spelling import SpellingDetector


@pytest.fixture(scope="module")
def detector() -> SpellingDetector:
    return SpellingDetector()


def found(detector: SpellingDetector, *texts: str) -> list[tuple[int, str, str, str]]:
    array = pa.array(list(texts), pa.string())
    return [(h.unit, texts[h.unit][h.start:h.end], h.variety, h.detail) for h in detector.find(array)]


def test_whole_words_case_insensitive(detector):
    assert found(detector, "My favourite COLOR is Grey.") == [
        (0, "favourite", "other", "favorite/favourite"),
        (0, "COLOR", "american", "color/colour"),
        (0, "Grey", "other", "gray/grey"),
    ]


def test_no_substring_matches(detector):
    # watercolours counts through its own pair, never as colour
    assert found(detector, "watercolours") == [(0, "watercolours", "other", "watercolors/watercolours")]
    assert found(detector, "xcolour colourx colourzz") == []
    assert found(detector, "he is centred") == [(0, "centred", "other", "centered/centred")]


def test_punctuation_and_non_ascii_are_boundaries_and_offsets_are_characters(detector):
    assert found(detector, "colour-blind, colour's “colour”") == [
        (0, "colour", "other", "color/colour")] * 3
    hits = detector.find(pa.array(["naïve café colour"]))
    assert [(h.start, h.end) for h in hits] == [(11, 17)]


def test_strings_do_not_run_into_each_other(detector):
    assert found(detector, "water", "colour", None, "", "colou", "r") == [(1, "colour", "other", "color/colour")]


def test_contractions_and_words_valid_in_both_are_not_signals(detector):
    assert found(detector, "I've checked the meter and the program; we'll practice.") == []


def test_lexical_only_when_enabled():
    text = "Fill the car with gasoline, not petrol."
    assert found(SpellingDetector(), text) == []
    assert [h[1:3] for h in found(SpellingDetector(include_lexical=True), text)] == [
        ("gasoline", "american"), ("petrol", "other")]


def test_empty_array(detector):
    assert detector.find(pa.array([], pa.string())) == []
