"""The optional structural classifier: does a review candidate's question or its options look broken?

A generation model reads each candidate through a prompt that is data
(``structure_prompts/structure_v1.json``: fields, version and hash recorded in the manifest) and
answers with one of ``ok``, ``bad_question_clarity``, ``bad_options_clarity`` at temperature 0.

Reading the answer: the labels the text names (case, spaces, hyphens and underscores ignored)
are collected; exactly one named label is the verdict. An answer naming several labels is
self-contradictory and one naming none is unparsed; both count as ``ok``, so the classifier only
adds a structural finding when it says so unambiguously (the status says which case it was).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from importlib import resources

from audit.landscape.prompts import options_text, prompt_file_sha256, template_fields
from audit.mcqa.items import McqaItem
from audit.mcqa.prompt import Prompt

STRUCTURE_LABELS = ("ok", "bad_question_clarity", "bad_options_clarity")
DEFAULT_STRUCTURE_PROMPT = "structure_v1"
_FIELDS = ("name", "version", "system", "user", "passage", "option", "option_separator", "answer_prefix", "max_new_tokens")
_LABEL_PATTERNS = {label: re.compile(r"(?<![a-z])" + r"[\s_\-]*".join(label.split("_")) + r"(?![a-z])") for label in STRUCTURE_LABELS}


@dataclass(frozen=True)
class StructurePrompt:
    """The classifier's prompt: ``user`` sees ``{passage}{question}{options}``."""

    name: str
    version: int
    system: str
    user: str
    passage: str
    option: str
    option_separator: str
    answer_prefix: str
    max_new_tokens: int

    @classmethod
    def from_json(cls, text: str, source: str = "structure prompt") -> StructurePrompt:
        prompt = cls(**template_fields(text, _FIELDS, source, "structure prompt"))
        for needed in ("{question}", "{options}"):
            if needed not in prompt.user:
                raise ValueError(f"{source}: field 'user' must contain {needed}")
        if not isinstance(prompt.max_new_tokens, int) or prompt.max_new_tokens < 1:
            raise ValueError(f"{source}: max_new_tokens must be a positive integer")
        return prompt

    @property
    def sha256(self) -> str:
        return prompt_file_sha256(self)

    def build(self, item: McqaItem) -> Prompt:
        options = options_text(self.option, self.option_separator, item)
        user = self.user.format(passage=self.passage.format(passage=item.passage) if item.passage else "",
                                question=item.question, options=options)
        return Prompt(user=user, system=self.system or None, answer_prefix=self.answer_prefix)


def load_structure_prompt(name: str = DEFAULT_STRUCTURE_PROMPT) -> StructurePrompt:
    """A shipped prompt (``audit/landscape/structure_prompts/<name>.json``)."""
    path = resources.files("audit.landscape.structure_prompts") / f"{name}.json"
    if not path.is_file():
        raise ValueError(f"unknown structure prompt {name!r}")
    return StructurePrompt.from_json(path.read_text("utf-8"), source=name)


def parse_structure_label(text: str | None) -> tuple[str, str]:
    """(label, status): status ``clear`` (one label named), ``contradictory`` or ``unparsed`` (both ok)."""
    named = [label for label, pattern in _LABEL_PATTERNS.items() if pattern.search((text or "").casefold())]
    if len(named) == 1:
        return named[0], "clear"
    return "ok", "contradictory" if named else "unparsed"
