"""Text benchmarks (JSONL, JSON, CSV, Parquet, Hugging Face datasets on disk) in one item schema.

The modules depend downward only: ``schema`` (the item schema, errors, layouts, field mappings)
← ``formats`` (file readers) ← ``presets`` (the real layouts of MMLU, ARC, TruthfulQA ...) ←
``spec`` (what to read) ← ``arrow`` / ``read`` (items, batch by batch) ← ``shards`` (planning a
scan); ``choices`` names the presets and formats as data (what the command line needs).
"""
