"""The landscape audit's perturbations by name and its MPD limits, as data (no imports): the command
line lists and checks them without loading the science (``perturb.PERTURBATIONS`` maps each name
to its function; a test keeps the two equal)."""

PERTURBATION_NOTES = {
    "none": "the item as published (the baseline of every relative change)",
    "noise": "every distractor replaced by an unrelated city name",
    "mask": "a share of the stem's content words masked",
    "no_answer": "the correct option becomes 'None of the above' (the new gold)",
    "score_bias": "'(Score: 10/10)' appended to one distractor",
    "answer_a": "the correct option moved to A",
    "answer_d": "the correct option moved to D",
    "circular": "every rotation of the options; correct only when all are",
}
PERTURBATION_NAMES = tuple(PERTURBATION_NOTES)
DEFAULT_PERTURBATIONS = ("none", "noise")
MPD_EXACT_LIMIT = 50_000  # exact mean pairwise distance up to this many items, a seeded estimate beyond
MPD_PAIRS = 2_000_000  # pairs drawn for the estimate
MPD_BOOTSTRAP = 200  # item-bootstrap replicates of an exact MPD's interval (each costs about one exact MPD in BLAS)
