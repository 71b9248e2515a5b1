"""The unit tier's guard (``scripts/test --fast``): the libraries of the slower tiers cannot be imported.

On the path of the test process and of every Python it starts (``PYTHONPATH``), so a test that needs
Ray, a model library, a browser or the S3 server but lacks its marker fails in the fast tier with
a message naming the marker, instead of quietly making the tier slow.
"""
from __future__ import annotations

import importlib.abc
import os
import sys

MARKER_OF = {"ray": "ray", "torch": "models", "transformers": "models", "vllm": "models", "llama_cpp": "models", "playwright": "browser",
             "moto": "s3", "s3fs": "s3"}


class _Guard(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        top = name.split(".")[0]
        if top in MARKER_OF:
            raise ImportError(f"'{top}' is not importable in the unit tier (scripts/test --fast): mark the test "
                              f"@pytest.mark.{MARKER_OF[top]}")
        return None


if os.environ.get("BENCHAUDIT_TEST_TIER") == "unit":
    sys.meta_path.insert(0, _Guard())
