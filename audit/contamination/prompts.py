"""Router, aggregation and worker prompts as versioned data files, with a content hash each.

Why data (shipped in ``audit/contamination/data/``): the prompts *are* the experimental
conditions, so a reader must be able to see, change and cite them without reading code, and a run
manifest must say exactly which text was sent. Each file has a small header of ``key: value``
lines (``name``, ``version``, ``role``, optional ``description`` and role-specific keys), a line
``---``, then the template. The hash is the SHA-256 of the whole file text, so a change of header
or template gives a new hash.

Templates use ``{placeholder}`` for the values a role receives; any other ``{word}`` is rejected
when the file is parsed (a typo would otherwise be sent to the model verbatim). Substitution is
one pass over the template, so braces inside item text are never re-read as placeholders.

Roles and their placeholders:
- ``router`` (``forward_full``, ``noisy_rewrite``): ``{problem}``, the item as the router sees it.
- ``aggregate``: ``{count}`` and ``{reports}``; header key ``report`` is the line put above each
  router output, with ``{index}`` (1-based) and ``{count}``.
- ``worker``: ``{input}`` (the aggregated reports) and ``{letters}`` (the valid option letters).
"""
from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field, fields, replace
from importlib import resources
from types import MappingProxyType

from audit.contamination.choices import SLOTS

_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")
# role -> (placeholders the template must contain, placeholders it may contain)
_ROLES: dict[str, tuple[frozenset[str], frozenset[str]]] = {
    "router": (frozenset({"problem"}), frozenset({"problem"})),
    "aggregate": (frozenset({"reports"}), frozenset({"reports", "count"})),
    "worker": (frozenset({"input"}), frozenset({"input", "letters"})),
}
_REPORT_PLACEHOLDERS = frozenset({"index", "count"})
_SLOT_ROLES = {"forward_full": "router", "noisy_rewrite": "router", "aggregate": "aggregate", "worker": "worker"}


class PromptError(ValueError):
    """A prompt file that cannot be used; the message names the file and what is wrong."""


@dataclass(frozen=True)
class PromptFile:
    """One parsed prompt file: header fields, template, and the SHA-256 of the file text."""

    name: str
    version: str
    role: str
    template: str
    sha256: str
    source: str
    header: MappingProxyType = field(default_factory=lambda: MappingProxyType({}), compare=False)

    def render(self, **values: object) -> str:
        """The template with every placeholder replaced; a missing value is an error."""
        return _substitute(self.template, values, self.source)

    def manifest(self) -> dict[str, str]:
        return {"name": self.name, "version": self.version, "role": self.role, "sha256": self.sha256, "source": self.source}


def _substitute(template: str, values: dict[str, object], source: str) -> str:
    def one(match: re.Match) -> str:
        key = match.group(1)
        if key not in values:
            raise PromptError(f"{source}: no value for placeholder {{{key}}}")
        return str(values[key])

    return _PLACEHOLDER.sub(one, template)


def _check_placeholders(text: str, required: frozenset[str], allowed: frozenset[str], source: str, what: str) -> None:
    used = set(_PLACEHOLDER.findall(text))
    unknown = sorted(used - allowed)
    if unknown:
        raise PromptError(f"{source}: {what} uses unknown placeholder(s) {unknown}; allowed: {sorted(allowed)}")
    missing = sorted(required - used)
    if missing:
        raise PromptError(f"{source}: {what} lacks required placeholder(s) {missing}")


def parse_prompt(text: str, source: str) -> PromptFile:
    """Parse one prompt file's text; ``source`` (a path or package name) is used in messages."""
    lines = text.splitlines()
    try:
        end = lines.index("---")
    except ValueError:
        raise PromptError(f"{source}: no '---' line between header and template") from None
    header: dict[str, str] = {}
    for number, line in enumerate(lines[:end], start=1):
        if not line.strip():
            continue
        key, sep, value = line.partition(":")
        if not sep or not key.strip():
            raise PromptError(f"{source}: header line {number}: expected 'key: value', got {line!r:.80}")
        header[key.strip()] = value.strip()
    for key in ("name", "version", "role"):
        if not header.get(key):
            raise PromptError(f"{source}: header lacks {key!r}")
    role = header["role"]
    if role not in _ROLES:
        raise PromptError(f"{source}: role {role!r} is not one of {sorted(_ROLES)}")
    template = "\n".join(lines[end + 1:]).strip("\n")
    if not template.strip():
        raise PromptError(f"{source}: empty template")
    _check_placeholders(template, *_ROLES[role], source, "template")
    if role == "aggregate":
        if "report" not in header:
            raise PromptError(f"{source}: an aggregate prompt needs a 'report' header line (put above each router output)")
        _check_placeholders(header["report"], frozenset({"index"}), _REPORT_PLACEHOLDERS, source, "header 'report'")
    return PromptFile(name=header["name"], version=header["version"], role=role, template=template,
                  sha256=hashlib.sha256(text.encode("utf-8")).hexdigest(), source=source,
                  header=MappingProxyType(dict(header)))


def shipped_prompt(slot: str) -> PromptFile:
    """The prompt shipped with benchaudit for ``slot`` (one of ``SLOTS``)."""
    if slot not in SLOTS:
        raise PromptError(f"unknown prompt slot {slot!r}; expected one of {SLOTS}")
    name = f"{slot}.txt"
    text = resources.files("audit.contamination.data").joinpath(name).read_text("utf-8")
    return parse_prompt(text, f"audit.contamination/data/{name}")


@dataclass(frozen=True)
class PromptSet:
    """The four prompts of one run: clean router, noisy router, aggregation, worker."""

    forward_full: PromptFile
    noisy_rewrite: PromptFile
    aggregate: PromptFile
    worker: PromptFile

    def __post_init__(self) -> None:
        for f in fields(self):
            prompt = getattr(self, f.name)
            if prompt.role != _SLOT_ROLES[f.name]:
                raise PromptError(f"{prompt.source}: role {prompt.role!r} cannot fill slot {f.name!r} "
                                  f"(needs role {_SLOT_ROLES[f.name]!r})")

    @classmethod
    def shipped(cls) -> PromptSet:
        return cls(**{slot: shipped_prompt(slot) for slot in SLOTS})

    def override(self, **prompts: PromptFile) -> PromptSet:
        """A copy with some slots replaced (e.g. a user's file parsed with ``parse_prompt``)."""
        unknown = sorted(set(prompts) - set(SLOTS))
        if unknown:
            raise PromptError(f"unknown prompt slot(s) {unknown}; expected some of {SLOTS}")
        return replace(self, **prompts)

    def router(self, condition: str) -> PromptFile:
        if condition not in ("forward_full", "noisy_rewrite"):
            raise PromptError(f"no router prompt for condition {condition!r}")
        return getattr(self, condition)

    def manifest(self) -> dict[str, dict[str, str]]:
        """Name, version, role, hash and source of each slot: what the run manifest records."""
        return {slot: getattr(self, slot).manifest() for slot in SLOTS}


def aggregate_reports(prompt: PromptFile, reports: list[str]) -> str:
    """The worker's input: the router outputs, each under its ``report`` header line, in order.

    The same aggregation is applied to the clean relay (one report) and to every noisy setting, so
    the only difference between conditions is what the routers were asked to do.
    """
    if not reports:
        raise PromptError(f"{prompt.source}: nothing to aggregate (no router output)")
    count = len(reports)
    blocks = [f"{_substitute(prompt.header['report'], {'index': i, 'count': count}, prompt.source)}\n{text.strip()}"
              for i, text in enumerate(reports, start=1)]
    return prompt.render(count=count, reports="\n\n".join(blocks))
