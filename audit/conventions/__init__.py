"""Locale conventions in benchmark text: American vs other spellings, dates, times and units.

Entry points: ``stage.ConventionStage`` (per batch: signals, item labels, mergeable counts) and
``metrics.merge_counts`` / ``metrics.summarize`` (per benchmark). See README.md in this folder.
"""
