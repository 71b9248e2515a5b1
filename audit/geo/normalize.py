"""Text normalization shared by the lexicon and the resolver.

Aliases and captions go through the *same* Arrow kernels, so an alias matches a caption exactly
when their normalized forms line up; there is no second, hand-written normalizer to drift.

Normalized form: Unicode NFKC, lower case, every run of characters that is not a letter, mark or
digit replaced by a *double* space, and a double space added at both ends. The double space is what
makes whole-token matching free inside an Aho–Corasick scan: an ASCII alias is searched as
``" alias "`` (its own inner separators doubled too), so it can only start and end on token
boundaries, and two adjacent tokens ("france germany") never compete for one separator.
"""
from __future__ import annotations

import unicodedata

import pyarrow as pa
import pyarrow.compute as pc

SEP = "  "
_NON_WORD = r"[^\p{L}\p{M}\p{N}]+"


def normalize_array(texts: pa.Array | pa.ChunkedArray) -> pa.Array:
    """Normalize a string array (nulls stay null). Vectorised: four Arrow kernels, no Python loop."""
    if isinstance(texts, pa.ChunkedArray):
        texts = texts.combine_chunks()
    out = pc.utf8_normalize(texts, "NFKC")
    out = pc.utf8_lower(out)
    out = pc.replace_substring_regex(out, _NON_WORD, SEP)
    return pc.binary_join_element_wise(SEP, out, SEP, "")


def normalize_cased_array(texts: pa.Array | pa.ChunkedArray, is_nfkc: bool = False) -> pa.Array:
    """``normalize_array`` without the lower-casing: same separators, same byte offsets wherever
    lower-casing keeps a character's length (every ASCII and almost every other letter), so the
    resolver can see whether a name it matched was written with capitals. ``is_nfkc``: the texts
    are NFKC already (the resolver normalizes once for this and the address patterns)."""
    if isinstance(texts, pa.ChunkedArray):
        texts = texts.combine_chunks()
    out = texts if is_nfkc else pc.utf8_normalize(texts, "NFKC")
    out = pc.replace_substring_regex(out, _NON_WORD, SEP)
    return pc.binary_join_element_wise(SEP, out, SEP, "")


def normalize_text(text: str) -> str:
    """Normalize one string with exactly the kernels used for captions."""
    return normalize_array(pa.array([text], pa.string()))[0].as_py()


def tokens(normalized: str) -> list[str]:
    """The tokens of a normalized string."""
    return normalized.split()


def fold_diacritics(text: str) -> str:
    """ASCII-fold Latin diacritics (São → Sao); scripts without a Latin decomposition are kept."""
    decomposed = unicodedata.normalize("NFKD", text)
    return unicodedata.normalize("NFC", "".join(ch for ch in decomposed if not unicodedata.combining(ch)))


# Scripts written without spaces between words: an alias in them is matched as a substring of the
# normalized text; every other alias is matched as a whole token sequence.
_UNSPACED_PREFIXES = ("CJK", "HIRAGANA", "KATAKANA", "THAI", "LAO", "KHMER", "MYANMAR", "HANGUL")


def is_unspaced_script(text: str) -> bool:
    """True when any letter of ``text`` belongs to a script written without word spaces."""
    for ch in text:
        if ch.isalpha():
            name = unicodedata.name(ch, "")
            if name.startswith(_UNSPACED_PREFIXES):
                return True
    return False


def search_pattern(alias_norm: str) -> str:
    """The literal searched for an alias in normalized text (see module docstring)."""
    body = SEP.join(alias_norm.split())
    if is_unspaced_script(alias_norm):
        return body
    return f" {body} "
