"""The nine-field user-centric documentation template, pre-filled with what the audits measured.

Why a template: the documentation audit finds that resources rarely say whom their scores speak
for. A maintainer is more likely to fill a short, specific form that already contains the
numbers the audit measured on their benchmark (convention shares, coverage, geographic coverage,
scorer sensitivity) than to write from nothing. Measured values are printed with their meaning;
everything the audit cannot know is left as an explicit TODO for the maintainer.

The nine fields:

1. ``intended_users`` -- whose use the scores are meant to speak for;
2. ``user_locales`` -- the locales and language varieties of those users;
3. ``source_users`` -- who wrote the source texts and questions, and where;
4. ``annotators`` -- who wrote or checked gold answers: number, locales, instructions, pay;
5. ``locale_conventions`` -- the spelling, date, time and unit conventions the items encode
   (pre-filled from the conventions audit);
6. ``evaluation_normalization`` -- how answers are normalised and which valid variants earn
   credit (pre-filled from the scorer-sensitivity audit);
7. ``geographic_coverage`` -- which countries and regions the items (or images) represent
   (pre-filled from a caption/geo audit when one ran);
8. ``known_gaps`` -- users, varieties or regions the benchmark serves poorly;
9. ``contact_maintenance`` -- who maintains it, how to report problems, versioning.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class TemplateField:
    """One field of the template: key, heading, the question it answers, and the maintainer's task."""

    key: str
    title: str
    question: str
    todo: str


FIELDS: tuple[TemplateField, ...] = (
    TemplateField(
        "intended_users", "Intended users", "Whose use should these scores speak for?",
        "Name the user populations (e.g. 'English-speaking customer-support users in India and the UK').",
    ),
    TemplateField(
        "user_locales", "User locales and language varieties", "Which locales and varieties do those users write in?",
        "List locale codes (en-US, en-GB, en-IN, ...) and say which are in scope.",
    ),
    TemplateField(
        "source_users", "Source users", "Who wrote the source texts and questions, and where?",
        "Describe the writers or source communities, with countries and how they were recruited.",
    ),
    TemplateField(
        "annotators", "Annotators", "Who wrote or validated the gold answers?",
        "Give the number of annotators, their locales, instructions, pay and agreement.",
    ),
    TemplateField(
        "locale_conventions", "Locale conventions measured",
        "Which spelling, date, time and unit conventions do items encode?",
        "Say which conventions answers may use and whether all of them are accepted.",
    ),
    TemplateField(
        "evaluation_normalization", "Evaluation normalization",
        "How are answers normalised, and which valid variants earn credit?",
        "Describe the scorer's normalisation and list accepted variants (spellings, date orders, units).",
    ),
    TemplateField(
        "geographic_coverage", "Geographic coverage", "Which countries and regions do the items represent?",
        "Describe the geographic scope and how it was decided.",
    ),
    TemplateField(
        "known_gaps", "Known gaps", "Which users, varieties or regions does the benchmark serve poorly?",
        "List known gaps, including any the measurements above reveal.",
    ),
    TemplateField(
        "contact_maintenance", "Contact and maintenance", "Who maintains the benchmark and how are problems reported?",
        "Give a contact, an issue tracker, the version and the update policy.",
    ),
)  # fmt: skip

_FRACTIONS = ("convention_coverage", "american_share", "american_share_excluding_spelling", "geographic_coverage")
_MAPPINGS = ("american_share_by_category", "countries", "scorer_sensitivity")
MEASURED_KEYS = ("n_items", *_FRACTIONS, *_MAPPINGS, "american_share_ci")


def _percent(value: float) -> str:
    return f"{100 * value:.1f}%"


def validate_measured(measured: Mapping[str, Any]) -> None:
    """Refuse unknown keys (a typo would silently drop a number) and fractions outside [0, 1]."""
    unknown = sorted(set(measured) - set(MEASURED_KEYS))
    if unknown:
        raise ValueError(f"unknown measured key(s) {unknown}; known: {list(MEASURED_KEYS)}")
    for key in _FRACTIONS:
        if key in measured and not 0.0 <= float(measured[key]) <= 1.0:
            raise ValueError(f"measured {key!r} must be a fraction in [0, 1], got {measured[key]!r}")
    for key in ("american_share_by_category", "countries"):
        for name, value in (measured.get(key) or {}).items():
            if not 0.0 <= float(value) <= 1.0:
                raise ValueError(f"measured {key!r}[{name!r}] must be a fraction in [0, 1], got {value!r}")
    if "american_share_ci" in measured:
        low, high = measured["american_share_ci"]
        if not 0.0 <= low <= high <= 1.0:
            raise ValueError(
                f"measured 'american_share_ci' must be (low, high) fractions, got {measured['american_share_ci']!r}"
            )
    if "n_items" in measured and int(measured["n_items"]) < 0:
        raise ValueError(f"measured 'n_items' must be >= 0, got {measured['n_items']!r}")


def _measured_lines(key: str, m: Mapping[str, Any]) -> list[str]:
    lines: list[str] = []
    if key == "locale_conventions":
        of_items = f" of {m['n_items']:,} items" if "n_items" in m else ""
        if "convention_coverage" in m:
            lines.append(f"Items with a convention signal (coverage): {_percent(m['convention_coverage'])}{of_items}")
        if "american_share" in m:
            ci = m.get("american_share_ci")
            interval = f" (95% CI {_percent(ci[0])}-{_percent(ci[1])})" if ci else ""
            lines.append(f"American share of matched signals: {_percent(m['american_share'])}{interval}")
        if "american_share_excluding_spelling" in m:
            lines.append(f"American share excluding spelling: {_percent(m['american_share_excluding_spelling'])}")
        for category, share in (m.get("american_share_by_category") or {}).items():
            lines.append(f"American share, {category}: {_percent(share)}")
    elif key == "evaluation_normalization":
        for label, diff in (m.get("scorer_sensitivity") or {}).items():
            lines.append(f"{label}: mean change on valid variants {100 * diff:+.1f} points")
    elif key == "geographic_coverage":
        if "geographic_coverage" in m:
            lines.append(f"Items naming a country: {_percent(m['geographic_coverage'])}")
        countries = sorted((m.get("countries") or {}).items(), key=lambda kv: -kv[1])
        if countries:
            lines.append("Most represented: " + ", ".join(f"{c} {_percent(s)}" for c, s in countries[:10]))
    return lines


def render_template(benchmark: str, measured: Mapping[str, Any] | None = None) -> str:
    """Markdown of the nine-field template for ``benchmark``, with measured values filled in.

    ``measured`` keys: ``n_items``; fractions ``convention_coverage``, ``american_share``,
    ``american_share_excluding_spelling``, ``geographic_coverage``; ``american_share_ci`` as
    (low, high); mappings ``american_share_by_category`` and ``countries`` (name -> fraction) and
    ``scorer_sensitivity`` (label -> mean variant-minus-original difference, a fraction).
    """
    measured = dict(measured or {})
    validate_measured(measured)
    out = [
        f"# User-centric documentation: {benchmark}",
        "",
        "Pre-filled by benchaudit. Lines under *Measured* come from the audits; complete every TODO.",
        "",
    ]
    for number, field in enumerate(FIELDS, start=1):
        out += [f"## {number}. {field.title}", "", f"*{field.question}*", ""]
        lines = _measured_lines(field.key, measured)
        if lines:
            out += ["Measured:", ""] + [f"- {line}" for line in lines] + [""]
        out += [f"TODO (maintainer): {field.todo}", ""]
    return "\n".join(out)
