"""A lexicon compiled into search patterns: what the resolver's automata look for, and what each hit means.

Every worker compiles its lexicon once, and the gazetteer's ~176,000 entries hold ~157,000
capitalised-only names that each need their cased forms ("Kerrville", "KERRVILLE"): done one entry
at a time in Python that took seconds per worker (most of a shard's time). So the compile works on
whole columns: Arrow kernels map the fields, normalize the cased forms and group entries by
pattern, and a pattern's entries become Python tuples only when a caption first matches it.

An entry is the tuple ``(alias_norm, country index, match type index, pair_only, context_only,
case rule index, admin1 codes, population, alternate)`` (``alternate``: the name is one of GeoNames' alternate
names of the place, the ``alternate_name`` tier). Names that match in any case are searched in
lower-cased text (``lower``); names that count only when capitalised are searched in the text as
written (``cased``): each spelling of the name as written, with an initial capital, and in
capitals. A pattern's entries are the entries of every name it spells, in lexicon order; an
all-capitals form carries every entry of its name, the other forms only those asking for an
initial capital ("Tx" is no form of the code TX).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from audit.geo import sources
from audit.geo.lexicon import CASE_RULES, PERSON_SENSE, RESTRICTION_EXCLUDED, RESTRICTION_PERSON, other_proper_noun_first
from audit.geo.normalize import alias_norms, fold_diacritics, normalize_cased_array, search_pattern

ANY_CASE, INITIAL = CASE_RULES.index("any"), CASE_RULES.index("initial")  # an entry's case rule indexes CASE_RULES


class PatternEntries(dict):
    """Pattern id → its entries, each list built on first use: a batch touches few of the patterns."""

    def __init__(self, rows: np.ndarray, offsets: np.ndarray, fields: list[list]):
        super().__init__()
        self._rows, self._offsets, self._fields = rows, offsets, fields
        self._n = len(offsets) - 1

    def __missing__(self, pid: int) -> list[tuple]:
        if not 0 <= pid < self._n:
            raise KeyError(pid)
        f = self._fields
        # two spellings of one place ("Saint-Denis", "Saint Denis") are one entry, counted once
        out = list(dict.fromkeys((f[0][r], f[1][r], f[2][r], f[3][r], f[4][r], f[5][r], f[6][r], f[7][r], f[8][r])
                                 for r in self._rows[self._offsets[pid]:self._offsets[pid + 1]].tolist()))
        self[pid] = out
        return out

    def __len__(self) -> int:
        return self._n


@dataclass(frozen=True)
class Patterns:
    """The compiled lexicon: pattern ``i`` is ``lower[i]`` for ``i < len(lower)``, else ``cased[i - len(lower)]``."""

    countries: list[str]  # sorted alpha-2 codes; an entry's country is an index into this
    lower: list[bytes]
    cased: list[bytes]
    entries: PatternEntries  # by pattern id
    anchor: np.ndarray  # bool by pattern: some entry is neither pair-only nor context-only
    blocked: np.ndarray  # bool by pattern: some entry is a collocation blocker
    case_checked: np.ndarray  # bool by pattern: a lower-case pattern with an entry that has a case rule
    pair_only: np.ndarray  # bool by pattern: some entry counts only right after a town ("Georgia", "TX")
    context_country: np.ndarray  # bool by pattern: some entry is a context-only country name ("China", "Jordan")
    # bool by pattern: every entry is a town or city context-only as a person's name, not as a word ("Sofia", "Decatur")
    person_named_place: np.ndarray
    demonym: np.ndarray  # bool by pattern: some entry is a demonym (read by the fixed-phrase rule)
    country_offsets: np.ndarray  # the countries pattern i names: country[country_offsets[i]:country_offsets[i + 1]]
    country: np.ndarray


def compile_patterns(entries: pa.Table, match_types: tuple[str, ...]) -> Patterns:
    """Group the rows of ``entries`` (a lexicon table) by the literal each is searched as;
    ``match_types`` gives the match-type indices."""
    countries = sorted({c for c in entries.column("country_alpha2").unique().to_pylist() if c})
    norm = entries.column("alias_norm").combine_chunks()
    case = _case_rules(entries)
    mtype = _index_in(entries.column("match_type"), match_types, "match_type")
    pair, ctx = _flag(entries, "requires_city_before"), _flag(entries, "context_only")
    by_norm = norm.dictionary_encode()  # names in order of first appearance
    norm_id = by_norm.indices.to_numpy()
    any_case = np.zeros(len(by_norm.dictionary), dtype=bool)
    any_case[norm_id[case == ANY_CASE]] = True

    # lower-case patterns: one per any-case name (its search literal), every entry of the name
    lower_names = by_norm.dictionary.filter(pa.array(any_case)).to_pylist()
    lower_literal = pa.array([search_pattern(x) for x in lower_names], pa.string()).dictionary_encode()
    literal_of_name = np.full(len(any_case), -1, dtype=np.int64)
    literal_of_name[np.flatnonzero(any_case)] = lower_literal.indices.to_numpy()
    lower_rows = np.flatnonzero(any_case[norm_id])
    lower_pid = literal_of_name[norm_id[lower_rows]]
    n_lower = len(lower_literal.dictionary)

    # cased patterns: the forms of every capitalised-only name, deduplicated per (name, form)
    alternate = _alternate(entries)
    form_table = _cased_forms(entries, ~any_case[norm_id], norm_id, alternate)
    forms = form_table.column("form").combine_chunks().dictionary_encode()
    form_name = form_table.column("name").to_numpy()
    form_upper = form_table.column("upper").to_numpy()
    # each (form, name) item brings its name's rows (all of them for an all-capitals form, those
    # asking for an initial capital for the others)
    order = np.argsort(norm_id, kind="stable")
    starts = np.searchsorted(norm_id[order], np.arange(len(any_case) + 1))
    counts = starts[form_name + 1] - starts[form_name]
    item = np.repeat(np.arange(len(form_name)), counts)
    within = np.arange(len(item)) - np.repeat(np.cumsum(counts) - counts, counts)
    cased_rows = order[starts[form_name][item] + within]
    keep = form_upper[item] | (case[cased_rows] == INITIAL)
    cased_rows, cased_pid = cased_rows[keep], n_lower + forms.indices.to_numpy()[item[keep]]
    n_cased = len(forms.dictionary)
    used = np.zeros(n_cased, dtype=bool)
    used[cased_pid - n_lower] = True  # a form left with no entry ("Tx") is not searched
    renumber = np.concatenate([np.arange(n_lower), n_lower + np.cumsum(used) - 1])
    cased_pid = renumber[cased_pid]

    # pattern → rows (a row belongs to one name, and a name gives a literal once), in lexicon order
    pid = np.concatenate([lower_pid, cased_pid])
    rows = np.concatenate([lower_rows, cased_rows])
    by_pattern = np.lexsort((rows, pid))
    pid, rows = pid[by_pattern], rows[by_pattern]
    n_patterns = n_lower + int(used.sum())
    offsets = np.searchsorted(pid, np.arange(n_patterns + 1))

    def any_of(flag: np.ndarray) -> np.ndarray:  # by pattern: does one of its entries have the flag?
        return np.logical_or.reduceat(flag[rows], offsets[:-1]) if len(rows) else np.zeros(0, dtype=bool)

    anchor, pair_only = any_of(~(pair | ctx)), any_of(pair)
    blocked = any_of(mtype == match_types.index("collocation"))
    case_checked = any_of(case != ANY_CASE)
    case_checked[n_lower:] = False  # a cased pattern matched as its case rule asks
    def all_of(flag: np.ndarray) -> np.ndarray:  # by pattern: do all of its entries have the flag?
        return np.logical_and.reduceat(flag[rows], offsets[:-1]) if len(rows) else np.zeros(0, dtype=bool)

    context_country = any_of(ctx & (mtype == match_types.index("country")))
    is_place = (mtype == match_types.index("town")) | (mtype == match_types.index("city"))
    person_named_place = all_of(ctx & is_place & _restricted_as_person(entries, norm, mtype == match_types.index("town")))
    demonym = any_of(mtype == match_types.index("demonym"))
    code = _index_in(entries.column("country_alpha2"), countries, "country_alpha2", missing=-1)
    named = np.unique(pid * (len(countries) + 1) + code[rows] + 1)  # (pattern, country) pairs
    named_pid, named_country = named // (len(countries) + 1), named % (len(countries) + 1) - 1
    fields = [norm.to_pylist(), code.tolist(), mtype.tolist(), pair.tolist(), ctx.tolist(), case.tolist(),
              _admin1_sets(entries), _int(entries, "population"), alternate.tolist()]
    return Patterns(
        countries=countries,
        lower=pc.cast(lower_literal.dictionary, pa.binary()).to_pylist(),
        cased=pc.cast(forms.dictionary.filter(pa.array(used)), pa.binary()).to_pylist(),
        entries=PatternEntries(rows, offsets, fields),
        anchor=anchor, blocked=blocked, case_checked=case_checked, pair_only=pair_only,
        context_country=context_country, person_named_place=person_named_place, demonym=demonym,
        country_offsets=np.searchsorted(named_pid, np.arange(n_patterns + 1)), country=named_country,
    )


def _restricted_as_person(entries: pa.Table, norm: pa.Array, town: np.ndarray) -> np.ndarray:
    """By entry (its ``restriction``'s reason code, ``gazetteer_lexicon._word_restriction``): is it context-only as a
    person's name, a US Census given name or surname ("Decatur"), or as a
    curated exclusion that is such a name ("Sofia")? Not: a word, another proper noun, a namesake, no restriction,
    and not a town (under 100,000 people) named like a place WordNet lists: that is most often the other place,
    larger and better known ("in Asia" is no town of the Philippines)."""
    if "restriction" not in entries.column_names:
        return np.zeros(entries.num_rows, dtype=bool)
    why = pc.fill_null(entries.column("restriction").combine_chunks(), "")
    given, surnames = sources.person_tokens()
    curated = np.asarray(pc.starts_with(why, RESTRICTION_EXCLUDED))
    person = np.asarray(pc.is_in(norm, value_set=pa.array(sorted(given | surnames), pa.string())))
    elsewhere = town & np.asarray(pc.is_in(norm, value_set=pa.array(sorted(sources.wordnet_place_names()), pa.string())))
    wordnet_person = np.asarray(pc.starts_with(why, other_proper_noun_first(PERSON_SENSE)))
    return (np.asarray(pc.starts_with(why, RESTRICTION_PERSON)) | (curated & person) | wordnet_person) & ~elsewhere


def _index_in(column: pa.ChunkedArray, values, field: str, missing: int | None = None) -> np.ndarray:
    idx = pc.index_in(column, value_set=pa.array(list(values), pa.string()))
    if missing is None and idx.null_count:
        bad = pc.filter(column, pc.is_null(idx))[0].as_py()
        raise ValueError(f"lexicon: unknown {field} {bad!r} (known: {', '.join(values)})")
    return pc.fill_null(idx, -1 if missing is None else missing).to_numpy()


def _flag(entries: pa.Table, name: str) -> np.ndarray:
    if name not in entries.column_names:
        return np.zeros(entries.num_rows, dtype=bool)
    return pc.fill_null(entries.column(name), False).to_numpy()


def _alternate(entries: pa.Table) -> np.ndarray:
    """By entry: is its name one of GeoNames' alternate names of its place (``sources.ALTERNATE_SOURCE``)?"""
    if "source" not in entries.column_names:
        return np.zeros(entries.num_rows, dtype=bool)
    return np.asarray(pc.fill_null(pc.starts_with(entries.column("source"), sources.ALTERNATE_SOURCE), False))


def _int(entries: pa.Table, name: str) -> list[int]:
    if name not in entries.column_names:
        return [0] * entries.num_rows
    return pc.fill_null(entries.column(name).cast(pa.int64()), 0).to_numpy().tolist()


def _case_rules(entries: pa.Table) -> np.ndarray:
    if "case_rule" not in entries.column_names:
        return np.zeros(entries.num_rows, dtype=np.int64)
    return _index_in(entries.column("case_rule"), CASE_RULES, "case_rule")


def _admin1_sets(entries: pa.Table) -> list[frozenset]:
    """Each entry's ";"-joined first-level codes as a set (one set object per distinct value)."""
    if "admin1" not in entries.column_names:
        return [frozenset()] * entries.num_rows
    enc = entries.column("admin1").combine_chunks().dictionary_encode()
    sets = [frozenset(v.split(";")) if v else frozenset() for v in enc.dictionary.to_pylist()]
    sets.append(frozenset())  # the slot of nulls
    return [sets[i] for i in pc.fill_null(enc.indices, len(sets) - 1).to_numpy().tolist()]


def _cased_forms(entries: pa.Table, capitalised: np.ndarray, norm_id: np.ndarray, alternate: np.ndarray) -> pa.Table:
    """(name, form, upper) for every distinct (name, search literal) of the capitalised-only names,
    ``upper`` when one of the spellings giving it is all capitals. Each spelling as written, title-cased
    and in capitals (Python's own ``str.title``/``str.upper``), normalized like captions in one call;
    a literal is the normalized body with one space kept at each end (the body's separators are
    exactly ``normalize.SEP``, as in ``search_pattern``). A place's alternate name (``alternate``) has no
    all-capitals form: GeoNames lists it in any language, and in capitals it is an acronym far more often
    than that spelling of the place ("IRNA", the news agency, is no "Irna" of Italy)."""
    rows = np.flatnonzero(capitalised)
    spellings = pa.table({"name": norm_id[rows], "alias": entries.column("alias").take(pa.array(rows)),
                          "norm": entries.column("alias_norm").take(pa.array(rows)), "alternate": alternate[rows]})
    spellings = spellings.group_by(["name", "alias", "norm"], use_threads=False).aggregate([("alternate", "all")])
    names = spellings.column("name").to_numpy()
    aliases = spellings.column("alias").to_pylist()
    own = ~spellings.column("alternate_all").to_numpy(zero_copy_only=False)
    # A name's forms are spellings of it: the "+folded" entry of "Ålesund" is the name "alesund", written
    # "Alesund" in a caption, not "Ålesund" (that is the other entry's name).
    as_name = pa.array(alias_norms(aliases), pa.string())
    other = np.flatnonzero(np.asarray(pc.not_equal(as_name, spellings.column("norm"))))
    for i in other.tolist():
        aliases[i] = fold_diacritics(aliases[i])
    texts = [a.upper() if o else "" for a, o in zip(aliases, own.tolist())] + aliases + [a.title() for a in aliases]
    bodies = pc.utf8_trim(normalize_cased_array(pa.array(texts, pa.string())), " ")
    table = pa.table({
        "name": np.tile(names, 3),
        "form": pc.binary_join_element_wise(" ", bodies, " ", ""),
        "upper": np.repeat([True, False, False], len(aliases)),
    }).filter(pc.greater(pc.binary_length(bodies), 0))
    grouped = table.group_by(["name", "form"], use_threads=False).aggregate([("upper", "any")])
    return pa.table({"name": grouped["name"], "form": grouped["form"], "upper": grouped["upper_any"]})
