"""MCQA probability landscapes: where each item sits in the (Ptop1, Hnorm) square, and why.

Pure science, no Ray and no file I/O beyond the package's own data files: ``items`` checks items
of the shared benchmark schema and turns them into ``McqaItem`` (bad items become ``Rejected``
with a reason); ``prompts`` renders an item through a template (a data file with a hash for the
manifest); ``perturb`` holds the seeded perturbations; ``metrics`` turns option log-probabilities
into points, accuracy and cross-model correlations; ``mpd`` is the mean pairwise distance, exact
in blocks or sampled with a CI; ``flags`` selects review candidates; ``validate`` scores flags
against expert labels (MMLU-Redux) with an exact hypergeometric test.
"""
