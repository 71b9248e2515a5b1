"""The multiple-choice core every model audit shares: ``items`` (one item type, one eligibility rule
with reason codes, one alphabet of option letters), ``prompt`` (what a model backend is given) and
``sample`` (the seeded draw of items, through ``audit.stats.draws``). The landscape and
contamination audits build on it, and so do the model backends in ``connectors.models``.
"""
