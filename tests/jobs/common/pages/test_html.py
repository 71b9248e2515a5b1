"""The report toolkit: one number style, readable ticks, no overlapping labels, escaped data, collapsed tables."""
from __future__ import annotations

import re

import pytest

from jobs.common.pages.html import (
    RunInfo,
    axis_format,
    bar_chart,
    count_ticks,
    definitions,
    fmt,
    interval,
    interval_chart,
    line_chart,
    log_share_axis,
    log_ticks,
    nice_ticks,
    page,
    pct,
    place_labels,
    scatter,
    share_label,
    signed,
    stacked_bar_chart,
    table,
    text_width,
    x_labels_shown,
)

HOSTILE = "<script>alert(1)</script><img src=x onerror=alert(1)>"


def test_one_number_style():
    assert fmt(187689.0) == "187,689" and fmt(2033) == "2,033"  # a whole float count is never 187689.0
    assert fmt(0.7333) == "0.733" and fmt(1.0) == "1.000" and fmt(24.0, 1) == "24.0" and fmt(173.0, 1) == "173.0"
    assert fmt(None) == "–" and fmt(float("nan")) == "–" and fmt(True) == "yes"
    assert pct(0.0052, 2) == "0.52%" and pct(None) == "–"
    assert signed(-0.1944) == "-0.194" and signed(0.0) == "+0.000"
    assert interval(-0.35, -0.087, signed) == "[-0.350, -0.087]" and interval(None, 0.1) == "–"


def test_share_ticks_in_natural_units():
    assert [share_label(f) for f in (0.001, 0.002, 0.01, 0.1, 0.25, 0.0005)] == ["0.1%", "0.2%", "1%", "10%", "25%", "0.05%"]
    # under three decades: 1, 2 and 5 of each (0.1%, 0.2%, 0.5%, 1% ... 20%); 50% (log -0.30) is past the end
    assert log_ticks(-3.2, -0.4) == pytest.approx([-3, -3 + 0.30103, -3 + 0.69897, -2, -2 + 0.30103, -2 + 0.69897, -1,
                                                  -1 + 0.30103])
    assert log_ticks(-6.5, -0.5) == [-6, -5, -4, -3, -2, -1]
    assert nice_ticks(0, 0.24, 4) == pytest.approx([0, 0.1, 0.2]) and nice_ticks(0, 0.24, 5) == pytest.approx([0, 0.05, 0.1, 0.15, 0.2])
    assert nice_ticks(-1.02, 0.03) == pytest.approx([-1.0, -0.75, -0.5, -0.25, 0.0])


def _labels(svg: str) -> list[tuple[float, float, str, str]]:
    return [(float(x), float(y), a, t) for x, y, a, t in
            re.findall(r'<text x="([\d.]+)" y="([\d.]+)" font-size="9" fill="#444" text-anchor="(\w+)">([^<]*)</text>', svg)]


def test_scatter_labels_never_overlap_and_ticks_are_shares():
    # 40 countries crowded in one corner: every placed label is clear of every other; the rest keep their tooltip
    points = [(-2 + 0.01 * i, -2 + 0.012 * (i % 7), f"C{i:02d}") for i in range(40)] + [(-4, -4, "LO"), (0, 0, "HI")]
    svg = scatter(points, "crowded", log_share_axis("GDP share g"), log_share_axis("caption share d"), (0.0, 1.0))
    placed = _labels(svg)
    assert 2 < len(placed) < 42 and svg.count("<title>") == 42
    boxes = []
    for x, y, anchor, text in placed:
        w = text_width(text, 9)
        x0 = x if anchor == "start" else x - w if anchor == "end" else x - w / 2
        boxes.append((x0, y - 8, x0 + w, y + 2))
    for i, a in enumerate(boxes):
        for b in boxes[i + 1:]:
            assert not (a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]), (a, b)
    assert all(f">{t}</text>" in svg for t in ("0.01%", "0.1%", "1%", "10%", "100%")) and "log10" not in svg


def test_place_labels_keeps_inside_the_box():
    spots = place_labels([(5, 50, "far too long a label for this box")], (0, 0, 60, 100))
    assert spots == [None]


def test_bar_margin_fits_the_longest_label_and_off_scale_bars_are_marked():
    long = "typology · incorrect verdicts of model m2"
    svg = bar_chart([long, "x"], [0.5, 0.25], "t")
    left = float(re.search(r'<rect x="([\d.]+)"', svg).group(1))
    assert left >= text_width(long)  # the label's right end (left - 6) leaves the whole label inside the chart
    svg = bar_chart(["a", "b", "unweighted"], [0.06, 0.08, 0.70], "rmse", value_fmt=lambda v: f"{100 * v:.2f} pp",
                    scale_max=0.09)
    assert "70.00 pp (off scale)" in svg and svg.count("<path") == 1
    assert ">0%</text>" in bar_chart(["a"], [0.3], "shares")  # percentage ticks without decimals


def test_every_chart_escapes_data():
    charts = [bar_chart([HOSTILE], [0.1], HOSTILE), scatter([(0, 0, HOSTILE), (1, 1, "b")], HOSTILE, HOSTILE, HOSTILE),
              stacked_bar_chart([HOSTILE], [(HOSTILE, "#000", [1.0])], HOSTILE),
              interval_chart([HOSTILE], [0.1], [0.0], [0.2], HOSTILE),
              line_chart({HOSTILE: [("t1", 1.0), ("t2", 2.0)]}, HOSTILE), table([HOSTILE], [[HOSTILE.replace("<", "&lt;")]]),
              definitions([(HOSTILE, HOSTILE)])]
    for html in charts:
        assert "<script" not in html and "<img" not in html, html[:200]


def test_table_aligns_numbers_right_and_prose_left_and_collapses_long_tables():
    html = table(["name", "rows", "share", "interval", "passes"], [["Flavor-Aid is a drink", 2033, "12.5%", "[0.1, 0.3]", "1 of 2"]])
    cells = re.findall(r'<td class="(\w+)">', html)
    assert cells == ["txt", "num", "num", "num", "num"]
    long = table(["i"], [[i] for i in range(31)], full_table="data/sensitivity/", what="rows")
    assert long.startswith("<details><summary>Show all 31 rows") and 'href="data/sensitivity/"' in long
    assert not table(["i"], [[i] for i in range(30)]).startswith("<details>")


def test_page_links_the_run_files_and_shows_config_and_seed():
    run = RunInfo("geo", "r1", {"seed": 7, "corpus": [HOSTILE]}, 7,
                  {"records": {"path": "data/records/", "rows": 120, "partitioning": ["corpus"], "files": 2}}, ("design.json",))
    html = page("T", "<p>x</p>", run)
    for href in ("summary.json", "manifest.json", "data/records/", "design.json"):
        assert f'href="{href}"' in html
    assert "seed 7" in html and "&lt;script&gt;" in html and "<script" not in html


def _yticks(svg: str) -> list[str]:
    return re.findall(r'<text class="ytick"[^>]*>([^<]*)</text>', svg)


def test_trend_axes_take_one_format_and_counts_stay_whole():
    counts = line_chart({"m": [("t1", 4), ("t2", 10)]}, "items")  # 4.000 and 10.000 read as thousands
    assert _yticks(counts) == ["4", "6", "8", "10"] and "4.000" not in counts
    assert axis_format([0, 1500, 3000], counts=True)(1500.0) == "1,500"
    shares = _yticks(line_chart({"m": [("t1", 0.02), ("t2", 0.11)]}, "coverage"))
    assert shares == ["0.02", "0.04", "0.06", "0.08", "0.10"]  # one number of decimals on the axis
    assert _yticks(line_chart({"m": [("t1", -0.6), ("t2", 0.0)]}, "gap"))[-1] == "0.0"  # never "-0.0"
    assert count_ticks(2.7, 3.3) == [3.0]


def test_a_long_legend_grows_the_chart_and_never_covers_title_or_plot():
    series = {f"org/model-{i} · per_outcome={k}": [("t1", i), ("t2", i + k)] for i in range(14) for k in (2, 3)}
    svg = line_chart(series, "traces · a metric", width=520)
    height = float(re.search(r'<svg[^>]* height="([\d.]+)"', svg).group(1))
    plot = [float(v) for v in re.search(r'<rect x="([\d.]+)" y="([\d.]+)" width="([\d.]+)" height="([\d.]+)" fill="none"',
                                        svg).groups()]
    assert plot[1] >= 20 and plot[3] == 150  # below the title, its full height
    legend_y = [float(y) for y in re.findall(r'<g class="legend"><rect x="[\d.]+" y="([\d.]+)"', svg)]
    assert len(legend_y) == 28 and min(legend_y) > plot[1] + plot[3] and max(legend_y) + 10 <= height


def test_x_labels_of_a_trend_never_overlap_and_keep_both_ends():
    labels = [f"12-02 02:52:{i:02d}.{i:03d}" for i in range(24)]
    sx = lambda i: 40 + i * 20  # noqa: E731
    ticks = x_labels_shown(labels, sx)
    assert ticks[0][:2] == (0, labels[0]) and ticks[-1][:2] == (23, labels[23])
    spans = []
    for i, text, anchor in ticks:
        w = text_width(text, 9)
        spans.append((sx(i), sx(i) + w) if anchor == "start" else (sx(i) - w, sx(i)) if anchor == "end"
                     else (sx(i) - w / 2, sx(i) + w / 2))
    assert all(a[1] < b[0] for a, b in zip(spans, spans[1:]))


def _ticks(svg: str, axis: str) -> list[str]:
    return re.findall(rf'<text class="{axis}"[^>]*>([^<]*)</text>', svg)


def test_integer_data_get_whole_number_ticks_and_no_label_repeats():
    """Issue 34: counts of 0 and 1 read "0 0 0 0 1" (ticks at 0.25 printed as whole numbers)."""
    counts = bar_chart(["r = 1", "r = 2"], [0, 1], "models above baseline", value_fmt=lambda v: f"{int(v)}")
    assert _ticks(counts, "xtick") == ["0", "1"]
    points = [(0.2, 0, "a"), (0.5, 1, "b"), (0.9, 1, "c")]  # a count on y
    assert _ticks(scatter(points, "breadth", "level", "breadth"), "ytick") == ["0", "1"]


def test_tick_labels_are_distinct_and_probabilities_stay_in_0_1():
    """lm-eval logs gave a Ptop1 axis "0.99 0.99 1.00 1.00 1.00", "-0.00", and running past 1."""
    from jobs.common.pages.html import PROBABILITY, Axis

    near_one = [(0.988 + 0.001 * i, 0.002 * i, "") for i in range(12)]
    svg = scatter(near_one, "lm-eval", Axis("Ptop1", bounds=PROBABILITY), Axis("Hnorm", bounds=PROBABILITY))
    for axis in ("xtick", "ytick"):
        labels = _ticks(svg, axis)
        assert len(labels) >= 2 and len(set(labels)) == len(labels), labels
        assert all(0 <= float(t) <= 1 for t in labels) and not any(t.startswith("-0") for t in labels), labels
    assert Axis("Ptop1", bounds=PROBABILITY).span([0.2, 1.0]) == (0.168, 1.0)  # the 4% margin stops at 1


def test_equal_trend_lines_stay_visible_as_bands():
    """Two lines with the same values: the first one drawn is wider, so the second cannot hide it."""
    svg = line_chart({"a": [("t1", 0.5), ("t2", 0.6)], "b": [("t1", 0.5), ("t2", 0.6)], "c": [("t1", 0.1), ("t2", 0.2)]},
                     "coverage")
    widths = [float(w) for w in re.findall(r'<polyline[^>]* stroke-width="([\d.]+)"', svg)]
    assert widths[0] > widths[1] == widths[2]  # a under b, drawn wider; c alone
    radii = [float(r) for r in re.findall(r'<circle[^>]* r="([\d.]+)"', svg)]
    assert radii[0] > radii[2]
