"""MMLU-Redux: flag items that at least k of the 14 HELM models miss; precision, recall, enrichment.

    python -m bench.bench_mmlu_redux_flags [--data-dir ../shared/data]

The 14 models' real answers (``mmlu_redux/helm14_predictions_all_subjects.csv``) go through the
same function as the flags of ``benchaudit landscape --reference``
(``audit.landscape.validate.validate_wrong_answers``): per-model correctness -> ``wrong_counts``
-> ``flag_candidates``, matched to the expert labels of the 57 subject files by normalised exact
text (``match_reference``), then precision, recall, enrichment over random inspection and the
exact hypergeometric p-value per k. Then the ranking that ``--from-lm-eval`` writes to data/candidates/
(``audit.landscape.label_errors``: P(gold wrong) under the one-coin annotator model) against the plain count
of models that miss the item: average precision and precision@k over the same expert labels.
"""
from __future__ import annotations

import argparse
import time
from pathlib import Path

import pandas as pd

from audit.landscape.flags import flag_candidates
from audit.landscape.label_errors import ranking_report, score_answers
from audit.landscape.validate import validate_wrong_answers
from audit.mcqa.items import LETTERS
from connectors.landscape.inputs import read_helm_predictions, read_redux_subjects


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data-dir", default=str(Path(__file__).resolve().parents[2] / "shared" / "data"))
    args = ap.parse_args()
    root = Path(args.data_dir) / "mmlu_redux"
    if not root.exists():
        raise SystemExit(f"{root} not found: this bench needs MMLU-Redux (see ../shared/data/MANIFEST.md)")
    t = time.perf_counter()
    helm = read_helm_predictions(str(root / "helm14_predictions_all_subjects.csv"))
    reference = read_redux_subjects(str(root / "subjects"))
    found = validate_wrong_answers(helm.answers, helm.items, reference)
    counts, matches, table = found.counts, found.matches, found.table
    dt = time.perf_counter() - t
    models = helm.answers.model.nunique()
    print(f"{len(helm.items):,} questions, {models} models, answers not a letter of the item: {sum(helm.unanswered.values())}")
    print("matching to the subject files:", matches.match.value_counts().to_dict())
    print(f"expert-flagged among matched: {int(table.n_expert_bad[0])} of {int(table.n_matched[0])}")
    pd.set_option("display.width", 160)
    shown = table.assign(precision=table.precision.round(3), recall=table.recall.round(3), base_rate=table.base_rate.round(4),
                         enrichment=table.enrichment.round(2), p_value=table.p_value.map(lambda p: f"{p:.2e}"))
    print(shown.to_string(index=False))
    flagged = flag_candidates(counts, 10).merge(helm.items[["source_id", "error_type"]], on="source_id")
    by_type = flagged.groupby("error_type").agg(items=("flagged", "size"), flagged=("flagged", "sum"))
    by_type["recall"] = (by_type.flagged / by_type["items"]).round(3)
    print("\nrecall by expert error type at k = 10:")
    print(by_type.to_string())
    print(f"\n{dt:.2f} s end to end (read, match, validate 14 thresholds)")
    ranking(helm, matches)


def ranking(helm, matches: pd.DataFrame) -> None:
    """AP and precision@k of the label-error score and of the count of models missing, on matched items."""
    t = time.perf_counter()
    answers = helm.answers.assign(pred=[LETTERS.index(a) if len(a) == 1 and a in LETTERS else -1
                                        for a in helm.answers["answer"]])
    items = helm.items.assign(k=helm.items["options"].map(len))[["source_id", "gold", "k"]]
    scored = score_answers(answers, items)
    matched = matches[matches["expert_bad"].notna()][["source_id", "expert_bad"]]
    table = scored.table.merge(matched, on="source_id")
    labels = table["expert_bad"].astype(bool).to_numpy()
    print(f"\nlabel-error ranking over {len(table):,} matched items ({int(labels.sum())} expert-flagged; EM estimate of "
          f"right gold labels {scored.gold_accuracy:.3f}; {time.perf_counter() - t:.2f} s)")
    print(f"{'ranking':<34}{'AP':>7}" + "".join(f"{'P@' + str(k):>8}" for k in (50, 100, 200, 500)))
    for name, column in (("P(gold wrong), one-coin model", "score"), ("models that miss the item", "n_wrong")):
        report = ranking_report(table[column].to_numpy(dtype=float), labels)
        print(f"{name:<34}{report['average_precision']:>7.3f}" + "".join(f"{r['precision']:>8.3f}" for r in report["at_k"]))
    flagged = table[table["flagged"]]
    print(f"flagged (P(gold wrong) > 1/2): {len(flagged)}, of which expert-flagged {int(flagged['expert_bad'].sum())} "
          f"({flagged['expert_bad'].mean():.3f})")


if __name__ == "__main__":
    main()
