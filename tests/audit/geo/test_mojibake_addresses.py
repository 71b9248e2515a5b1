"""Mojibake repair and postal-address patterns, on invented strings with hand-made answers."""
from __future__ import annotations

import pyarrow as pa
import pytest

from audit.geo.addresses import find_addresses
from audit.geo.mojibake import repair_mojibake, repair_text


@pytest.mark.parametrize("broken, fixed", [
    ("CafÃ©", "Café"),  # é = C3 A9, read as cp1252
    ("ZÃ¼rich and SÃ£o Paulo", "Zürich and São Paulo"),
    ("itâ€™s", "it’s"),  # a three-byte character through cp1252's 0x80–0x9F block
    ("KrakÃ³w â€“ Poland", "Kraków – Poland"),
])
def test_round_trip_repairs(broken, fixed):
    assert repair_text(broken) == fixed
    # the damage is what cp1252 decoding does to UTF-8 bytes
    assert fixed.encode("utf-8").decode("cp1252", errors="strict") == broken


@pytest.mark.parametrize("fixed", ["Malmö harbour", "Gdańsk – Poland", "it’s Curaçao"])
def test_double_encoded_text_is_repaired_by_the_second_pass(fixed):
    twice = fixed.encode("utf-8").decode("cp1252").encode("utf-8").decode("cp1252")  # the accident, twice
    assert twice != fixed.encode("utf-8").decode("cp1252")
    assert repair_text(twice) == fixed


def test_double_encoded_caption_resolves():
    from tests.geo_compiled import resolver

    twice = "ferry to Malmö".encode().decode("cp1252").encode().decode("cp1252")  # "MalmÃƒÂ¶"
    res = resolver("gazetteer").resolve(pa.array([twice]))
    assert res.country.to_pylist() == ["SE"] and res.mojibake_repaired == 1


@pytest.mark.parametrize("text", ["Café au lait", "plain Ã text", "Ãx", "日本の寿司", "naïve résumé"])
def test_valid_text_is_left_alone(text):
    assert repair_text(text) == text


def test_batch_repair_counts_records_and_keeps_nulls():
    arr = pa.array(["CafÃ©", None, "ok", "ZÃ¼rich", "Café"])
    out, n = repair_mojibake(arr)
    assert out.to_pylist() == ["Café", None, "ok", "Zürich", "Café"] and n == 2
    same, zero = repair_mojibake(pa.array(["ascii only", None]))
    assert zero == 0 and same.to_pylist() == ["ascii only", None]


def test_addresses_row_country_and_state():
    texts = pa.array(["nothing", "Kerrville, TX 78028", None, "Gimli MB R0C 1B0", "Ringwood Vic 3134", "London SW1A 1AA",
                      "ACT 2600", "NSW 2600", "TX 98101", "tx 78028"])
    got = [(a.row, a.country, a.alias, a.admin1) for a in find_addresses(texts)]
    assert sorted(got) == [
        (1, "US", "TX 78028", "US-TX"), (3, "CA", "MB R0C 1B0", "CA-MB"), (4, "AU", "Vic 3134", "AU-VIC"),
        (5, "GB", "SW1A 1AA", None), (6, "AU", "ACT 2600", "AU-ACT"), (7, "AU", "NSW 2600", "AU-NSW"),
    ]


def test_addresses_of_a_slice_count_rows_from_the_slice():
    # the digit pre-pass reads the Arrow buffers directly: a batch cut from a larger array (Ray Data's slices)
    # must number its rows from its own start, nulls included
    texts = pa.array(["Kerrville, TX 78028", "filler 1", None, "London SW1A 1AA", "no digits here", "Gimli MB R0C 1B0"])
    got = [(a.row, a.country) for a in find_addresses(texts.slice(2))]
    assert sorted(got) == [(1, "GB"), (3, "CA")]
    assert find_addresses(pa.array(["no digit at all", None])) == []
