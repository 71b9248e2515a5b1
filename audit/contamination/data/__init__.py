"""Shipped prompt files of the contamination audit (package data: versioned text, hashed into manifests)."""
