"""The six user-centric documentation criteria, with evidence and a proposed 0/1/2 score.

Why rules and not a model: a reviewer must be able to see *why* a score was proposed and
overrule it; every proposal comes with the passages and metadata fields that fired and the rule
name. Scores: 0 absent, 1 mentioned, 2 operationalized (specific enough to act on or check: a
named locale or population, counts, demographics, explicit normalisation steps, a per-item
field). The proposal is the highest level over the evidence.

Rules per criterion ("mentioned when" / "operationalized when"):

- ``source_user_context``: prose about who produced the source text (writers, speakers,
  crowdworkers, "collected from"), a source-data section, or a ``language_creators`` /
  ``rai:dataCollection*`` field / that prose names a population: a country, a variety or locale
  code, counts of people, demographics. Annotation sections are left to annotator visibility.
- ``target_user_context``: intended use, users or audience, use cases, "designed to evaluate",
  ``rai:dataUseCases`` / the intended users are a named population (a country, a locale,
  "students in ...").
- ``annotator_visibility``: annotators, raters, crowdworkers, MTurk; ``annotations_creators``,
  ``rai:annotation*`` fields / counts, demographics, location, pay, qualifications or agreement of
  the annotators, or ``rai:annotatorDemographics``. Source-data and collection sections (people
  who *wrote* the data) are left to source-user context.
- ``locale_assumptions``: locale, dialect, language variety, spelling/date/unit conventions,
  cultural or US-centric framing / a locale code (``en-US``, case-sensitive) in prose or in a
  language field, a named variety ("American English") or a named convention (MM/DD, Fahrenheit);
  these count on their own, without a mention term. A bare language code ("en") does not.
- ``evaluation_normalization``: metrics, exact match, F1, normalisation, a scoring script, a
  ``metrics`` field / explicit normalisation steps (lower-casing, punctuation, articles,
  accepted variants or aliases).
- ``source_geographic_metadata``: geography, countries, regions, locations of the data / a
  per-item geographic column (a feature or record field named country, region, location, ...) or
  per-country figures (percentages, "N items from").

Sections about citation, licence, contributions and acknowledgements are ignored (author lists
and BibTeX are not about source users).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cache, lru_cache

import pandas as pd
import pycountry

from audit.docs.cards import Document
from audit.docs.choices import CRITERIA

SCORE_LABELS = {0: "absent", 1: "mentioned", 2: "operationalized"}
_EXCERPT_CHARS = 300
_IGNORED_SECTIONS = re.compile(r"citation|bibtex|licen[cs]|contribution|acknowledg|references", re.IGNORECASE)

_LOCALE_CODE = r"\b[a-z]{2,3}[-_](?:[A-Z]{2}|419)\b"
_LOCALE_CODE_RE = re.compile(_LOCALE_CODE)
_VARIETY = (
    r"\b(?:American|British|Australian|Canadian|Indian|Nigerian|Singapore(?:an)?|Irish|New Zealand|"
    r"South African|Kenyan|Philippine|Jamaican|Scottish|US|UK|Latin American|European|Brazilian|Mexican)\s+"
    r"(?:English|Spanish|Portuguese|French)\b"
)
_PEOPLE_COUNT = (
    r"\b\d[\d,]*\s+(?:\w+\s+)?(?:annotators|workers|crowdworkers|raters|label+ers|experts|people|participants|"
    r"judges|speakers|writers|authors|respondents|users|students|volunteers)\b"
)
_DEMOGRAPHICS = (
    r"\b(?:demographic\w*|native speakers? of|first language|nationalit\w+|gender|ages?d?\s+\d|age (?:range|group)|"
    r"based in|located in|residing in|living in|resident of|from the (?:United|U\.)|education level)\b"
)


@dataclass(frozen=True)
class CriterionRule:
    """Regexes (case-insensitive) that turn passages and fields into evidence for one criterion."""

    name: str
    title: str
    mention_text: str  # a passage mentions the criterion
    mention_section: str  # a non-placeholder passage under such a heading (or field) mentions it
    operational_text: str  # a mentioning passage that also matches is operationalized
    mention_fields: str = r"(?!)"  # metadata field names whose non-empty value is a mention
    operational_fields: str = r"(?!)"  # metadata field names whose non-empty value is operationalized
    operational_values: tuple[tuple[str, str, str], ...] = ()  # (field-name regex, value regex, label) at level 2
    exclude_section: str = r"(?!)"  # passages under such headings belong to another criterion
    country_is_operational: bool = True  # a country name in a mentioning passage operationalizes it
    locale_code_is_operational: bool = True  # a region-tagged code ("en-US", case-sensitive) operationalizes it
    operational_implies_mention: bool = False  # an operational term alone is evidence (locale codes, MM/DD)


RULES: dict[str, CriterionRule] = {
    rule.name: rule
    for rule in (
        CriterionRule(
            name="source_user_context",
            title="Source-user context",
            mention_text=r"\b(?:source language producers?|language producers?|written by|authored by|created by|"
            r"(?:collected|scraped|sourced|drawn|taken|crawled|gathered) from|crowd-?workers?|crowdsourc\w*|"
            r"native speakers?|speakers? of|writers?|question writers|(?:posts|comments|questions) (?:from|on|by)|"
            r"forums?|reddit|social media|exam(?:s|inations)? (?:from|in|for))\b",
            mention_section=r"source (?:data|language)|who are the source|language producers|speaker demographic|"
            r"data collection|collection process|rai:dataCollection",
            operational_text="|".join((_VARIETY, _PEOPLE_COUNT, _DEMOGRAPHICS)),
            mention_fields=r"^(?:language_creators|rai:dataCollection\w*)$",
            exclude_section=r"annotat|label+ing",
        ),
        CriterionRule(
            name="target_user_context",
            title="Target-user or evaluation context",
            mention_text=r"\b(?:intended (?:to|for|use\w*|users?|audience)|target (?:users?|audience|population)|"
            r"designed (?:for|to)|meant (?:for|to)|use cases?|out-of-scope|primary (?:uses?|users?)|"
            r"(?:to|for) (?:evaluate|evaluating|assess|assessing|measure|measuring|benchmark|benchmarking)\b)",
            mention_section=r"intended use|^uses$|> uses$|use cases?|direct use|out-of-scope|motivation|purpose|"
            r"rai:dataUseCases",
            operational_text="|".join(
                (
                    _VARIETY,
                    r"\b(?:users?|speakers|audiences?|people|populations?|students|clinicians|patients|learners|"
                    r"customers|residents|citizens|teachers)\s+(?:in|from|of|who live in|living in|based in)\s+"
                    r"(?:the\s+)?[A-Z]\w+",
                )
            ),
            mention_fields=r"^rai:dataUseCases$",
        ),
        CriterionRule(
            name="annotator_visibility",
            title="Annotator visibility",
            mention_text=r"\b(?:annotat(?:or|ors|ion|ions|ed|ing)|crowd-?workers?|raters?|label+ers?|mechanical turk|"
            r"mturk|prolific|upwork|human (?:judges|evaluators|reviewers|validation|verification)|validated by|"
            r"label+ed by|verified by)\b",
            mention_section=r"annotation|annotator|label+ing|rai:(?:dataAnnotation|annotat|machineAnnotation)",
            operational_text="|".join(
                (
                    _PEOPLE_COUNT,
                    _DEMOGRAPHICS,
                    _VARIETY,
                    r"\b(?:paid|compensat\w+|per hour|hourly|wage|qualification\w*|inter-annotator|agreement|kappa)\b",
                )
            ),
            mention_fields=r"^(?:annotations_creators|rai:annotationsPerItem|rai:dataAnnotation\w*|rai:machineAnnotationTools)$",
            operational_fields=r"^rai:annotatorDemographics",
            exclude_section=r"source (?:data|language)|language producers|data collection|collection process|"
            r"rai:dataCollection",
        ),
        CriterionRule(
            name="locale_assumptions",
            title="Locale assumptions",
            mention_text=r"\b(?:locales?|dialects?|variet(?:y|ies) of|language variet\w+|regional variation|spelling|"
            r"date formats?|units? of measure\w*|imperial units|metric units|cultural\w*|us-centric|western-centric|"
            r"anglo-?centric|english-speaking|culturally specific)\b|" + _VARIETY,
            mention_section=r"\blocales?\b|\bdialects?\b|\bvariet(?:y|ies)\b",
            operational_text="|".join(
                (
                    _VARIETY,
                    r"\b(?:MM/DD|DD/MM|month[- ]day|day[- ]month|12-hour|24-hour|Fahrenheit|Celsius|"
                    r"(?:American|British) spellings?|imperial units|metric units|US customary)\b",
                )
            ),
            operational_values=(
                (
                    r"^(?:language|language_details|language_bcp47|inLanguage)(?:\[\d+\])?$",
                    _LOCALE_CODE,
                    "region-tagged language code",
                ),
            ),
            country_is_operational=False,
            operational_implies_mention=True,
        ),
        CriterionRule(
            name="evaluation_normalization",
            title="Evaluation normalization",
            mention_text=r"\b(?:normali[sz]\w*|exact[- ]match|F1|BLEU|ROUGE|metrics?|case-insensitive|"
            r"evaluation (?:script|metric|metrics|protocol)|scoring (?:script|function|rule\w*)|"
            r"answer (?:matching|comparison))\b",
            mention_section=r"evaluation|metrics?|scoring|leaderboard",
            operational_text=r"\b(?:lower-?cas\w*|case-?(?:in)?sensitive|whitespace|stemm\w*|aliases|"
            r"number (?:canonicali|normali)\w*|alternative (?:spellings|answers)|"
            r"variants? (?:are|is) (?:accepted|counted)|"
            r"(?:remov|strip|drop|ignor)\w*\b[^.]{0,40}\b(?:articles|punctuation)|"
            r"(?:articles|punctuation)\b[^.]{0,60}\b(?:removed|stripped|dropped|ignored))\b",
            mention_fields=r"(?:^|\.)metrics(?:\[\d+\])?(?:\.|$)",
            country_is_operational=False,
            locale_code_is_operational=False,
        ),
        CriterionRule(
            name="source_geographic_metadata",
            title="Source/geographic metadata",
            mention_text=r"\b(?:geograph\w*|countr(?:y|ies)|regions?|locations?|geo-?locat\w*|continents?|"
            r"collected in|global south|nationalit\w+)\b",
            mention_section=r"geograph|location|region",
            operational_text=r"\b(?:\d+(?:\.\d+)?\s*%|\d[\d,]*\s+(?:items|questions|examples|images|records)\s+(?:from|in))|"
            r"\b(?:each|every|per)[ -](?:item|example|question|image|record|row)\b[^.]*\b(?:country|location|region)\b",
            operational_values=(
                (
                    r"(?:features|field|fields|columns)(?:\[\d+\])?\.name$",
                    r"(?i)^(?:country|countries|country_code|region|location|geo\w*|latitude|longitude|lat|lon|lng|"
                    r"city|state|province|locale|nationality|place)$",
                    "per-item geographic column",
                ),
            ),
            country_is_operational=False,
            locale_code_is_operational=False,
        ),
    )
}


def ordered_criteria(present: Iterable[str]) -> list[str]:
    """The six criteria in canonical order (those present), then any other names alphabetically."""
    present = set(present)
    return [c for c in CRITERIA if c in present] + sorted(present - set(CRITERIA))


@dataclass(frozen=True)
class Evidence:
    """One passage or field behind a proposed score, with the rule that fired."""

    criterion: str
    level: int
    kind: str  # "passage" or "field"
    location: str  # "section @ line N", or the field name
    rule: str
    text: str


@dataclass(frozen=True)
class CriterionAssessment:
    """A proposed score for one criterion of one document, with its evidence (strongest first)."""

    source: str
    criterion: str
    proposed_score: int
    evidence: tuple[Evidence, ...]


@lru_cache(maxsize=1)
def _country_pattern() -> re.Pattern:
    names = {"United States", "USA", "U.S.", "UK", "Britain", "England", "Scotland", "Wales"}
    for country in pycountry.countries:
        for attr in ("name", "common_name"):
            value = getattr(country, attr, None)
            if value and "," not in value:
                names.add(value)
    alternation = "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True))
    return re.compile(r"(?<![\w.])(?:" + alternation + r")(?![\w])")  # case-sensitive: "Turkey", not "turkey"


@cache
def _compiled(pattern: str) -> re.Pattern:
    return re.compile(pattern, re.IGNORECASE)


def _excerpt(text: str, match: re.Match | None) -> str:
    if len(text) <= _EXCERPT_CHARS or match is None:
        return text[:_EXCERPT_CHARS]
    start = max(0, match.start() - _EXCERPT_CHARS // 3)
    return ("…" if start else "") + text[start : start + _EXCERPT_CHARS] + "…"


def _operational_match(rule: CriterionRule, text: str) -> tuple[re.Match | None, str]:
    match = _compiled(rule.operational_text).search(text)
    if match:
        return match, f"operational term {match.group(0)!r}"
    if rule.locale_code_is_operational:
        code = _LOCALE_CODE_RE.search(text)  # case-sensitive: "en-US" is a code, "co-op" is not
        if code:
            return code, f"locale code {code.group(0)!r}"
    if rule.country_is_operational:
        country = _country_pattern().search(text)
        if country:
            return country, f"names country {country.group(0)!r}"
    return None, ""


def _passage_evidence(rule: CriterionRule, doc: Document) -> list[Evidence]:
    evidence = []
    for passage in doc.passages:
        if _IGNORED_SECTIONS.search(passage.section) or _compiled(rule.exclude_section).search(passage.section):
            continue
        mention = _compiled(rule.mention_text).search(passage.text)
        by_section = _compiled(rule.mention_section).search(passage.section) if passage.section else None
        if not (mention or by_section or rule.operational_implies_mention):
            continue
        location = f"{passage.section or '(top)'} @ line {passage.line}" if passage.line else passage.section
        operational, why = _operational_match(rule, passage.text)
        if not (mention or by_section or operational):
            continue
        if operational:
            evidence.append(Evidence(rule.name, 2, "passage", location, why, _excerpt(passage.text, operational)))
        else:
            why = f"mentions {mention.group(0)!r}" if mention else f"under section {passage.section!r}"
            evidence.append(Evidence(rule.name, 1, "passage", location, why, _excerpt(passage.text, mention)))
    return evidence


def _field_evidence(rule: CriterionRule, doc: Document) -> list[Evidence]:
    evidence = []
    for field in doc.fields:
        if _IGNORED_SECTIONS.search(field.name):
            continue
        level, why = 0, ""
        if re.search(rule.operational_fields, field.name):
            level, why = 2, "operational field"
        for name_pattern, value_pattern, label in rule.operational_values:
            if not level and re.search(name_pattern, field.name) and re.search(value_pattern, field.value):
                level, why = 2, label
        if not level and re.search(rule.mention_fields, field.name):
            level, why = 1, "field present"
        if level:
            evidence.append(Evidence(rule.name, level, "field", field.name, why, field.value[:_EXCERPT_CHARS]))
    return evidence


def assess_document(doc: Document, criteria: Sequence[str] = CRITERIA) -> list[CriterionAssessment]:
    """Evidence and a proposed score for each criterion of one document."""
    unknown = sorted(set(criteria) - set(RULES))
    if unknown:
        raise ValueError(f"unknown criteria {unknown}; known: {list(CRITERIA)}")
    out = []
    for name in criteria:
        rule = RULES[name]
        evidence = sorted(_field_evidence(rule, doc) + _passage_evidence(rule, doc), key=lambda e: -e.level)
        out.append(CriterionAssessment(doc.source, name, max((e.level for e in evidence), default=0), tuple(evidence)))
    return out


def proposals_table(assessments: Iterable[CriterionAssessment]) -> pd.DataFrame:
    """One row per (resource, criterion): the proposed score and how much evidence backs it."""
    rows = [
        {"resource": a.source, "criterion": a.criterion, "score": a.proposed_score, "n_evidence": len(a.evidence)}
        for a in assessments
    ]
    return pd.DataFrame(rows, columns=["resource", "criterion", "score", "n_evidence"])


def evidence_table(assessments: Iterable[CriterionAssessment]) -> pd.DataFrame:
    """Every piece of evidence, for the reviewer's sheet."""
    rows = [
        {"resource": a.source, "criterion": e.criterion, "level": e.level, "kind": e.kind,
         "location": e.location, "rule": e.rule, "text": e.text}
        for a in assessments
        for e in a.evidence
    ]  # fmt: skip
    return pd.DataFrame(rows, columns=["resource", "criterion", "level", "kind", "location", "rule", "text"])
