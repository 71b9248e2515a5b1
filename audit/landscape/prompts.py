"""MCQA prompts from a template that is data: shipped JSON, overridable, hashed for the manifest.

A prompt is a system instruction, a user turn and an answer prefix. How it becomes text is the
backend's business (a chat template when the tokenizer has one, else plain text ending in the
answer prefix); what the model is asked is fixed here, so every backend asks the same question.
The option letters are the labels whose final-position log-probabilities the backends read.
"""
from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from importlib import resources
from typing import Any

from audit.mcqa.items import McqaItem
from audit.mcqa.prompt import Prompt

DEFAULT_TEMPLATE = "mcqa_letter"
_FIELDS = ("name", "version", "system", "passage", "instructions", "user", "option", "option_separator", "answer_prefix")


def template_fields(text: str, fields: tuple[str, ...], source: str, what: str) -> dict[str, Any]:
    """A prompt file's JSON object with exactly ``fields``; a bad file is named with what is wrong."""
    try:
        data: dict[str, Any] = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{source}: not valid JSON ({exc})") from exc
    if not isinstance(data, dict):
        raise ValueError(f"{source}: a {what} file holds one JSON object")
    missing = [f for f in fields if f not in data]
    unknown = sorted(set(data) - set(fields))
    if missing or unknown:
        raise ValueError(f"{source}: {what} fields missing {missing}, unknown {unknown}")
    return data


def options_text(option: str, separator: str, item: McqaItem) -> str:
    """The item's options, each rendered with the ``option`` pattern (``{label}``, ``{text}``)."""
    return separator.join(option.format(label=label, text=text) for label, text in zip(item.labels, item.options))


def prompt_file_sha256(prompt: Any) -> str:
    """Hash of a prompt dataclass as canonical JSON: recorded in the manifest and part of every cache key."""
    return hashlib.sha256(json.dumps(asdict(prompt), sort_keys=True).encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class McqaTemplate:
    """Format strings of one prompt template. ``user`` sees ``{passage}{instructions}{question}
    {options}{labels}``; ``passage``/``instructions`` wrap those fields and vanish when empty."""

    name: str
    version: int
    system: str
    passage: str
    instructions: str
    user: str
    option: str
    option_separator: str
    answer_prefix: str

    @classmethod
    def from_json(cls, text: str, source: str = "template") -> McqaTemplate:
        """Parse a template file's text; missing or unknown fields name the source."""
        template = cls(**template_fields(text, _FIELDS, source, "template"))
        for field, needed in (("user", "{question}"), ("user", "{options}"), ("option", "{text}"), ("option", "{label}")):
            if needed not in getattr(template, field):
                raise ValueError(f"{source}: template field {field!r} must contain {needed}")
        return template

    @property
    def sha256(self) -> str:
        """Hash of the canonical JSON: recorded in the manifest and part of every cache key."""
        return prompt_file_sha256(self)

    def build(self, item: McqaItem) -> Prompt:
        options = options_text(self.option, self.option_separator, item)
        user = self.user.format(
            passage=self.passage.format(passage=item.passage) if item.passage else "",
            instructions=self.instructions.format(instructions=item.instructions) if item.instructions else "",
            question=item.question, options=options, labels=item.labels_phrase(),
        )
        return Prompt(user=user, system=self.system or None, answer_prefix=self.answer_prefix)


def load_template(name: str = DEFAULT_TEMPLATE) -> McqaTemplate:
    """A template shipped in ``audit/landscape/templates/<name>.json``. A user's own file is read
    by the job (through ``connectors``) and parsed with :meth:`McqaTemplate.from_json`."""
    folder = resources.files("audit.landscape.templates")
    path = folder / f"{name}.json"
    if not path.is_file():
        shipped = sorted(p.name.removesuffix(".json") for p in folder.iterdir() if p.name.endswith(".json"))
        raise ValueError(f"unknown prompt template {name!r}; shipped: {shipped}")
    return McqaTemplate.from_json(path.read_text("utf-8"), source=str(name))


PROMPT_ROW_FIELDS = ("id", "source_id", "benchmark", "perturbation", "variant", "k", "gold", "labels",
                     "system", "user", "answer_prefix", "note")


def prompt_rows(items: Iterable[McqaItem], template: McqaTemplate) -> list[dict[str, Any]]:
    """One row per item for the model stage (``connectors.models.PROMPT_SCHEMA``): the prompt's
    parts, the option labels to score, and what the results need to be joined back (gold, k)."""
    rows = []
    for item in items:
        prompt = template.build(item)
        rows.append({"id": item.id, "source_id": item.source_id, "benchmark": item.benchmark,
                     "perturbation": item.perturbation, "variant": item.variant, "k": item.k, "gold": item.gold,
                     "labels": list(item.labels), "system": prompt.system, "user": prompt.user,
                     "answer_prefix": prompt.answer_prefix, "note": item.note})
    return rows
