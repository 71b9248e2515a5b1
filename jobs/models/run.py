"""``benchaudit models fetch``: the fixture's path on standard output (and only that, for ``$(...)``)."""
from __future__ import annotations

import sys

from jobs.common.cli.config import ConfigError, RunOptions
from jobs.models.cli import FetchConfig


def fetch(cfg: FetchConfig, opts: RunOptions) -> str:
    from connectors.models import gguf
    from connectors.models.fetch import FixtureError
    from connectors.models.fetch import fetch as fetch_fixture

    try:
        path = fetch_fixture(cfg.name)
        if cfg.dequantise:
            if not gguf.is_prepared(path) and opts.log_level in ("debug", "info"):
                print(f"benchaudit models fetch: preparing the transformers copy of {path.name} (about a minute, once)",
                      file=sys.stderr, flush=True)
            gguf.prepare(path)
    except (FixtureError, gguf.GGUFError) as exc:
        raise ConfigError(str(exc)) from None
    return str(path)
