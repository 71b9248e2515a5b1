"""One small run of every job, each with two inputs, in one run root: what the data-loading tests and
the browser tests read, the way a user would.

Every text a report shows from data (captions' group values, benchmark items, answers, card text,
traces, names) carries ``HOSTILE``: markup that must render as text, never run or load.
"""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pandas as pd

from jobs.common.cli.config import RunOptions
from jobs.common.inputs.benchmarks import BenchmarkConfig
from tests.builders import write_lm_eval_runs
from tests.jobs.coreset_design import RUBRIC

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
SCRIPT = "<script>document.title='pwned'</script>"
IMG = "<img src=x onerror=\"document.title='pwned'\">"
HOSTILE = f"{SCRIPT} {IMG}"
SYSTEM_B = f"model_b {HOSTILE}"  # an answer set's name is a partition value too: percent-encoded in the folder name
JOBS = ("geo", "conventions", "scorers", "docs", "coreset-build", "coreset-estimate", "coreset-study", "traces", "landscape",
        "contamination")


def _geo(root: Path, out: str) -> str:
    from jobs.geo.config import CorpusConfig, GeoConfig
    from jobs.geo.run import run

    src = root / "geo"
    (src / "b").mkdir(parents=True)
    rows = ["Street food in Bangkok, Thailand", "Tokyo at night", "a dog on a sofa", "Lions in Kenya", "Paris, France in spring",
            "Trip to Japan", "Sunset over Sydney", "A market in Mexico City", "snow in Canada", "Berlin wall"] * 6
    pd.DataFrame({"caption": rows, "url": ["http://a.jp/x", "http://b.com/y", "http://c.co.uk/z"] * 20,
                  "lang": [HOSTILE, "en", "fr"] * 20}).to_csv(src / "a.csv", index=False)
    with open(src / "b" / "part-0.jsonl", "w") as fh:
        for i, r in enumerate(reversed(rows)):
            fh.write(json.dumps({"caption": r, "url": "http://x.de/p", "lang": ["de", "en"][i % 2]}) + "\n")
    corpora = [CorpusConfig(name="csv_corpus", paths=[str(src / "a.csv")], format="csv", text="caption", url="url"),
               CorpusConfig(name="jsonl corpus", paths=[str(src / "b")], format="jsonl", text="caption", url="url")]
    from connectors.geo.calibration import shipped_path

    cfg = GeoConfig(corpus=corpora, group_column="lang", bootstrap=200, write_records=True, records_text=True,
                    calibration=str(shipped_path()))
    return run(cfg, RunOptions(out=out, executor="local", run_id="geo"))


def _conventions(root: Path, out: str) -> str:
    from jobs.conventions.config import ConventionsConfig
    from jobs.conventions.run import run

    extra = {"id": f"hostile {HOSTILE}", "question": f"What color is a 10 feet sign? {HOSTILE}",
             "options": [{"label": "A", "text": "red"}, {"label": "B", "text": "grey"}], "answer": "A"}
    (root / "arc_extra.jsonl").write_text(json.dumps(extra) + "\n")
    tqa = BenchmarkConfig(name="truthfulqa", preset="truthfulqa", paths=[str(FIXTURES / "benchmarks" / "truthfulqa_slice.csv")])
    arc = BenchmarkConfig(name="arc", preset="arc", paths=[str(FIXTURES / "benchmarks" / "arc_challenge_slice.jsonl"),
                                                          str(root / "arc_extra.jsonl")])
    return run(ConventionsConfig(benchmark=[tqa, arc], bootstrap=500), RunOptions(out=out, executor="local", run_id="conventions"))


def _scorers(root: Path, out: str) -> str:
    from jobs.scorers.config import AnswersConfig, ScorersConfig
    from jobs.scorers.run import run

    tqa = BenchmarkConfig(name="truthfulqa", preset="truthfulqa", paths=[str(FIXTURES / "benchmarks" / "truthfulqa_slice.csv")])
    gold = pd.read_csv(FIXTURES / "benchmarks" / "truthfulqa_slice.csv")
    answers = pd.DataFrame({"question_id": [f"truthfulqa_slice:{i}" for i in range(len(gold))],
                            "answer": [f"{a} {HOSTILE}" if i == 0 else a for i, a in enumerate(gold["Best Answer"])]})
    answers.to_csv(root / "model_a.csv", index=False)
    cfg = ScorersConfig(benchmark=[tqa], answers=[AnswersConfig(name="model_a", path=str(root / "model_a.csv")),
                                                 AnswersConfig(name=SYSTEM_B, path=str(root / "model_a.csv"))], bootstrap=500)
    return run(cfg, RunOptions(out=out, executor="local", run_id="scorers"))


def _docs(root: Path, out: str, run_id: str) -> str:
    from audit.docs.criteria import CRITERIA
    from jobs.docs.config import DocsConfig
    from jobs.docs.run import run

    cards = root / "cards"
    (cards / "hostile").mkdir(parents=True)
    for name in ("hf_card_detailed.md", "croissant_rai.json"):
        shutil.copy(FIXTURES / "docs" / "cards" / name, cards / name)
    (cards / "hostile" / "README.md").write_text("---\npretty_name: Hostile\n---\n# Hostile\n\n## Annotations\n\n"
                                                 f"Annotations were made by 3 annotators {HOSTILE} paid per hour.\n")
    header = "resource,annotator," + ",".join(CRITERIA) + ",notes\n"
    (root / "a.csv").write_text(header + "hf_card_detailed,A,2,2,2,2,2,2,\ncroissant_rai,A,1,1,2,2,0,2,\nhostile,A,0,0,1,0,0,0,\n")
    (root / "b.csv").write_text(header + "hf_card_detailed,B,2,1,2,2,2,2,\ncroissant_rai,B,1,1,2,1,0,2,\nhostile,B,0,0,1,0,0,1,\n")
    cfg = DocsConfig(cards=[str(cards)], reviews=[str(root / "a.csv"), str(root / "b.csv")])
    return run(cfg, RunOptions(out=out, executor="local", run_id=run_id))


def _targets(n: int = 20_000, seed: int = 0) -> pd.DataFrame:
    """Two scorer families that disagree (b is a's score plus noise), so samplers' errors differ."""
    rng = np.random.default_rng(seed)
    y = rng.random(n) < 0.01
    p = np.where(y, rng.beta(5, 2, n), rng.beta(1, 12, n))
    noisy = [np.clip(p + rng.normal(0, 0.15, n), 0, 1) for _ in range(2)]
    return pd.DataFrame({"id": np.arange(n), "label": y.astype(int), "p_a": p, "p_b": np.clip(p + rng.normal(0, 0.02, n), 0, 1),
                         "b_0": noisy[0], "b_1": noisy[1], "typology": rng.choice(["fan-in", "cycle", HOSTILE], n)})


def _coreset(root: Path, out: str) -> tuple[str, str, str]:
    from jobs.common.inputs.predictors import PredictorConfig
    from jobs.coreset.build import run as build
    from jobs.coreset.config import BuildConfig, EstimateConfig, StudyJobConfig
    from jobs.coreset.estimate import run as estimate
    from jobs.coreset.study import run as study

    table = _targets()
    table.iloc[:10_000].to_parquet(root / "t0.parquet")
    table.iloc[10_000:].to_parquet(root / "t1.parquet")
    built = build(BuildConfig(input=[str(root / "t0.parquet"), str(root / "t1.parquet")], score_columns=["p_a", "p_b"],
                              group_column="typology", tau=0.5, seed=3, dataset="toy"), RunOptions(out=out, run_id="build"))
    design = pd.read_parquet(Path(built) / "data" / "design")
    rng = np.random.default_rng(1)
    design[["id"]].assign(prediction=(design["score"] >= 0.5).astype(int)).to_csv(root / "scorer.csv", index=False)
    design[["id"]].assign(prediction=(rng.random(len(design)) < 0.3).astype(int)).to_csv(root / "noisy.csv", index=False)
    est = estimate(EstimateConfig(design=built, predictions=[PredictorConfig(name="scorer", paths=[str(root / "scorer.csv")]),
                                                             PredictorConfig(name=f"noisy {HOSTILE}",
                                                                             paths=[str(root / "noisy.csv")])]),
                   RunOptions(out=out, run_id="estimate"))
    st = study(StudyJobConfig(input=[str(root / "t0.parquet"), str(root / "t1.parquet")], dataset="toy", draws=40,
                              direction=["a->b:p_a,p_b:b_0,b_1", "b->a:b_0,b_1:p_a,p_b"], tau=0.5, prediction_threshold=0.5),
               RunOptions(out=out, run_id="study"))
    return built, est, st


def _traces(root: Path, out: str) -> str:
    from jobs.traces.config import TracesConfig
    from jobs.traces.run import run

    (root / "rubric.yaml").write_text(RUBRIC)
    pd.DataFrame({"id": [1, 2, 3, 4, 5, 6], "model": ["m1"] * 3 + [f"m2 {HOSTILE}"] * 3,
                  "verdict": ["correct", "incorrect", "correct", "incorrect", "correct", "incorrect"],
                  "trace": ["Saw $9,000 moved in a cycle", f"Looks fine {HOSTILE}", "Fan-in per RULE 7", "$ 5 to a cycle",
                            "nothing", "RULE 3 applies"]}).to_csv(root / "traces.csv", index=False)
    cfg = TracesConfig(rubric=str(root / "rubric.yaml"), traces=[str(root / "traces.csv")], verdict_column="verdict", per_outcome=2)
    return run(cfg, RunOptions(out=out, run_id="traces"))


def _landscape(root: Path, out: str) -> str:
    """Two models' lm-eval --log_samples output: a landscape with no model run (one model's name is hostile)."""
    from jobs.landscape.config import LandscapeConfig
    from jobs.landscape.run import run

    folder = write_lm_eval_runs(root / "lm-eval")
    results = next((folder / "org__model-b").glob("results_*.json"))
    data = json.loads(results.read_text())
    data["model_name"] = f"org/model-b {HOSTILE}"
    data["config"]["model_args"] = f"pretrained=org/model-b {HOSTILE}"
    results.write_text(json.dumps(data))
    return run(LandscapeConfig(from_lm_eval=str(folder)), RunOptions(out=out, run_id="landscape"))


def _contamination(root: Path, out: str) -> str:
    """The 12-model reference outcome table, re-analysed with no model call (a model's name is hostile)."""
    from jobs.contamination.config import ContaminationConfig
    from jobs.contamination.run import run
    from tests.fixtures.contamination.reference_study import reference_outcomes

    table = reference_outcomes()
    table["model"] = table["model"].replace({table["model"].iloc[0]: f"{table['model'].iloc[0]} {HOSTILE}"})
    table.to_parquet(root / "outcomes.parquet")
    return run(ContaminationConfig(outcomes=[str(root / "outcomes.parquet")], bootstrap=200),
               RunOptions(out=out, run_id="contamination"))


def build_sample_runs(root: Path) -> dict[str, Path]:
    """Every job's run under ``root / "runs"``; returns job -> run directory."""
    inputs = root / "inputs"
    inputs.mkdir(parents=True, exist_ok=True)
    out = str(root / "runs")
    built, est, st = _coreset(inputs, out)
    _docs(inputs / "earlier", out, "docs-earlier")  # a second run of one job: the index draws its trends
    runs = {"geo": _geo(inputs, out), "conventions": _conventions(inputs, out), "scorers": _scorers(inputs, out),
            "docs": _docs(inputs, out, "docs"), "coreset-build": built, "coreset-estimate": est, "coreset-study": st,
            "traces": _traces(inputs, out), "landscape": _landscape(inputs, out), "contamination": _contamination(inputs, out)}
    return {job: Path(path) for job, path in runs.items()}
