"""WordNet's data model as the gazetteer's word filters use it: synsets, sense order, morphy.

Pure data and rules (no file reading): ``scripts.derive.wordnet`` reads the database files into these
classes at build time; ``audit.geo.wordsense`` asks them which place names are also words.
"""
from __future__ import annotations

from dataclasses import dataclass

# morphy(7WN) detachment rules: inflectional endings and what replaces them.
_DETACH = {
    "n": (("s", ""), ("ses", "s"), ("xes", "x"), ("zes", "z"), ("ches", "ch"), ("shes", "sh"), ("men", "man"), ("ies", "y")),
    "v": (("s", ""), ("ies", "y"), ("es", "e"), ("es", ""), ("ed", "e"), ("ed", ""), ("ing", "e"), ("ing", "")),
    "a": (("er", ""), ("est", ""), ("er", "e"), ("est", "e")),
}


@dataclass(frozen=True)
class Synset:
    key: str  # "n:08932568"
    lexname: str
    words: tuple[str, ...]  # as written: "Paris", "City_of_Light"
    hypernyms: tuple[str, ...]  # keys of @ and @i targets
    instance: bool  # has an instance hypernym (a named individual: Paris, Jack London, London Bridge)
    part_of: tuple[str, ...] = ()  # keys of #p targets (part holonyms: Paris is part of France)
    pertains_to: tuple[str, ...] = ()  # keys of the noun synsets an adjective's \\ pointer names (Tuscan: Tuscany)


@dataclass(frozen=True)
class WordNet:
    synsets: dict[str, Synset]
    senses: dict[str, tuple[str, ...]]  # "n:paris" → synset keys in sense order
    tagged: dict[str, int]  # "n:paris" → how many of its senses carry SemCor tag counts
    exceptions: dict[str, tuple[str, ...]]  # "n:media" → ("medium",): irregular inflections (*.exc)

    def base_forms(self, pos: str, word: str) -> list[str]:
        """WordNet's morphy: the lemmas an inflected lower-case word may come from ("highways" →
        "highway", "media" → "medium", "polling" → "poll"), the word itself first when it is one."""
        out = [word] if f"{pos}:{word}" in self.senses else []
        out += [b for b in self.exceptions.get(f"{pos}:{word}", ()) if f"{pos}:{b}" in self.senses]
        for suffix, ending in _DETACH.get(pos, ()):
            if word.endswith(suffix) and len(word) > len(suffix) + 1:
                base = word[: len(word) - len(suffix)] + ending
                if f"{pos}:{base}" in self.senses:
                    out.append(base)
        return list(dict.fromkeys(out))

    def part_closure(self, key: str) -> set[str]:
        """``key`` and every synset it is part of (part holonyms, transitively): Marseille, Provence, France."""
        return self._closure([key], "part_of")

    def hypernym_closure(self, key: str) -> set[str]:
        """Every synset above ``key`` (hypernyms and instance hypernyms, transitively)."""
        return self._closure(list(self.synsets[key].hypernyms), "hypernyms")

    def _closure(self, start: list[str], pointers: str) -> set[str]:
        """``start`` and every synset reached from it along the synsets' ``pointers`` field, transitively."""
        seen: set[str] = set()
        todo = start
        while todo:
            k = todo.pop()
            if k not in seen:
                seen.add(k)
                todo.extend(getattr(self.synsets[k], pointers))
        return seen
