"""Shipped prompts of the structural classifier (JSON data files; see ``audit.landscape.structure``)."""
