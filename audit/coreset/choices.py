"""HT-Coreset's metrics and samplers by name, as data (no imports): the command line lists and checks
them without loading the estimators (``study.SAMPLERS`` maps each name to its design; a test keeps
the two equal)."""

METRICS = ("precision", "recall", "f1", "lift", "fp")
SAMPLER_NAMES = ("uniform_ht", "difficulty_ht", "ht_coreset", "ht_coreset_unweighted")
