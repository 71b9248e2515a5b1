"""The public spelling lists behind the conventions inventory: read them, write the shipped CSV.

    python -m scripts.derive.spelling_sources --data-dir ../shared/data

The rules live in ``audit/conventions/build_inventory.py`` (pure functions over parsed lists);
this module only reads the three sources in the layout of the project's shared data and writes
``audit/conventions/data/spelling_inventory.csv``, which is all the runtime ever loads.
"""
from __future__ import annotations

import argparse
import csv
import json
from collections import defaultdict
from importlib import resources
from pathlib import Path

from audit.conventions.build_inventory import (
    InventoryRow,
    breame_pairs,
    build_inventory,
    hyperreality_pairs,
    lexical_gloss_pairs,
)
from audit.conventions.inventory import INVENTORY_FILE

DATA_DIR = Path(str(resources.files("audit.conventions") / "data"))


def _json(path: Path) -> dict[str, str]:
    return json.loads(path.read_text(encoding="utf-8"))


def build_from_shared(data_dir: Path) -> list[InventoryRow]:
    """Read VarCon, breame and hyperreality under ``data_dir`` and apply the inventory rules."""
    varcon = (data_dir / "spelling_varcon" / "varcon.txt").read_text(encoding="latin-1")
    breame: list[dict[str, str]] = []
    for name in ("american_to_british_spellings.csv", "british_to_american_spellings.csv"):
        with open(data_dir / "spelling_breame" / name, newline="", encoding="utf-8") as handle:
            breame += list(csv.DictReader(handle))
    hyper = data_dir / "spelling_hyperreality"
    return build_inventory(
        varcon.splitlines(),
        breame_pairs(breame),
        hyperreality_pairs(_json(hyper / "american_spellings.json"), _json(hyper / "british_spellings.json")),
        lexical_gloss_pairs(_json(hyper / "american_only.json"), _json(hyper / "british_only.json")),
    )


def write_inventory(rows: list[InventoryRow], path: Path) -> None:
    """Write the CSV the runtime loads (columns american, other, source, category)."""
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle, lineterminator="\n")
        writer.writerow(["american", "other", "source", "category"])
        writer.writerows((r.american, r.other, r.source, r.category) for r in rows)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path, default=Path(__file__).resolve().parents[3] / "shared" / "data")
    parser.add_argument("--out", type=Path, default=DATA_DIR / INVENTORY_FILE)
    args = parser.parse_args(argv)
    if not (args.data_dir / "spelling_varcon" / "varcon.txt").exists():
        raise SystemExit(f"{args.data_dir}: no spelling_varcon/varcon.txt; pass --data-dir")
    rows = build_from_shared(args.data_dir)
    write_inventory(rows, args.out)
    counts: dict[str, int] = defaultdict(int)
    for row in rows:
        counts[row.category] += 1
    print(f"wrote {args.out}: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))


if __name__ == "__main__":
    main()
