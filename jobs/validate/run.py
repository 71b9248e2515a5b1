"""``benchaudit validate``: which kind of file this is, its validator (``registry.VALIDATORS``), the report."""
from __future__ import annotations

from typing import Any

from jobs.common.cli.config import ConfigError, RunOptions
from jobs.common.cli.registry import VALIDATORS, attribute
from jobs.validate.cli import ValidateConfig


def kind_of(data: Any, path: str) -> str:
    """A plan is a mapping with ``audits``; a list is models (``spec``), corpora (a caption preset or a
    ``text`` column) or benchmarks (a benchmark preset or a ``question`` column)."""
    from connectors.benchmarks.choices import PRESET_NAMES
    from connectors.captions.presets import PRESETS as CAPTION_PRESETS

    if isinstance(data, dict) and "audits" in data:
        return "plan"
    if isinstance(data, list) and data and all(isinstance(e, dict) for e in data):
        kinds = set()
        for entry in data:
            if "spec" in entry:
                kinds.add("models")
            elif entry.get("preset") in CAPTION_PRESETS or "text" in entry:
                kinds.add("corpora")
            elif entry.get("preset") in PRESET_NAMES or "question" in entry:
                kinds.add("benchmarks")
        if len(kinds) == 1:
            return kinds.pop()
    raise ConfigError(f"{path}: cannot tell whether this is a corpora, benchmarks or models list or a plan; give --kind")


def run(cfg: ValidateConfig, opts: RunOptions) -> str:
    kind: str = cfg.kind
    if kind == "auto":
        import fsspec
        import yaml

        from audit.safe_yaml import load_yaml

        try:
            with fsspec.open(cfg.file, "r", encoding="utf-8") as fh:
                kind = kind_of(load_yaml(fh), cfg.file)
        except FileNotFoundError:
            raise ConfigError(f"{cfg.file}: no such file") from None
        except yaml.YAMLError as exc:
            raise ConfigError(f"{cfg.file}: not valid YAML ({exc})") from None
    checked = attribute(VALIDATORS[kind])(cfg.file, cfg.check_files)
    bad = [c for c in checked if c.problem]
    lines = [f"{'FAIL' if c.problem else 'ok  '}  {c.label}: {c.problem or c.detail}" for c in checked]
    verdict = f"{cfg.file}: {kind}, {len(checked) - len(bad)} of {len(checked)} entries valid"
    if bad:  # the report first (stdout), then the one-line error (stderr, exit code 2)
        print("\n".join(lines), flush=True)
        raise ConfigError(f"{verdict}; {len(bad)} invalid")
    return "\n".join([*lines, verdict])
