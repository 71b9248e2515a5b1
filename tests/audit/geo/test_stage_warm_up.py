"""A worker pays its one-time costs at set-up: ``GeoStage.warm_up`` runs both compiled passes (the
ccTLD's and the normalizer's), and a warmed stage decides exactly as a fresh one."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pyarrow as pa

from audit.geo.stage import GeoStage
from tests.geo_compiled import compiled, geo_stage

ROOT = Path(__file__).resolve().parents[3]


def test_warm_up_compiles_both_passes_in_a_fresh_process():
    code = ("from audit.geo.stage import GeoStage; from connectors.geo.lexicon import load_lexicon\n"
            "GeoStage(load_lexicon('paper').entries).warm_up()\n"
            "from audit.geo.tld_kernel import tld_pass; from audit.geo.normalize_kernel import normalize_pass\n"
            "print(len(tld_pass.signatures), len(normalize_pass.signatures))")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    tld, norm = map(int, done.stdout.split())
    assert tld >= 1 and norm >= 1


def test_a_warmed_stage_decides_as_a_fresh_one(real_captions):
    n = 2000
    texts = pa.array(real_captions[:n], pa.string())
    urls = pa.array([f"http://img.example.{t}/{i}" for i, t in zip(range(n), ["jp", "com", "de", "io"] * n)], pa.string())
    none = pa.nulls(n, pa.string())
    items = pa.RecordBatch.from_arrays([pa.array([str(i) for i in range(n)]), texts, none, urls, none, none],
                                       names=["record_id", "text", "context", "url", "group", "skip_reason"])
    warm = geo_stage("gazetteer", with_records=True)  # the process's shared resolver, warmed as a worker warms it
    warm.warm_up()
    table_w, partial_w = warm.process(items)
    lexicon, patterns = compiled("gazetteer")  # a resolver of its own, built and used cold
    table_f, partial_f = GeoStage(lexicon.entries, with_records=True, patterns=patterns).process(items)
    assert table_w.equals(table_f) and partial_w.to_json() == partial_f.to_json()
    assert partial_w.rows_in == n
