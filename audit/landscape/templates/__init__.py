"""Shipped MCQA prompt templates (JSON data files; see ``audit.landscape.prompts``)."""
