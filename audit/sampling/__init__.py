"""HT-Coreset: importance-weighted downsampling and Horvitz-Thompson evaluation (issue 4).

Pure numpy/scipy science, no Ray: ``strata``, ``allocation``, ``hashdraw``, ``percentile`` and
``design`` build a design; ``estimate`` and ``intervals`` evaluate predictions on it; ``study``
compares samplers over repeated draws; ``diagnostics``, ``traces`` and ``agreement`` look inside
the coreset; ``validate`` rejects bad input by file and column.
"""
