"""Shipped data for the convention detectors (a package so setuptools ships its CSV/MD)."""
