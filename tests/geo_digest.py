"""Digests of everything the geo audit decides, frozen before its throughput work (issue 22).

Why: the job was made faster by changing how counts are merged, how batches are cut and how records
are written; none of that may change a single decision. ``tests/fixtures/geo/expected_digests.json``
holds these digests as the tree at 9a65087 (main, before that work) computed them::

    PYTHONPATH=. .venv/bin/python -m tests.geo_digest --write

Updated on purpose since (each time with the decisions that changed, counted by reason):

* issue 32, the evidence rules ``NAME_IN_PROSE`` and ``NAMED_COUNTRY_BREAKS_TIE``
  (``audit/geo/evidence.py``), ``gazetteer`` only: of the 40,847 shipped captions none changed;
  of the 11,350 development sentences 7 changed, 6 by ``named_country_breaks_tie`` (ambiguous →
  the named country) and 1 by ``name_in_prose`` (unresolved → JO). ``paper`` and ``extended``
  decide as before.
* issue 32, the context rules ``STATE_CODE_PICKS_NAMESAKE``, ``PERSON_NAME``, ``BUSINESS_NAME`` and
  ``DEMONYM_IN_FIXED_PHRASE``, the ``village`` tier (GeoNames places of 500–999 people, lexicon
  rebuilt), the second mojibake pass, and the records' new ``rules`` column (so every job records
  digest changed), ``gazetteer`` only: of the 40,847 shipped captions 63 changed their country, 59 by
  ``demonym_in_fixed_phrase`` ("american football player" → none) and 4 by a village; of the 11,350
  development sentences 116 changed (97 country, 11 outcome, 8 tier only): 55 by ``person_name``, 48
  by a village, 7 by ``demonym_in_fixed_phrase``, 4 by ``business_name``, 2 by the rebuilt lexicon's
  namesakes. ``paper`` and ``extended`` decide as before.
* issue 32, the rule ``NAME_AS_LABEL``, the CLDR parenthesis that names another territory ("RAE de Hong
  Kong (China)" no longer makes "China" a name of HK and MO, so ``NAME_IN_PROSE`` can lift it), large
  cities matched in any case, and no surname reading of a country that counts alone; ``gazetteer`` only:
  of the 40,847 shipped captions 3 changed, 1 by ``name_in_prose`` ("A bus in China" → CN), 2 by a
  large city in lower case ("the oceanside climate" → US, wrongly; "london to brighton" → the same GB,
  now corroborated); of the 11,350 development sentences 6 changed, all by ``name_in_prose`` over "in
  China" (4 unresolved → CN, all correct; 1 US → ambiguous and 1 single → majority GB, where the gold
  names both). ``paper`` and ``extended`` decide as before.
* issue 32, the places in no country (``audit.geo.wordsense.places_in_no_country``: 34 WordNet seas, continents
  and regions holding a country's name or demonym, blockers in the rebuilt lexicon), ``gazetteer`` only: of the
  40,847 shipped captions none changed; of the 11,350 development sentences 1 changed ("Michelin North America"
  no longer says US: corroborated US → unresolved, where the gold is US). ``paper`` and ``extended`` decide as before.
* issue 32, the rule ``COUNTRY_NAME_KEPT`` (a name its country owns keeps that reading over a namesake town that
  other towns agree with), ``gazetteer`` only: of the 40,847 shipped captions none changed its decision (1 lists the
  rule in its ``rules`` column: "the Thames in England", GB before and after); of the 11,350
  development sentences 3 changed, 1 country ("Gomez, a native of Mexico, … Danbury … New Milford": US → MX, the
  gold names both) and 2 outcomes (US single → US majority: the kept country is outvoted). ``paper`` and
  ``extended`` decide as before.
* issue 32, every place counted in the namesake pool under every name it is matched by (``_namesake_pool``: the
  "+abbreviation" forms, "St. Petersburg" for the Russian city; 39 gazetteer entries changed their context-only
  flag, lexicon rebuilt), ``gazetteer`` only: of the 40,847 shipped captions none changed; of the 11,350
  development sentences 1 changed ("The St Ives Youth Theatre": GB bare town → unresolved, St Ives now shared with
  Australia's; the gold names no country). ``paper`` and ``extended`` decide as before.
* issue 32, first-level subdivisions also named without the designation ISO 3166-2 writes in the country's language
  (``gazetteer.designations_dropped``: "Sichuan" for "Sichuan Sheng"; 307 entries added, 2 namesakes made context-only,
  lexicon rebuilt), ``gazetteer`` only: of the 40,847 shipped captions none changed; of the 11,350 development
  sentences 8 changed, all Chinese provinces: 4 unresolved → CN ("Heavy rain … in Hunan", "… in Guizhou province",
  all correct) and 4 CN by a town or large city → CN corroborated by its province. ``paper`` and ``extended``
  decide as before.
* issue 32, the rule ``PLACE_NAME_IN_PROSE`` (a town or city context-only as a person's name counts alone when
  written as a place: "meatpacking plant in Worthington"), ``gazetteer`` only: of the 40,847 shipped captions none
  changed; of the 11,350 development sentences 18 changed, all by that rule: 11 unresolved → a country (10 right),
  1 CA bare town → ambiguous, 1 CA single → majority, and 6 list the rule in their ``rules`` column with the same
  decision. (The fix that made a record's case evidence independent of the records before it in its batch changed
  no digest: no shipped caption or dev sentence holds a letter whose lower case has another UTF-8 length.)
  ``paper`` and ``extended`` decide as before.
* issue 32, the regional demonyms (``wordnet_demonyms.csv``: "Tuscan", "Texan", "Abkhaz" as their country's demonyms;
  the WordNet tables re-derived, which also added 12 names of the last stops' new aliases to ``wordnet_names.csv``;
  lexicon rebuilt, 222,921 → 222,988 entries) and finishes, garments and instruments as fixed-phrase heads,
  ``gazetteer`` only: of the 40,847 shipped captions 5 changed, 1 decision ("stairs in the entrance of venetian villa":
  unresolved → IT by the demonym) and 4 only their ``rules`` column (``demonym_in_fixed_phrase``: "Hawaiian shirt",
  "hawaiian guitar", "venetian mask", "venetian blinds", unresolved before and after); of the 11,350 development
  sentences 4 changed, 3 unresolved → a country by a regional demonym (1 "Texan" → US, 2 "Abkhaz" → GE, all right)
  and 1 only its matches (GE corroborated before and after). ``paper`` and ``extended`` decide as before.
* issue 32, GeoNames' alternate names of the places of 15,000+ people where they name nothing else, at the
  ``alternate_name`` tier, never in capitals (``gazetteer.alternate_names``, ``gazetteer_lexicon._alternates``; the
  WordNet and census tables re-derived to cover them; lexicon rebuilt, 222,988 → 306,760 entries; the tier counts of
  every evidence digest gain the ``alternate_name`` key), ``gazetteer`` only: of the 40,847 shipped captions 3
  changed, all "Queens Bronx" road signs (unresolved → US corroborated, right); of the 11,350 development sentences
  17 changed: 6 unresolved → a country (5 right: "Jbeil" → LB, "Cookville" twice and "Muscogee and Harris counties"
  → US, "Ludwigshafen" → DE; 1 wrong: "South Island" → US, which is New Zealand's), 1 ambiguous → DE and 1 IQ by a
  demonym → DE ("Ludwigshafen", gold DE and IQ), 5 the same country on stronger evidence (corroborated by "Bronx",
  "Jbeil", "Penacook"), 1 single → majority and 3 only their matches ("Kiev", "Quebec City", "Livni").
  ``paper`` and ``extended`` decide as before.
* issue 32, a large city owns its name when no single namesake abroad comes within half its size and the name is
  no person's (``gazetteer_lexicon._dominant_place``: 129 gazetteer entries no longer context-only, "San Francisco",
  "Barcelona", "Athens", "Vancouver"; lexicon rebuilt, 306,760 entries), ``gazetteer`` only: of the 40,847 shipped
  captions none changed; of the 11,350 development sentences 55 changed: 23 unresolved → the right country ("Albany",
  "Portland" selectmen, "San Francisco"), 24 unresolved → a wrong one (18 "Athens" of Georgia or Ohio → GR; "Swansea",
  "Plymouth", "Northampton" of Massachusetts → GB; "San Fernando" → PH), 1 wrong → right, 1 wrong → unresolved, 1
  wrong → another wrong, 3 from one right country to another where the gold names both ("Jerusalem"), and 2 only
  their tier or ``rules`` column. ``paper`` and ``extended`` decide as before.
* issue 32, the same test for the towns known abroad, of 15,000+ people (``gazetteer.KNOWN_ABROAD_POPULATION``: 541
  more entries no longer context-only, "Santa Monica", "Niagara Falls" of Ontario; lexicon rebuilt), ``gazetteer``
  only: of the 40,847 shipped captions none changed; of the 11,350 development sentences 17 changed: 10 unresolved →
  the right country ("Mount Pleasant", "Avondale", "Chatsworth"), 2 unresolved → a country where the gold names none
  ("Chapel Hill Harvester Church", an "Avondale" annexation bid), 1 wrong → another wrong, 3 their outcome and 1 its
  tier. ``paper`` and ``extended`` decide as before.
* issue 32, named natural features, parks and landmarks in one country (``wordnet_features.csv``, derived by
  ``audit.geo.wordsense.features_in_one_country``: 542 multi-word WordNet names that part holonyms put in one country,
  ``region`` entries; lexicon rebuilt, 306,760 → 307,317 entries), ``gazetteer`` only: of the 40,847 shipped captions
  14 changed, 6 unresolved → the right country ("Big Ben" five times → GB, "the Eiffel Tower" → FR) and 8 only their
  tier (large city → corroborated by "Big Ben"); of the 11,350 development sentences 28 changed: 3 unresolved → the
  right country ("Red River" twice, "Cambridge University"), 1 wrong → right ("Puget Sound": FR village → US), 1 wrong →
  another country where the gold names none ("Kennedy International Airport": CO → US), and 23 only their matches or
  tier (a university's or a river's whole name is now one match: "Columbia University", "Kanawha River").
  ``paper`` and ``extended`` decide as before.
* issue 32, this stop's rules and tables (lexicon rebuilt, 307,317 → 307,268 entries): ``PLACE_NAME_IN_PROSE`` and
  ``PLACE_NAME_AS_LABEL`` also for names WordNet knows first as a person ("Hutchinson", "Lombard", "Kitchener"), for a
  name of several countries the one no namesake abroad comes within half the size of, only after "in", "at", "from"
  for such names, and not for a bracketed name after a pronoun or in capitals; a label of several words and a label
  between dashes or bars; punctuation between a name and a street word; ``DEMONYM_BREAKS_TIE``; towns named like a
  WordNet natural feature context-only (``named_feature_first``); alternate names weigh below own names; large cities
  whose words WordNet has in lower case (``wordnet_words.csv``) or a compass word before a place stay capitalised-only,
  the others any case. ``gazetteer`` only: of the 40,847 shipped captions 3 changed, 2 "in Africa" (MX village →
  unresolved, by ``named_feature_first``: the continent) and 1 "abbey road in the city of Westminster" (unresolved →
  GB, "city of westminster" no longer an English phrase); of the 11,350 development sentences 40 changed, 26 of them
  their country: 8 ambiguous → a country the gold names by ``demonym_breaks_tie`` ("Egypt … Sudan … the Sudanese
  people" → SD), 8 unresolved → US by ``place_name_in_prose`` over a WordNet person's name ("in Lombard", "In
  Euclid", "from Wayne", all right), 9 US → unresolved by ``named_feature_first`` (5 right ones lost: "Kanawha" twice,
  "Golden Gate", "Chattahoochee River", "Platte"; 4 wrong ones gone: "The Atlantic", "Virgin Atlantic", "Continental
  Atlantic", "Atlantic Beach"), and 1 right one lost ("near Gilroy": "near" no longer reads a person's name as a
  place); the other 14 changed only their ``rules`` (10), matches (2) or outcome (2). ``paper`` and ``extended``
  decide as before.

The tests (``tests/audit/geo/test_frozen_decisions.py`` for the stage, ``tests/jobs/geo/
test_frozen_job.py`` for the job on Ray) recompute them with the current code and compare, part by
part, so a failure names what changed (the partial counts, or one records column).

Two corpora: the shipped real captions (40,847 COCO + CC3M, in the repository) and the place-dense
development sentences (11,350, ``../shared/data/geo_dev``; those cases are skipped when it is absent,
and only hashes of them are kept here: the set is not ours to copy).
"""
from __future__ import annotations

import argparse
import hashlib
import json
import tempfile
from importlib import resources
from pathlib import Path

import pandas as pd
import pyarrow as pa

from tests.geo_compiled import geo_stage

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "geo" / "expected_digests.json"
DEV = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "geo_dev" / "news_sentences.csv"
# (lexicon profile, --min-evidence): both decision rules, and an operating point that turns records unresolved
STAGE_CASES = (("paper", None), ("extended", None), ("gazetteer", None), ("gazetteer", "large_city"))
JOB_CASES = (("shipped", "paper"), ("shipped", "gazetteer"), ("geo_dev", "gazetteer"))
BATCH = 8192  # several batches per corpus: the partials of many batches are merged
# URLs cycled over the rows: ccTLDs, generic and vanity TLDs, a port, a trailing dot, malformed, missing
URLS = ("http://a.example.jp/x", "https://b.example.com/y", "http://c.example.co.uk", "http://d.example.io/z",
        "not a url", None, "http://e.example.de:8080/p", "https://f.example.fr./q", "HTTP://G.EXAMPLE.BR")
CONTEXTS = ("Paris, France", "a cabin near Gimli", "Kerrville, TX", "Danish style", "", None)


def sha(value) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


def shipped_captions() -> list[str]:
    """The shipped COCO 2017 val and CC3M val captions, in the repository's order."""
    root = resources.files("connectors") / "samples"
    coco = pd.read_csv(str(root / "coco2017_val_captions.csv"))["caption"]
    cc3m = pd.read_csv(str(root / "cc3m_val_captions.tsv"), sep="\t", header=None, quoting=3)[0]
    return pd.concat([coco, cc3m]).astype(str).tolist()


def dev_sentences() -> list[str] | None:
    return pd.read_csv(DEV, keep_default_na=False, dtype=str)["text"].tolist() if DEV.exists() else None


def items(texts: list[str]) -> list[pa.RecordBatch]:
    """The texts as item batches with every column in play: skipped rows (empty, null), context on
    every 7th row, URLs of every kind, and groups on the first half only (so some batches have none)."""
    n = len(texts)
    text, reason = list(texts), [None] * n
    for i in range(0, n, 97):
        text[i], reason[i] = "", "empty_text"
    for i in range(50, n, 101):
        text[i], reason[i] = None, "null_text"
    table = pa.table({
        "record_id": [f"r{i}" for i in range(n)],
        "text": pa.array(text, pa.string()),
        "context": pa.array([CONTEXTS[(i // 7) % len(CONTEXTS)] if i % 7 == 0 else None for i in range(n)], pa.string()),
        "url": pa.array([URLS[i % len(URLS)] for i in range(n)], pa.string()),
        "group": pa.array([("en", "de", None)[i % 3] if i < n // 2 else None for i in range(n)], pa.string()),
        "skip_reason": pa.array(reason, pa.string()),
    })
    return table.to_batches(max_chunksize=BATCH)


def table_digest(table: pa.Table) -> dict[str, str]:
    return {name: sha(table.column(name).to_pylist()) for name in table.column_names}


def stage_digest(texts: list[str], profile: str, min_evidence: str | None) -> dict:
    """The stage over ``texts`` in batches: the merged partial and every records column, hashed."""
    from audit.geo.stage import GeoPartial

    stage = geo_stage(profile, with_records=True, min_evidence=min_evidence)
    partial, records = GeoPartial(), []
    for batch in items(texts):
        table, p = stage.process(batch)
        partial.merge(p)
        records.append(table)
    data = partial.to_json()
    table = pa.concat_tables(records)
    return {"rows_in": partial.rows_in, "resolved": table.num_rows - table.column("country").null_count,
            "partial": sha(data), "records": table_digest(table)}


def stage_cases() -> dict[str, dict]:
    out = {}
    for corpus, texts in (("shipped", shipped_captions()), ("geo_dev", dev_sentences())):
        if texts is None:
            continue
        for profile, tier in STAGE_CASES:
            out[f"{corpus}/{profile}/{tier or 'all'}"] = stage_digest(texts, profile, tier)
    return out


def job_digest(corpus: str, profile: str, out: Path) -> dict:
    """The job on Ray over one corpus, records and their text written: per corpus what it counted
    (the summary block without the association fits), the manifest's rows and evidence counters,
    and every records column, rows in record-id order (shards may finish in any order)."""
    import pyarrow.parquet as pq

    from connectors.runs.tables import read_table
    from jobs.common.cli.config import RunOptions
    from jobs.geo.config import CorpusConfig, GeoConfig
    from jobs.geo.run import run

    if corpus == "shipped":
        corpora: list[CorpusConfig] = []  # the shipped COCO + CC3M samples, as `benchaudit geo` reads them
    else:
        df = pd.read_csv(DEV, keep_default_na=False, dtype=str)
        path = out / "geo_dev.parquet"
        pq.write_table(pa.table({"id": df["id"], "text": df["text"]}), path, row_group_size=2000)
        corpora = [CorpusConfig(name="geo_dev", paths=[str(path)], format="parquet", text="text", id="id")]
    cfg = GeoConfig(corpus=corpora, lexicon_profile=profile, write_records=True, records_text=True, bootstrap=0,
                    shard_rows=4000)
    run_dir = run(cfg, RunOptions(out=str(out / "runs"), executor="ray"))
    summary = json.loads((Path(run_dir) / "summary.json").read_text())
    manifest = json.loads((Path(run_dir) / "manifest.json").read_text())
    records = read_table(run_dir, "records").sort_by([("corpus", "ascending"), ("record_id", "ascending")])
    blocks = {name: {k: v for k, v in block.items() if k not in ("association", "failed_shards")}
              for name, block in summary["corpora"].items()}
    return {"rows": manifest["rows"], "resolved": {n: b["resolved_records"] for n, b in blocks.items()},
            "summary": sha(blocks), "evidence": sha(manifest["evidence"]), "records": table_digest(records)}


def job_cases() -> dict[str, dict]:
    import ray

    from jobs.common.runtime.ray_start import init_ray

    ray.init(address="local", num_cpus=4, include_dashboard=False, log_to_driver=False)
    init_ray(None)
    try:
        out = {}
        for corpus, profile in JOB_CASES:
            if corpus == "geo_dev" and not DEV.exists():
                continue
            with tempfile.TemporaryDirectory() as tmp:
                out[f"{corpus}/{profile}"] = job_digest(corpus, profile, Path(tmp))
        return out
    finally:
        ray.shutdown()


def expected() -> dict:
    return json.loads(FIXTURE.read_text())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--write", action="store_true", help=f"write {FIXTURE.name} (only from the tree the note names)")
    args = ap.parse_args()
    data = {"stage": stage_cases(), "job": job_cases()}
    if args.write:
        FIXTURE.parent.mkdir(parents=True, exist_ok=True)
        FIXTURE.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
    print(json.dumps(data, indent=1, sort_keys=True))


if __name__ == "__main__":
    main()
