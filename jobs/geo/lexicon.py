"""``benchaudit geo lexicon``: export the country lexicon (and every rejected candidate) for review."""
from __future__ import annotations

from typing import Annotated

from pydantic import Field

from audit.geo.choices import Profile
from jobs.common.cli.config import Alias, ConfigError, Flag, JobConfig, RunOptions

EXPORT = "export"


class LexiconExportConfig(JobConfig):
    """What to export, and where."""

    profile: Annotated[Profile, Flag(EXPORT)] = Field("paper", description="lexicon profile")
    to: Annotated[str, Flag(EXPORT, metavar="FILE", deprecated=(Alias("--out", note="--out is a run root everywhere else"),))] = Field(
        "lexicon.csv", description="file to write (.csv or .parquet)")
    rejected: Annotated[str | None, Flag(EXPORT, metavar="CSV")] = Field(
        None, description="also write the rejected candidates with their reasons to this CSV")
    edits: Annotated[str | None, Flag(EXPORT, metavar="CSV")] = Field(None, description="apply a CSV of edits first")
    rebuild: Annotated[bool, Flag(EXPORT)] = Field(
        False, description="rebuild from the source packages instead of loading the shipped artifact")


REBUILD_NEEDS = ("wordfreq",)  # the 'lexicon' extra: which names are English words first


def check_rebuild_possible() -> None:
    """A rebuild (``--rebuild``, and ``--rejected``: reasons live with a build) needs the ``lexicon`` extra:
    say so before anything is written, not "No module named 'wordfreq'" after the ``--to`` file exists."""
    import importlib

    missing = []
    for module in REBUILD_NEEDS:
        try:
            importlib.import_module(module)
        except ImportError:
            missing.append(module)
    if missing:
        raise ConfigError(f"--rejected/--rebuild rebuild the lexicon from its sources, which needs {', '.join(missing)}: "
                          "install the lexicon extra (.venv/bin/pip install -e '.[lexicon]')")


def run(cfg: LexiconExportConfig, opts: RunOptions) -> str:
    if cfg.rebuild or cfg.rejected:
        check_rebuild_possible()
    from audit.geo.lexicon import LexiconConfig, apply_edits
    from audit.geo.profiles import build_lexicon
    from connectors.geo.lexicon import export_lexicon, load_lexicon, read_edits
    from jobs.common.runtime.progress import Stages

    stages = Stages("benchaudit geo lexicon", quiet=opts.log_level not in ("debug", "info"))
    lex = build_lexicon(LexiconConfig(profile=cfg.profile), stages) if cfg.rebuild else load_lexicon(cfg.profile)
    if cfg.edits:
        lex = apply_edits(lex, read_edits(cfg.edits), cfg.edits)
    if cfg.rejected and lex.rejected.empty:
        stages.note("listing rejected candidates rebuilds the lexicon (their reasons live with a build, not with the "
                    "shipped artifact)")
    export_lexicon(lex, cfg.to, cfg.rejected, stages)
    stages.done()
    rejected = f"; rejected candidates → {cfg.rejected}" if cfg.rejected else ""
    return f"{lex.entries.num_rows:,} entries ({lex.profile}, sha256 {lex.sha256[:12]}…) → {cfg.to}{rejected}"
