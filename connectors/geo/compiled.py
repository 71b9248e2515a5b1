"""Compiled lexicons kept on disk, so a geo worker starts in a fraction of a second instead of seconds.

Every worker of a geo scan compiles its lexicon into search patterns (``audit.geo.patterns``): ~2.4 s
for the gazetteer's 176,000 entries on one core, paid again by every worker a run starts, by every
worker Ray restarts, and by every short run. The patterns depend only on the lexicon's content and
on the code that compiles them, so the first worker to compile writes them to
``$BENCHAUDIT_GEO_CACHE`` (default ``~/.cache/benchaudit/geo``), keyed by both, and the others read
them back (~0.2 s). The Aho-Corasick automata cannot be pickled (building them takes ~2 s for the
gazetteer), so ``built_resolver`` keeps the last one built in the process: the runs of one process
(``--executor local``, a re-audit of several corpora, a test session) build it once.

A key names the content (the lexicon's SHA-256) and the compiler (a digest of the source of the
modules that compile), so an edited lexicon or an edited compiler can never read another's
patterns. The cache is the user's own, like numba's cache or the model cache beside it: it is
trusted as the home directory is. A cache that cannot be written (a read-only home on a cluster
node) costs the compile, never the run.
"""
from __future__ import annotations

import hashlib
import logging
import os
import pickle
import tempfile
from functools import cache
from importlib.util import find_spec
from pathlib import Path

import pyarrow as pa

from audit.geo.patterns import Patterns, compile_patterns
from audit.geo.resolve import ALL_MATCH_TYPES, CountryResolver

log = logging.getLogger("benchaudit")

# The modules whose code decides what a compile produces.
COMPILER = ("audit.geo.patterns", "audit.geo.normalize", "audit.geo.normalize_kernel", "audit.geo.lexicon")


def cache_dir() -> Path:
    return Path(os.environ.get("BENCHAUDIT_GEO_CACHE") or Path.home() / ".cache" / "benchaudit" / "geo")


@cache
def compiler_digest() -> str:
    digest = hashlib.sha256()
    for module in COMPILER:
        spec = find_spec(module)
        digest.update(module.encode() + b"\0" + Path(spec.origin).read_bytes() if spec and spec.origin else module.encode())
    return digest.hexdigest()


def cache_key(lexicon_sha256: str, match_types: tuple[str, ...]) -> str:
    text = "\0".join([lexicon_sha256, ",".join(match_types), compiler_digest()])
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def compiled_patterns(entries: pa.Table, lexicon_sha256: str, match_types: tuple[str, ...]) -> Patterns:
    """``compile_patterns(entries, match_types)``, read from the cache when a worker compiled this lexicon
    with this code before, else compiled and written there for the next worker."""
    path = cache_dir() / f"patterns-{cache_key(lexicon_sha256, match_types)}.pickle"
    try:
        with open(path, "rb") as fh:
            found = pickle.load(fh)
        if isinstance(found, Patterns):
            return found
    except FileNotFoundError:
        pass
    except Exception as exc:  # noqa: BLE001 -- a cut or stale file: compile again and replace it
        log.debug("geo: compiled lexicon %s unreadable (%s); compiling", path, exc)
    patterns = compile_patterns(entries, match_types)
    tmp = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        # whole or nothing: two workers compiling at once each write their own file, and the last rename wins
        with tempfile.NamedTemporaryFile(dir=path.parent, prefix=f".{path.name}.", delete=False) as fh:
            tmp = fh.name
            pickle.dump(patterns, fh, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(tmp, path)
    except OSError as exc:
        log.debug("geo: compiled lexicon not cached at %s (%s)", path, exc)
        if tmp:
            Path(tmp).unlink(missing_ok=True)
    return patterns


# The last resolver built in this process, by (lexicon SHA-256, repair_mojibake): one lexicon's automata at a time
# (~310 MiB for the gazetteer, measured)
_built: tuple[tuple[str, bool], CountryResolver] | None = None


def built_resolver(entries: pa.Table, lexicon_sha256: str, repair_mojibake: bool = True) -> CountryResolver:
    """The lexicon's resolver (every evidence tier: take an operating point with ``at_min_evidence``), built once per
    process for the last lexicon asked for. A resolver is pure state after it is built, so runs may share it."""
    global _built
    key = (lexicon_sha256, repair_mojibake)
    if _built is None or _built[0] != key:
        _built = None  # the kept automata go before the next are built: never two lexicons' in memory
        patterns = compiled_patterns(entries, lexicon_sha256, ALL_MATCH_TYPES)
        _built = (key, CountryResolver(entries, repair_mojibake=repair_mojibake, patterns=patterns))
    return _built[1]

