"""What the contamination audit reads besides benchmarks: prompt files (``prompts``) and outcome tables (``outcomes``)."""
