"""The contamination audit's prompt slots and design sizes, as data (no imports): the command line
lists and checks them without loading the analysis."""

SLOTS = ("forward_full", "noisy_rewrite", "aggregate", "worker")
DEFAULT_M = 9  # noisy settings r = 1..M routers
DEFAULT_N = 100  # questions drawn
