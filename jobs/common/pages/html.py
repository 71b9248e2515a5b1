"""A small HTML and SVG toolkit for self-contained reports: tables, bars, scatters, intervals, trends.

Rules every report gets from here rather than re-implementing:

* every string that comes from data (captions, item text, names, file names) goes through ``esc``;
* one number style (``fmt``, ``pct``, ``signed``, ``interval``): thousands separators, a whole
  number never printed as ``187689.0``, a missing value as "–";
* numbers right-aligned and unwrapped, prose left-aligned (``table`` decides per cell);
* long tables collapsed behind a ``<details>`` summary that links the full table in ``data/``;
* axes with readable ticks in natural units (``log_share_axis`` labels 10^-3 as 0.1%), label
  margins measured from the labels, point labels placed where they do not overlap (or left to
  the tooltip), bars off the scale drawn broken with their value printed;
* ``page`` adds links to summary.json, manifest.json and the data tables, and a footer with the
  run's config and seed (``RunInfo``).

Charts are inline SVG with no script, font or image fetched: a report is one file that opens
anywhere, offline.
"""
from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from html import escape
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

if TYPE_CHECKING:
    from typing_extensions import TypeIs

FONT = 11  # px, chart text
CHAR_W = 0.66  # average glyph width / font size for the system sans-serif: label margins are measured with it
BLUE, RED, GREY = "#4a78a8", "#c0392b", "#888"


def esc(value: Any) -> str:
    return escape("" if value is None else str(value), quote=True)


# ---- numbers -------------------------------------------------------------------------------------

def _missing(value: Any) -> TypeIs[None]:
    """No value to show: None, NaN or inf. (For the type checker, a value that is not missing is a
    number; a NaN it counts as missing is shown as missing, never computed with.)"""
    return value is None or (isinstance(value, float) and not math.isfinite(value))


def fmt(value: Any, digits: int | None = None) -> str:
    """One style for every number: ``2,033``, ``187,689`` (never ``187689.0``), ``0.733``, ``1.000``, "–" when missing.

    ``digits`` fixes the decimals of a float (a column of them lines up); without it a whole float of
    100 or more is a count and prints as one, any other float with 3 decimals.
    """
    if _missing(value):
        return "–"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        if digits is None and value.is_integer() and abs(value) >= 100:  # a count held in a float: 187,689
            return f"{value:,.0f}"
        return f"{value:,.{3 if digits is None else digits}f}"
    return esc(value)


def pct(value: float | None, digits: int = 1) -> str:
    """A fraction as a percentage: 0.0052 → ``0.52%`` with ``digits=2``."""
    return "–" if _missing(value) else f"{100 * value:.{digits}f}%"


def signed(value: float | None, digits: int = 3) -> str:
    return "–" if _missing(value) else f"{value:+.{digits}f}"


def interval(low: float | None, high: float | None, value_fmt: Callable[[float], str] = fmt) -> str:
    """``[low, high]`` in the value's own format; "–" when the interval is undefined."""
    if _missing(low) or _missing(high):
        return "–"
    return f"[{value_fmt(low)}, {value_fmt(high)}]"


def share_label(fraction: float) -> str:
    """A share as a tick label in natural units: 0.001 → 0.1%, 0.25 → 25%."""
    p = 100 * fraction
    if p == 0:
        return "0%"
    if abs(p) >= 1:
        return f"{p:,.0f}%" if abs(p - round(p)) < 1e-9 else f"{p:,.1f}%"
    return f"{p:.{max(1, -math.floor(math.log10(abs(p))))}g}%"


# ---- tables --------------------------------------------------------------------------------------

_NUMERIC = re.compile(r"^(?:[\s\d.,%+\-−–×±\[\]()/:·e≈]|of)*(pp|s|x)?$")  # "2,033", "[0.1, 0.3]", "1 of 2", "5×"


def _is_number_cell(cell: Any, html_text: str) -> bool:
    if isinstance(cell, (int, float)) and not isinstance(cell, bool):
        return True
    text = re.sub(r"<[^>]+>", "", html_text).strip()
    return bool(text) and bool(_NUMERIC.match(text)) and any(c.isdigit() for c in text)


_VALUE_AND_INTERVAL = re.compile(r"^([^<\[]*[^<\[\s]) (\[[^<\]]*\])$")  # "95.0% [87.6, 99.6]"


def _number_html(html_text: str) -> tuple[str, str]:
    """(class, html) of a number cell: unwrapped, except that a value and its interval may go on two
    lines when the table would otherwise be wider than the page."""
    m = _VALUE_AND_INTERVAL.match(html_text)
    if not m:
        return "num", html_text
    return "num split", f'<span class="nw">{m.group(1)}</span> <span class="nw">{m.group(2)}</span>'


MANY_COLUMNS = 8  # a table with more columns narrows its prose columns, so all of them fit the page


def _header(text: str) -> str:
    """A column header that may wrap after ``→``, ``/``, ``_`` or ``-`` (``wrong→correct``), never mid-word."""
    return re.sub(r"([→/_-])", r"\1<wbr>", esc(text))


def table(headers: Sequence[str], rows: Sequence[Sequence[Any]], cls: str = "", *, collapse_after: int = 30,
          full_table: str | None = None, what: str = "rows") -> str:
    """A table; numbers right-aligned and unwrapped (a value and its interval may split over two
    lines where the page is too narrow for both), prose left-aligned; longer than ``collapse_after``
    rows it is collapsed behind a summary naming ``full_table`` (a ``data/<table>/`` path) when given.

    Cells: Python numbers are formatted with ``fmt``; strings are taken as ready HTML (escape data with
    ``esc`` first).
    """
    cells = [[(c, c if isinstance(c, str) else fmt(c)) for c in r] for r in rows]
    numeric_cols = [bool(cells) and all(_is_number_cell(c, h) or h == "–" for c, h in (r[i] for r in cells if i < len(r)))
                    for i in range(len(headers))]
    head = "".join(f'<th class="{"num" if numeric_cols[i] else "txt"}">{_header(h)}</th>' for i, h in enumerate(headers))

    def td(i: int, c: Any, h: str) -> str:
        if _is_number_cell(c, h) or (h == "–" and numeric_cols[i]):
            klass, h = _number_html(h)
            return f'<td class="{klass}">{h}</td>'
        return f'<td class="txt">{h}</td>'

    body = "".join("<tr>" + "".join(td(i, c, h) for i, (c, h) in enumerate(r)) + "</tr>" for r in cells)
    cls = f"{cls} many".strip() if len(headers) > MANY_COLUMNS else cls
    html = f'<div class="wide"><table class="{esc(cls)}"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>'
    if len(rows) <= collapse_after:
        return html
    # the folder as it lies on disk (a partition value percent-encoded), its link encoded once more
    where = f' · the full table is in <a href="{esc(quote(full_table, safe="/="))}">{esc(full_table)}</a>' if full_table else ""
    return f"<details><summary>Show all {len(rows):,} {esc(what)}{where}</summary>{html}</details>"


def definitions(terms: Sequence[tuple[str, str]], title: str = "What the numbers mean") -> str:
    """The metrics a page shows, each defined where it appears (terms and texts are escaped)."""
    items = "".join(f"<dt>{esc(t)}</dt><dd>{esc(d)}</dd>" for t, d in terms)
    return f'<details class="defs" open><summary>{esc(title)}</summary><dl>{items}</dl></details>'


def note(text: str, warn: bool = False) -> str:
    return f'<p class="{"warn" if warn else "note"}">{esc(text)}</p>'


# ---- axes ----------------------------------------------------------------------------------------

def text_width(text: str, size: float = FONT) -> float:
    return CHAR_W * size * len(text)


def nice_ticks(lo: float, hi: float, target: int = 5) -> list[float]:
    """Round tick values covering [lo, hi]: steps of 1, 2, 2.5 or 5 times a power of ten."""
    if not (math.isfinite(lo) and math.isfinite(hi)) or hi <= lo:
        return [lo]
    raw = (hi - lo) / max(target, 1)
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)
    start = math.floor(lo / step + 1e-9) * step
    ticks, t = [], start
    while t <= hi + step * 1e-6:
        if t >= lo - step * 1e-6:
            ticks.append(round(t, 12))
        t += step
    return ticks


def log_ticks(lo: float, hi: float) -> list[float]:
    """Ticks in log10 space: every power of ten in range, with 2 and 5 between when under three decades."""
    decades = range(math.floor(lo), math.ceil(hi) + 1)
    mults = (1, 2, 5) if hi - lo < 3 else (1,)
    ticks = [d + math.log10(m) for d in decades for m in mults]
    return [t for t in ticks if lo - 1e-9 <= t <= hi + 1e-9] or [lo, hi]


@dataclass(frozen=True)
class Axis:
    """How one axis maps values to pixels and labels its ticks.

    ``log=True``: the values are already log10 (a share of 10^-3 is given as -3) and ticks sit at
    powers of ten, labelled in natural units by ``tick_label``. Without a ``tick_label`` the labels take
    one format with the decimals their ticks need (``axis_format``), so no two read alike.
    ``integer``: counts, ticked at whole numbers only. ``bounds``: where the values can lie (a
    probability: ``(0, 1)``); the axis never runs past them.
    """

    label: str
    log: bool = False
    tick_label: Callable[[float], str] | None = None
    integer: bool = False
    bounds: tuple[float, float] | None = None

    def ticks(self, lo: float, hi: float) -> list[float]:
        if self.log:
            return log_ticks(lo, hi)
        return count_ticks(lo, hi) if self.integer else nice_ticks(lo, hi)

    def labels(self, ticks: Sequence[float]) -> list[str]:
        """The tick labels, in one format (see the class)."""
        if self.tick_label is not None:
            return [self.tick_label(10 ** t if self.log else t) for t in ticks]
        return [axis_format(ticks, self.integer)(t) for t in ticks]

    def text(self, value: float) -> str:
        """One value in the axis' units (a point's tooltip)."""
        if self.tick_label is not None:
            return self.tick_label(10 ** value if self.log else value)
        return f"{round(value):,}" if self.integer else fmt(value)

    def span(self, values: Sequence[float]) -> tuple[float, float]:
        """The plotted range: the values' with a margin, inside ``bounds``."""
        lo, hi = _span(values, self.log)
        if self.bounds is not None:
            low, high = self.bounds
            if hi - lo < (high - low) * 1e-3:  # one value (every Hnorm of two-option items is 0): a readable window
                mid = min(max((lo + hi) / 2, low + (high - low) * 0.05), high - (high - low) * 0.05)
                lo, hi = mid - (high - low) * 0.05, mid + (high - low) * 0.05
            lo, hi = max(lo, low), min(hi, high)
        return lo, hi


PROBABILITY = (0.0, 1.0)


def log_share_axis(label: str) -> Axis:
    """A log10 axis of shares (fractions) labelled 0.1%, 1%, 10%."""
    return Axis(label, log=True, tick_label=share_label)


def _span(values: Sequence[float], log: bool) -> tuple[float, float]:
    lo, hi = min(values), max(values)
    if hi <= lo:  # one value: a window around it (±0.5 around zero, where 10% of it is nothing)
        lo, hi = lo - (0.5 if log or lo == 0 else abs(lo) * 0.1), hi + (0.5 if log or hi == 0 else abs(hi) * 0.1)
    pad = (hi - lo) * 0.04
    return lo - pad, hi + pad


def _svg(title: str, width: float, height: float) -> list[str]:
    return [f'<svg role="img" aria-label="{esc(title)}" width="{width:.0f}" height="{height:.0f}" '
            f'viewBox="0 0 {width:.0f} {height:.0f}" xmlns="http://www.w3.org/2000/svg" font-size="{FONT}">',
            f'<text class="title" x="0" y="14" font-size="13" font-weight="bold">{esc(title)}</text>']


def _empty(title: str, why: str = "nothing to plot") -> str:
    return f"<p class=note><em>{esc(title)}: {esc(why)}.</em></p>"


# ---- bars ----------------------------------------------------------------------------------------

def bar_chart(labels: Sequence[str], values: Sequence[float | None], title: str, width: float = 640,
              value_fmt: Callable[[float], str] = pct, *, intervals: Sequence[tuple[float | None, float | None]] | None = None,
              scale_max: float | None = None, axis_fmt: Callable[[float], str] | None = None) -> str:
    """Horizontal bars from zero, one per label, with the value printed after each bar.

    The label margin is measured from the longest label (nothing is clipped); ``intervals`` adds a
    whisker per bar; a bar above ``scale_max`` is drawn to the edge with a break mark and its value,
    so one huge bar does not flatten the others. Negative values are drawn as zero-length bars
    and keep their printed value (use ``interval_chart`` for signed quantities).
    """
    pairs = [(str(lb), v) for lb, v in zip(labels, values) if not _missing(v)]
    if not pairs:
        return _empty(title)
    his = [v for _, v in pairs] + [hi for _, hi in (intervals or []) if not _missing(hi)]
    counts = axis_fmt is None and value_fmt is not pct and _integral(his)  # whole numbers: whole-number ticks
    axis_fmt = axis_fmt or (share_label if value_fmt is pct else (lambda v: f"{round(v):,}") if counts else value_fmt)
    bar_h = 18
    left = max(text_width(lb) for lb, _ in pairs) + 12
    vmax = scale_max if scale_max is not None else max(max(his), 0.0)
    vmax = vmax or 1.0
    ticks = [t for t in (count_ticks if counts else nice_ticks)(0.0, vmax, 4) if t <= vmax * 1.0001]
    label_w = max(text_width(value_fmt(v) + (" (off scale)" if v > vmax else "")) for _, v in pairs) + 16
    width = max(width, left + label_w + 160)  # long labels widen the chart, never clip it
    span = width - left - label_w
    height = bar_h * len(pairs) + 48
    sx = lambda v: left + span * min(max(v, 0.0), vmax) / vmax  # noqa: E731
    parts = _svg(title, width, height)
    base = 24 + bar_h * len(pairs)
    for t in ticks:  # grid and tick labels under the bars
        parts.append(f'<line x1="{sx(t):.1f}" y1="22" x2="{sx(t):.1f}" y2="{base}" stroke="#e3e3e3"/>'
                     f'<text class="xtick" x="{sx(t):.1f}" y="{base + 13}" text-anchor="middle" fill="#555">{esc(axis_fmt(t))}</text>')
    kept = {lb: i for i, (lb, _) in enumerate(pairs)}
    for i, (label, v) in enumerate(pairs):
        y = 24 + i * bar_h
        w = sx(v) - left
        parts.append(f'<text x="{left - 6:.1f}" y="{y + 12}" text-anchor="end">{esc(label)}</text>'
                     f'<rect x="{left:.1f}" y="{y}" width="{w:.1f}" height="{bar_h - 4}" fill="{BLUE}">'
                     f'<title>{esc(label)}: {esc(value_fmt(v))}</title></rect>')
        end = left + w
        if v > vmax:  # off the scale: a break mark across the bar's end
            parts.append(f'<path d="M{end - 9:.1f},{y - 1} l4,{bar_h - 2} M{end - 5:.1f},{y - 1} l4,{bar_h - 2}" '
                         'stroke="#fff" stroke-width="2.5"/>')
        parts.append(f'<text x="{end + 4:.1f}" y="{y + 12}">{esc(value_fmt(v))}{" (off scale)" if v > vmax else ""}</text>')
    for (lo, hi), label in zip(intervals or [], labels):
        row = kept.get(str(label))
        if row is None or _missing(lo) or _missing(hi):
            continue
        mid = 24 + row * bar_h + (bar_h - 4) / 2
        parts.append(f'<line x1="{sx(lo):.1f}" y1="{mid:.1f}" x2="{sx(hi):.1f}" y2="{mid:.1f}" stroke="#222"/>'
                     f'<line x1="{sx(lo):.1f}" y1="{mid - 4:.1f}" x2="{sx(lo):.1f}" y2="{mid + 4:.1f}" stroke="#222"/>'
                     f'<line x1="{sx(hi):.1f}" y1="{mid - 4:.1f}" x2="{sx(hi):.1f}" y2="{mid + 4:.1f}" stroke="#222"/>')
    parts.append("</svg>")
    return "".join(parts)


def interval_chart(labels: Sequence[str], estimates: Sequence[float | None], lows: Sequence[float | None],
                   highs: Sequence[float | None], title: str, value_fmt: Callable[[float], str] = signed,
                   width: float = 640, reference: float | None = 0.0, axis_fmt: Callable[[float], str] | None = None) -> str:
    """A dot per label with its interval as a whisker, on one shared axis, and a reference line
    (zero by default): for signed quantities such as paired differences."""
    rows = [(str(lb), e, lo, hi) for lb, e, lo, hi in zip(labels, estimates, lows, highs) if not _missing(e)]
    if not rows:
        return _empty(title)
    axis_fmt = axis_fmt or (share_label if value_fmt is pct else value_fmt)
    row_h = 18
    left = max(text_width(r[0]) for r in rows) + 12
    right = max(text_width(f"{value_fmt(r[1])} {interval(r[2], r[3], value_fmt)}") for r in rows) + 16
    width = max(width, left + right + 200)
    vals = [v for r in rows for v in r[1:] if not _missing(v)] + ([reference] if reference is not None else [])
    lo, hi = _span(vals, False)
    ticks = [t for t in nice_ticks(lo, hi, 5) if lo <= t <= hi]
    span = width - left - right
    sx = lambda v: left + span * (v - lo) / (hi - lo)  # noqa: E731
    height = row_h * len(rows) + 48
    base = 24 + row_h * len(rows)
    parts = _svg(title, width, height)
    for t in ticks:
        parts.append(f'<line x1="{sx(t):.1f}" y1="22" x2="{sx(t):.1f}" y2="{base}" stroke="#e3e3e3"/>'
                     f'<text class="xtick" x="{sx(t):.1f}" y="{base + 13}" text-anchor="middle" fill="#555">{esc(axis_fmt(t))}</text>')
    if reference is not None:
        parts.append(f'<line x1="{sx(reference):.1f}" y1="22" x2="{sx(reference):.1f}" y2="{base}" stroke="{GREY}" '
                     'stroke-dasharray="3,3"/>')
    for i, (label, e, a, b) in enumerate(rows):
        y = 24 + i * row_h + 7
        parts.append(f'<text x="{left - 6:.1f}" y="{y + 4}" text-anchor="end">{esc(label)}</text>')
        if not (_missing(a) or _missing(b)):
            parts.append(f'<line x1="{sx(a):.1f}" y1="{y}" x2="{sx(b):.1f}" y2="{y}" stroke="#222"/>')
        parts.append(f'<circle cx="{sx(e):.1f}" cy="{y}" r="3.5" fill="{BLUE}"><title>{esc(label)}: {esc(value_fmt(e))} '
                     f'{esc(interval(a, b, value_fmt))}</title></circle>'
                     f'<text x="{width - right + 8:.1f}" y="{y + 4}">{esc(value_fmt(e))} {esc(interval(a, b, value_fmt))}</text>')
    parts.append("</svg>")
    return "".join(parts)


def stacked_bar_chart(labels: list[str], segments: list[tuple[str, str, list[float]]], title: str,
                      width: float = 640) -> str:
    """One horizontal 100% bar per label, split into ``(name, colour, values)`` segments.

    Why 100%: rows of very different sizes (a category with 7,000 signals next to one with 3)
    compare by their split; the counts are printed beside each bar and in each segment's tooltip.
    """
    totals = [sum(values[i] for _, _, values in segments) for i in range(len(labels))]
    if not labels or not any(totals):
        return _empty(title)
    bar_h = 18
    left = max(text_width(str(lb)) for lb in labels) + 12
    counts = [" / ".join(fmt(values[i]) for _, _, values in segments) for i in range(len(labels))]
    right = max(text_width(c) for c in counts) + 16
    width = max(width, left + right + 200)
    span = width - left - right
    height = bar_h * len(labels) + 46
    parts = _svg(title, width, height)
    for i, (label, total) in enumerate(zip(labels, totals)):
        y = 24 + i * bar_h
        parts.append(f'<text x="{left - 6:.1f}" y="{y + 12}" text-anchor="end">{esc(label)}</text>')
        x = float(left)
        for name, colour, values in segments:
            w = span * values[i] / total if total else 0.0
            if w > 0:
                parts.append(f'<rect x="{x:.1f}" y="{y}" width="{w:.1f}" height="{bar_h - 4}" fill="{esc(colour)}">'
                             f'<title>{esc(label)}: {esc(name)} {fmt(values[i])} of {fmt(total)}</title></rect>')
            x += w
        parts.append(f'<text x="{left + span + 6:.1f}" y="{y + 12}">{esc(counts[i])}</text>')
    y = 24 + len(labels) * bar_h + 6
    x = left
    for name, colour, _ in segments:
        parts.append(f'<rect x="{x:.1f}" y="{y}" width="10" height="10" fill="{esc(colour)}"/>'
                     f'<text x="{x + 14:.1f}" y="{y + 9}">{esc(name)}</text>')
        x += 24 + text_width(name)
    parts.append("</svg>")
    return "".join(parts)


# ---- scatter and lines ---------------------------------------------------------------------------

def _frame(parts: list[str], xa: Axis, ya: Axis, xs: tuple[float, float], ys: tuple[float, float], box: tuple[float, ...],
           sx: Callable, sy: Callable) -> None:
    """Axes, ticks, grid and axis titles of a plot area ``box`` = (left, top, right, bottom)."""
    left, top, right, bottom = box
    xt = xa.ticks(*xs)
    for t, text in zip(xt, xa.labels(xt)):
        parts.append(f'<line x1="{sx(t):.1f}" y1="{top}" x2="{sx(t):.1f}" y2="{bottom}" stroke="#eee"/>'
                     f'<text class="xtick" x="{sx(t):.1f}" y="{bottom + 14}" text-anchor="middle" fill="#555">{esc(text)}</text>')
    yt = ya.ticks(*ys)
    for t, text in zip(yt, ya.labels(yt)):
        parts.append(f'<line x1="{left}" y1="{sy(t):.1f}" x2="{right}" y2="{sy(t):.1f}" stroke="#eee"/>'
                     f'<text class="ytick" x="{left - 5}" y="{sy(t) + 4:.1f}" text-anchor="end" fill="#555">{esc(text)}</text>')
    parts.append(f'<rect x="{left}" y="{top}" width="{right - left}" height="{bottom - top}" fill="none" stroke="#999"/>'
                 f'<text x="{(left + right) / 2:.1f}" y="{bottom + 32}" text-anchor="middle">{esc(xa.label)}</text>'
                 f'<text x="14" y="{(top + bottom) / 2:.1f}" text-anchor="middle" '
                 f'transform="rotate(-90 14 {(top + bottom) / 2:.1f})">{esc(ya.label)}</text>')


def _overlaps(a: tuple[float, float, float, float], b: tuple[float, float, float, float]) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def place_labels(points: Sequence[tuple[float, float, str]], box: tuple[float, float, float, float],
                 size: float = 9) -> list[tuple[float, float, str, str] | None]:
    """Where each point's label goes, or None when every spot near it is taken (its tooltip keeps it).

    Greedy in the given order (put the most important points first): right, left, above, below
    the point; a spot must stay inside ``box`` and clear of every placed label and every point.
    """
    dots = [(x - 3, y - 3, x + 3, y + 3) for x, y, _ in points]
    placed: list[tuple[float, float, float, float]] = []
    out: list[tuple[float, float, str, str] | None] = []
    for x, y, text in points:
        w = text_width(text, size) + 2
        spot = None
        for tx, ty, anchor in ((x + 5, y + size / 3, "start"), (x - 5, y + size / 3, "end"), (x, y - 6, "middle"),
                               (x, y + size + 5, "middle")):
            x0 = tx if anchor == "start" else tx - w if anchor == "end" else tx - w / 2
            rect = (x0, ty - size + 1, x0 + w, ty + 2)
            inside = box[0] <= rect[0] and rect[2] <= box[2] and box[1] <= rect[1] and rect[3] <= box[3]
            if inside and not any(_overlaps(rect, p) for p in placed) and not any(_overlaps(rect, d) for d in dots):
                spot = (tx, ty, text, anchor)
                placed.append(rect)
                break
        out.append(spot)
    return out


def scatter(points: list[tuple[float, float, str]], title: str, xlabel: str | Axis, ylabel: str | Axis,
            line: tuple[float, float] | None = None, width: int = 560, height: int = 420) -> str:
    """Labelled scatter with an optional fitted line y = intercept + slope·x.

    ``points`` are ``(x, y, label)``, most important first (labels that would overlap are left to
    the tooltip); axes are ``Axis`` objects, or plain titles for linear axes.
    """
    if len(points) < 2:
        return _empty(title, "too few points to plot")
    xa = xlabel if isinstance(xlabel, Axis) else Axis(xlabel, integer=_integral([p[0] for p in points]))
    ya = ylabel if isinstance(ylabel, Axis) else Axis(ylabel, integer=_integral([p[1] for p in points]))
    xs, ys = xa.span([p[0] for p in points]), ya.span([p[1] for p in points])
    ytick_w = max(text_width(t) for t in ya.labels(ya.ticks(*ys)))
    box = (28 + ytick_w + 6, 26, width - 12, height - 44)
    sx = lambda x: box[0] + (x - xs[0]) / (xs[1] - xs[0]) * (box[2] - box[0])  # noqa: E731
    sy = lambda y: box[3] - (y - ys[0]) / (ys[1] - ys[0]) * (box[3] - box[1])  # noqa: E731
    parts = _svg(title, width, height)
    _frame(parts, xa, ya, xs, ys, box, sx, sy)
    if line:
        intercept, slope = line
        # clip the fit to the plot area by evaluating it only where it stays inside
        x0, x1 = xs
        if slope:
            y_lo, y_hi = sorted(((ys[0] - intercept) / slope, (ys[1] - intercept) / slope))
            x0, x1 = max(x0, y_lo), min(x1, y_hi)
        if x1 > x0:
            parts.append(f'<line x1="{sx(x0):.1f}" y1="{sy(intercept + slope * x0):.1f}" x2="{sx(x1):.1f}" '
                         f'y2="{sy(intercept + slope * x1):.1f}" stroke="{RED}" stroke-width="1.5"/>')
    screen = [(sx(x), sy(y), str(label)) for x, y, label in points]
    for (px, py, label), (x, y, _) in zip(screen, points):
        parts.append(f'<circle cx="{px:.1f}" cy="{py:.1f}" r="3" fill="{BLUE}"><title>{esc(label)}: '
                     f'{esc(xa.text(x))}, {esc(ya.text(y))}</title></circle>')
    for spot in place_labels([p for p in screen if p[2]], box):
        if spot:
            tx, ty, text, anchor = spot
            parts.append(f'<text x="{tx:.1f}" y="{ty:.1f}" font-size="9" fill="#444" text-anchor="{anchor}">{esc(text)}</text>')
    parts.append("</svg>")
    return "".join(parts)


def _integral(values: Sequence[float]) -> bool:
    return all(float(v).is_integer() for v in values)


def axis_format(ticks: Sequence[float], counts: bool) -> Callable[[float], str]:
    """One format for every label of an axis: counts as whole numbers (``4``, ``10``, ``1,200``: never
    ``4.000``, which reads as four thousand in half of Europe), other values with the fewest decimals
    that write every tick exactly (``0.05, 0.10, 0.15``), thousands separated."""
    if counts:
        return lambda v: f"{round(v):,}"
    decimals = next((d for d in range(0, 6) if all(abs(t * 10 ** d - round(t * 10 ** d)) < 1e-6 for t in ticks)), 6)
    return lambda v: f"{0.0 if abs(v) < 0.5 * 10 ** -decimals else v:,.{decimals}f}"  # never "-0.0"


def count_ticks(lo: float, hi: float, target: int = 5) -> list[float]:
    """``nice_ticks`` for counts: whole numbers only, a step of at least one."""
    return [t for t in nice_ticks(lo, hi, target) if float(t).is_integer()] or [float(round((lo + hi) / 2))]


def _legend(names: Sequence[str], width: float, x0: float) -> list[tuple[float, int, str]]:
    """Where each legend entry goes: ``(x, row, text)``, entries flowing left to right in rows that
    fit ``width`` (a name too long for a row is cut with "…"; its line's tooltip has it whole)."""
    room = width - x0 - 4
    out, x, row = [], x0, 0
    for name in names:
        text = name
        while text_width(text) + 14 > room and len(text) > 2:
            text = text[:-2] + "…"
        w = 14 + text_width(text) + 14
        if x > x0 and x + w > width:
            x, row = x0, row + 1
        out.append((x, row, text))
        x += w
    return out


def x_labels_shown(labels: Sequence[str], sx: Callable[[int], float]) -> list[tuple[int, str, str]]:
    """``(index, label, anchor)`` of the x labels to draw: the first and the last always (anchored
    inward), the ones between only where they clear their neighbours."""
    def span(i: int, anchor: str) -> tuple[float, float]:
        w = text_width(labels[i], 9)
        x = sx(i)
        return (x, x + w) if anchor == "start" else (x - w, x) if anchor == "end" else (x - w / 2, x + w / 2)

    last = len(labels) - 1
    ends = [(0, "start" if last else "middle")] + ([(last, "end")] if last else [])
    chosen = [ends[0]]
    limit = span(*ends[-1])[0] if last else math.inf
    for i in range(1, last):
        a, b = span(i, "middle")
        if a > span(*chosen[-1])[1] + 6 and b + 6 < limit:
            chosen.append((i, "middle"))
    if last:
        chosen.append(ends[-1])
    return [(i, labels[i], anchor) for i, anchor in chosen]


def _drawn_over(series: dict[str, list[tuple[str, float | None]]]) -> list[int]:
    """Per series, how many series drawn after it share one of its points: it is drawn that much wider
    (line and dots), so a line with the same values as a later one shows as a band around it instead of
    vanishing under it."""
    points = [{(x, v) for x, v in pts if not _missing(v)} for pts in series.values()]
    return [sum(1 for later in points[k + 1:] if mine & later) for k, mine in enumerate(points)]


def line_chart(series: dict[str, list[tuple[str, float | None]]], title: str, value_fmt: Callable[[float], str] | None = None,
               width: int = 560, plot_height: int = 150, x_order: Sequence[str] | None = None,
               reference: tuple[float, str] | None = None) -> str:
    """One line per series over shared, ordered x labels (run times: ``x_order``, else as the series
    first name them); x labels thinned so none overlap. ``reference``: ``(y, label)``, a dashed
    horizontal line the reader compares the lines with (a baseline), always inside the plot.

    The legend sits under the plot in as many rows as its entries need and the chart grows with it,
    so no number of series can push it over the title or squash the plot. The y axis takes one
    format (``axis_format``): whole numbers when every value is a count, else the decimals its ticks
    need; ``value_fmt`` overrides it for tick labels and tooltips alike.
    """
    named = set(x for points in series.values() for x, _ in points)
    xs_all = [x for x in x_order if x in named] if x_order is not None else \
        list(dict.fromkeys(x for points in series.values() for x, _ in points))
    values = [v for points in series.values() for _, v in points if not _missing(v)]
    if not values or len(xs_all) < 1:
        return _empty(title)
    counts = _integral(values)
    ys = _span(values + ([reference[0]] if reference else []), False)
    ticks = count_ticks(*ys) if counts else nice_ticks(*ys)
    value_fmt = value_fmt or axis_format(ticks, counts)
    ytick_w = max(text_width(value_fmt(t)) for t in ticks)
    left = ytick_w + 14
    legend = _legend(list(series), width, left)
    rows = (legend[-1][1] + 1) if legend else 0
    box = (left, 26, width - 12, 26 + plot_height)
    height = box[3] + 24 + 16 * rows + 4
    pos = {x: i for i, x in enumerate(xs_all)}
    n = max(len(xs_all) - 1, 1)
    sx = lambda i: box[0] + (i / n if len(xs_all) > 1 else 0.5) * (box[2] - box[0])  # noqa: E731
    sy = lambda y: box[3] - (y - ys[0]) / (ys[1] - ys[0]) * (box[3] - box[1])  # noqa: E731
    parts = _svg(title, width, height)
    for t in ticks:
        parts.append(f'<line x1="{box[0]}" y1="{sy(t):.1f}" x2="{box[2]}" y2="{sy(t):.1f}" stroke="#eee"/>'
                     f'<text class="ytick" x="{box[0] - 5}" y="{sy(t) + 4:.1f}" text-anchor="end" fill="#555">'
                     f'{esc(value_fmt(t))}</text>')
    for i, x, anchor in x_labels_shown(xs_all, sx):
        parts.append(f'<text x="{sx(i):.1f}" y="{box[3] + 14}" font-size="9" text-anchor="{anchor}" fill="#555">{esc(x)}</text>')
    parts.append(f'<rect x="{box[0]}" y="{box[1]}" width="{box[2] - box[0]}" height="{box[3] - box[1]}" fill="none" stroke="#999"/>')
    if reference:
        ry = sy(reference[0])
        parts.append(f'<line x1="{box[0]}" y1="{ry:.1f}" x2="{box[2]}" y2="{ry:.1f}" stroke="#333" stroke-dasharray="4 3"/>'
                     f'<text x="{box[0] + 4}" y="{ry - 4:.1f}" fill="#333">{esc(reference[1])}</text>')
    palette = (BLUE, "#e08a3c", "#3c9e5f", RED, "#8e6bb8", "#6b6b6b", "#c5a100", "#2aa3b5", "#b5577f", "#7a9a3a")
    under = _drawn_over(series)
    for k, ((name, points), (lx, row, text)) in enumerate(zip(series.items(), legend)):
        colour = palette[k % len(palette)]
        dash = "" if k < len(palette) else ' stroke-dasharray="5,3"'  # past ten series the colours repeat, dashed
        pts = [(sx(pos[x]), sy(v), x, v) for x, v in points if not _missing(v)]
        if len(pts) > 1:
            parts.append(f'<polyline fill="none" stroke="{colour}" stroke-width="{1.5 + 2.5 * under[k]:g}"{dash} points="'
                         + " ".join(f"{px:.1f},{py:.1f}" for px, py, _, _ in pts) + f'"><title>{esc(name)}</title></polyline>')
        for px, py, x, v in pts:
            parts.append(f'<circle cx="{px:.1f}" cy="{py:.1f}" r="{3 + 2 * under[k]:g}" fill="{colour}"><title>{esc(name)} · {esc(x)}: '
                         f'{esc(value_fmt(v) if counts else fmt(v))}</title></circle>')
        y = box[3] + 24 + 16 * row
        parts.append(f'<g class="legend"><rect x="{lx:.1f}" y="{y}" width="10" height="10" fill="{colour}"/>'
                     f'<text x="{lx + 14:.1f}" y="{y + 9}">{esc(text)}<title>{esc(name)}</title></text></g>')
    parts.append("</svg>")
    return "".join(parts)


# ---- the page ------------------------------------------------------------------------------------

@dataclass(frozen=True)
class RunInfo:
    """What a report's header links and footer show: the run, its config and seed, its data tables."""

    job: str
    run_id: str
    config: dict
    seed: int | None
    tables: dict[str, dict] = field(default_factory=dict)  # connectors.runs.tables.describe_tables
    files: tuple[str, ...] = ()  # other files of the run worth a link (design.json, proposed_scores.csv)


def _links(run: RunInfo) -> str:
    links = [("summary.json", "summary.json"), ("manifest.json", "manifest.json")]
    links += [(f"data/{name}/ ({t['rows']:,} rows)", t["path"]) for name, t in run.tables.items()]
    links += [(f, f) for f in run.files]
    return '<nav class="links">' + " · ".join(f'<a href="{esc(href)}">{esc(text)}</a>' for text, href in links) + "</nav>"


def _footer(run: RunInfo) -> str:
    config = json.dumps(run.config, indent=1, sort_keys=True, default=str)
    return (f"<footer>{esc(run.job)} run {esc(run.run_id)} · seed {esc('none (no random choice)' if run.seed is None else run.seed)}"
            f" · config (as run; also in manifest.json):<details><summary>show</summary><pre>{esc(config)}</pre></details>"
            "</footer>")


STYLE = """
body{font-family:system-ui,sans-serif;margin:2rem auto;max-width:1100px;padding:0 1rem;color:#222;line-height:1.4}
table{border-collapse:collapse;margin:.5rem 0 1.5rem;font-size:.9rem}
th,td{border:1px solid #ccc;padding:.25rem .5rem;vertical-align:top}
th{background:#f2f2f2} .num{text-align:right;white-space:nowrap;font-variant-numeric:tabular-nums} .txt{text-align:left}
th.num{white-space:normal} td.split{white-space:normal} .nw{white-space:nowrap} .wide{overflow-x:auto;max-width:100%}
td.txt{max-width:32rem;overflow-wrap:break-word} .long{overflow-wrap:anywhere}
table.many td.txt{max-width:14rem} table.many th,table.many td{padding:.25rem .35rem}
section{border-top:2px solid #4a78a8;margin-top:2rem;padding-top:.5rem}
.note{color:#555;font-size:.9rem} .warn{color:#8a4b00;background:#fff4e0;border-left:4px solid #e08a3c;padding:.3rem .6rem}
.flex{display:flex;flex-wrap:wrap;gap:2rem;align-items:flex-start} svg{max-width:100%;height:auto}
details{margin:.5rem 0} summary{cursor:pointer;color:#4a78a8} summary a{overflow-wrap:anywhere}
dl{display:grid;grid-template-columns:max-content 1fr;gap:.2rem 1rem;font-size:.9rem;margin:.3rem 0 1rem} dt{font-weight:600}
dd{margin:0} nav.links{font-size:.9rem;margin-bottom:1rem}
footer{margin-top:3rem;border-top:1px solid #ccc;padding-top:.5rem;color:#555;font-size:.85rem}
pre{white-space:pre-wrap;font-size:.8rem;background:#f7f7f7;padding:.5rem}
body.wide{max-width:1500px}
table.runs{table-layout:fixed;width:100%;margin-bottom:.5rem} table.runs td{overflow:hidden}
table.runs th:nth-child(1){width:15.5rem} table.runs th:nth-child(2){width:6rem} table.runs th:nth-child(3){width:9.5rem}
table.runs th:nth-child(4){width:20%} table.runs th:nth-child(5){width:12%} table.runs td:nth-child(1){white-space:nowrap}
table.runs .rows{display:block;overflow-wrap:break-word}
.clip{display:block;white-space:nowrap;overflow:hidden;text-overflow:ellipsis}
details.cell{margin:0} details.cell>summary{white-space:nowrap;overflow:hidden} details.cell[open]>summary{margin-bottom:.2rem}
.hl{display:flex;max-width:100%;white-space:nowrap} .hl>.clip{flex:0 1 auto;min-width:2em} .hl>.v{flex:none}
details.cell>summary .hl{display:inline-flex;max-width:calc(100% - 1.2em);vertical-align:bottom}
.bad{color:#c0392b;font-weight:600} .unfinished{color:#8a4b00}
h2 small{font-weight:normal;color:#555;font-size:.8rem} section h2{margin:.2rem 0 .3rem}
"""


def page(title: str, body: str, run: RunInfo | None = None, wide: bool = False) -> str:
    """A whole report: title, links to the run's files (with ``run``), body, footer with config and seed.
    ``wide``: use the screen's width (up to 1,500 px) instead of a reading column (the index's tables)."""
    head = _links(run) if run else ""
    foot = _footer(run) if run else ""
    return (f'<!doctype html><html lang="en"><head><meta charset="utf-8"><title>{esc(title)}</title>'
            f'<style>{STYLE}</style></head><body{" class=wide" if wide else ""}><h1>{esc(title)}</h1>{head}{body}{foot}'
            "</body></html>")
