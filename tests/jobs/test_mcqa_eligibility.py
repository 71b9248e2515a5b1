"""The same benchmark row is askable in the landscape audit exactly when the contamination audit can
draw it: both read it through ``audit.mcqa.items.from_row`` (checked on every shipped MCQA sample)."""
from __future__ import annotations

from collections import Counter

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from audit.mcqa.sample import draw_sample
from connectors.benchmarks.read import iter_benchmark_batches
from connectors.benchmarks.schema import ITEM_SCHEMA
from connectors.io.read_report import ReadReport
from jobs.common.inputs.benchmarks import BenchmarkConfig, shipped_benchmark
from jobs.landscape.config import LandscapeConfig
from jobs.landscape.inputs import load_benchmark

SHIPPED = [("arc", "arc", "arc_challenge_test.jsonl"), ("csqa", "commonsenseqa", "commonsenseqa_dev.jsonl"),
           ("hellaswag", "hellaswag", "hellaswag_val.txt.bz2"), ("mmlu_redux", "mmlu", "mmlu_redux")]


def both(spec) -> tuple[tuple[int, Counter], tuple[int, Counter]]:
    """(askable items, rejections by reason) as each audit sees one benchmark."""
    landscape = load_benchmark(spec, LandscapeConfig(model=["hf:unused"], benchmark=[]))
    by_reason = Counter(r["reason"].split(":")[0] for r in landscape.rejected if r["stage"] == "item")
    report = ReadReport(source=spec.input)  # rows that cannot be read are skipped and counted, as landscape reads
    drawn = draw_sample(iter_benchmark_batches(spec, on_bad_row="skip", report=report), n=1, seed=2026)
    return (landscape.scorable, by_reason), (drawn.population - sum(drawn.skipped.values()), Counter(drawn.skipped))


@pytest.mark.parametrize(("name", "preset", "file"), SHIPPED, ids=[s[0] for s in SHIPPED])
def test_shipped_samples_have_one_eligibility(name, preset, file):
    spec = BenchmarkConfig(name=name, preset=preset, paths=[shipped_benchmark(file)]).to_spec()
    landscape, contamination = both(spec)
    assert landscape == contamination and landscape[0] > 0


def test_every_reason_is_counted_alike(tmp_path):
    rows = [{"id": f"r{i}", "question": "q?", "passage": None, "instructions": None, "options": o, "gold": g}
            for i, (o, g) in enumerate([(["a", "b"], ["a"]), (["a"], ["a"]), (["a", "a "], ["a"]), (["a", ""], ["a"]),
                                        (["a", "b"], []), (["a", "b"], ["a", "b"]), (["a", "b"], ["z"]),
                                        (["rr", "Rr"], ["Rr"])])]
    path = tmp_path / "items.parquet"
    pq.write_table(pa.Table.from_pylist([{**r, "benchmark": "toy"} for r in rows], schema=ITEM_SCHEMA), path)
    spec = BenchmarkConfig(name="toy", question="question", id="id", options="options", gold="gold", paths=[str(path)]).to_spec()
    landscape, contamination = both(spec)
    assert landscape == contamination == (2, Counter({"too_few_options": 1, "duplicate_options": 1, "empty_option": 1,
                                                      "no_gold": 1, "multiple_gold": 1, "gold_not_in_options": 1}))
