"""The docs job and the template generator end to end on the session-scoped local Ray."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from audit.docs.agreement import pairwise_agreement
from audit.docs.criteria import (
    CRITERIA,
    assess_document,
    evidence_table,
    proposals_table,
)
from audit.docs.summary import criteria_summary
from connectors.docs import read_document, read_reviewer_scores
from jobs.cli import main
from jobs.common.cli.config import RunOptions
from jobs.common.inputs.benchmarks import BenchmarkConfig
from jobs.common.runtime.summaries import records
from jobs.conventions.config import ConventionsConfig
from jobs.conventions.run import run as run_conventions
from jobs.docs.config import DocsConfig
from jobs.docs.run import run
from jobs.geo.config import CorpusConfig, GeoConfig
from jobs.geo.run import run as run_geo

pytestmark = pytest.mark.ray
FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
CARDS = FIXTURES / "docs" / "cards"
MALFORMED = FIXTURES / "docs" / "malformed" / "malformed_card.md"
HEADER = "resource,annotator," + ",".join(CRITERIA) + ",notes\n"


def load(run_dir: str) -> tuple[dict, dict]:
    d = Path(run_dir)
    return json.loads((d / "summary.json").read_text()), json.loads((d / "manifest.json").read_text())


@pytest.fixture()
def cards(tmp_path) -> Path:
    root = tmp_path / "cards"
    (root / "sparse_ds").mkdir(parents=True)
    for name in ("hf_card_detailed.md", "croissant_rai.json", "datasheet_newsqa.md"):
        shutil.copy(CARDS / name, root / name)
    shutil.copy(CARDS / "hf_card_sparse.md", root / "sparse_ds" / "README.md")  # an HF card is named by its folder
    return root


def sheets(tmp_path: Path) -> list[str]:
    a = tmp_path / "annotator_a.csv"
    a.write_text(HEADER + "hf_card_detailed,A,2,2,2,2,2,2,\ncroissant_rai,A,1,1,2,2,0,2,\n"
                          "datasheet_newsqa,A,1,1,0,1,1,1,\nsparse_ds,A,0,1,0,0,0,0,\n")
    b = tmp_path / "annotator_b.csv"
    b.write_text(HEADER + "hf_card_detailed,B,2,1,2,2,2,2,\ncroissant_rai,B,1,1,2,1,0,2,\n"
                          "datasheet_newsqa,B,1,1,0,1,1,1,\nsparse_ds,B,0,0,0,0,0,0,note with <i>tags</i>\n")
    return [str(a), str(b)]


def test_docs_run_equals_in_process(ray_local, tmp_path, cards):
    reviews = sheets(tmp_path)
    out = run(DocsConfig(cards=[str(cards)], reviews=reviews), RunOptions(out=str(tmp_path / "runs"), executor="ray"))
    summary, manifest = load(out)

    names = {"hf_card_detailed.md": "hf_card_detailed", "croissant_rai.json": "croissant_rai",
             "datasheet_newsqa.md": "datasheet_newsqa", "sparse_ds/README.md": "sparse_ds"}
    assessments = {name: assess_document(read_document(cards / path)) for path, name in names.items()}
    proposals = pd.concat([proposals_table(a).assign(resource=n) for n, a in assessments.items()], ignore_index=True)
    assert {r["resource"]: r["proposed"] for r in summary["resources"]} == {
        n: {row.criterion: row.score for row in proposals[proposals.resource == n].itertuples()} for n in names.values()}
    assert summary["summary_tables"]["benchaudit"] == records(criteria_summary(proposals[["resource", "criterion", "score"]]))
    scores = pd.concat([read_reviewer_scores(p) for p in reviews], ignore_index=True)
    assert summary["agreement"]["pairs"] == records(pairwise_agreement(scores))
    overall = next(r for r in summary["agreement"]["pairs"] if r["criterion"] == "overall")
    assert (overall["n"], overall["exact_agreement"]) == (24, 21 / 24)  # three cells differ, by hand
    assert {(d["resource"], d["criterion"]) for d in summary["agreement"]["disagreements"]} == {
        ("hf_card_detailed", "target_user_context"), ("croissant_rai", "locale_assumptions"), ("sparse_ds", "target_user_context")}
    evidence = pd.read_parquet(Path(out) / "data" / "evidence")
    assert len(evidence) == sum(len(evidence_table(a)) for a in assessments.values())
    # the proposed sheet is a valid reviewer sheet: it loads back to the proposals
    back = read_reviewer_scores(Path(out) / "proposed_scores.csv")
    assert sorted(back[["resource", "criterion", "score"]].itertuples(index=False)) == \
        sorted(proposals[["resource", "criterion", "score"]].itertuples(index=False))
    assert manifest["rows"] == {"in": 4, "out": 4, "skipped_by_reason": {}, "unread": 0, "reviewer_scores": 48}
    assert summary["summary_tables"].keys() == {"benchaudit", "A", "B"}


def test_a_malformed_card_costs_that_card_only_and_sheet_errors_name_file_and_line(tmp_path, cards, capsys):
    """Like a bad row elsewhere: the card that does not parse is counted by reason and named, the
    others are scored, and the run succeeds while the skipped share is within --max-skipped."""
    shutil.copy(MALFORMED, cards / "malformed_card.md")
    runs = tmp_path / "runs"
    assert main(["docs", "--cards", str(cards), "--out", str(runs), "--max-skipped", "0.2", "--run-id", "ok"]) == 0
    summary, manifest = load(str(runs / "docs" / "ok"))
    assert len(summary["resources"]) == 4 and summary["failed"] == []
    assert summary["skipped"] == [{"resource": "malformed_card", "file": "malformed_card.md", "reason": "malformed_front_matter",
                                   "error": f"{cards / 'malformed_card.md'}: malformed YAML front matter at line 5: "
                                            "mapping values are not allowed here"}]
    assert manifest["rows"] == {"in": 5, "out": 4, "skipped_by_reason": {"malformed_front_matter": 1}, "unread": 0,
                                "reviewer_scores": 0}
    assert manifest["skipped_documents"] == summary["skipped"] and manifest["skip_limits"]["skipped_share"] == 0.2
    html = (runs / "docs" / "ok" / "report.html").read_text()
    assert "4 resources (1 more skipped: they do not parse; listed below)" in html
    assert "malformed_front_matter" in html and "malformed YAML front matter at line 5" in html
    capsys.readouterr()
    assert main(["runs", "list", "--out", str(runs), "--json"]) == 0
    assert [r["status"] for r in json.loads(capsys.readouterr().out)] == ["complete"]  # no failed run in the history

    # over the limit (1 of 5 documents is over the default 1%): the error names the card, the line and the limit that
    # would accept it; the scan still read every card (the partial report lists the skip)
    assert main(["docs", "--cards", str(cards), "--out", str(runs), "--run-id", "strict"]) == 2
    err = capsys.readouterr().err
    assert "20.00% of rows skipped or unread (1 of 5), over --max-skipped 0.01 (--max-skipped 0.2 would accept it)" in err
    assert "first skipped: " in err and "malformed_card.md: malformed YAML front matter at line 5" in err
    assert "malformed_front_matter" in (runs / "docs" / ".strict.partial" / "report.html").read_text()

    bad = tmp_path / "bad.csv"
    bad.write_text(HEADER + "sparse_ds,A,0,1,0,3,0,0,\n")
    with pytest.raises(ValueError, match=r"bad\.csv: line 2: field 'locale_assumptions' must be 0, 1 or 2, got '3'"):
        run(DocsConfig(cards=[str(cards)], reviews=[str(bad)]), RunOptions(out=str(tmp_path / "other")))
    a = sheets(tmp_path)[0]
    with pytest.raises(ValueError, match=r"resource 'hf_card_detailed' by 'A' is also scored in"):
        run(DocsConfig(cards=[str(cards)], reviews=[a, a]), RunOptions(out=str(tmp_path / "other")))
    assert not (tmp_path / "other").exists()


def test_report_escapes_text(ray_local, tmp_path):
    card = tmp_path / "x" / "README.md"
    card.parent.mkdir()
    card.write_text("---\npretty_name: <b>X</b>\n---\n# X\n\n## Annotations\n\n"
                    "Annotations were made by 3 annotators <script>alert(1)</script> paid per hour.\n")
    out = run(DocsConfig(cards=[str(card)], reviews=sheets(tmp_path)), RunOptions(out=str(tmp_path / "runs")))
    html = (Path(out) / "report.html").read_text()
    assert "<script>" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "<b>X</b>" not in html and "&lt;b&gt;X&lt;/b&gt;" in html
    assert "Six-criterion summary" in html and "Documents no reviewer scored (check the names): x" in html
    assert "not among the documents (check the names): croissant_rai, datasheet_newsqa" in html


def test_template_prefilled_from_conventions_and_geo_runs(ray_local, tmp_path, capsys):
    conventions = run_conventions(ConventionsConfig(benchmark=[BenchmarkConfig(
        name="tqa", preset="truthfulqa", paths=[str(FIXTURES / "benchmarks" / "truthfulqa_slice.csv")])], bootstrap=200),
        RunOptions(out=str(tmp_path / "runs")))
    pq.write_table(pa.table({"text": ["Lions in Kenya", "Tokyo by night", "a dog", "Paris, France"] * 5}), tmp_path / "c.parquet")
    geo = run_geo(GeoConfig(corpus=[CorpusConfig(name="c", paths=[str(tmp_path / "c.parquet")], format="parquet", text="text")],
                            bootstrap=0), RunOptions(out=str(tmp_path / "runs")))
    target = tmp_path / "template.md"
    assert main(["docs", "template", "--conventions-run", conventions, "--geo-run", geo, "--out", str(target)]) == 0
    text = target.read_text()
    conv, _ = load(conventions)
    b = conv["benchmarks"]["tqa"]
    assert text.startswith("# User-centric documentation: tqa")
    assert f"- Items with a convention signal (coverage): {100 * b['coverage']:.1f}% of 23 items" in text
    assert f"- American share of matched signals: {100 * b['american_share']:.1f}%" in text
    assert "- Items naming a country: 75.0%" in text  # 15 of 20 captions name a country
    assert "Most represented: " in text and text.count("TODO (maintainer):") == 9
    assert main(["docs", "template", "--conventions-run", geo]) == 2
    assert "a 'geo' run, expected a 'conventions' run" in capsys.readouterr().err
    for command in (["docs"], ["docs", "template"]):
        help_text = subprocess.run([sys.executable, "-m", "jobs.cli", *command, "--help"], capture_output=True, text=True,
                                   check=True).stdout
        assert all(flag in help_text for flag in (["--cards", "--reviews", "--resume"] if command == ["docs"] else
                                                  ["--conventions-run", "--geo-run", "--scorers-run", "--to"]))


def test_the_documented_template_example_runs_against_the_default_runs(tmp_path, capsys):
    """docs/docs-audit.md's ``docs template`` line, with ``<id>`` replaced by real runs of the default
    geo (two corpora), conventions (two benchmarks) and scorers commands, runs as written; without the
    corpus it says which corpora the run holds and the flag to give."""
    from tests.test_readme import argv_of, page_commands

    runs = tmp_path / "runs"
    for job, extra in (("geo", ["--limit", "300", "--bootstrap", "0"]), ("conventions", ["--bootstrap", "200"]),
                       ("scorers", ["--limit", "20", "--bootstrap", "200"])):
        assert main([job, *extra, "--out", str(runs), "--run-id", "default"]) == 0
    (line,) = [c for c in page_commands(Path(__file__).resolve().parents[3] / "docs" / "docs-audit.md")
               if argv_of(c)[:2] == ["docs", "template"]]
    argv = [a.replace("runs/", f"{runs}/").replace("<id>", "default").replace("TEMPLATE.md", str(tmp_path / "t.md"))
            for a in argv_of(line)]
    capsys.readouterr()
    assert main(argv) == 0, capsys.readouterr().err
    text = (tmp_path / "t.md").read_text()
    geo, _ = load(str(runs / "geo" / "default"))
    coverage = geo["corpora"]["coco2017_val"]["coverage"]
    assert text.startswith("# User-centric documentation: truthfulqa")
    assert f"- Items naming a country: {100 * coverage:.1f}%" in text and "mean change on valid variants" in text

    corpus = argv.index("--geo-corpus")
    assert main(argv[:corpus] + argv[corpus + 2:]) == 2
    assert (f"{runs}/geo/default holds 2 corpora (cc3m_val, coco2017_val): choose the one this template documents with "
            "--geo-corpus, e.g. --geo-corpus cc3m_val") in capsys.readouterr().err


def test_an_alias_bomb_card_a_formula_name_and_a_planted_link(tmp_path, cards, capsys):
    """A card whose front matter is a "billion laughs" is one skipped card (no 18 GB); a resource named
    like a formula is text in the reviewer sheet; a link planted for the job's folder is refused."""
    from tests.audit.test_safe_yaml import CARD

    (cards / "laughs").mkdir()
    (cards / "laughs" / "README.md").write_text(CARD)
    (cards / "=HYPERLINK(1)").mkdir()
    shutil.copy(CARDS / "hf_card_detailed.md", cards / "=HYPERLINK(1)" / "README.md")
    runs = tmp_path / "runs"
    assert main(["docs", "--cards", str(cards), "--out", str(runs), "--max-skipped", "0.5", "--run-id", "ok"]) == 0
    summary, _ = load(str(runs / "docs" / "ok"))
    assert [(s["resource"], s["reason"]) for s in summary["skipped"]] == [("laughs", "malformed_front_matter")]
    assert "aliases (*name) are not accepted" in summary["skipped"][0]["error"]
    sheet = (runs / "docs" / "ok" / "proposed_scores.csv").read_text().splitlines()
    assert any(line.startswith("'=HYPERLINK(1),") for line in sheet) and not any(line.startswith("=") for line in sheet)

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    planted = tmp_path / "planted"
    planted.mkdir()
    (planted / "docs").symlink_to(elsewhere, target_is_directory=True)
    capsys.readouterr()
    assert main(["docs", "--cards", str(cards), "--out", str(planted), "--max-skipped", "0.5"]) == 2
    assert f"{planted / 'docs'} is a symbolic link (to {elsewhere})" in capsys.readouterr().err
    assert list(elsewhere.iterdir()) == []
