"""Benchmark presets and formats by name, as data (no imports): the command line lists and checks
them without loading a reader. ``presets.PRESETS`` holds each preset's layouts (a test keeps the
two equal)."""

PRESET_NAMES = ("mmlu", "mmlu_pro", "gsm8k", "hellaswag", "drop", "winogrande", "arc", "boolq", "truthfulqa", "medqa",
                "svamp", "commonsenseqa")
FORMATS = ("jsonl", "json", "csv", "parquet", "hf", "text")  # see formats.read_records
