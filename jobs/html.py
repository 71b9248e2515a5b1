"""Small, dependency-free HTML and SVG pieces for self-contained reports.

Every string that comes from data (captions, country names, file names) goes through ``esc``;
charts are inline SVG, so a report is one file that opens anywhere, offline.
"""
from __future__ import annotations

import itertools
import math
from html import escape
from typing import Any

_CLIP_IDS = itertools.count()  # unique clip-path ids when a page holds several charts


def esc(value: Any) -> str:
    return escape("" if value is None else str(value), quote=True)


def fmt(value: Any, digits: int = 3) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return esc(value)


def pct(value: float | None, digits: int = 1) -> str:
    return "–" if value is None else f"{100 * value:.{digits}f}%"


def table(headers: list[str], rows: list[list[Any]], cls: str = "") -> str:
    head = "".join(f"<th>{esc(h)}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{c if isinstance(c, str) else fmt(c)}</td>" for c in r) + "</tr>" for r in rows)
    return f'<table class="{esc(cls)}"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def bar_chart(labels: list[str], values: list[float], title: str, width: int = 640, value_fmt=pct) -> str:
    """Horizontal bars, one per label."""
    if not values:
        return f"<p><em>{esc(title)}: nothing to plot.</em></p>"
    bar_h, left, right = 18, 160, 70
    height = bar_h * len(values) + 30
    vmax = max(values) or 1.0
    parts = [f'<svg role="img" aria-label="{esc(title)}" width="{width}" height="{height}" xmlns="http://www.w3.org/2000/svg">',
             f'<text x="0" y="14" font-size="13" font-weight="bold">{esc(title)}</text>']
    for i, (label, v) in enumerate(zip(labels, values)):
        y = 24 + i * bar_h
        w = (width - left - right) * v / vmax
        parts.append(f'<text x="{left - 6}" y="{y + 12}" font-size="11" text-anchor="end">{esc(label)}</text>')
        parts.append(f'<rect x="{left}" y="{y}" width="{w:.1f}" height="{bar_h - 4}" fill="#4a78a8"/>')
        parts.append(f'<text x="{left + w + 4:.1f}" y="{y + 12}" font-size="11">{esc(value_fmt(v))}</text>')
    parts.append("</svg>")
    return "".join(parts)


def scatter(points: list[tuple[float, float, str]], title: str, xlabel: str, ylabel: str,
            line: tuple[float, float] | None = None, width: int = 560, height: int = 420) -> str:
    """Labelled scatter with an optional fitted line y = intercept + slope·x."""
    if len(points) < 2:
        return f"<p><em>{esc(title)}: too few points to plot.</em></p>"
    pad = 50
    xs, ys = [p[0] for p in points], [p[1] for p in points]
    x0, x1, y0, y1 = min(xs), max(xs), min(ys), max(ys)
    x1, y1 = (x1 if x1 > x0 else x0 + 1), (y1 if y1 > y0 else y0 + 1)
    sx = lambda x: pad + (x - x0) / (x1 - x0) * (width - 2 * pad)  # noqa: E731
    sy = lambda y: height - pad - (y - y0) / (y1 - y0) * (height - 2 * pad)  # noqa: E731
    parts = [f'<svg role="img" aria-label="{esc(title)}" width="{width}" height="{height}" xmlns="http://www.w3.org/2000/svg">',
             f'<text x="{width / 2}" y="16" font-size="13" font-weight="bold" text-anchor="middle">{esc(title)}</text>',
             f'<line x1="{pad}" y1="{height - pad}" x2="{width - pad}" y2="{height - pad}" stroke="#333"/>',
             f'<line x1="{pad}" y1="{pad}" x2="{pad}" y2="{height - pad}" stroke="#333"/>',
             f'<text x="{width / 2}" y="{height - 12}" font-size="11" text-anchor="middle">{esc(xlabel)}</text>',
             f'<text x="14" y="{height / 2}" font-size="11" text-anchor="middle" transform="rotate(-90 14 {height / 2})">{esc(ylabel)}</text>',
             f'<text x="{pad}" y="{height - pad + 14}" font-size="10">{x0:.2f}</text>',
             f'<text x="{width - pad}" y="{height - pad + 14}" font-size="10" text-anchor="end">{x1:.2f}</text>',
             f'<text x="{pad - 4}" y="{height - pad}" font-size="10" text-anchor="end">{y0:.2f}</text>',
             f'<text x="{pad - 4}" y="{pad + 4}" font-size="10" text-anchor="end">{y1:.2f}</text>']
    if line:
        intercept, slope = line
        clip = f"clip{next(_CLIP_IDS)}"
        parts.append(f'<clipPath id="{clip}"><rect x="{pad}" y="{pad}" width="{width - 2 * pad}" height="{height - 2 * pad}"/></clipPath>')
        parts.append(f'<line clip-path="url(#{clip})" x1="{sx(x0):.1f}" y1="{sy(intercept + slope * x0):.1f}" x2="{sx(x1):.1f}" '
                     f'y2="{sy(intercept + slope * x1):.1f}" stroke="#c0392b" stroke-width="1.5"/>')
    for x, y, label in points:
        parts.append(f'<circle cx="{sx(x):.1f}" cy="{sy(y):.1f}" r="3" fill="#4a78a8"><title>{esc(label)}</title></circle>')
        parts.append(f'<text x="{sx(x) + 4:.1f}" y="{sy(y) - 3:.1f}" font-size="8" fill="#555">{esc(label)}</text>')
    parts.append("</svg>")
    return "".join(parts)


def stacked_bar_chart(labels: list[str], segments: list[tuple[str, str, list[float]]], title: str,
                      width: int = 640) -> str:
    """One horizontal 100% bar per label, split into ``(name, colour, values)`` segments.

    Why 100%: rows of very different sizes (a category with 7,000 signals next to one with 3)
    compare by their split; the counts are printed beside each bar and in each segment's tooltip.
    """
    totals = [sum(values[i] for _, _, values in segments) for i in range(len(labels))]
    if not labels or not any(totals):
        return f"<p><em>{esc(title)}: nothing to plot.</em></p>"
    bar_h, left, right = 18, 160, 150
    height = bar_h * len(labels) + 46
    span = width - left - right
    parts = [f'<svg role="img" aria-label="{esc(title)}" width="{width}" height="{height}" xmlns="http://www.w3.org/2000/svg">',
             f'<text x="0" y="14" font-size="13" font-weight="bold">{esc(title)}</text>']
    for i, (label, total) in enumerate(zip(labels, totals)):
        y = 24 + i * bar_h
        parts.append(f'<text x="{left - 6}" y="{y + 12}" font-size="11" text-anchor="end">{esc(label)}</text>')
        x = float(left)
        for name, colour, values in segments:
            w = span * values[i] / total if total else 0.0
            if w > 0:
                parts.append(f'<rect x="{x:.1f}" y="{y}" width="{w:.1f}" height="{bar_h - 4}" fill="{esc(colour)}">'
                             f'<title>{esc(label)}: {esc(name)} {fmt(values[i])} of {fmt(total)}</title></rect>')
            x += w
        counts = " / ".join(fmt(values[i]) for _, _, values in segments)
        parts.append(f'<text x="{left + span + 6}" y="{y + 12}" font-size="11">{esc(counts)}</text>')
    y = 24 + len(labels) * bar_h + 6
    x = left
    for name, colour, _ in segments:
        parts.append(f'<rect x="{x}" y="{y}" width="10" height="10" fill="{esc(colour)}"/>'
                     f'<text x="{x + 14}" y="{y + 9}" font-size="11">{esc(name)}</text>')
        x += 20 + 7 * len(name)
    parts.append("</svg>")
    return "".join(parts)


STYLE = """
body{font-family:system-ui,sans-serif;margin:2rem auto;max-width:1100px;color:#222;line-height:1.4}
table{border-collapse:collapse;margin:.5rem 0 1.5rem;font-size:.9rem}
th,td{border:1px solid #ccc;padding:.25rem .5rem;text-align:right}
th{background:#f2f2f2} td:first-child,th:first-child{text-align:left}
section{border-top:2px solid #4a78a8;margin-top:2rem;padding-top:.5rem}
.note{color:#555;font-size:.9rem} .flex{display:flex;flex-wrap:wrap;gap:2rem}
"""


def page(title: str, body: str) -> str:
    return (f'<!doctype html><html lang="en"><head><meta charset="utf-8"><title>{esc(title)}</title>'
            f"<style>{STYLE}</style></head><body><h1>{esc(title)}</h1>{body}</body></html>")
