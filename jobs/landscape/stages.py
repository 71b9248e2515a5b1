"""The two CPU stages around the model: items -> prompt rows, and scored rows -> landscape rows.

Both are plain functions of one Arrow batch (``map_batches(fn, batch_format="pyarrow")``), so
Ray runs them as tasks next to the model's actor pool and a test calls them directly.
"""
from __future__ import annotations

from typing import Any

import pandas as pd
import pyarrow as pa

from audit.landscape.perturb import perturb
from audit.landscape.prompts import McqaTemplate, prompt_rows
from audit.landscape.summary import result_rows
from connectors.models.batches import REPORT_COLUMN
from jobs.landscape.inputs import item_from_row

PROMPT_TABLE = pa.schema([
    ("id", pa.string()), ("source_id", pa.string()), ("benchmark", pa.string()), ("perturbation", pa.string()),
    ("variant", pa.int64()), ("k", pa.int64()), ("gold", pa.int64()), ("labels", pa.list_(pa.string())),
    ("system", pa.string()), ("user", pa.string()), ("answer_prefix", pa.string()), ("note", pa.string()),
    ("rejected", pa.string()),
])
SCORE_TABLE = pa.schema([
    ("model", pa.string()), ("benchmark", pa.string()), ("perturbation", pa.string()), ("id", pa.string()),
    ("source_id", pa.string()), ("variant", pa.int64()), ("k", pa.int64()), ("gold", pa.int64()),
    ("labels", pa.list_(pa.string())), ("option_logprobs", pa.list_(pa.float64())), ("label_mass", pa.float64()),
    ("pred", pa.int64()), ("pred_label", pa.string()), ("correct", pa.bool_()), ("ptop1", pa.float64()),
    ("hnorm", pa.float64()), ("error", pa.string()), ("error_code", pa.string()), ("error_transient", pa.bool_()),
    ("cached", pa.bool_()), (REPORT_COLUMN, pa.string()),
])


def prompt_batch(batch: pa.Table, template: McqaTemplate, perturbations: list[str], seed: int,
                 params: dict[str, dict[str, Any]]) -> pa.Table:
    """Every perturbed copy of every item as a prompt row; an item a perturbation cannot take
    becomes a row with ``rejected`` set (and no prompt), so nothing leaves the stage unseen."""
    items = [item_from_row(row) for row in batch.to_pylist()]
    rows: list[dict[str, Any]] = []
    for name in perturbations:
        copies, rejected = perturb(items, name, seed, **params.get(name, {}))
        rows += [{**row, "rejected": None} for row in prompt_rows(copies, template)]
        rows += [{"id": r.id, "source_id": r.id, "benchmark": r.benchmark, "perturbation": name, "rejected": r.detail}
                 for r in rejected]
    return pa.Table.from_pylist(rows, schema=PROMPT_TABLE)


def landscape_batch(batch: pa.Table, model: str) -> pa.Table:
    """Scored prompt rows of one model as landscape rows: point, prediction, correctness, error (with its
    reason code and transient flag);
    the prompt text is dropped (it is in prompts.parquet once, not once per model)."""
    table = batch if isinstance(batch, pa.Table) else pa.Table.from_batches([batch])
    cols = ("benchmark", "perturbation", "id", "source_id", "variant", "k", "gold", "option_logprobs", "error")
    res = result_rows(pd.DataFrame({c: table.column(c).to_pylist() for c in cols}), model)
    ok = res["error"].isna().to_numpy()
    pred = [int(p) if good else None for p, good in zip(res["pred"], ok)]
    out: dict[str, Any] = {
        "model": [model] * table.num_rows,
        "pred": pred, "pred_label": [None if p is None else lab[p] for p, lab in zip(pred, table.column("labels").to_pylist())],
        "correct": [bool(c) if good else None for c, good in zip(res["correct"], ok)],
        "ptop1": pa.array(res["ptop1"].to_numpy(), pa.float64(), from_pandas=True),
        "hnorm": pa.array(res["hnorm"].to_numpy(), pa.float64(), from_pandas=True),
        "error": [None if good else str(e) for e, good in zip(res["error"], ok)],
        # the backend's code and flag where it failed; a point the log-probs cannot give is permanent
        "error_code": [None if good else code or "bad_logprobs"
                       for code, good in zip(table.column("error_code").to_pylist(), ok)],
        "error_transient": [None if good else bool(flag) for flag, good in zip(table.column("error_transient").to_pylist(), ok)],
    }
    arrays = [out[f.name] if f.name in out else table.column(f.name) for f in SCORE_TABLE]
    return pa.Table.from_arrays([a.cast(f.type) if isinstance(a, (pa.Array, pa.ChunkedArray)) else pa.array(a, f.type)
                                 for a, f in zip(arrays, SCORE_TABLE)], schema=SCORE_TABLE)
