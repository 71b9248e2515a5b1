"""Regenerate the shipped American <-> other spelling inventory from the public lists.

The runtime never reads the source lists: it loads the derived CSV in
``audit/conventions/data/``. These pure rules are how that CSV was made, so a reviewer can audit
every one; ``scripts/derive/spelling_sources.py`` reads the lists and rewrites the CSV::

    python -m scripts.derive.spelling_sources --data-dir ../shared/data

Rules (why each exists is in ``data/SOURCES.md``):

1. VarCon lines count when their A and B tags carry no variant mark (``v``, ``V``, ``-``, ``.``,
   ``x``) and exactly one spelling is tagged A without B and one B without A. ``Z`` (Oxford -ize)
   and the C/D/_ tags are ignored, so ``A Z: organize / B: organise`` is a pair.
2. breame and hyperreality pairs are kept only when VarCon tags the American word A: a word VarCon
   does not list as an American variant (``ankle``, ``filter``) is common English everywhere.
3. A pair is dropped when either word is valid in both varieties: the American word carries a B/Bv
   tag anywhere in VarCon, or the other word an A/Av tag (``check``, ``meter``, ``program``).
4. Possessives, fragments (``paleo-``) and VarCon's capitalised names (``Ve``/``Voe``,
   ``For``/``Four``) are dropped: detection is whole-word and case-insensitive, so a possessive
   is found through its base form and a name would collide with a common word.
5. A word that is American in one pair and other in another is dropped with all its pairs.
6. Lexical pairs (``gasoline``/``petrol``) come from the hyperreality dialect glosses
   ``(US: x)``/``(UK: x)`` plus a short curated list; they form the optional ``lexical`` category.
7. Pairs only VarCon has are kept up to SCOWL level 60 (the size recommended for spell checkers)
   and when both words have 5+ letters: the rest are mostly affix headwords (``et``/``aet``,
   ``ted``/``taed``, ``perv``/``prev``) that would match ``et al.`` or a name.
"""
from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

_TAG = re.compile(r"^([ABZCD_])([vV.\-x]?)(\d?)$")
_WORD = re.compile(r"^[a-z]+$")
_LEVEL = re.compile(r"^#.*\(level (\d+)\)")
MAX_VARCON_LEVEL = 60  # SCOWL size its author recommends for spell checkers
_PHRASE = re.compile(r"^[a-z]+(?:[ -][a-z]+){0,2}$")
_GLOSS = re.compile(r"\((US|UK):\s*\"?([A-Za-z][A-Za-z\- ]*?)\"?\s*[,;.)]")

# Classic lexical pairs named in the reference inventory but absent from the glosses.
CURATED_LEXICAL: tuple[tuple[str, str], ...] = (
    ("apartment", "flat"), ("attorney", "solicitor"), ("elevator", "lift"), ("truck", "lorry"),
    ("sidewalk", "pavement"), ("diaper", "nappy"), ("cookie", "biscuit"), ("faucet", "tap"),
    ("vacation", "holiday"), ("gasoline", "petrol"), ("eggplant", "aubergine"),
    ("zucchini", "courgette"), ("flashlight", "torch"), ("garbage", "rubbish"),
    ("mailman", "postman"), ("parking lot", "car park"), ("freeway", "motorway"),
    ("sneakers", "trainers"), ("bar", "pub"), ("soccer", "football"),
)


@dataclass(frozen=True)
class InventoryRow:
    """One American/other pair as shipped; ``source`` lists every list that had it."""

    american: str
    other: str
    source: str
    category: str


def parse_varcon(lines: list[str]) -> tuple[dict[tuple[str, str], int], dict[str, set[str]]]:
    """Return (A-vs-B pairs by rule 1 with their SCOWL level, every tag seen per lower-cased word)."""
    pairs: dict[tuple[str, str], int] = {}
    tags: dict[str, set[str]] = defaultdict(set)
    level = 0
    for number, raw in enumerate(lines, start=1):
        line = raw.strip()
        body, _, note = line.partition("|")
        heading = _LEVEL.match(line)
        if heading:
            level = int(heading.group(1))
        if not line or line.startswith("#") or note.strip().startswith("(-)"):
            continue
        groups: list[tuple[set[str], str]] = []
        for group in body.split(" / "):
            head, sep, word = group.partition(":")
            if not sep:
                raise ValueError(f"varcon.txt line {number}: no ':' in group {group!r}")
            tokens = head.split()
            for token in tokens:
                if not _TAG.match(token):
                    raise ValueError(f"varcon.txt line {number}: unknown tag {token!r}")
            word = word.strip()
            tags[word.lower()].update(tokens)
            groups.append(({t for t in tokens if t[0] in "AB"}, word))
        if any(len(t) > 1 for ab, _ in groups for t in ab):
            continue
        american = [w for ab, w in groups if ab == {"A"}]
        other = [w for ab, w in groups if ab == {"B"}]
        if len(american) == 1 and len(other) == 1 and (american[0] + other[0]).islower():
            pairs[(american[0], other[0])] = level
    return pairs, tags


def breame_pairs(rows: Iterable[dict[str, str]]) -> set[tuple[str, str]]:
    """breame rows (both directions, columns american and british) as (american, british) pairs."""
    return {(row["american"].strip().lower(), row["british"].strip().lower()) for row in rows}


def hyperreality_pairs(american: dict[str, str], british: dict[str, str]) -> set[tuple[str, str]]:
    """Both hyperreality spelling maps ({american: british}, {british: american}) as pairs."""
    pairs = {(a.lower(), b.lower()) for a, b in american.items()}
    return pairs | {(a.lower(), b.lower()) for b, a in british.items()}


def _headwords(entries: dict[str, str]) -> list[tuple[str, str]]:
    """(term, gloss) per term of a dialect-list key such as ``'cell phone, cellphone'``."""
    return [
        (term, gloss)
        for head, gloss in entries.items()
        for term in re.split(r",\s*|\s*/\s*", head.lower())
        if _PHRASE.match(term)
    ]


def lexical_gloss_pairs(american_only: dict[str, str], british_only: dict[str, str]) -> set[tuple[str, str]]:
    """(american, british) vocabulary pairs from ``(US: x)``/``(UK: x)`` glosses (rule 6).

    A pair is kept only when the gloss's partner is itself a headword of the other dialect
    list: the glosses alone yield noise such as ``captain``/``flight lieutenant``.
    """
    lists = {"american": _headwords(american_only), "british": _headwords(british_only)}
    heads = {name: {term for term, _ in terms} for name, terms in lists.items()}
    pairs = set()
    for name, wanted, partner_list in (("british", "US", "american"), ("american", "UK", "british")):
        for term, gloss in lists[name]:
            found = [m.group(2) for m in _GLOSS.finditer(gloss) if m.group(1) == wanted]
            partner = found[0].strip().lower() if found else ""
            if partner in heads[partner_list]:
                pairs.add((partner, term) if wanted == "US" else (term, partner))
    return pairs


def _valid_in(tags: set[str], variety: str) -> bool:
    return variety in tags or variety + "v" in tags


def build_inventory(
    varcon_lines: list[str],
    breame: set[tuple[str, str]],
    hyperreality: set[tuple[str, str]],
    lexical: set[tuple[str, str]],
) -> list[InventoryRow]:
    """Apply rules 1-6 and return the sorted inventory."""
    varcon, tags = parse_varcon(varcon_lines)
    sources: dict[tuple[str, str], set[str]] = defaultdict(set)
    for pair in varcon:
        sources[pair].add("varcon")
    for name, pairs in (("breame", breame), ("hyperreality", hyperreality)):
        for american, other in pairs:
            if "A" in tags.get(american, ()):
                sources[(american, other)].add(name)

    def clean(american: str, other: str) -> bool:
        return (
            american != other
            and not _valid_in(tags.get(american, set()), "B")
            and not _valid_in(tags.get(other, set()), "A")
        )

    def rare(american: str, other: str) -> bool:
        return sources[(american, other)] == {"varcon"} and (
            varcon[(american, other)] > MAX_VARCON_LEVEL or min(len(american), len(other)) < 5
        )

    spelling = {p for p in sources if _WORD.match(p[0]) and _WORD.match(p[1]) and clean(*p) and not rare(*p)}
    conflicts = {a for a, _ in spelling} & {o for _, o in spelling}
    spelling = {p for p in spelling if p[0] not in conflicts and p[1] not in conflicts}
    spelling_words = {w for pair in spelling for w in pair}

    lexical_sources: dict[tuple[str, str], set[str]] = defaultdict(set)
    for pair in lexical:
        lexical_sources[pair].add("hyperreality-gloss")
    for pair in CURATED_LEXICAL:
        lexical_sources[pair].add("curated")
    lexical_ok = {p for p in lexical_sources if p[0] != p[1] and not spelling_words & set(p)}
    lex_conflicts = {a for a, _ in lexical_ok} & {o for _, o in lexical_ok}
    lexical_ok = {p for p in lexical_ok if not lex_conflicts & set(p)}

    rows = [InventoryRow(a, o, ";".join(sorted(sources[(a, o)])), "spelling") for a, o in spelling]
    rows += [
        InventoryRow(a, o, ";".join(sorted(lexical_sources[(a, o)])), "lexical")
        for a, o in lexical_ok
    ]
    return sorted(rows, key=lambda r: (r.category, r.american, r.other))
