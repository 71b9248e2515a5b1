"""The geo lexicon as a file: the shipped artifacts, a user's saved lexicon, a user's edits."""
from __future__ import annotations

import csv
from collections.abc import Callable
from importlib import resources
from pathlib import Path
from typing import cast

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from audit.geo.lexicon import (
    CASE_RULES,
    EXTRA_SCHEMA,
    GAZETTEER_MATCH_TYPES,
    MATCH_WEIGHTS,
    REJECTED_COLUMNS,
    SCHEMA,
    Lexicon,
    LexiconConfig,
    Profile,
    apply_edits,
)
from audit.geo.profiles import build_lexicon
from connectors.io.markup import csv_frame

_PROFILE_KEY, _VERSION_KEY = b"benchaudit.lexicon.profile", b"benchaudit.lexicon.version"


def shipped_path(profile: Profile) -> Path:
    return Path(str(resources.files("audit.geo") / "data" / f"lexicon_{profile}.parquet"))


def save_lexicon(lexicon: Lexicon, path: str | Path) -> None:
    meta = {_PROFILE_KEY: lexicon.profile.encode(), _VERSION_KEY: lexicon.version.encode()}
    pq.write_table(lexicon.entries.replace_schema_metadata(meta), path)


def read_lexicon(path: str | Path) -> Lexicon:
    """A saved lexicon: the SCHEMA columns, plus the extended/gazetteer columns when the file has them
    (all of them or none: a half-present set is an error)."""
    table = pq.read_table(path)
    missing = [f.name for f in SCHEMA if f.name not in table.column_names]
    if missing:
        raise ValueError(f"{path}: not a benchaudit lexicon, missing columns {missing}")
    extra = [f.name for f in EXTRA_SCHEMA if f.name in table.column_names]
    if extra and len(extra) != len(EXTRA_SCHEMA):
        lacking = [f.name for f in EXTRA_SCHEMA if f.name not in extra]
        raise ValueError(f"{path}: lexicon has columns {extra} but lacks {lacking}")
    schema = pa.schema(list(SCHEMA) + (list(EXTRA_SCHEMA) if extra else []))
    for column, allowed in (("match_type", (*MATCH_WEIGHTS, *GAZETTEER_MATCH_TYPES)), ("case_rule", CASE_RULES)):
        if column in schema.names:
            _check_values(path, table.column(column), column, allowed)
    meta = table.schema.metadata or {}
    return Lexicon(
        entries=table.select(schema.names).cast(schema).replace_schema_metadata(None),
        rejected=pd.DataFrame(columns=REJECTED_COLUMNS),
        profile=meta.get(_PROFILE_KEY, b"custom").decode(),
        version=meta.get(_VERSION_KEY, b"unknown").decode(),
    )


def _check_values(path, column: pa.ChunkedArray, name: str, allowed: tuple[str, ...]) -> None:
    """Every value of ``column`` is one of ``allowed``: else an error naming the file, the row and the value."""
    bad = pc.indices_nonzero(pc.invert(pc.fill_null(pc.is_in(column, value_set=pa.array(allowed)), False)))
    if len(bad):
        row = bad[0].as_py()
        raise ValueError(f"{path}: row {row}, {name} {column[row].as_py()!r} is not one of {', '.join(allowed)}"
                         f"{f' ({len(bad)} rows like it)' if len(bad) > 1 else ''}")


def load_lexicon(profile: Profile = "paper", path: str | Path | None = None, edits: str | Path | None = None) -> Lexicon:
    """The shipped artifact for a profile (``paper``, ``extended``, ``gazetteer``) or a user's saved
    lexicon, with a user's edits applied. Its ``rejected`` table is empty: rejection reasons live
    with a build (``build_lexicon(LexiconConfig(profile=...)).rejected``)."""
    LexiconConfig(profile=profile)  # validates the profile name
    if path and not Path(path).exists():
        raise FileNotFoundError(f"lexicon file not found: {path}")
    target = Path(path) if path else shipped_path(profile)
    if not target.exists():  # a source checkout without the artifact: build it once
        save_lexicon(build_lexicon(LexiconConfig(profile=profile)), target)
    lexicon = read_lexicon(target)
    return apply_edits(lexicon, read_edits(edits), str(edits)) if edits else lexicon


def read_edits(path: str | Path) -> list[dict[str, str]]:
    with open(path, encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh))


def export_lexicon(lexicon: Lexicon, to: str, rejected_to: str | None = None,
                   on_stage: Callable[[str], None] | None = None) -> None:
    """Write the entries for review (Parquet or CSV by extension) and, optionally, the rejected candidates.

    Rejection reasons live with a build, not with the saved artifact, so a loaded lexicon is rebuilt
    from its sources to list them.
    """
    if to.endswith(".parquet"):
        save_lexicon(lexicon, to)
    else:
        csv_frame(lexicon.entries.to_pandas()).to_csv(to, index=False)
    if rejected_to:
        rejected = lexicon.rejected if not lexicon.rejected.empty else \
            build_lexicon(LexiconConfig(profile=cast(Profile, lexicon.profile)), on_stage).rejected  # LexiconConfig checks it
        csv_frame(rejected).to_csv(rejected_to, index=False)
