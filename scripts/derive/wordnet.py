"""Princeton WordNet 3.0 read from its database files, for the gazetteer lexicon's word filters and named features.

Used at build time only, by a maintainer: ``python -m scripts.derive.wordnet [--dict /usr/share/wordnet]``
(Debian: ``apt-get install wordnet-base``) derives the five small tables the lexicon build reads
(``audit/geo/data/wordnet_names.csv``, ``wordnet_collocations.csv``, ``wordnet_demonyms.csv``, ``wordnet_features.csv``,
``wordnet_words.csv``)
and writes them with WordNet's licence notice. Nothing at run time, and no test, needs WordNet itself.

The files are the documented ``wndb(5WN)`` format: ``index.POS`` lists each lower-case lemma's
synsets in sense order (most frequent first, from the SemCor tag counts where there are any);
``data.POS`` holds each synset's lexicographer file (noun.person, noun.location …), its words in
their written case, and its pointers (``@`` hypernym, ``@i`` instance hypernym, ``#p`` part holonym, and for an
adjective ``\\`` the noun it pertains to).
"""
from __future__ import annotations

import argparse
from collections.abc import Iterator
from pathlib import Path

import pandas as pd

from audit.geo.wordnet_model import Synset, WordNet

POS_FILES = {"n": "noun", "v": "verb", "a": "adj", "r": "adv"}
# lexnames(5WN): the lexicographer file number in each data line indexes this list.
LEXNAMES = (
    "adj.all", "adj.pert", "adv.all", "noun.Tops", "noun.act", "noun.animal", "noun.artifact", "noun.attribute",
    "noun.body", "noun.cognition", "noun.communication", "noun.event", "noun.feeling", "noun.food", "noun.group",
    "noun.location", "noun.motive", "noun.object", "noun.person", "noun.phenomenon", "noun.plant", "noun.possession",
    "noun.process", "noun.quantity", "noun.relation", "noun.shape", "noun.state", "noun.substance", "noun.time",
    "verb.body", "verb.change", "verb.cognition", "verb.communication", "verb.competition", "verb.consumption",
    "verb.contact", "verb.creation", "verb.emotion", "verb.motion", "verb.perception", "verb.possession",
    "verb.social", "verb.stative", "verb.weather", "adj.ppl",
)


def _data_lines(path: Path) -> Iterator[str]:
    with path.open(encoding="utf-8", errors="replace") as fh:
        for line in fh:
            if not line.startswith(" "):  # the licence header lines start with two spaces
                yield line


def read_wordnet(dict_dir: str | Path) -> WordNet:
    """Parse the four ``data.*`` and ``index.*`` files under ``dict_dir``."""
    root = Path(dict_dir)
    missing = [f"{k}.{p}" for p in POS_FILES.values() for k in ("data", "index") if not (root / f"{k}.{p}").exists()]
    if missing:
        raise FileNotFoundError(f"{root}: not a WordNet dict directory, missing {missing} (Debian: apt-get install wordnet-base)")
    synsets: dict[str, Synset] = {}
    senses: dict[str, tuple[str, ...]] = {}
    tagged: dict[str, int] = {}
    exceptions: dict[str, tuple[str, ...]] = {}
    for pos, name in POS_FILES.items():
        exc = root / f"{name}.exc"
        if exc.exists():
            for line in exc.read_text(encoding="utf-8", errors="replace").splitlines():
                inflected, *bases = line.split()
                exceptions[f"{pos}:{inflected}"] = tuple(bases)
        for line in _data_lines(root / f"data.{name}"):
            fields = line.split(" | ", 1)[0].split()
            offset, lexfile, n_words = fields[0], int(fields[1]), int(fields[3], 16)
            words = tuple(fields[4 + 2 * i] for i in range(n_words))
            i = 4 + 2 * n_words
            n_ptr = int(fields[i])
            ptrs = [fields[i + 1 + 4 * k: i + 5 + 4 * k] for k in range(n_ptr)]
            hyper = tuple(f"{p[2].replace('s', 'a')}:{p[1]}" for p in ptrs if p[0] in ("@", "@i"))
            part_of = tuple(f"{p[2].replace('s', 'a')}:{p[1]}" for p in ptrs if p[0] == "#p")
            pertains = tuple(f"n:{p[1]}" for p in ptrs if p[0] == "\\" and p[2] == "n") if pos == "a" else ()
            synsets[f"{pos}:{offset}"] = Synset(f"{pos}:{offset}", LEXNAMES[lexfile], words, hyper,
                                                any(p[0] == "@i" for p in ptrs), part_of, pertains)
        for line in _data_lines(root / f"index.{name}"):
            fields = line.split()
            n_syn, n_ptr = int(fields[2]), int(fields[3])
            tag_count = int(fields[5 + n_ptr])
            offsets = fields[6 + n_ptr: 6 + n_ptr + n_syn]
            senses[f"{pos}:{fields[0]}"] = tuple(f"{pos}:{o}" for o in offsets)
            tagged[f"{pos}:{fields[0]}"] = tag_count
    return WordNet(synsets, senses, tagged, exceptions)


def main() -> None:
    from audit.geo import wordsense
    from audit.geo.gazetteer_lexicon import (
        country_codes_and_demonyms,
        country_name_norms,
        large_city_words,
        place_name_norms,
    )

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dict", default="/usr/share/wordnet", help="WordNet 3.0 dict directory")
    ap.add_argument("--out", default=str(Path(__file__).resolve().parents[2] / "audit" / "geo" / "data"))
    args = ap.parse_args()
    wn = read_wordnet(args.dict)
    names, aliases = place_name_norms()
    out = Path(args.out)
    senses = wordsense.name_senses(wn, names)
    senses.to_csv(out / "wordnet_names.csv", index=False, lineterminator="\n")
    blockers = wordsense.collocations(wn, wordsense.matchable(aliases, senses))
    codes_and_demonyms = country_codes_and_demonyms()
    countries, country_words = country_name_norms(codes_and_demonyms)
    blockers = pd.concat([blockers, wordsense.places_in_no_country(wn, countries, country_words, names)], ignore_index=True)
    blockers.to_csv(out / "wordnet_collocations.csv", index=False, lineterminator="\n")
    wordsense.regional_demonyms(wn, *codes_and_demonyms).to_csv(out / "wordnet_demonyms.csv", index=False,
                                                                          lineterminator="\n")
    wordsense.features_in_one_country(wn, codes_and_demonyms[0], names).to_csv(out / "wordnet_features.csv", index=False,
                                                                               lineterminator="\n")
    wordsense.lower_case_words(wn, large_city_words()).to_csv(out / "wordnet_words.csv", index=False, lineterminator="\n")
    (out / "LICENSE_WordNet.txt").write_text(wordsense.WORDNET_NOTICE, encoding="utf-8")
    print(f"wrote {out}/wordnet_names.csv, wordnet_collocations.csv, wordnet_demonyms.csv, wordnet_features.csv, "
          "wordnet_words.csv, LICENSE_WordNet.txt")


if __name__ == "__main__":
    main()
