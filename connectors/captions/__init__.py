"""Caption corpora (the geo audit's input): corpus specs and presets (``corpus``), shard readers (``read``)."""
