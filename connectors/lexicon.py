"""The geo lexicon as a file: the shipped artifacts, a user's saved lexicon, a user's edits."""
from __future__ import annotations

import csv
from importlib import resources
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq

from audit.geo.lexicon import (
    SCHEMA,
    Lexicon,
    LexiconConfig,
    Profile,
    apply_edits,
    build_lexicon,
)

_PROFILE_KEY, _VERSION_KEY = b"benchaudit.lexicon.profile", b"benchaudit.lexicon.version"


def shipped_path(profile: Profile) -> Path:
    return Path(str(resources.files("audit.geo") / "data" / f"lexicon_{profile}.parquet"))


def save_lexicon(lexicon: Lexicon, path: str | Path) -> None:
    meta = {_PROFILE_KEY: lexicon.profile.encode(), _VERSION_KEY: lexicon.version.encode()}
    pq.write_table(lexicon.entries.replace_schema_metadata(meta), path)


def read_lexicon(path: str | Path) -> Lexicon:
    table = pq.read_table(path)
    missing = [f.name for f in SCHEMA if f.name not in table.column_names]
    if missing:
        raise ValueError(f"{path}: not a benchaudit lexicon, missing columns {missing}")
    meta = table.schema.metadata or {}
    return Lexicon(
        entries=table.select(SCHEMA.names).cast(SCHEMA).replace_schema_metadata(None),
        rejected=pd.DataFrame(columns=["alias", "alias_norm", "country_alpha2", "match_type", "source", "reason"]),
        profile=meta.get(_PROFILE_KEY, b"custom").decode(),
        version=meta.get(_VERSION_KEY, b"unknown").decode(),
    )


def load_lexicon(profile: Profile = "paper", path: str | Path | None = None, edits: str | Path | None = None) -> Lexicon:
    """The shipped artifact for a profile (or a user's saved lexicon), with a user's edits applied."""
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
