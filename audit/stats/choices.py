"""Defaults every audit shares, as data (no imports): one seed, one replicate count, one level.

Why one seed: a user comparing two audits of the same benchmark should not meet 42 in one and
2026 in another; every job's ``--seed`` defaults to ``DEFAULT_SEED`` and records the value used.
"""

DEFAULT_SEED = 2026
DEFAULT_REPLICATES = 10_000
DEFAULT_LEVEL = 0.95
