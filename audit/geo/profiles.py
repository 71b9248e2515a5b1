"""Every lexicon profile from one entry point: ``paper`` and ``extended`` are built by
``audit.geo.lexicon``; ``gazetteer`` is built by ``audit.geo.gazetteer_lexicon`` on top of ``extended``."""
from __future__ import annotations

from dataclasses import replace

from audit.geo.gazetteer_lexicon import build_gazetteer
from audit.geo.lexicon import Lexicon, LexiconConfig, build_base_lexicon


def build_lexicon(config: LexiconConfig | None = None) -> Lexicon:
    """Build the lexicon of ``config.profile`` from its sources. Deterministic for fixed source package versions."""
    config = config or LexiconConfig()
    if config.profile == "gazetteer":
        return build_gazetteer(config, build_base_lexicon(replace(config, profile="extended")))
    return build_base_lexicon(config)
