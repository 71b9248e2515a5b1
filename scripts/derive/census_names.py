"""US Census 1990 given names and surnames, for the gazetteer's person-name filter (build time only).

The Census Bureau's "Frequently Occurring Surnames and First Names" (1990; a US government work in
the public domain) list every surname and given name borne by enough people to cover 90% of the
population, each with its frequency. The ``names`` package (MIT) ships the three files unchanged.

``python -m scripts.derive.census_names`` derives ``audit/geo/data/census_person_names.csv``: the place
names that are also a given name or surname borne by at least ``MIN_FREQUENCY_PCT`` of the people
(1 in 100,000). The gazetteer build reads only that table.
"""
from __future__ import annotations

import argparse
from importlib import resources
from pathlib import Path

import pandas as pd

MIN_FREQUENCY_PCT = 0.001  # percent of the population: the files' own precision (3 decimals)
FILES = {"surname": "dist.all.last", "female_given": "dist.female.first", "male_given": "dist.male.first"}


def read_census_names(min_pct: float = MIN_FREQUENCY_PCT) -> pd.DataFrame:
    """name (lower case), kind, frequency in percent, for names at or above ``min_pct``."""
    root = resources.files("names")
    rows = []
    for kind, fname in FILES.items():
        for line in (root / fname).read_text(encoding="utf-8").splitlines():
            name, pct, _cum, _rank = line.split()
            if float(pct) >= min_pct:
                rows.append((name.lower(), kind, float(pct)))
    return pd.DataFrame(rows, columns=["name", "kind", "pct"])


def main() -> None:
    from audit.geo.gazetteer_lexicon import place_name_norms

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=str(Path(__file__).resolve().parents[2] / "audit" / "geo" / "data" / "census_person_names.csv"))
    args = ap.parse_args()
    names, _ = place_name_norms()
    df = read_census_names()
    df = df[df["name"].isin(names)]
    out = df.pivot_table(index="name", columns="kind", values="pct", aggfunc="max").reindex(columns=list(FILES)).fillna(0.0)
    out.index.name = "alias_norm"
    out.reset_index().to_csv(args.out, index=False, lineterminator="\n", float_format="%.3f")
    print(f"wrote {args.out} ({len(out):,} names)")


if __name__ == "__main__":
    main()
