"""The structural classifier on the review candidates, through the generation backend.

Candidates are few (tens to hundreds), so their prompts are built on the driver; the model runs
through the model step every model audit runs (``jobs.common.models.step``: "generate", greedy, the
response cache in front, progress as answers come back) like the scoring models, and
``audit.landscape.structure`` reads each answer. A failed call is the candidate's verdict
("failed"), never an unusable answer the skip limits count.
"""
from __future__ import annotations

from dataclasses import replace

import pandas as pd
import pyarrow as pa

from audit.landscape.structure import StructurePrompt, load_structure_prompt, parse_structure_label
from audit.mcqa.items import McqaItem
from connectors.landscape.inputs import read_structure_prompt
from connectors.models.batches import PROMPT_SCHEMA
from jobs.common.models.pool import ModelConfig, model_counts
from jobs.common.models.step import ModelSteps
from jobs.common.runtime.job import JobRun
from jobs.landscape.config import LandscapeConfig

CLASSIFIER_SCHEMA = pa.schema([("benchmark", pa.string()), ("source_id", pa.string()), ("text", pa.string()),
                               ("structure_label", pa.string()), ("structure_status", pa.string()), ("error", pa.string()),
                               ("cached", pa.bool_())])


def candidate_prompts(flags: pd.DataFrame, prompt: StructurePrompt) -> pa.Table:
    """One generation prompt per flagged item (its original text, not the perturbed copy)."""
    rows = []
    for row in flags[flags["flagged"]].to_dict("records"):
        options = tuple(row["options"])
        item = McqaItem(id=row["source_id"], benchmark=row["benchmark"], question=row["question"] or "", options=options,
                        gold=int(row["gold"]))
        p = prompt.build(item)
        rows.append({"id": row["source_id"], "benchmark": row["benchmark"], "system": p.system, "user": p.user,
                     "answer_prefix": p.answer_prefix, "labels": list(item.labels)})
    schema = PROMPT_SCHEMA.append(pa.field("benchmark", pa.string()))
    return pa.Table.from_pylist(rows, schema=schema)


def classify_candidates(flags: pd.DataFrame, model: ModelConfig, prompt: StructurePrompt,
                        steps: ModelSteps) -> tuple[pd.DataFrame, dict]:
    """(one verdict per candidate, call accounting); no candidates: an empty table, no model started."""
    import ray

    prompts = candidate_prompts(flags, prompt)
    if prompts.num_rows == 0:
        empty = CLASSIFIER_SCHEMA.empty_table()
        return empty.to_pandas(), model_counts(empty)
    stage = replace(model.stage(), generation={"max_new_tokens": prompt.max_new_tokens, "temperature": 0.0})
    out = steps.answer(ray.data.from_arrow(prompts), stage, "generate", what=f"classifier {model.name}",
                       expected=prompts.num_rows, reasons=lambda batch: [None] * batch.num_rows,
                       empty=_ANSWERED.empty_table())
    return _verdicts(out.select(_ANSWERED.names)), model_counts(out)


_ANSWERED = pa.schema([("id", pa.string()), ("benchmark", pa.string()), ("text", pa.string()), ("error", pa.string()),
                       ("cached", pa.bool_())])


def _verdicts(out: pa.Table) -> pd.DataFrame:
    frame = out.to_pandas()
    parsed = [parse_structure_label(t) if e is None else ("ok", "failed") for t, e in zip(frame["text"], frame["error"])]
    return pd.DataFrame({"benchmark": frame["benchmark"], "source_id": frame["id"], "text": frame["text"],
                         "structure_label": [p[0] for p in parsed], "structure_status": [p[1] for p in parsed],
                         "error": frame["error"], "cached": frame["cached"]})


def structure_prompt(cfg: LandscapeConfig) -> StructurePrompt | None:
    """The structural classifier's prompt (--classifier-prompt, else the shipped one); None without --classify."""
    if not cfg.classify:
        return None
    return read_structure_prompt(cfg.classifier_prompt) if cfg.classifier_prompt else load_structure_prompt()


def classified(job: JobRun, cfg: LandscapeConfig, flags: pd.DataFrame, structure: StructurePrompt, classifier: ModelConfig,
               cache_root: str) -> tuple[pd.DataFrame, pd.DataFrame, dict]:
    """The flagged items with the structural classifier's verdicts merged in, the verdicts (data/classifier/, written
    here) and the classifier's description for the manifest: the same for a model run and a --from-lm-eval run."""
    with job.timer("classifier"):
        verdicts, calls = classify_candidates(flags, classifier, structure, ModelSteps.of(job, len(flags), cache_root))
    job.write_table("classifier", pa.Table.from_pandas(verdicts, schema=CLASSIFIER_SCHEMA, preserve_index=False))
    flags = flags.merge(verdicts[["benchmark", "source_id", "structure_label", "structure_status"]],
                        on=["benchmark", "source_id"], how="left")
    info = {"model": classifier.name, "spec": classifier.spec, "settings": classifier.settings,
            "prompt": {"name": structure.name, "version": structure.version, "sha256": structure.sha256,
                       "source": cfg.classifier_prompt or "shipped"},
            "generation": {"temperature": 0.0, "max_new_tokens": structure.max_new_tokens}, "calls": calls}
    return flags, verdicts, info
