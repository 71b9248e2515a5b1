"""Summaries from merged counts (hand-computed) and the ccTLD signal."""
from __future__ import annotations

import random
from collections import Counter
from importlib import resources

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pytest

from audit.geo.aggregate import summarize, summarize_all
from audit.geo.stage import ALL, GeoPartial
from audit.geo.tld import _TLD_RE, cctld_table, tld_country


def test_summary_numbers_by_hand():
    p = GeoPartial(rows_in=12, skipped=Counter({"empty_text": 2}), cube=Counter({
        (ALL, "single_country", "US", ""): 4,
        (ALL, "single_country", "US", "US"): 1,
        (ALL, "weighted_majority", "FR", "FR"): 2,
        (ALL, "single_country", "KE", "GB"): 1,
        (ALL, "ambiguous", "", ""): 1,
        (ALL, "unresolved", "", "JP"): 1,
    }))
    s = summarize(p, top_n=2)
    assert s["usable_records"] == 10 and s["resolved_records"] == 8 and s["coverage"] == pytest.approx(0.8)
    assert s["outcomes"] == {"single_country": 6, "weighted_majority": 2, "ambiguous": 1, "unresolved": 1}
    assert [t["alpha2"] for t in s["top"]] == ["US", "FR"] and s["top"][0]["share"] == pytest.approx(5 / 8)
    assert s["top3_concentration"] == pytest.approx(1.0)
    assert s["tail"] == {"countries": 0, "records": 0, "share": 0}  # KE has 1 record: not in the ≥ 2 tail
    assert s["n_countries_ge2"] == 2
    assert s["region_shares"] == pytest.approx({"Americas": 5 / 8, "Europe": 2 / 8, "Africa": 1 / 8})
    tld = s["tld"]
    assert tld["country_counts"] == {"FR": 2, "GB": 1, "JP": 1, "US": 1}
    assert tld["agreement"] == {"records_with_both": 4, "agree": 3, "agreement": 0.75}
    assert {(c["caption"], c["tld"]): c["records"] for c in tld["crosstab"]} == {
        ("US", "US"): 1, ("FR", "FR"): 2, ("KE", "GB"): 1, ("unresolved", "JP"): 1}
    full = summarize_all(p)
    assert full["skipped"] == {"empty_text": 2} and "groups" not in full


def test_partials_merge_and_round_trip():
    a = GeoPartial(rows_in=3, cube=Counter({(ALL, "single_country", "US", ""): 3}), match_types=Counter({"country": 3}))
    b = GeoPartial(rows_in=2, cube=Counter({(ALL, "single_country", "US", ""): 1, (ALL, "unresolved", "", ""): 1}),
                   skipped=Counter({"null_text": 1}))
    merged = GeoPartial().merge(a).merge(GeoPartial.from_json(b.to_json()))
    assert merged.rows_in == 5 and merged.cube[(ALL, "single_country", "US", "")] == 4 and merged.skipped["null_text"] == 1


@pytest.mark.parametrize("url, country", [
    ("http://www.bbc.co.uk/news/a.jpg", "GB"), ("https://example.jp:8080/x", "JP"), ("ftp://user@host.de/p", "DE"),
    ("www.lemonde.fr/img.png", "FR"), ("HTTPS://Photos.Example.CA/a", "CA"), ("http://a.gp/x", "GP"),
    ("https://foo.com/pic.jp", None),  # the path is not the host
    ("https://x.io/a", None), ("https://y.tv", None),  # vanity ccTLDs
    ("https://z.eu/a", None), ("http://10.0.0.1/a", None), ("not a url", None), (None, None), ("", None),
])
def test_tld_country(url, country):
    assert tld_country(pa.array([url], pa.string())).to_pylist() == [country]


def by_regex(urls: pa.Array) -> list[str | None]:
    """The rule as its one expression states it (RE2 over every URL): what the byte path must reproduce."""
    tlds, codes = cctld_table()
    tld = pc.utf8_lower(pc.struct_field(pc.extract_regex(pc.utf8_trim_whitespace(urls), _TLD_RE), "tld"))
    return pc.take(codes, pc.index_in(tld, value_set=tlds)).to_pylist()


def test_tld_country_is_the_expression_on_random_urls():
    """Strings over the characters the expression cares about (scheme, user info, port, path and
    query separators, dots, letters of both cases, digits, spaces, a newline, non-ASCII), short
    enough that every arrangement of a few of them occurs, and long ones built from URL parts."""
    rng = random.Random(22)
    chars = list("aAjJpPdDeE.:/?#@ 1-+_é\n\t") + ["://", ".jp", ".co.uk", "http", "ß", "．", "\u00a0", "\u3000"]
    parts = ["http://", "https://", "ftp://", "user:pw@", "@", "www.", "bbc", ".co", ".uk", ".jp", ".JP", ".", ":8080",
             "/path", "?q=a.de", "#frag.fr", " ", "x.tv", "10.0.0.1", "é.fr", ".com", "\u00a0", "\u2003"]
    urls = ["".join(rng.choice(chars) for _ in range(rng.randint(0, 8))) for _ in range(40_000)]
    urls += ["".join(rng.choice(parts) for _ in range(rng.randint(1, 7))) for _ in range(40_000)]
    urls += [None] * 50
    rng.shuffle(urls)
    arr = pa.array(urls, pa.string())
    assert tld_country(arr).to_pylist() == by_regex(arr)
    sliced = arr.slice(1234, 20_000)  # an array that does not start at its buffers' first byte
    assert tld_country(sliced).to_pylist() == by_regex(sliced)


def test_tld_country_is_the_expression_on_real_urls():
    root = resources.files("connectors") / "samples"
    urls = pa.array(pd.read_csv(str(root / "cc3m_val_captions.tsv"), sep="\t", header=None, quoting=3)[1].astype(str))
    got = tld_country(urls).to_pylist()
    assert got == by_regex(urls) and sum(c is not None for c in got) > 1000


def test_large_batches_are_cut_by_bytes_and_lose_no_row(monkeypatch):
    import audit.geo.stage as stage

    monkeypatch.setattr(stage, "MAX_BATCH_BYTES", 10)
    texts = ["aaaa", "bbbbbbb", "c", "d" * 15, "e", None, "ff"]
    batch = pa.record_batch({"text": texts, "context": pa.array([None, None, "xy", None, None, None, None], pa.string())})
    chunks = stage._byte_chunks(batch)
    assert sum((c.column("text").to_pylist() for c in chunks), []) == texts
    sizes = [len(t or "") + len(c or "") for t, c in zip(texts, batch.column("context").to_pylist())]
    for c in chunks:  # at most the limit plus one row
        n = sum(len(t or "") + len(x or "") for t, x in zip(c.column("text").to_pylist(), c.column("context").to_pylist()))
        assert n <= 10 + max(sizes)
    assert len(chunks) > 1
