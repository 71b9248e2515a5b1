"""YAML lists of inputs (``--corpora corpora.yaml``, ``--benchmarks list.yaml``), read with clear errors."""
from __future__ import annotations

import fsspec
import yaml

from audit.safe_yaml import load_yaml


def read_yaml_list(path: str, what: str) -> list[dict]:
    """A YAML list of mappings; malformed YAML is an error naming the file and line."""
    try:
        with fsspec.open(path, "r", encoding="utf-8") as fh:
            entries = load_yaml(fh)
    except FileNotFoundError:
        raise ValueError(f"{path}: no such file") from None
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        where = f"line {mark.line + 1}" if mark is not None else "unknown line"
        raise ValueError(f"{path}: malformed YAML at {where}: {getattr(err, 'problem', None) or err}") from err
    if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
        raise ValueError(f"{path}: expected a YAML list of mappings ({what})")
    return entries


def read_name_list(path: str) -> list[str]:
    """One name per line (``#`` comments and blank lines ignored): protected names, brands, titles."""
    try:
        with fsspec.open(path, "r", encoding="utf-8") as fh:
            return [line.strip() for line in fh if line.strip() and not line.lstrip().startswith("#")]
    except FileNotFoundError:
        raise ValueError(f"{path}: no such file") from None
