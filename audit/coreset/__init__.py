"""HT-Coreset: importance-weighted downsampling and Horvitz-Thompson evaluation.

Pure numpy/scipy science, no Ray: ``strata``, ``allocation``, ``percentile`` and ``design``
build a design (drawing with ``audit.stats.draws``); ``estimate`` and ``intervals`` evaluate predictions on it; ``study``
compares samplers over repeated draws; ``diagnostics`` looks inside the coreset (group recall,
failure taxonomy); ``validate`` rejects bad input by file and column.
"""
