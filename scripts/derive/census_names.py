"""US Census 1990 given names and surnames, for the gazetteer's person-name filter (build time only).

The Census Bureau's "Frequently Occurring Surnames and First Names" (1990; a US government work in
the public domain) list every surname and given name borne by enough people to cover 90% of the
population, each with its frequency. The ``names`` package (MIT) ships the three files unchanged.

``python -m scripts.derive.census_names`` derives ``audit/geo/data/census_person_names.csv``: the place
names that are also a given name or surname borne by at least ``MIN_FREQUENCY_PCT`` of the people
(1 in 100,000). The gazetteer build reads only that table.

It also derives ``audit/geo/data/census_person_tokens.csv``, read by the resolver's person-name rule
(``audit.geo.evidence.PERSON_NAME``): every given name borne by at least ``GIVEN_MIN_PCT`` of the
people (1 in 10,000: "John", "Nancy") and every surname by at least ``MIN_FREQUENCY_PCT`` ("Pugh")
that is no common English word (wordfreq Zipf < ``SURNAME_WORD_ZIPF``: not "Morning", "Harbor"),
unless common as a surname too (≥ ``COMMON_SURNAME_PCT``: "Johnson", "Kennedy"), so a place name
next to one can be read as part of a person's name.
"""
from __future__ import annotations

import argparse
from importlib import resources
from pathlib import Path

import pandas as pd

MIN_FREQUENCY_PCT = 0.001  # percent of the population: the files' own precision (3 decimals)
GIVEN_MIN_PCT = 0.01  # percent: given names common enough to mark a person before a place name
SURNAME_WORD_ZIPF = 4.0  # wordfreq Zipf: about once in 100,000 words of English text
COMMON_SURNAME_PCT = 0.03  # percent: the ~1,000 commonest US surnames
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


def person_tokens() -> pd.DataFrame:
    """name, given (bool), surname (bool): the given names of ≥ ``GIVEN_MIN_PCT`` and the surnames of
    ≥ ``MIN_FREQUENCY_PCT``, one row a name."""
    df = read_census_names()
    given = set(df[df["kind"].str.endswith("_given") & (df["pct"] >= GIVEN_MIN_PCT)]["name"])
    from wordfreq import zipf_frequency

    sur = df[df["kind"] == "surname"]
    surname = {n for n, pct in zip(sur["name"], sur["pct"])
               if pct >= COMMON_SURNAME_PCT or zipf_frequency(n, "en") < SURNAME_WORD_ZIPF}
    names = sorted(given | surname)
    return pd.DataFrame({"name": names, "given": [int(n in given) for n in names], "surname": [int(n in surname) for n in names]})


def main() -> None:
    from audit.geo.gazetteer_lexicon import place_name_norms

    data = Path(__file__).resolve().parents[2] / "audit" / "geo" / "data"
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=str(data / "census_person_names.csv"))
    ap.add_argument("--tokens-out", default=str(data / "census_person_tokens.csv"))
    args = ap.parse_args()
    tokens = person_tokens()
    tokens.to_csv(args.tokens_out, index=False, lineterminator="\n")
    print(f"wrote {args.tokens_out} ({len(tokens):,} names)")
    names, _ = place_name_norms()
    df = read_census_names()
    df = df[df["name"].isin(names)]
    out = df.pivot_table(index="name", columns="kind", values="pct", aggfunc="max").reindex(columns=list(FILES)).fillna(0.0)
    out.index.name = "alias_norm"
    out.reset_index().to_csv(args.out, index=False, lineterminator="\n", float_format="%.3f")
    print(f"wrote {args.out} ({len(out):,} names)")


if __name__ == "__main__":
    main()
