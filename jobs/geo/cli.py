"""``benchaudit geo`` and ``benchaudit geo lexicon``: the commands (options come from the configs)."""
from __future__ import annotations

from jobs.common.cli.config import EXPORT_OPTIONS
from jobs.common.cli.flags import Command
from jobs.geo.config import GeoConfig
from jobs.geo.lexicon import LexiconExportConfig

COMMAND = Command.registered(
    "geo",
    description="Resolve the countries captions mention, their shares and their association with World Bank "
                "indicators; with no input, scans the shipped COCO and CC3M captions on a local Ray.\n\n"
                "  benchaudit geo --corpus datacomp:datacomp:'s3://bucket/datacomp/*.parquet' --address auto\n"
                "  benchaudit geo lexicon --profile extended --to lexicon.csv --rejected rejected.csv",
    config=GeoConfig,
    run="jobs.geo.run:run",
    subcommands=(
        Command(name="lexicon", help="export the country lexicon (and rejected candidates) for review",
                description="Write the lexicon (Parquet or CSV by extension) and, optionally, every rejected candidate "
                            "with its reason.",
                config=LexiconExportConfig, run="jobs.geo.lexicon:run", run_options=EXPORT_OPTIONS, outputs=()),
    ),
)
