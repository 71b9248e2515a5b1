"""Per-item convention counts and labels: american_only, other_only, mixed, no_match.

An item's label comes from its ``american`` and ``other`` signals only; ambiguous and neutral
signals are counted in their own columns and leave an item ``no_match`` if it has nothing else.
A gold answer repeated verbatim among the options (multiple choice) is counted once, under
options, so an answer key does not double its own conventions. "Excluding spelling" leaves out
the ``spelling`` category only: lexical pairs (when enabled), dates, times and units remain, as
in the reference study, whose spelling-excluded share keeps its vocabulary pairs.

The table is small (one row of integers per item), so a job can write it as Parquet and the
bootstrap can run on it without touching the text again.
"""
from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

LABELS = ("american_only", "other_only", "mixed", "no_match")

ITEM_LABEL_SCHEMA = pa.schema([
    ("benchmark", pa.string()),
    ("item_id", pa.string()),
    ("n_american", pa.int32()),
    ("n_other", pa.int32()),
    ("n_american_excl_spelling", pa.int32()),
    ("n_other_excl_spelling", pa.int32()),
    ("n_ambiguous", pa.int32()),
    ("n_neutral", pa.int32()),
    ("label", pa.string()),
])


def counted(signals: pa.Table) -> pa.Table:
    """The signals that enter item totals: all but gold answers repeating an option."""
    return signals.filter(pc.invert(signals.column("repeats_option")))


def label_items(items: pa.Table | pa.RecordBatch, signals: pa.Table) -> pa.Table:
    """One ``ITEM_LABEL_SCHEMA`` row per item of the batch ``signals`` were detected in."""
    n = items.num_rows
    kept = counted(signals)
    rows = kept.column("row").to_numpy()
    variety = kept.column("variety").to_numpy(zero_copy_only=False)
    spelling = pc.equal(kept.column("category"), "spelling").to_numpy(zero_copy_only=False)

    def per_item(mask: np.ndarray) -> np.ndarray:
        return np.bincount(rows[mask], minlength=n).astype(np.int32)

    american, other = per_item(variety == "american"), per_item(variety == "other")
    labels = np.select(
        [(american > 0) & (other > 0), american > 0, other > 0],
        ["mixed", "american_only", "other_only"],
        default="no_match",
    )
    return pa.table({
        "benchmark": items.column("benchmark"),
        "item_id": items.column("id"),
        "n_american": american,
        "n_other": other,
        "n_american_excl_spelling": per_item((variety == "american") & ~spelling),
        "n_other_excl_spelling": per_item((variety == "other") & ~spelling),
        "n_ambiguous": per_item(variety == "ambiguous"),
        "n_neutral": per_item(variety == "neutral"),
        "label": pa.array(labels.tolist(), pa.string()),
    }, schema=ITEM_LABEL_SCHEMA)
