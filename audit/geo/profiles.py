"""Every lexicon profile from one entry point: ``paper`` and ``extended`` are built by
``audit.geo.lexicon``; ``gazetteer`` is built by ``audit.geo.gazetteer_lexicon`` on top of ``extended``."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from audit.geo.gazetteer_lexicon import build_gazetteer
from audit.geo.lexicon import Lexicon, LexiconConfig, build_base_lexicon


def build_lexicon(config: LexiconConfig | None = None, on_stage: Callable[[str], None] | None = None) -> Lexicon:
    """Build the lexicon of ``config.profile`` from its sources. Deterministic for fixed source package versions.

    ``on_stage`` is told what each stage builds as it starts (a build takes tens of seconds: a caller
    shows it, so a user is not left looking at silence).
    """
    config = config or LexiconConfig()
    stage = on_stage or (lambda _: None)
    if config.profile == "gazetteer":
        stage("the extended lexicon (countries, demonyms, capitals, cities, regions) from its sources")
        base = build_base_lexicon(replace(config, profile="extended"))
        stage("the gazetteer's places, admin names, codes and word filters")
        return build_gazetteer(config, base)
    stage(f"the {config.profile} lexicon from its sources")
    return build_base_lexicon(config)
