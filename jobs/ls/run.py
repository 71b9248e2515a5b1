"""``benchaudit ls``: the names a user may choose, from the same tables the jobs read them from."""
from __future__ import annotations

import json

from jobs.common.cli.config import RunOptions
from jobs.ls.cli import LsConfig


def sections() -> dict[str, list[dict[str, str]]]:
    """Section -> rows (each a small mapping of strings), in the order ``benchaudit ls`` prints them."""
    from audit.geo.choices import PROFILE_NOTES
    from audit.landscape.choices import PERTURBATION_NOTES
    from connectors.benchmarks.presets import PRESETS as BENCHMARK_PRESETS
    from connectors.captions.presets import PRESETS as CORPUS_PRESETS
    from connectors.models.fetch import FIXTURES
    from connectors.models.spec import BACKEND_FORMS
    from jobs.common.cli.registry import JOBS, OPERATIONS

    return {
        "jobs": [{"name": c.name, "kind": "job" if c in JOBS else "command", "about": c.help} for c in JOBS + OPERATIONS],
        "presets": [{"name": name, "for": "benchmark (--benchmark NAME:PRESET:PATH)", "about": p.note}
                    for name, p in BENCHMARK_PRESETS.items()]
                   + [{"name": name, "for": f"corpus (--corpus NAME:PRESET:PATH), {p.format}", "about": p.note}
                      for name, p in CORPUS_PRESETS.items()],
        "perturbations": [{"name": name, "about": note} for name, note in PERTURBATION_NOTES.items()],
        "backends": [{"name": name, "spec": form, "about": about} for name, (form, about) in BACKEND_FORMS.items()],
        "profiles": [{"name": name, "about": note} for name, note in PROFILE_NOTES.items()],
        "models": [{"name": name, "spec": f"hf:$(benchaudit models fetch {name})", "licence": f.license, "about": f.about}
                   for name, f in FIXTURES.items()],
    }


def _table(rows: list[dict[str, str]]) -> str:
    keys = list(rows[0])
    widths = {k: max(len(k), *(len(r[k]) for r in rows)) for k in keys[:-1]}
    line = lambda r: "  ".join([*(f"{r[k]:<{widths[k]}}" for k in keys[:-1]), r[keys[-1]]])  # noqa: E731
    return "\n".join([line({k: k for k in keys}), *(line(r) for r in rows)])


def run(cfg: LsConfig, opts: RunOptions) -> str:
    found = sections()
    chosen = found if cfg.what == "all" else {cfg.what: found[cfg.what]}
    if cfg.as_json:
        return json.dumps(chosen, indent=2)
    return "\n\n".join(f"{name}:\n{_table(rows)}" if rows else f"{name}: none" for name, rows in chosen.items())
