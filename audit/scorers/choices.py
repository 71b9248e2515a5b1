"""The scorers and answer transformations by name, as data (no imports): the command line lists and
checks them without loading BLEU/ROUGE (nltk, rouge_score, sacrebleu)."""

SCORERS = ("drop", "squad", "exact", "truthfulqa")
TRANSFORMATIONS = (
    "spelling:to_other",
    "spelling:to_american",
    "date:to_day_month",
    "date:to_month_day",
    "time:to_24h",
    "time:to_12h",
    "unit:to_metric",
    "unit:to_us",
)
