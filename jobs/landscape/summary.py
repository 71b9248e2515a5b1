"""summary.json of a landscape run: every number the report shows, from small driver-side tables.

The inputs are the per-answer landscape rows of every model (a few thousand rows per benchmark
and model), the original items' text, and the optional reviewer labels, expert reference and
classifier verdicts; nothing row-sized beyond that reaches the driver.
"""
from __future__ import annotations

from typing import Any

import pandas as pd

from audit.landscape.flags import attach_review_labels, flag_candidates, wrong_counts
from audit.landscape.metrics import hnorm_correlations, model_averaged_points
from audit.landscape.statistics import INTERVALS, STATISTICS
from audit.landscape.summary import GROUP, RESULT_COLUMNS, summarize
from audit.landscape.validate import validate_wrong_answers
from jobs.common.cli.config import ConfigError
from jobs.common.runtime.summaries import clip_text, finite, headline, records
from jobs.landscape.config import LandscapeConfig

FINAL_POSITION = "final_position_label"  # one forward: the letters' distribution after the prompt
PROBABILITY_NOTE = {
    FINAL_POSITION: "p = softmax over the option letters' log-probabilities at the position after the prompt "
                    "(one forward pass per item); label mass = the share of the next-token probability on the letters",
    "letters": "p = softmax over lm-eval's log-likelihoods of the single-letter continuations (\" A\"..): the letter "
               "distribution at the position after the prompt, restricted to the labels; label mass = Σ exp(log-likelihood), "
               "the share of the next-token probability on the letters",
    "continuations": "p = softmax over lm-eval's per-option continuation log-likelihoods (each option scored as its own "
                     "sequence; raw, or per character with --lm-eval-normalization length): a different distribution "
                     "from the final-position letter probabilities, and no label mass",
    "continuations+letters": "per task: the letter distribution with its label mass where every continuation is an option "
                             "letter, else lm-eval's per-option continuation log-likelihoods (no label mass)",
}
POINT_DIGITS = 4
# Below one half, most of a model's next-token probability is on tokens other than the option letters:
# it would mostly not answer with a letter at all, so the letter distribution (Ptop1, Hnorm, accuracy)
# describes the minority of its behaviour. Typical causes: a base model not following the answer
# format, a template that does not end where the letter goes, a chat template missing or misapplied.
LOW_LABEL_MASS = 0.5


def as_results(scores: pd.DataFrame) -> pd.DataFrame:
    """Landscape rows (correct as bool/None) as ``summarize`` takes them (correct 1/0/NaN)."""
    out = scores.copy()
    out["correct"] = out["correct"].map({True: 1.0, False: 0.0}).astype(float)
    out["error"] = out["error"].where(out["error"].notna(), None)
    return out


def _table(results: pd.DataFrame, cfg: LandscapeConfig) -> pd.DataFrame:
    table = summarize(results[RESULT_COLUMNS], exact_limit=cfg.mpd_exact_limit, pairs=cfg.mpd_pairs, seed=cfg.seed)
    if "label_mass" in results:
        ok = results[results["error"].isna()]
        mass = ok.groupby(GROUP)["label_mass"].mean().rename("mean_label_mass").reset_index()
        table = table.merge(mass, on=GROUP, how="left")
    return table


def label_mass_warnings(table: pd.DataFrame) -> list[dict]:
    """One warning per benchmark and model whose mean label mass on the unperturbed prompts is below
    ``LOW_LABEL_MASS`` (no warning without label mass: lm-eval's continuation log-likelihoods have none)."""
    if "mean_label_mass" not in table:
        return []
    out = []
    for r in table[table["perturbation"] == "none"].to_dict("records"):
        mass = finite(r["mean_label_mass"])
        if mass is not None and mass < LOW_LABEL_MASS:
            out.append({"kind": "low_label_mass", "benchmark": r["benchmark"], "model": r["model"], "mean_label_mass": mass,
                        "threshold": LOW_LABEL_MASS,
                        "message": f"{r['model']} on {r['benchmark']}: mean label mass {mass:.3f} < {LOW_LABEL_MASS:g}: most of "
                                   "its next-token probability is not on the option letters, so it is mostly not answering "
                                   "the question in the format asked (check the template, the chat template and whether "
                                   "the model follows instructions); its Ptop1, Hnorm and accuracy describe a minority "
                                   "of its behaviour"})
    return out


def _points(results: pd.DataFrame) -> dict[str, Any]:
    """Unperturbed points per benchmark and model (the scatter), and the model-averaged ones."""
    out: dict[str, Any] = {}
    base = results[(results["perturbation"] == "none") & results["error"].isna()]
    for bench, group in base.groupby("benchmark", sort=True):
        per_model = {m: g[["ptop1", "hnorm"]].round(POINT_DIGITS).to_numpy().tolist() for m, g in group.groupby("model", sort=True)}
        averaged = model_averaged_points(group)
        out[bench] = {"models": per_model,
                      "model_averaged": averaged[["ptop1", "hnorm"]].round(POINT_DIGITS).to_numpy().tolist()}
    return out


def _correlations(results: pd.DataFrame) -> list[dict]:
    rows = []
    base = results[results["perturbation"] == "none"]
    for bench, group in base.groupby("benchmark", sort=True):
        for row in records(hnorm_correlations(group)):
            rows.append({"benchmark": bench, **row})
    return rows


def flag_source(results: pd.DataFrame) -> str:
    """Flags come from noise injection when the run has it, else from the unperturbed answers."""
    return "noise" if (results["perturbation"] == "noise").any() else "none"


def _labels_for(labels: pd.DataFrame | None, bench: str, several: bool) -> pd.DataFrame | None:
    if labels is None:
        return None
    if "benchmark" in labels.columns:
        return labels[labels["benchmark"] == bench].drop(columns="benchmark")
    if several:
        raise ConfigError("--review-labels: the run has several benchmarks; add a benchmark column to the labels")
    return labels


def candidates(results: pd.DataFrame, items: pd.DataFrame, cfg: LandscapeConfig,
               labels: pd.DataFrame | None) -> tuple[pd.DataFrame, dict[str, pd.DataFrame]]:
    """Review candidates with their text and reviewer fields, and per benchmark the correctness
    frame the flags came from (``source_id, model, correct``) for validation."""
    source = flag_source(results)
    rows = results[(results["perturbation"] == source)]
    benches = sorted(rows["benchmark"].unique())
    if labels is not None and "benchmark" in labels.columns:
        unknown = sorted(set(labels["benchmark"]) - set(benches))
        if unknown:
            raise ConfigError(f"--review-labels: benchmark(s) {unknown} are not in this run ({benches})")
    frames, correct_by_bench = [], {}
    for bench in benches:
        correct = rows[rows["benchmark"] == bench][["source_id", "model", "correct"]]
        correct_by_bench[bench] = correct
        counts = wrong_counts(correct)
        m = cfg.min_wrong or int(correct["model"].nunique())
        flagged = attach_review_labels(flag_candidates(counts, m), _labels_for(labels, bench, len(benches) > 1))
        flagged.insert(0, "benchmark", bench)
        flagged["min_wrong"] = m
        frames.append(flagged)
    out = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=["benchmark", "source_id", "flagged"])
    text = items[["benchmark", "source_id", "question", "options", "gold"]]
    out = out.merge(text, on=["benchmark", "source_id"], how="left")
    return out, correct_by_bench


def validation(correct_by_bench: dict[str, pd.DataFrame], items: pd.DataFrame, reference: pd.DataFrame | None,
               cfg: LandscapeConfig) -> list[dict]:
    """Per benchmark and threshold m: precision, recall, enrichment, hypergeometric p (matched items only)."""
    if reference is None:
        return []
    rows = []
    for bench, correct in correct_by_bench.items():
        found = validate_wrong_answers(correct, items[items["benchmark"] == bench], reference)
        matched = found.matches["match"].value_counts().to_dict()
        for row in records(found.table):
            rows.append({"benchmark": bench, **row, "chosen": row["min_wrong"] == (cfg.min_wrong or correct["model"].nunique()),
                         "matches": {k: int(v) for k, v in matched.items()}})
    return rows


def reference_matches(checked: list[dict]) -> dict[str, dict[str, int]]:
    """Per benchmark: items matched to the reference (by question, or question and options) out of its items."""
    out = {}
    for row in checked:
        counts = row["matches"]
        out[row["benchmark"]] = {"matched": int(counts.get("question", 0) + counts.get("question+options", 0)),
                                 "items": int(sum(counts.values()))}
    return out


def reference_warnings(matches: dict[str, dict[str, int]]) -> list[dict]:
    """A warning per benchmark whose items the reference matches under half of: its validation figures then
    speak for a minority of the items (often items taken from the prompt, or another benchmark's reference)."""
    out = []
    for bench, m in sorted(matches.items()):
        if m["items"] and m["matched"] < m["items"] / 2:
            out.append({"kind": "low_reference_match", "benchmark": bench, **m,
                        "message": f"{bench}: the reference matches {m['matched']:,} of its {m['items']:,} items (under "
                                   "half): the validation below covers only those; check that the reference is this "
                                   "benchmark's and that the items' questions are the documents'"})
    return out


def _shown(value: Any) -> Any:
    """A summary value: text clipped to ``MAX_TEXT_CHARS`` (the full text stays in data/), numbers made finite."""
    if isinstance(value, list):
        return [clip_text(v) if isinstance(v, str) else v for v in value]
    return clip_text(value) if isinstance(value, str) else finite(value)


def _flag_rows(flags: pd.DataFrame) -> list[dict]:
    shown = flags[flags["flagged"]].copy()
    shown["options"] = shown["options"].map(lambda o: list(o) if o is not None and not isinstance(o, float) else [])
    return [{k: _shown(v) for k, v in row.items()} for row in shown.to_dict("records")]


def _headline(table: pd.DataFrame, checked: list[dict]) -> list[dict]:
    """Tidy rows a re-audit tracks: per benchmark, model and perturbation every registered statistic marked
    ``headline`` (``audit.landscape.statistics``: accuracy and MPD), an interval with its bounds; per
    benchmark the chosen validation threshold's precision, recall and enrichment."""
    rows = []
    tracked = [s for s in STATISTICS.values() if s.headline]
    for r in table.to_dict("records"):
        where = f"{r['benchmark']}/{r['model']}"
        for stat in tracked:
            ci = (r.get(f"{stat.name}_ci_low"), r.get(f"{stat.name}_ci_high")) if stat.name in INTERVALS else None
            rows.append(headline(where, f"{stat.name}@{r['perturbation']}", r[stat.name], ci))
    for v in (c for c in checked if c.get("chosen")):
        rows += [headline(v["benchmark"], f"flag_{k}", v.get(k)) for k in ("precision", "recall", "enrichment") if k in v]
    return rows


def build_summary(run_id: str, cfg: LandscapeConfig, results: pd.DataFrame, flags: pd.DataFrame,
                  correct_by_bench: dict[str, pd.DataFrame], items: pd.DataFrame, probability: str,
                  reference: pd.DataFrame | None, classifier: pd.DataFrame | None, extra: dict[str, Any]) -> dict[str, Any]:
    """``flags`` and ``correct_by_bench`` come from :func:`candidates` (with the classifier's
    verdicts merged in when it ran)."""
    table = _table(results, cfg)
    checked = validation(correct_by_bench, items, reference, cfg)
    matches = reference_matches(checked)
    none = table[table["perturbation"] == "none"]
    overview = {
        "probability": probability,
        "benchmarks": sorted(table["benchmark"].unique().tolist()), "models": sorted(table["model"].unique().tolist()),
        "items": {b: int(n) for b, n in none.groupby("benchmark")["n_items"].max().items()},
        "accuracy": {b: {m: finite(a) for m, a in zip(g["model"], g["accuracy"])} for b, g in none.groupby("benchmark")},
        "mpd": {b: {m: finite(v) for m, v in zip(g["model"], g["mpd"])} for b, g in none.groupby("benchmark")},
        "flags_from": flag_source(results),
        "review_candidates": {b: int(g["flagged"].sum()) for b, g in flags.groupby("benchmark")},
        "validation": [r for r in checked if r["chosen"]], "reference_matches": matches,
        "item_rules": ({b: {r: int(n) for r, n in g["item_rule"].value_counts().items()} for b, g in items.groupby("benchmark")}
                       if "item_rule" in items else {}),
    }
    structure = None
    if classifier is not None:
        structure = {"by_label": classifier.groupby("structure_label").size().astype(int).to_dict(),
                     "by_status": classifier.groupby("structure_status").size().astype(int).to_dict(), "n": len(classifier)}
    return {
        "job": "landscape", "run_id": run_id, "probability": probability, "probability_note": PROBABILITY_NOTE[probability],
        "overview": overview, "headline": _headline(table, checked),
        "statistics": [s.describe() for s in STATISTICS.values()], "table": records(table), "points": _points(results),
        "hnorm_correlations": _correlations(results),
        "flags": {"from": flag_source(results), "min_wrong": cfg.min_wrong, "candidates": _flag_rows(flags),
                  "threshold": {b: {"min_wrong": int(g["min_wrong"].iloc[0]), "models": int(g["n_models"].max())}
                                for b, g in flags.groupby("benchmark")} if len(flags) else {},
                  "n_candidates": int(flags["flagged"].sum()) if len(flags) else 0},
        "validation": checked, "structure": structure, "warnings": label_mass_warnings(table) + reference_warnings(matches), **extra,
    }

