"""The run-data convention: a run's per-item results as Parquet tables every reader loads the same way.

    <run>/data/<table>/<key>=<value>/<part>.parquet     a job whose runs take named inputs (corpus=, benchmark=, system=)
    <run>/data/<table>/<part>.parquet                   a job with one input

Why this shape: ``pd.read_parquet("<run>/data/records")``, DuckDB's
``read_parquet('<run>/data/records/**/*.parquet', hive_partitioning=true)`` and
``pyarrow.dataset.dataset(..., partitioning="hive")`` all give one table with the input as a
column. The partition value lives in the folder name only: a file that also held it would make
pandas (which infers the partition as a dictionary) and pyarrow datasets (a plain string) disagree
with the file's own type, and one of them fails to merge. Jobs with named inputs partition even a
run with one input, so a table's layout never depends on how many inputs a run had. Values are
percent-encoded (``x/y`` is ``x%2Fy``), which all three readers decode; a value made only of
digits loads as a number. The encoding leaves only letters, digits, ``_.-~`` and ``%XX`` in the
folder name, so a value (a benchmark name, a model name read from lm-eval output) can never make it
``..``, hold a ``/``, a backslash or NUL; an empty value or a folder name over 255 characters is
refused, naming the value.

Column names avoid SQL reserved words (``group`` breaks an unquoted DuckDB query), and ids are
relative to the input's root (``captions.csv#120``), never a path of the machine that ran the job.
"""
from __future__ import annotations

import posixpath
from urllib.parse import quote

import pyarrow as pa
import pyarrow.dataset as pads
import pyarrow.parquet as pq
from fsspec.core import url_to_fs

from connectors.runs.paths import join_under as join
from connectors.runs.paths import safe_name
from connectors.runs.records import ShardRecordWriter

DATA_DIR = "data"
# DuckDB's reserved keywords (``SELECT keyword_name FROM duckdb_keywords() WHERE keyword_category = 'reserved'``,
# DuckDB 2.0): a column with one of these names must be quoted in every query, so no table has one.
SQL_RESERVED = frozenset("""
all analyse analyze and any array as asc asymmetric both case cast check collate column constraint create default
deferrable desc describe distinct do else end except false fetch for foreign from group having in initially intersect
into lambda lateral leading limit not null offset on only or order pivot pivot_longer pivot_wider placing primary
qualify references returning select show some summarize symmetric table then to trailing true union unique unpivot
using variadic when where window with""".split())
_GLOB_CHARS = "*?["
MAX_SEGMENT = 255  # bytes of a folder name (NAME_MAX of Linux filesystems)


def partition_segment(key: str, value: str) -> str:
    """``key=value`` with the value percent-encoded (every reader decodes it back); see the module doc."""
    safe_name(key, "partition key")
    value = str(value)
    segment = f"{key}={quote(value, safe='')}"
    if not value:
        raise ValueError(f"partition {key}: the value is empty; a {key} needs a name")
    if len(segment) > MAX_SEGMENT:
        raise ValueError(f"partition {key}={value[:40]!r}...: the folder name would be {len(segment)} characters, "
                         f"over {MAX_SEGMENT}; give the {key} a shorter name")
    return segment


def table_url(run: str, table: str) -> str:
    """The folder of one table: what a user passes to ``pd.read_parquet``."""
    return join(run, DATA_DIR, table)


def part_url(run: str, table: str, part: str, partition: tuple[str, str] | None = None) -> str:
    """Where one part of a table goes: ``data/<table>/[<key>=<value>/]<part>.parquet``."""
    segments = [DATA_DIR, table] + ([partition_segment(*partition)] if partition else []) + [f"{part}.parquet"]
    return join(run, *segments)


def check_columns(table: str, names: list[str], partition_key: str | None = None) -> None:
    """Refuse SQL-reserved column names, and a column that repeats the partition key."""
    bad = [n for n in names if n.lower() in SQL_RESERVED]
    if bad:
        raise ValueError(f"table {table!r}: column(s) {bad} are SQL reserved words; rename them (e.g. group -> group_value)")
    if partition_key is not None and partition_key in names:
        raise ValueError(f"table {table!r}: column {partition_key!r} is the partition key; it lives in the folder name only")


def part_writer(run: str, table: str, part: str, schema: pa.Schema,
                partition: tuple[str, str] | None = None) -> ShardRecordWriter:
    """A streaming writer of one part (temporary name, then moved into place; nothing for no rows)."""
    check_columns(table, schema.names, partition[0] if partition else None)
    return ShardRecordWriter(part_url(run, table, part, partition), schema)


def write_table(run: str, table: str, data: pa.Table, part: str = "part-0",
                partition: tuple[str, str] | None = None) -> str:
    """Write a whole (small) table in one part; returns its URL. An empty table still gets a part,
    so its columns are known to a reader."""
    writer = part_writer(run, table, part, data.schema, partition)
    try:
        if data.num_rows:
            writer.write(data)
        else:
            writer.write_empty()
        writer.close()
    except BaseException:  # a full disk: no temporary left behind
        writer.abort()
        raise
    return writer.url


def read_table(run: str, table: str) -> pa.Table | None:
    """One table of a finished run as a user would load it (partition keys as columns); None when absent."""
    url = table_url(run, table)
    fs, path = url_to_fs(url)
    if not fs.exists(path):
        return None
    return pads.dataset(path, filesystem=fs, format="parquet", partitioning="hive").to_table()


def read_parts(run: str, table: str, parts: list[tuple[str, tuple[str, str] | None]]) -> list[tuple[str, pa.Table]]:
    """Given parts ``(part, partition)`` of a table, in order, each with its partition key added back
    as a column; a part that was never written (no rows) is left out."""
    out = []
    for part, partition in parts:
        url = part_url(run, table, part, partition)
        fs, path = url_to_fs(url)
        if not fs.exists(path):
            continue
        with fs.open(path, "rb") as fh:
            t = pq.read_table(fh)
        if partition:
            t = t.append_column(partition[0], pa.array([partition[1]] * t.num_rows, pa.string()))
        out.append((part, t))
    return out


def describe_tables(run: str) -> dict[str, dict]:
    """What the manifest lists under ``data``: per table its folder, partition keys, files and rows."""
    fs, root = url_to_fs(join(run, DATA_DIR))
    if not fs.exists(root):
        return {}
    out = {}
    for entry in sorted(fs.ls(root, detail=False)):
        name = posixpath.basename(entry.rstrip("/"))
        files = sorted(f for f in fs.find(entry) if f.endswith(".parquet"))
        keys = sorted({seg.split("=", 1)[0] for f in files for seg in posixpath.relpath(f, entry).split("/")[:-1] if "=" in seg})
        rows = 0
        for f in files:
            with fs.open(f, "rb") as fh:
                rows += pq.ParquetFile(fh).metadata.num_rows
        out[name] = {"path": f"{DATA_DIR}/{name}/", "partitioning": keys, "files": len(files), "rows": rows}
    return out


# ---- ids relative to the input's root -------------------------------------------------------------

def input_root(path: str) -> str:
    """The folder an input path is relative to: a directory itself, a glob's fixed prefix, a file's parent."""
    fs, p = url_to_fs(path)
    if any(c in p for c in _GLOB_CHARS) and not fs.exists(p):
        p = p[: min(p.index(c) for c in _GLOB_CHARS if c in p)]
        return p if p.endswith("/") else posixpath.dirname(p) + "/"
    if fs.isdir(p):
        return p.rstrip("/") + "/"
    return posixpath.dirname(p) + "/"


def relative_source(url: str, roots: list[str]) -> str:
    """``url`` relative to the longest root that holds it (its base name when none does)."""
    _, p = url_to_fs(url)
    held = [r for r in roots if p.startswith(r)]
    return p[len(max(held, key=len)):] if held else posixpath.basename(p)


def relativize_ids(ids: pa.Array | pa.ChunkedArray, url: str, relative: str) -> pa.Array | pa.ChunkedArray:
    """Ids made of ``<url>#<row>`` (a reader's default id) as ``<relative>#<row>``; mapped ids unchanged."""
    import pyarrow.compute as pc

    prefix = f"{url}#"
    if relative == url:
        return ids
    starts = pc.starts_with(ids, prefix)
    tail = pc.utf8_slice_codeunits(ids, len(prefix))
    return pc.if_else(starts, pc.binary_join_element_wise(pa.scalar(relative), tail, "#"), ids)
