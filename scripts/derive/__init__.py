"""Build-time derivations (run by a maintainer when a source changes, never by a job): the shipped
data tables, the WordNet and US Census word lists of the gazetteer, the spelling inventory.

    python -m scripts.derive.shipped_data --shared ../shared/data
    python -m scripts.derive.wordnet
    python -m scripts.derive.census_names
    python -m scripts.derive.spelling_sources --data-dir ../shared/data
"""
