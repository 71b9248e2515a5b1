"""What the landscape audit reads besides benchmarks: prompt templates, reviewer labels, expert
reference labels, structure prompts (``inputs``) and lm-evaluation-harness outputs (``lm_eval``)."""
