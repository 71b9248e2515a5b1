"""Contamination sensitivity: does a model answer better from noisy, partial rewrites than from a clean relay?

Ray-free and I/O-free (the shipped prompt files are package data). Modules, in the order a run
uses them: ``prompts`` (versioned router/aggregation/worker prompts), ``items`` (eligibility,
letters, the problem text), ``sample`` (the seeded question sample), ``plan`` (the calls and their
keys; worker calls once router outputs exist), ``answers`` (the parse rule and outcome
categories), ``outcomes`` (the outcome table), then the statistics: ``cells``, ``significance``,
``summary``, ``trend``, and ``analysis.analyse``, the one entry point from a table to every figure.
"""
