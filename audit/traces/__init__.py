"""Reasoning-trace audits: lexical rubric steps checked by verdict, and an outcome-stratified sample."""
