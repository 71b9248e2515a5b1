"""Agreement with the silver captions and precision/recall on geo_dev, per lexicon profile and evidence tier.

    .venv/bin/python -m bench.eval_geo_silver [--shared ../shared/data] [--profiles paper extended gazetteer]

Two development sets, neither shipped (their licences are not the project's) and read from
``../shared/data`` when present; without them the script says so and exits 0:

* ``geo_captions_silver/*.csv``: 4,971 web image captions each with the country an LLM pipeline
  assigned (column ``gemini-flash_faiss_country``, a country name; every caption has one).
  Agreement overall = resolved to the silver country / all captions; when resolved = the same / resolved.
* ``geo_dev/news_sentences.csv``: news sentences with annotated toponym countries, scored as its
  ``score.py`` does (precision = correct / resolved over all rows, recall = correct / rows with a gold
  country, a prediction of any annotated country counting as correct on MULTI rows).

One row per profile and operating point: all tiers, then ``--min-evidence`` each tier from the
strongest down. Nothing is fitted to these sets; they measure what the rules in ``audit.geo`` do.
"""
from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pycountry

from audit.geo.evidence import TIERS
from audit.geo.resolve import CountryResolver
from connectors.geo.lexicon import load_lexicon

DEFAULT_SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"
SILVER_COLUMN = "gemini-flash_faiss_country"
# Silver names pycountry's lookup does not know (it knows "Russian Federation", "Türkiye", "Czechia").
_SILVER_NAMES = {"russia": "RU", "turkey": "TR", "czech republic (czechia)": "CZ"}


def silver_code(name: str) -> str:
    """A silver country name → its ISO alpha-2 code (a name no table knows is an error, not a silent miss)."""
    key = name.strip().lower()
    if key in _SILVER_NAMES:
        return _SILVER_NAMES[key]
    return pycountry.countries.lookup(key).alpha_2


def read_silver(folder: Path) -> pd.DataFrame | None:
    files = sorted(folder.glob("*.csv"))
    if not files:
        return None
    silver = pd.concat([pd.read_csv(f, keep_default_na=False, dtype=str) for f in files], ignore_index=True)
    silver["code"] = silver[SILVER_COLUMN].map(silver_code)
    return silver


def agreement(predicted: list[str | None], silver: list[str]) -> tuple[int, float, float]:
    """(resolved, agreement overall, agreement when resolved)."""
    resolved = sum(p is not None for p in predicted)
    agree = sum(p == s for p, s in zip(predicted, silver))
    return resolved, agree / max(len(silver), 1), agree / max(resolved, 1)


def precision_recall(predicted: list[str | None], countries: list[str], gold: list[str]) -> tuple[int, float, float]:
    """(resolved, precision, recall) as geo_dev's score.py computes them."""
    resolved = sum(p is not None for p in predicted)
    correct = sum(1 for p, cs in zip(predicted, countries) if p and cs and p in cs.split(";"))
    return resolved, correct / max(resolved, 1), correct / max(sum(g != "" for g in gold), 1)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--shared", type=Path, default=DEFAULT_SHARED, help="folder with geo_captions_silver/ and geo_dev/")
    ap.add_argument("--profiles", nargs="+", default=["paper", "extended", "gazetteer"])
    args = ap.parse_args()
    silver = read_silver(args.shared / "geo_captions_silver")
    dev_csv = args.shared / "geo_dev" / "news_sentences.csv"
    dev = pd.read_csv(dev_csv, keep_default_na=False, dtype=str) if dev_csv.exists() else None
    if silver is None and dev is None:
        print(f"skipped: no geo_captions_silver/ nor geo_dev/ under {args.shared}")
        return
    print(f"silver: {'absent' if silver is None else f'{len(silver):,} captions'}; "
          f"geo_dev: {'absent' if dev is None else f'{len(dev):,} sentences'}")
    print(f"{'profile':10} {'operating point':40} {'silver res':>10} {'overall':>7} {'when res':>8}   "
          f"{'dev res':>7} {'P':>6} {'R':>6}")
    silver_texts = pa.array(silver["text"].tolist(), pa.string()) if silver is not None else None
    dev_texts = pa.array(dev["text"].tolist(), pa.string()) if dev is not None else None
    for profile in args.profiles:
        resolver = CountryResolver(load_lexicon(profile).entries)
        for tier in (None, *TIERS):
            at = resolver.at_min_evidence(tier)
            label = "all tiers" if tier is None else f"--min-evidence {tier}"
            cells = f"{profile:10} {label:40}"
            if silver is not None:
                n, overall, when = agreement(at.resolve(silver_texts).country.to_pylist(), silver["code"].tolist())
                cells += f" {n:>10,} {overall:>7.3f} {when:>8.3f}"
            else:
                cells += f" {'':>10} {'':>7} {'':>8}"
            if dev is not None:
                n, p, r = precision_recall(at.resolve(dev_texts).country.to_pylist(), dev["countries"].tolist(), dev["gold"].tolist())
                cells += f"   {n:>7,} {p:>6.3f} {r:>6.3f}"
            print(cells)


if __name__ == "__main__":
    main()
