"""Reading a saved HT-Coreset design: ``data/design/`` and ``design.json`` of a build run directory.

A design is what ``benchaudit coreset build`` wrote; the estimate job reads it back and checks it
against its manifest (``audit.coreset.estimate.strata_sample`` checks the weights), so a design
edited by hand or paired with the wrong manifest fails before any estimate is made.
"""
from __future__ import annotations

import json
import posixpath

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
from fsspec.core import url_to_fs

from audit.coreset.design import DESIGN_COLUMNS, DesignManifest
from connectors.coreset.targets import TargetError, check_columns
from connectors.io.fs import FileRef, expand
from connectors.runs.tables import table_url as table_url_of

DESIGN_TABLE = "design"  # data/design/ in the run-data convention (connectors.runs.tables)
DESIGN_FILE = "design.parquet"  # where builds before the convention wrote it (still read)
MANIFEST_FILE = "design.json"
GROUP_COLUMN = "group_value"  # the design's group as stored ("group" is an SQL keyword); "group" in memory


def _join(base: str, name: str) -> str:
    return posixpath.join(base.rstrip("/"), name) if "://" in base else f"{base.rstrip('/')}/{name}"


def read_design(run_dir: str, need_group: bool = False) -> tuple[pd.DataFrame, DesignManifest, list[FileRef]]:
    """The design rows, their manifest and the two files (for the estimate's input fingerprint).

    ``need_group``: the caller compares predicted groups with the design's, so a design built
    without ``--group-column`` is an error here rather than a silently skipped table.
    """
    manifest_url = _join(run_dir, MANIFEST_FILE)
    fs, path = url_to_fs(manifest_url)
    if not fs.exists(path):
        raise TargetError(f"{manifest_url}: not found; --design must be the run directory of 'benchaudit coreset build'")
    table_url = table_url_of(run_dir, DESIGN_TABLE)
    if not fs.exists(url_to_fs(table_url)[1]):
        table_url = _join(run_dir, DESIGN_FILE)
    files = expand([table_url, manifest_url], (".parquet", ".json"))
    with fs.open(path, "r", encoding="utf-8") as fh:
        manifest = DesignManifest.from_dict(json.load(fh))
    parts = []
    for ref in (f for f in files if f.url.endswith(".parquet")):
        with ref.open(compression=None) as fh:
            parts.append(pq.read_table(fh))
    table = pa.concat_tables(parts)
    if GROUP_COLUMN in table.column_names:
        table = table.rename_columns(["group" if c == GROUP_COLUMN else c for c in table.column_names])
    check_columns(table_url, table.column_names, list(DESIGN_COLUMNS))
    if need_group and "group" not in table.column_names:
        raise TargetError(f"{table_url}: column {GROUP_COLUMN!r} not found; comparing predicted groups needs a design built "
                          "with --group-column")
    return table.to_pandas(), manifest, files
