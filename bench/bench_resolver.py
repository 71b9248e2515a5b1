"""Resolver throughput on one core, side by side with the alternatives, in one process.

    .venv/bin/python bench/bench_resolver.py [--captions 1000000] [--baseline-captions 20000]

Prints captions/s for: benchaudit's batch resolver (Arrow normalization + one ahocorasick-rs scan of
the batch buffer), a plain per-caption regex-alternation resolver over the same lexicon, and
geotext (a peer users pick; different lexicon, so only its speed is comparable), with ratios; and
the multi-pattern matchers considered for the scan step (ahocorasick-rs, pyahocorasick,
hyperscan) timed on the same normalized buffer.
"""
from __future__ import annotations

import argparse
import time

import pyarrow as pa

from audit.geo.normalize import normalize_array, search_pattern
from audit.geo.reference_resolver import RegexResolver
from audit.geo.resolve import CountryResolver
from bench.common import pin_one_core, repeated_shuffled
from connectors.lexicon import load_lexicon


def timed(fn) -> float:
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--captions", type=int, default=1_000_000)
    ap.add_argument("--baseline-captions", type=int, default=20_000, help="the slow baselines run on this prefix")
    ap.add_argument("--batch", type=int, default=65_536)
    ap.add_argument("--profile", default="paper")
    args = ap.parse_args()
    pin_one_core()
    captions = repeated_shuffled(args.captions)
    lex = load_lexicon(args.profile)
    print(f"{args.captions:,} real captions (shipped COCO + CC3M, repeated and shuffled); lexicon {args.profile} "
          f"({lex.entries.num_rows:,} entries); 1 core")

    resolver = CountryResolver(lex.entries)
    resolved = [0]

    def ours() -> None:
        for i in range(0, len(captions), args.batch):
            res = resolver.resolve(captions.slice(i, args.batch))
            resolved[0] += len(res.country) - res.country.null_count

    fast = args.captions / timed(ours)
    print(f"benchaudit batch resolver   {fast:>12,.0f} captions/s   ({resolved[0]:,} resolved to a country)")

    subset = captions.slice(0, args.baseline_captions).to_pylist()
    regex = RegexResolver(lex.entries)
    slow = len(subset) / timed(lambda: [regex.resolve(c) for c in subset])
    print(f"per-caption regex resolver  {slow:>12,.0f} captions/s   on {len(subset):,} of the same captions")

    from geotext import GeoText

    gsub = subset[: max(1, len(subset) // 5)]
    geo = len(gsub) / timed(lambda: [GeoText(c).country_mentions for c in gsub])
    print(f"geotext                     {geo:>12,.0f} captions/s   on {len(gsub):,} of the same captions")
    print(f"ratio vs regex: {fast / slow:,.1f}×   ratio vs geotext: {fast / geo:,.1f}×")

    # The scan step alone, on one normalized buffer of the first batch-size × 8 captions.
    norm = normalize_array(captions.slice(0, min(len(captions), args.batch * 8)))
    buf = norm.buffers()[2].to_pybytes()
    text = buf.decode("utf-8")
    patterns = sorted({search_pattern(a) for a in lex.entries.column("alias_norm").to_pylist()})
    n = len(norm)
    print(f"\nmatcher for the scan step ({len(patterns):,} patterns, {len(buf) / 1e6:.1f} MB normalized text, {n:,} captions):")
    import ahocorasick
    import ahocorasick_rs

    rs = ahocorasick_rs.BytesAhoCorasick([p.encode() for p in patterns], matchkind=ahocorasick_rs.MatchKind.LeftmostLongest)
    print(f"  ahocorasick-rs (bytes, leftmost-longest) {n / timed(lambda: rs.find_matches_as_indexes(buf)):>12,.0f} captions/s")
    auto = ahocorasick.Automaton()
    for i, p in enumerate(patterns):
        auto.add_word(p, i)
    auto.make_automaton()
    print(f"  pyahocorasick (str, all matches)         {n / timed(lambda: sum(1 for _ in auto.iter(text))):>12,.0f} captions/s")
    try:
        import hyperscan

        db = hyperscan.Database()
        db.compile(expressions=[p.encode() for p in patterns], ids=list(range(len(patterns))),
                   elements=len(patterns), flags=[hyperscan.HS_FLAG_SOM_LEFTMOST] * len(patterns))
        hits = []
        print(f"  hyperscan (bytes, all matches, SOM)      {n / timed(lambda: db.scan(buf, match_event_handler=lambda *a: hits.append(a))):>12,.0f} captions/s")
    except Exception as exc:  # noqa: BLE001 — hyperscan needs a CPU with SSSE3; report, don't fail
        print(f"  hyperscan: not measured ({type(exc).__name__}: {exc})")
    pa.set_cpu_count(2)


if __name__ == "__main__":
    main()
