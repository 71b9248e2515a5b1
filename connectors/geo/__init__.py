"""What the geo audit reads besides captions: lexicon files and World Bank indicators."""
