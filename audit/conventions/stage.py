"""The conventions stage: an item batch in; signals, item labels and mergeable counts out.

Ray-free: a job builds one ``ConventionStage`` per worker (the spelling automaton is built once)
and calls ``process`` on each ``ITEM_SCHEMA`` batch a connector yields; it writes ``signals`` and
``labels`` if it wants them, and sums ``counts`` with ``metrics.merge_counts``.
"""
from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa

from audit.conventions.detect import DEFAULT_CONFIG, ConventionDetector, DetectorConfig
from audit.conventions.labels import label_items
from audit.conventions.metrics import partial_counts


@dataclass(frozen=True)
class BatchAudit:
    """What one batch yields: a row per signal, a row per item, and its partial counts."""

    signals: pa.Table
    labels: pa.Table
    counts: pa.Table


class ConventionStage:
    """Detect, label and count one batch at a time."""

    def __init__(self, config: DetectorConfig = DEFAULT_CONFIG) -> None:
        self.detector = ConventionDetector(config)

    def process(self, items: pa.Table | pa.RecordBatch) -> BatchAudit:
        signals = self.detector(items)
        labels = label_items(items, signals)
        return BatchAudit(signals, labels, partial_counts(labels, signals))
