"""Precision and recall of every lexicon profile and evidence tier on the labelled development set.

    .venv/bin/python -m bench.bench_geo_dev [--dev ../shared/data/geo_dev] [--profiles paper extended gazetteer]

The development set (``../shared/data/geo_dev/``: 11,350 news sentences from LGL and TR-News with
annotated toponym countries; not shipped, its corpora's licence is their authors') comes with its
own scorer, ``score.py``: precision = correct / resolved over all rows, recall = correct / rows with
a gold country, a prediction of any annotated country counting as correct on MULTI rows. This
script resolves every sentence once per profile, writes one prediction file per operating point
(all tiers, then ``min_evidence`` = each tier from the strongest down) and runs ``score.py`` on
each, all rows, printing its figures in one table. Nothing here is fitted to the set: the rules
and thresholds live in the lexicon build and ``audit.geo.evidence``.
"""
from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd
import pyarrow as pa

from audit.geo.evidence import TIERS
from audit.geo.resolve import CountryResolver
from connectors.geo.lexicon import load_lexicon

DEFAULT_DEV = Path(__file__).resolve().parents[2] / "shared" / "data" / "geo_dev"
_LINE = re.compile(r"^(\S+)\s+rows\s+(\d+)\s+resolved\s+(\d+)\s+precision\s+([\d.]+)\s+recall\s+([\d.]+)")


def score(scorer: Path, predictions: Path) -> dict[str, tuple[int, float, float]]:
    """corpus → (resolved, precision, recall), as score.py prints them."""
    out = subprocess.run([sys.executable, str(scorer), str(predictions)], capture_output=True, text=True, check=True).stdout
    return {m[1]: (int(m[3]), float(m[4]), float(m[5])) for m in (_LINE.match(line) for line in out.splitlines()) if m}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dev", type=Path, default=DEFAULT_DEV, help="folder with news_sentences.csv and score.py")
    ap.add_argument("--profiles", nargs="+", default=["paper", "extended", "gazetteer"])
    args = ap.parse_args()
    sentences, scorer = args.dev / "news_sentences.csv", args.dev / "score.py"
    if not sentences.exists() or not scorer.exists():
        sys.exit(f"no development set at {args.dev} (needs news_sentences.csv and score.py)")
    dev = pd.read_csv(sentences, keep_default_na=False, dtype=str)
    texts = pa.array(dev["text"].tolist(), pa.string())
    print(f"{len(dev):,} sentences ({(dev['gold'] != '').sum():,} with a gold country) from {args.dev}; scored by its score.py, all rows")
    print(f"{'profile':10} {'operating point':34} {'resolved':>8} {'P':>6} {'R':>6}   "
          f"{'P lgl':>6} {'R lgl':>6} {'P trnews':>8} {'R trnews':>8}")
    with tempfile.TemporaryDirectory() as tmp:
        for profile in args.profiles:
            t = time.perf_counter()
            resolver = CountryResolver(load_lexicon(profile).entries)
            compile_s = time.perf_counter() - t
            for tier in (None, *TIERS):
                res = resolver.at_min_evidence(tier).resolve(texts)
                path = Path(tmp) / f"{profile}_{tier or 'all'}.csv"
                pd.DataFrame({"id": dev["id"], "country": res.country.to_pylist()}).to_csv(path, index=False)
                s = score(scorer, path)
                label = "all tiers" if tier is None else f"--min-evidence {tier}"
                (n, p, r), (_, pl, rl), (_, pt, rt) = s["all"], s["lgl"], s["trnews"]
                print(f"{profile:10} {label:34} {n:>8,} {p:>6.3f} {r:>6.3f}   {pl:>6.3f} {rl:>6.3f} {pt:>8.3f} {rt:>8.3f}")
            print(f"{'':10} (lexicon compiled in {compile_s:.1f} s)")


if __name__ == "__main__":
    main()
