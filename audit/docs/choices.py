"""The six documentation criteria by name, as data (no imports): the command line checks --criteria
without loading the card parsers."""

CRITERIA = (
    "source_user_context",
    "target_user_context",
    "annotator_visibility",
    "locale_assumptions",
    "evaluation_normalization",
    "source_geographic_metadata",
)
