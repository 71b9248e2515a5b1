"""How the run history tells runs of one job apart: their distinguishing options, and like for like.

Every run records the options that differ from its job's defaults (``RunEntry.config``, the
manifest's ``config_non_default``). ``runs list``, ``runs compare`` and the index show them, and a
comparison or a trend only joins runs whose options agree: a ``gazetteer`` geo run next to a
``paper`` one measures something else, and a delta between them is not a change over time.
"""
from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from connectors.runs.store import RunEntry

VALUE_CHARS = 40  # a longer option value (a path, a list) is cut with "…" in tables; --json keeps it whole


def value_text(value: Any) -> str:
    """An option value for people: ``gazetteer``, ``200``, ``a,b``; a list of named entries by their
    names; a path or URL by its last part (``rubric.yaml``: the whole one is in ``--json``)."""
    if isinstance(value, list) and value and all(isinstance(v, Mapping) and "name" in v for v in value):
        text = "[" + ",".join(str(v["name"]) for v in value) + "]"
    elif isinstance(value, list):
        text = ",".join(value_text(v) for v in value) or "none"
    elif isinstance(value, str):
        text = value.rstrip("/").rsplit("/", 1)[-1] if "/" in value.rstrip("/") else value
    else:
        text = json.dumps(value, default=str)
    return text if len(text) <= VALUE_CHARS else text[: VALUE_CHARS - 1] + "…"


def options_text(options: Mapping[str, Any] | None) -> str:
    """``lexicon_profile=gazetteer limit=200``; ``defaults`` when none differs; ``?`` when not recorded."""
    if options is None:
        return "?"
    return " ".join(f"{k}={value_text(v)}" for k, v in sorted(options.items())) or "defaults"


def same_config(a: RunEntry, b: RunEntry) -> bool:
    """Whether two runs of a job were run with the same options (entries recorded before options were
    kept compare by config hash, which also covers the inputs' content)."""
    if a.config is None or b.config is None:
        return a.config_hash == b.config_hash
    return a.config == b.config


def config_differences(base: RunEntry, run: RunEntry) -> list[tuple[str, Any, Any]]:
    """``(option, base value, run value)`` for every option the two runs set differently ("default"
    where a run left it at the job's default)."""
    if base.config is None or run.config is None:
        return [] if base.config_hash == run.config_hash else [("config hash", base.config_hash, run.config_hash)]
    keys = sorted(set(base.config) | set(run.config))
    return [(k, base.config.get(k, "default"), run.config.get(k, "default")) for k in keys
            if base.config.get(k, "default") != run.config.get(k, "default")]


def differences_text(diffs: Sequence[tuple[str, Any, Any]]) -> str:
    """``limit 200 → 300; lexicon_profile default → gazetteer``."""
    return "; ".join(f"{k} {value_text(a)} → {value_text(b)}" for k, a, b in diffs)


def config_groups(runs: Sequence[RunEntry]) -> dict[str, str]:
    """Run id -> the label of its config among ``runs`` of one job: the options that differ between
    them (``per_outcome=3``; ``defaults`` for a run that left them all at the default), or "" for every
    run when they share one config (one config needs no label)."""
    known = [r.config for r in runs if r.config is not None]
    varying = sorted({k for c in known for k in c if len({json.dumps(o.get(k), sort_keys=True, default=str)
                                                          for o in known}) > 1})
    labels = {r.run_id: options_text({k: r.config[k] for k in varying if k in r.config}) if r.config is not None
              else f"config {(r.config_hash or '?')[:8]}" for r in runs}
    return labels if len(set(labels.values())) > 1 else {r.run_id: "" for r in runs}


def input_names(run: RunEntry) -> list[str]:
    """What a run's rows are about: the inputs its headline names (benchmarks, corpora, models),
    else the manifest's input keys."""
    names = list(dict.fromkeys(str(h.get("input")) for h in run.headline))
    return names or (list(run.inputs) if isinstance(run.inputs, dict) else [])


def inputs_text(run: RunEntry, shown: int = 3) -> str:
    names = input_names(run)
    return ",".join(names[:shown]) + (f" (+{len(names) - shown})" if len(names) > shown else "")


def headline_text(run: RunEntry, number: Callable[[Any], str], inputs: int = 2) -> str:
    """The run's first headline metric, for its first inputs: ``coverage: coco2017_val 0.00516, cc3m_val 0.0107``."""
    rows = [h for h in run.headline if isinstance(h, Mapping)]
    if not rows:
        return ""
    metric = rows[0].get("metric")
    values = [(h.get("input"), h.get("value")) for h in rows if h.get("metric") == metric]
    more = f" (+{len(values) - inputs})" if len(values) > inputs else ""
    return f"{metric}: " + ", ".join(f"{i} {number(v)}" for i, v in values[:inputs]) + more
