"""Parse dataset documentation into one shape: metadata fields plus located text passages.

Why one shape: the criteria rules (``criteria``) should not care whether a statement about
annotators came from a Hugging Face card section, a Croissant ``rai:annotatorDemographics`` field
or a datasheet answer; they need the text, where it is (section or field, line) and the
structured metadata. Three inputs are read:

- Hugging Face dataset cards: ``README.md`` with YAML front matter between ``---`` lines
  (malformed YAML is a ``DocumentError`` naming the file and the file line of the YAML problem);
- Croissant JSON-LD, including the responsible-AI vocabulary (``rai:``); keys written as full IRIs
  are compacted with the document's ``@context``; long string values also become passages whose
  "section" is the field name;
- datasheets and data statements in Markdown; a line that is only bold text (the usual way to
  write a datasheet question) counts as a heading.

Template placeholders ("[More Information Needed]") and HTML comments are not passages: an
unanswered template question is not documentation.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from audit.safe_yaml import load_yaml

PLACEHOLDER = re.compile(
    r"^\s*(\[?\s*(more information needed|needs more information|n/?a|tbd|todo|to be added|none)\s*\]?\.?)?\s*$",
    re.IGNORECASE,
)
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_BOLD_LINE = re.compile(r"^\s*(?:[-*]\s+)?\*\*(.+?)\*\*:?\s*$")
_HTML_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)
_PASSAGE_MIN_CHARS = 40  # JSON string values shorter than this are metadata, not prose


class DocumentError(ValueError):
    """A document that cannot be parsed; ``reason`` says why in one code (``malformed_front_matter``,
    ``invalid_json``, ``not_an_object``), so a job can count it like a bad row and go on."""

    def __init__(self, message: str, reason: str) -> None:
        super().__init__(message)
        self.reason = reason


@dataclass(frozen=True)
class MetadataField:
    """One structured value, with a dotted path name (``dataset_info.features[2].name``)."""

    name: str
    value: str


@dataclass(frozen=True)
class Passage:
    """A paragraph of prose and where it is: heading path (or field name) and 1-based line (0 if none)."""

    section: str
    text: str
    line: int


@dataclass(frozen=True)
class Document:
    """A parsed documentation resource; ``kind`` is ``hf_card``, ``croissant`` or ``markdown``."""

    source: str
    kind: str
    title: str
    fields: tuple[MetadataField, ...]
    passages: tuple[Passage, ...]


def _scalar(value: Any) -> str:
    return "" if value is None else str(value).strip()


def flatten_metadata(value: Any, prefix: str = "") -> Iterator[MetadataField]:
    """Dotted-path fields of nested mappings; a list of scalars becomes one "; "-joined value."""
    if isinstance(value, Mapping):
        for key, item in value.items():
            yield from flatten_metadata(item, f"{prefix}.{key}" if prefix else str(key))
    elif isinstance(value, list):
        if all(not isinstance(item, (Mapping, list)) for item in value):
            joined = "; ".join(_scalar(item) for item in value if _scalar(item))
            if joined:
                yield MetadataField(prefix, joined)
        else:
            for i, item in enumerate(value):
                yield from flatten_metadata(item, f"{prefix}[{i}]")
    elif _scalar(value):
        yield MetadataField(prefix, _scalar(value))


def markdown_passages(text: str, first_line: int = 1) -> tuple[tuple[Passage, ...], str]:
    """Paragraph passages with their heading path, and the title (a level-1 heading before any text)."""
    text = _HTML_COMMENT.sub(lambda m: "\n" * m.group(0).count("\n"), text)
    headings: list[tuple[int, str]] = []
    passages: list[Passage] = []
    title = ""
    block: list[str] = []
    block_line = first_line
    in_code = False

    def flush() -> None:
        body = " ".join(line.strip() for line in block).strip()
        block.clear()
        if body and not PLACEHOLDER.match(body):
            passages.append(Passage(" > ".join(h for _, h in headings), body, block_line))

    for offset, line in enumerate(text.splitlines()):
        number = first_line + offset
        if line.strip().startswith("```"):
            flush()
            in_code = not in_code
            continue
        if in_code:
            continue
        heading = _HEADING.match(line)
        bold = None if heading else _BOLD_LINE.match(line)
        if heading or bold:
            flush()
            if heading:
                level, name = len(heading.group(1)), heading.group(2).strip()
            elif bold:
                level, name = 7, bold.group(1).strip()
            if level == 1 and not title and not passages:
                title = name  # the document title is not a section: "Dataset Card for X" frames everything
                continue
            headings = [(lvl, h) for lvl, h in headings if lvl < level] + [(level, name)]
        elif not line.strip():
            flush()
        else:
            if not block:
                block_line = number
            block.append(line)
    flush()
    return tuple(passages), title


def parse_hf_card(text: str, source: str) -> Document:
    """A Hugging Face dataset card: YAML front matter (optional) and a Markdown body."""
    lines = text.splitlines()
    metadata: Any = {}
    body_start = 0
    if lines and lines[0].strip() == "---":
        try:
            end = next(i for i in range(1, len(lines)) if lines[i].strip() == "---")
        except StopIteration:
            raise DocumentError(f"{source}: YAML front matter opened on line 1 is never closed with '---'",
                                "malformed_front_matter") from None
        try:
            metadata = load_yaml("\n".join(lines[1:end])) or {}
        except yaml.YAMLError as err:
            mark = getattr(err, "problem_mark", None)
            where = f"line {mark.line + 2}" if mark is not None else f"lines 2-{end}"
            problem = getattr(err, "problem", None) or str(err)
            raise DocumentError(f"{source}: malformed YAML front matter at {where}: {problem}", "malformed_front_matter") from err
        if not isinstance(metadata, Mapping):
            raise DocumentError(f"{source}: YAML front matter must be a mapping, got {type(metadata).__name__}",
                                "malformed_front_matter")
        body_start = end + 1
    passages, heading = markdown_passages("\n".join(lines[body_start:]), first_line=body_start + 1)
    title = _scalar(metadata.get("pretty_name")) or heading or Path(source).stem
    return Document(source, "hf_card", title, tuple(flatten_metadata(metadata)), passages)


def parse_markdown_document(text: str, source: str) -> Document:
    """A datasheet or data statement written in Markdown (no metadata block)."""
    passages, heading = markdown_passages(text)
    return Document(source, "markdown", heading or Path(source).stem, (), passages)


def _namespaces(context: Any) -> dict[str, str]:
    """Prefix -> IRI from a JSON-LD ``@context`` (a mapping or a list of mappings)."""
    contexts = context if isinstance(context, list) else [context]
    spaces: dict[str, str] = {}
    for item in contexts:
        if isinstance(item, Mapping):
            for key, value in item.items():
                if isinstance(value, str) and (value.endswith("/") or value.endswith("#")):
                    spaces[key] = value
    return spaces


def _compact_keys(value: Any, spaces: dict[str, str]) -> Any:
    if isinstance(value, Mapping):
        out = {}
        for key, item in value.items():
            name = key
            for prefix, iri in sorted(spaces.items(), key=lambda kv: -len(kv[1])):
                if key.startswith(iri):
                    name = f"{prefix}:{key[len(iri) :]}"
                    break
            out[name] = _compact_keys(item, spaces)
        return out
    if isinstance(value, list):
        return [_compact_keys(item, spaces) for item in value]
    return value


def _string_passages(value: Any, path: str = "") -> Iterator[Passage]:
    if isinstance(value, Mapping):
        for key, item in value.items():
            if key != "@context":
                yield from _string_passages(item, f"{path}.{key}" if path else key)
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _string_passages(item, f"{path}[{i}]")
    elif isinstance(value, str) and len(value.strip()) >= _PASSAGE_MIN_CHARS and not PLACEHOLDER.match(value):
        yield Passage(path, " ".join(value.split()), 0)


def parse_croissant(text: str, source: str) -> Document:
    """Croissant JSON-LD metadata, responsible-AI (``rai:``) fields included."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as err:
        raise DocumentError(f"{source}: malformed JSON at line {err.lineno}, column {err.colno}: {err.msg}",
                            "invalid_json") from err
    except (ValueError, RecursionError) as err:  # an integer past Python's digit limit; nesting too deep to parse
        why = err if isinstance(err, ValueError) else "nested too deep"
        raise DocumentError(f"{source}: malformed JSON: {why}", "invalid_json") from err
    if not isinstance(data, Mapping):
        raise DocumentError(f"{source}: Croissant metadata must be a JSON object, got {type(data).__name__}", "not_an_object")
    compact = _compact_keys(data, _namespaces(data.get("@context")))
    content = {k: v for k, v in compact.items() if k != "@context"}
    title = _scalar(content.get("name")) or Path(source).stem
    return Document(source, "croissant", title, tuple(flatten_metadata(content)), tuple(_string_passages(content)))


def parse_document(text: str, source: str) -> Document:
    """Dispatch on the file name: ``.json``/``.jsonld`` Croissant, Markdown with front matter a card."""
    suffix = Path(source).suffix.lower()
    if suffix in (".json", ".jsonld"):
        return parse_croissant(text, source)
    if text.lstrip("\ufeff").startswith("---"):
        return parse_hf_card(text.lstrip("\ufeff"), source)
    return parse_markdown_document(text, source)
