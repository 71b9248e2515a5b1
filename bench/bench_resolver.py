"""Resolver throughput on one core, side by side with the alternatives, in one process.

    .venv/bin/python -m bench.bench_resolver [--captions 1000000] [--dense 200000] [--profiles paper gazetteer] [--repeats 3]

Each rate is the best of ``--repeats`` runs (the per-caption regex baseline: one run).

Prints captions/s for each lexicon profile's batch resolver (normalization in one compiled pass + ahocorasick-rs
scans of the batch buffers), a plain per-caption regex-alternation resolver over the ``paper``
lexicon, and geotext (a peer users pick; different lexicon, so only its speed is comparable), with
ratios, on two corpora: ordinary captions (the shipped COCO + CC3M, repeated and shuffled) and
place-dense text (the development set's news sentences repeated, from ../shared/data/geo_dev when
present: about one place name per sentence). For each profile also the artifact's size, its load
time and the compile time of the resolver (what every worker pays once). Last, the multi-pattern
matchers considered for the scan step (ahocorasick-rs, pyahocorasick, hyperscan) on one buffer.
"""
from __future__ import annotations

import argparse
import os
import time

import pandas as pd
import pyarrow as pa

from audit.geo.normalize import normalize_array, search_pattern
from audit.geo.reference_resolver import RegexResolver
from audit.geo.resolve import CountryResolver
from bench.bench_geo_dev import DEFAULT_DEV
from bench.common import pin_one_core, repeated_shuffled
from connectors.geo.lexicon import load_lexicon, read_lexicon, shipped_path


def timed(fn) -> float:
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def dense_captions(n: int) -> pa.Array | None:
    path = DEFAULT_DEV / "news_sentences.csv"
    if not path.exists():
        return None
    texts = pd.read_csv(path, keep_default_na=False, dtype=str)["text"].tolist()
    return pa.array((texts * (n // len(texts) + 1))[:n], pa.string())


def best(fn, repeats: int) -> float:
    """The shortest of ``repeats`` timings: on a shared machine the others measure the neighbours (timeit's rule)."""
    return min(timed(fn) for _ in range(repeats))


def rate(resolver: CountryResolver, captions: pa.Array, batch: int, repeats: int) -> tuple[float, int]:
    resolved = [0]

    def run() -> None:
        resolved[0] = 0
        for i in range(0, len(captions), batch):
            res = resolver.resolve(captions.slice(i, batch))
            resolved[0] += len(res.country) - res.country.null_count

    return len(captions) / best(run, repeats), resolved[0]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--captions", type=int, default=1_000_000)
    ap.add_argument("--dense", type=int, default=200_000, help="place-dense sentences (0: skip)")
    ap.add_argument("--baseline-captions", type=int, default=20_000, help="the slow baselines run on this prefix")
    ap.add_argument("--batch", type=int, default=65_536)
    ap.add_argument("--profiles", nargs="+", default=["paper", "gazetteer"])
    ap.add_argument("--repeats", type=int, default=3, help="each rate is the best of this many runs, for every contender alike")
    args = ap.parse_args()
    pin_one_core()
    corpora = {"ordinary": repeated_shuffled(args.captions)}
    dense = dense_captions(args.dense) if args.dense else None
    if dense is not None:
        corpora["place-dense"] = dense
    else:
        print(f"(no development set at {DEFAULT_DEV}: the place-dense corpus is skipped)")
    print(f"ordinary: {args.captions:,} real captions (shipped COCO + CC3M, repeated and shuffled)"
          + (f"; place-dense: {len(dense):,} news sentences (geo_dev, repeated)" if dense is not None else "") + "; 1 core")

    from geotext import GeoText

    geo_rates = {}
    for name, caps in corpora.items():
        sub = caps.slice(0, max(1, args.baseline_captions // 5)).to_pylist()
        geo_rates[name] = len(sub) / best(lambda sub=sub: [GeoText(c).country_mentions for c in sub], args.repeats)
    for profile in args.profiles:
        path = shipped_path(profile)
        load_s = timed(lambda path=path: read_lexicon(path))
        lex = load_lexicon(profile)
        t = time.perf_counter()
        resolver = CountryResolver(lex.entries)
        compile_s = time.perf_counter() - t
        print(f"\n{profile}: {lex.entries.num_rows:,} entries, artifact {os.path.getsize(path) / 2**20:.2f} MiB, "
              f"load {load_s:.2f} s, compile {compile_s:.2f} s ({resolver.policy} rule)")
        for name, caps in corpora.items():
            r, n = rate(resolver, caps, args.batch, args.repeats)
            print(f"  {name:12} {r:>12,.0f} captions/s   ({n / len(caps):.1%} resolved)   ratio vs geotext {r / geo_rates[name]:,.1f}×")
    for name, g in geo_rates.items():
        print(f"geotext 0.4 on {name:12} {g:>10,.0f} captions/s   (on {max(1, args.baseline_captions // 5):,} of the same)")

    captions = corpora["ordinary"]
    lex = load_lexicon("paper")
    fast, _ = rate(CountryResolver(lex.entries), captions, args.batch, args.repeats)
    subset = captions.slice(0, args.baseline_captions).to_pylist()
    regex = RegexResolver(lex.entries)
    slow = len(subset) / timed(lambda: [regex.resolve(c) for c in subset])
    print(f"per-caption regex resolver (paper lexicon) {slow:,.0f} captions/s on {len(subset):,} ordinary captions; "
          f"paper batch resolver {fast / slow:,.1f}× faster")

    # The scan step alone, on one normalized buffer of the first batch-size × 8 captions.
    norm = normalize_array(captions.slice(0, min(len(captions), args.batch * 8)))
    buf = norm.buffers()[2].to_pybytes()
    text = buf.decode("utf-8")
    patterns = sorted({search_pattern(a) for a in lex.entries.column("alias_norm").to_pylist()})
    n = len(norm)
    print(f"\nmatcher for the scan step ({len(patterns):,} patterns, {len(buf) / 1e6:.1f} MB normalized text, {n:,} captions):")
    import ahocorasick_rs

    rs = ahocorasick_rs.BytesAhoCorasick([p.encode() for p in patterns], matchkind=ahocorasick_rs.MatchKind.LeftmostLongest)
    rs_rate = n / best(lambda: rs.find_matches_as_indexes(buf), args.repeats)
    print(f"  ahocorasick-rs (bytes, leftmost-longest) {rs_rate:>12,.0f} captions/s")
    try:
        import ahocorasick
    except ImportError:  # the bench extra's; the resolver figures above need only the project itself
        print("  pyahocorasick: not measured (not installed: pip install -e '.[bench]')")
    else:
        auto = ahocorasick.Automaton()
        for i, p in enumerate(patterns):
            auto.add_word(p, i)
        auto.make_automaton()
        py_rate = n / best(lambda: sum(1 for _ in auto.iter(text)), args.repeats)
        print(f"  pyahocorasick (str, all matches)         {py_rate:>12,.0f} captions/s")
    try:
        import hyperscan

        db = hyperscan.Database()
        db.compile(expressions=[p.encode() for p in patterns], ids=list(range(len(patterns))),
                   elements=len(patterns), flags=[hyperscan.HS_FLAG_SOM_LEFTMOST] * len(patterns))
        hits = []
        scan_s = timed(lambda: db.scan(buf, match_event_handler=lambda *a: hits.append(a)))
        print(f"  hyperscan (bytes, all matches, SOM)      {n / scan_s:>12,.0f} captions/s")
    except Exception as exc:  # noqa: BLE001 — hyperscan needs a CPU with SSSE3; report, don't fail
        print(f"  hyperscan: not measured ({type(exc).__name__}: {exc})")
    pa.set_cpu_count(2)


if __name__ == "__main__":
    main()
