"""Benchmark rows -> items -> perturbation -> prompts -> hf backend (Arrow) -> points, table, flags."""
from __future__ import annotations

import pandas as pd
import pyarrow as pa
import pytest

from audit.landscape.flags import flag_candidates, wrong_counts
from audit.landscape.perturb import perturb
from audit.landscape.prompts import load_template, prompt_rows
from audit.landscape.summary import result_rows, summarize
from audit.mcqa.items import mcqa_items
from connectors.benchmarks.schema import ITEM_SCHEMA
from connectors.models.batches import ChoiceScorer
from tests.servers.tiny_lm import shared_tiny_lm

pytestmark = pytest.mark.models  # builds transformers models (torch)

WORDS = ["red", "blue", "green", "water", "fire", "earth", "king", "queen"]


def _benchmark() -> pa.Table:
    rows = []
    for i in range(12):
        options = [WORDS[(i + j) % len(WORDS)] for j in range(4)]
        rows.append({"id": f"q{i}", "benchmark": "toy", "question": f"Which {WORDS[i % 8]} is the {WORDS[(i * 3) % 8]}?",
                     "passage": None, "instructions": None, "options": options, "gold": [options[i % 4]]})
    rows.append({"id": "bad", "benchmark": "toy", "question": "Broken?", "passage": None, "instructions": None,
                 "options": ["x", "x", "y", "z"], "gold": ["x"]})
    return pa.Table.from_pylist(rows, schema=ITEM_SCHEMA)


def test_landscape_end_to_end_on_cpu_and_a_cached_rerun(tmp_path):
    items, rejected = mcqa_items(_benchmark().to_pylist())
    assert [r.describe() for r in rejected] == ["duplicate_options: options A and B both read 'x'"]
    template = load_template()
    results = []
    for seed_run in range(2):
        scorer = ChoiceScorer(f"hf:{shared_tiny_lm()}", {"batch_size": 4}, cache_root=str(tmp_path / "cache"))  # one per actor
        results = []
        for name in ("none", "noise", "circular"):
            copies, _ = perturb(items, name, seed=42)
            batch = pa.Table.from_pylist(prompt_rows(copies, template))
            scored = scorer(batch)
            assert scored.num_rows == len(copies) and scored.column("error").null_count == len(copies)
            results.append(result_rows(scored.to_pandas(), "tiny"))
        if seed_run == 1:
            assert scorer.backend.counters["forward_passes"] == 0 and scorer.backend.counters["hits"] == 12 + 12 + 48
    res = pd.concat(results)
    table = summarize(res)
    assert table.perturbation.tolist() == ["circular", "noise", "none"]
    assert (table.n_items == 12).all() and table.n_rows.tolist() == [48, 12, 12]
    assert table.mpd.between(0, 2 ** 0.5).all() and table.mean_ptop1.between(0.25, 1).all()
    noise = res[res.perturbation == "noise"][["source_id", "model", "correct"]]
    flags = flag_candidates(wrong_counts(noise), min_wrong=1)
    assert flags.flagged.sum() == (noise.correct == 0).sum()
