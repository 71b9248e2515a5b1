"""The one YAML loader the project uses: safe tags only, and no aliases.

Why no aliases: an anchor and its aliases (``&a`` / ``*a``) let a few hundred bytes name a
structure of billions of nodes ("billion laughs": 10 levels of 9 aliases). PyYAML builds it as
shared references, cheaply, but whatever walks it afterwards (flattening a card's metadata,
validating a plan, hashing a config) visits every node: a 384-byte dataset card took
``benchaudit docs`` to 18 GB. No file the project reads (cards, plans, input lists, model lists,
traces, runtime envs) needs an alias, so one is refused at the composer, before anything is built,
as a ``yaml.YAMLError`` naming its line like any other YAML problem. Lives in ``audit`` (the lowest
layer) so the card parser and every connector and job share it.
"""
from __future__ import annotations

from typing import IO, Any

import yaml
from yaml.composer import ComposerError

ALIAS_PROBLEM = "aliases (*name) are not accepted: write the value out (an alias can expand to billions of nodes)"


class _NoAliasLoader(yaml.SafeLoader):
    """``yaml.SafeLoader`` that refuses an alias event (merge keys ``<<: *a`` included) where it meets it."""

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            event = self.peek_event()
            raise ComposerError(None, None, ALIAS_PROBLEM, event.start_mark)
        return super().compose_node(parent, index)


def load_yaml(stream: str | bytes | IO) -> Any:
    """``yaml.safe_load`` without aliases: the one way the project parses YAML."""
    loader = _NoAliasLoader(stream)
    try:
        return loader.get_single_data()
    finally:
        loader.dispose()
