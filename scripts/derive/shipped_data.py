"""Derive the small data tables benchaudit ships from the public sources under ../shared/data.

Run once by a maintainer when a source changes (the outputs are committed with their licences):
    python scripts/derive/shipped_data.py --shared ../shared/data
Writes:
  audit/geo/data/country_facts_mledoze.csv   alpha2, alpha3, demonym_m, demonym_f, region, subregion, independent (ODbL 1.0)
  connectors/data/worldbank/indicators.csv    alpha3, indicator, year, value — latest year per country (CC BY 4.0)
  connectors/samples/*                         caption samples (COCO 2017 val CC BY 4.0, CC3M val Google terms)
  connectors/samples/benchmarks/*              TruthfulQA.csv (Apache-2.0), the allennlp DROP fixture (CC BY-SA 4.0),
                                               ARC-Challenge test (CC BY-SA 4.0), CommonsenseQA dev (MIT), HellaSwag val
                                               (MIT), MMLU-Redux 2.0 with its expert labels (CC BY 4.0)
  connectors/samples/examples/*                the README's coreset and traces examples: MMLU-Redux items with their
                                               expert error label and the 14 HELM models' disagreement (CC BY 4.0);
                                               HiTZ TruthfulQA-multi English answers with their human truthfulness
                                               labels (Apache-2.0)
"""
from __future__ import annotations

import argparse
import csv
import json
import shutil
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[2]


def derive_country_facts(shared: Path) -> None:
    rows = json.loads((shared / "geo_lexicon" / "mledoze_countries.json").read_text(encoding="utf-8"))
    out = ROOT / "audit" / "geo" / "data" / "country_facts_mledoze.csv"
    with out.open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["alpha2", "alpha3", "demonym_m", "demonym_f", "region", "subregion", "independent"])
        for r in sorted(rows, key=lambda r: r["cca2"]):
            dem = r.get("demonyms", {}).get("eng", {})
            w.writerow([r["cca2"], r["cca3"], dem.get("m", ""), dem.get("f", ""), r.get("region", ""), r.get("subregion", ""),
                        bool(r.get("independent"))])
    shutil.copyfile(shared / "geo_lexicon" / "LICENSE_mledoze_ODbL.md", out.parent / "LICENSE_mledoze_ODbL.md")


def _bulk_latest(path: Path, code_col: str) -> pd.DataFrame:
    # World Bank bulk files carry a preamble of varying length (0–4 lines): find the header.
    lines = path.read_text(encoding="utf-8-sig").splitlines()
    header = next(i for i, line in enumerate(lines) if code_col in line)
    df = pd.read_csv(path, skiprows=header, encoding="utf-8-sig")
    years = [c for c in df.columns if str(c).isdigit()]
    long = df.melt(id_vars=[code_col], value_vars=years, var_name="year", value_name="value").dropna()
    long = long.rename(columns={code_col: "alpha3"})
    long["year"] = long["year"].astype(int)
    return long.sort_values("year").groupby("alpha3").tail(1)


def _long_latest(path: Path) -> pd.DataFrame:
    df = pd.read_csv(path).rename(columns={"Country Code": "alpha3", "Year": "year", "Value": "value"})
    return df.dropna(subset=["value"]).sort_values("year").groupby("alpha3").tail(1)[["alpha3", "year", "value"]]


def derive_indicators(shared: Path) -> None:
    wb = shared / "worldbank"
    meta = pd.read_csv(wb / "Metadata_Country_API_IT.NET.USER.ZS_DS2_en_csv_v2_1228.csv", encoding="utf-8-sig")
    countries = set(meta.loc[meta["Region"].notna(), "Country Code"])  # blank Region marks an aggregate
    parts = {
        "gdp_current_usd": _long_latest(wb / "gdp_current_usd_long__datasets-gdp.csv"),
        "population": _long_latest(wb / "population_long__datasets-population.csv"),
        "gdp_per_capita_usd": _bulk_latest(wb / "API_NY.GDP.PCAP.CD_DS2_en_csv_v2_6298251__preamble_stripped.csv", "Country Code"),
        "internet_users_pct": _bulk_latest(wb / "API_IT.NET.USER.ZS_DS2_en_csv_v2_1228.csv", "Country Code"),
        "tourism_arrivals": _bulk_latest(wb / "API_ST.INT.ARVL_DS2_en_csv_v2_868314.csv", "Country Code"),
    }
    frames = []
    for name, df in parts.items():
        df = df[df["alpha3"].isin(countries)].copy()
        df["indicator"] = name
        frames.append(df[["alpha3", "indicator", "year", "value"]])
    out = ROOT / "connectors" / "data" / "worldbank"
    out.mkdir(parents=True, exist_ok=True)
    pd.concat(frames).sort_values(["indicator", "alpha3"]).to_csv(out / "indicators.csv", index=False)


def copy_samples(shared: Path) -> None:
    out = ROOT / "connectors" / "samples"
    out.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(shared / "captions" / "coco2017_val_captions.csv", out / "coco2017_val_captions.csv")
    shutil.copyfile(shared / "captions" / "cc3m_Validation_GCC-1.1.0-Validation.tsv", out / "cc3m_val_captions.tsv")
    (out / "benchmarks").mkdir(exist_ok=True)
    shutil.copyfile(shared / "truthfulqa" / "TruthfulQA.csv", out / "benchmarks" / "TruthfulQA.csv")
    shutil.copyfile(shared / "drop" / "allennlp_fixture_drop.json", out / "benchmarks" / "drop_allennlp_fixture.json")
    # the multiple-choice samples of the model audits (landscape, contamination), unchanged
    shutil.copyfile(shared / "arc_challenge" / "arc_challenge_test.jsonl", out / "benchmarks" / "arc_challenge_test.jsonl")
    shutil.copyfile(shared / "commonsenseqa" / "dev_rand_split.jsonl", out / "benchmarks" / "commonsenseqa_dev.jsonl")
    shutil.copyfile(shared / "hellaswag" / "hellaswag_val_full.txt.bz2", out / "benchmarks" / "hellaswag_val.txt.bz2")
    redux = out / "benchmarks" / "mmlu_redux"
    redux.mkdir(exist_ok=True)
    for csv_file in sorted((shared / "mmlu_redux" / "subjects").glob("mmlu_*.csv")):
        shutil.copyfile(csv_file, redux / csv_file.name)
    shutil.copyfile(shared / "mmlu_redux" / "LICENSE_CC-BY-4.0.txt", out / "benchmarks" / "LICENSE_MMLU-Redux_CC-BY-4.0.txt")


def derive_examples(shared: Path) -> None:
    """The README's one-line examples of ``coreset build`` and ``traces``, on real data (csv only: no pandas needed).

    Coreset targets: one row per MMLU-Redux item of the HELM-14 predictions table; ``label`` its expert error label
    (``binary_error_type``), the scores the share of the top-k models (k = 3, 5, 7, 9, 10) that disagree with its
    ground truth (1 - ``gt_ratio_agreement_top_k``). Traces: the 300 human-labelled English answers of HiTZ
    TruthfulQA-multi, ``verdict`` their truthfulness (yes: correct), ``model`` from the id's suffix."""
    out = ROOT / "connectors" / "samples" / "examples"
    out.mkdir(parents=True, exist_ok=True)
    ks = (3, 5, 7, 9, 10)
    with (shared / "mmlu_redux" / "helm14_predictions_all_subjects.csv").open(newline="", encoding="utf-8") as fh, \
            (out / "mmlu_redux_targets.csv").open("w", newline="", encoding="utf-8") as dst:
        w = csv.writer(dst)
        w.writerow(["id", "label", *(f"disagree_top{k}" for k in ks)])
        for i, row in enumerate(csv.DictReader(fh)):
            w.writerow([i, int(float(row["binary_error_type"])),
                        *(round(1 - float(row[f"gt_ratio_agreement_top_{k}"]), 6) for k in ks)])
    with (shared / "truthfulqa_multi_hitz" / "human_review" / "evaluated" / "en.csv").open(newline="", encoding="utf-8") as fh, \
            (out / "truthfulqa_answers_en.csv").open("w", newline="", encoding="utf-8") as dst:
        w = csv.writer(dst)
        w.writerow(["id", "model", "verdict", "trace"])
        for row in csv.DictReader(fh):
            model = row["id"].split("__", 1)[1]
            w.writerow([row["id"], model, "correct" if row["truthfulness"].strip() == "yes" else "incorrect",
                        row["model_answer"].strip()])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--shared", type=Path, default=ROOT.parent / "shared" / "data")
    args = ap.parse_args()
    derive_country_facts(args.shared)
    derive_indicators(args.shared)
    copy_samples(args.shared)
    derive_examples(args.shared)


if __name__ == "__main__":
    main()
