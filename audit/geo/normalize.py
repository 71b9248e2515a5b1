"""Text normalization shared by the lexicon and the resolver.

Aliases and captions go through the *same* functions, so an alias matches a caption exactly when
their normalized forms line up. The definition is Arrow's Unicode kernels (``_normalize_kernels``);
what runs is a path tested equal to it: those kernels for the records holding non-ASCII text, then
one compiled pass over the bytes of every record (``audit.geo.normalize_kernel``).

Normalized form: Unicode NFKC, lower case, every run of characters that is not a letter, mark or
digit replaced by a *double* space, and a double space added at both ends. The double space is what
makes whole-token matching free inside an Aho–Corasick scan: an ASCII alias is searched as
``" alias "`` (its own inner separators doubled too), so it can only start and end on token
boundaries, and two adjacent tokens ("france germany") never compete for one separator.
"""
from __future__ import annotations

import unicodedata
from collections.abc import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

SEP = "  "
_NON_WORD = r"[^\p{L}\p{M}\p{N}]+"
_NON_WORD_NON_ASCII = r"[^\x00-\x7f\p{L}\p{M}\p{N}]"

# ASCII is NFKC-invariant and its letters and digits are its only \p{L}\p{M}\p{N} characters, so once a
# record's non-ASCII separators are spaces (all of them already, in plain ASCII), one byte table
# (lower-case; every other ASCII byte → a space) and one separator per run of spaces give the same
# result as RE2's replace, at a small fraction of its cost per caption (RE2 was most of the resolver's time).
_ASCII_LOWER_TABLE = np.array([ord(chr(b).lower()) if chr(b).isalnum() else 32 for b in range(128)] + list(range(128, 256)), np.uint8)
_ASCII_CASED_TABLE = np.array([b if chr(b).isalnum() else 32 for b in range(128)] + list(range(128, 256)), np.uint8)


def normalize_array(texts: pa.Array | pa.ChunkedArray, non_ascii: pa.BooleanArray | None = None) -> pa.Array:
    """Normalize a string array (nulls stay null). Vectorised: NFKC, lower-casing and one regex for the
    records holding non-ASCII text, then one compiled pass over the bytes of all; no Python loop.
    ``non_ascii``: which records hold non-ASCII text, when the caller knows already (``non_ascii_rows``;
    any superset is exact too, only slower)."""
    return _normalize(texts, lower=True, is_nfkc=False, non_ascii=non_ascii)


def normalize_cased_array(texts: pa.Array | pa.ChunkedArray, is_nfkc: bool = False,
                          non_ascii: pa.BooleanArray | None = None) -> pa.Array:
    """``normalize_array`` without the lower-casing: same separators, same byte offsets wherever
    lower-casing keeps a character's length (every ASCII and almost every other letter), so the
    resolver can see whether a name it matched was written with capitals. ``is_nfkc``: the texts
    are NFKC already (the resolver normalizes once for this and the address patterns)."""
    return _normalize(texts, lower=False, is_nfkc=is_nfkc, non_ascii=non_ascii)


def non_ascii_rows(texts: pa.Array) -> pa.BooleanArray:
    """Which records hold a non-ASCII character (null records: False). Computed once by the resolver
    for the mojibake check and the normalizer, each of which would otherwise read every byte for it."""
    return pc.fill_null(pc.invert(pc.string_is_ascii(texts)), False)


def _normalize(texts: pa.Array | pa.ChunkedArray, lower: bool, is_nfkc: bool, non_ascii: pa.BooleanArray | None) -> pa.Array:
    if isinstance(texts, pa.ChunkedArray):
        texts = texts.combine_chunks()
    if texts.type != pa.string() or len(texts) == 0:
        return _normalize_kernels(texts, lower, is_nfkc)
    if non_ascii is None:
        non_ascii = non_ascii_rows(texts)
    if pc.any(non_ascii).as_py():
        # The records holding non-ASCII text get the definition's Unicode steps up to the separators
        # (NFKC, lower case) and have each non-ASCII non-word character made a space; after that
        # every non-word character is an ASCII one, and the byte path below is exact for them too.
        rows = pc.filter(texts, non_ascii)
        if not is_nfkc:
            rows = pc.utf8_normalize(rows, "NFKC")
        if lower:
            rows = pc.utf8_lower(rows)
        texts = pc.replace_with_mask(texts, non_ascii, pc.replace_substring_regex(rows, _NON_WORD_NON_ASCII, " "))
    return _normalize_ascii(texts, lower)


def _normalize_kernels(texts: pa.Array, lower: bool, is_nfkc: bool) -> pa.Array:
    """The definition: NFKC, lower case, each non-word run → ``SEP``, ``SEP`` at both ends."""
    out = texts if is_nfkc else pc.utf8_normalize(texts, "NFKC")
    if lower:
        out = pc.utf8_lower(out)
    out = pc.replace_substring_regex(out, _NON_WORD, SEP)
    return pc.binary_join_element_wise(SEP, out, SEP, "")


def _normalize_ascii(texts: pa.StringArray, lower: bool) -> pa.StringArray:
    """``_normalize_kernels`` exact for every record whose non-word characters are all ASCII (and
    that needs no NFKC or lower-casing beyond ASCII): one byte table lower-cases ASCII letters and
    makes every other ASCII byte that is no letter or digit a space (bytes of multi-byte characters
    are left alone), and each run of spaces becomes one ``SEP``, a leading or trailing run included,
    which is where the regex puts one; ``SEP`` at both ends. One compiled pass over the bytes
    (``audit.geo.normalize_kernel``); nulls stay null."""
    from audit.geo.normalize_kernel import normalize_bytes, string_buffers  # numba: loaded where captions are normalized

    n = len(texts)
    data, offsets = string_buffers(texts)
    out, out_offsets = normalize_bytes(data, offsets, _ASCII_LOWER_TABLE if lower else _ASCII_CASED_TABLE)
    validity = texts.is_valid().buffers()[1] if texts.null_count else None
    return pa.StringArray.from_buffers(n, pa.py_buffer(out_offsets), pa.py_buffer(out), validity, texts.null_count)


def alias_norms(values: Sequence[str | None]) -> list[str]:
    """The lexicon's ``alias_norm`` of each value: normalized, its tokens joined by one space, no padding
    (a missing value gives ""). The normalized form's separators are exactly ``SEP``, so this is a trim
    and a replace."""
    out = pc.utf8_trim(pc.fill_null(normalize_array(pa.array(values, pa.string())), ""), " ")
    return pc.replace_substring(out, SEP, " ").to_pylist()


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
    if text.isascii():
        return False
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
