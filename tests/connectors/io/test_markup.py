"""Data in files people open is shown, never run: Markdown renders it as the characters it holds,
a spreadsheet shows a CSV cell as text instead of running it as a formula."""
from __future__ import annotations

import csv
import io

import pandas as pd
import pytest

from connectors.io.markup import csv_cell, csv_frame, csv_uncell, md_text

FORGED = "tqa:0\n\n## FORGED\n| x | acc | 1 | 2 | 1 | | **improved** |\n<img src=x onerror=alert(1)>"


def test_md_text_keeps_data_on_one_line_with_no_markup_left():
    text = md_text(FORGED)
    assert "\n" not in text and "<" not in text and ">" not in text
    assert "|" not in text.replace("\\|", "") and "**" not in text and "\\#\\# FORGED" in text
    assert "&lt;img src=x onerror=alert(1)&gt;" in text
    assert md_text("[click](javascript:x) `code` _em_ ~~s~~ ![i](u)") == \
        "\\[click\\](javascript:x) \\`code\\` \\_em\\_ \\~\\~s\\~\\~ \\!\\[i\\](u)"
    assert md_text("tqa:0") == "tqa:0" and md_text(3) == "3"  # ordinary ids unchanged


def test_tab_and_carriage_return_first_are_formula_starts_too():
    assert csv_cell("\t=1") == "'\t=1" and csv_cell("\r=1") == "'\r=1" and csv_cell("a=1") == "a=1" and csv_cell(-1) == -1


@pytest.mark.parametrize("cell", ["=HYPERLINK(\"http://x\")", "+1+cmd|' /C calc'!A0", "-2+3", "@SUM(A1)", "\t=1"])
def test_a_cell_a_spreadsheet_would_run_is_written_as_text(cell):
    assert csv_cell(cell) == "'" + cell
    frame = pd.DataFrame({"id": [cell, "ok"], "n": [-1, 2], cell: ["x", "y"]})
    rows = list(csv.reader(io.StringIO(csv_frame(frame).to_csv(index=False))))
    assert rows[0] == ["id", "n", "'" + cell] and rows[1] == ["'" + cell, "-1", "x"] and rows[2] == ["ok", "2", "y"]


def test_a_reviewer_sheet_loaded_back_gives_the_values_the_sheet_was_written_from(tmp_path):
    """review_candidates.csv and proposed_scores.csv come back as a reviewer's labels: their ids must match."""
    from audit.docs.criteria import CRITERIA
    from connectors.docs import read_reviewer_scores
    from connectors.landscape.inputs import read_review_labels

    assert [csv_uncell(csv_cell(v)) for v in ("=x", "-1", "ok", "'quoted")] == ["=x", "-1", "ok", "'quoted"]
    sheet = tmp_path / "labels.csv"
    csv_frame(pd.DataFrame({"benchmark": ["@b"], "source_id": ["-7"], "review_label": ["actionable"]})).to_csv(sheet, index=False)
    labels = read_review_labels(str(sheet))
    assert labels[["benchmark", "source_id"]].values.tolist() == [["@b", "-7"]]
    scores = tmp_path / "scores.csv"
    csv_frame(pd.DataFrame([{"resource": "=HYPERLINK(1)", "annotator": "A", **dict.fromkeys(CRITERIA, "2")}])).to_csv(scores, index=False)
    assert set(read_reviewer_scores(str(scores))["resource"]) == {"=HYPERLINK(1)"}
