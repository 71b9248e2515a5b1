"""``benchaudit reaudit``: reruns only what changed, reuses what did not, and says exactly what moved."""
from __future__ import annotations

import csv
import json
import os
import shutil
import time
from pathlib import Path

import pytest
import yaml

from jobs.cli import main
from jobs.common.cli.config import ConfigError, RunOptions
from jobs.reaudit.config import ReauditConfig
from jobs.reaudit.run import reaudit

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "benchmarks"
DROP = FIXTURES / "drop_allennlp_fixture.json"


def write_plan(path: Path, **plan) -> Path:
    path.write_text(yaml.safe_dump({"name": "weekly", "schedule": "0 3 * * 1", **plan}, sort_keys=False))
    return path


def edit_questions(path: Path, rows: tuple[int, ...], suffix: str) -> None:
    table = list(csv.reader(path.open(newline="", encoding="utf-8")))
    for i in rows:
        table[i + 1][2] += suffix
    with path.open("w", newline="", encoding="utf-8") as fh:
        csv.writer(fh).writerows(table)


def test_a_bad_plan_is_refused_naming_file_and_field(tmp_path):
    plan = write_plan(tmp_path / "p.yaml", audits=[{"job": "conventions", "options": {"bootstrap": -3}}])
    with pytest.raises(ConfigError, match=r"p\.yaml: audit conventions: --bootstrap: Input should be greater than or equal to 1"):
        reaudit(ReauditConfig(plan=str(plan)), RunOptions(out=str(tmp_path / "r")))
    plan = write_plan(tmp_path / "p.yaml", audits=[{"job": "nosuch"}])
    with pytest.raises(ConfigError, match="unknown job 'nosuch'; jobs: geo, conventions"):
        reaudit(ReauditConfig(plan=str(plan)), RunOptions(out=str(tmp_path / "r")))
    plan = write_plan(tmp_path / "p.yaml", schedule="every monday", audits=[{"job": "geo"}])
    with pytest.raises(ConfigError, match="schedule: .*not a 5-field cron expression"):
        reaudit(ReauditConfig(plan=str(plan)), RunOptions(out=str(tmp_path / "r")))
    plan.write_text("name: x\naudits: [\n")
    with pytest.raises(ConfigError, match=r"p\.yaml line \d+: not valid YAML"):
        reaudit(ReauditConfig(plan=str(plan)), RunOptions(out=str(tmp_path / "r")))
    assert not (tmp_path / "r").exists()  # nothing ran, nothing was written


@pytest.mark.ray
def test_only_changed_inputs_rerun_unchanged_shards_are_reused_and_a_regression_exits_3(ray_local, tmp_path, capsys):
    tqa = tmp_path / "tqa.csv"
    shutil.copy(FIXTURES / "truthfulqa_slice.csv", tqa)
    edit_questions(tqa, tuple(range(6)), " Which color is the center?")  # American spellings to lose later
    drop = tmp_path / "drop.json"
    shutil.copy(DROP, drop)
    plan = write_plan(tmp_path / "plan.yaml",
                      benchmarks=[{"name": "tqa", "preset": "truthfulqa", "paths": [str(tqa)]},
                                  {"name": "drop", "preset": "drop", "paths": [str(drop)]}],
                      audits=[{"job": "conventions", "options": {"bootstrap": 300}}],
                      thresholds=[{"metric": "american_share", "better": "higher", "tolerance": 0.05, "input": "tqa"}])
    out = tmp_path / "runs"
    opts = RunOptions(out=str(out))
    cfg = ReauditConfig(plan=str(plan))

    first, diff, failed = reaudit(cfg, opts)
    assert not failed and diff["base"] is None and diff["audits"]["conventions"]["action"] == "first run"  # never "rerun"
    assert "## conventions (conventions): first run -> " in (Path(first) / "diff.md").read_text()
    runs = sorted((out / "conventions").iterdir())
    assert len(runs) == 1

    os.utime(tqa, (time.time() + 60, time.time() + 60))  # a touched file, same content: nothing to do
    second, diff, _ = reaudit(cfg, opts)
    a = diff["audits"]["conventions"]
    assert a["action"] == "reused" and a["run_id"] == runs[0].name and a["reasons"] == []
    assert all(m["status"] == "unchanged" for m in diff["metrics"])
    assert sorted((out / "conventions").iterdir()) == runs  # no job ran

    edit_questions(tqa, (0, 1), " Its colour, at the centre: behaviour, favourite, neighbour, theatre, organise, analyse.")
    with pytest.raises(SystemExit) as stop:
        main(["reaudit", "--plan", str(plan), "--out", str(out)])
    assert stop.value.code == 3
    printed = capsys.readouterr().out
    assert "regressed: conventions tqa american_share" in printed and "diff: " in printed
    third = Path(next(line for line in printed.splitlines() if line.startswith("diff: ")).split(": ", 1)[1]).parent
    diff = json.loads((third / "diff.json").read_text())
    a = diff["audits"]["conventions"]
    assert diff["base"] == Path(second).name and a["action"] == "rerun" and "inputs changed: tqa" in "; ".join(a["reasons"])
    assert a["items"]["tqa"] == {"added": [], "removed": [], "changed": ["tqa:0", "tqa:1"]}
    assert a["items"]["drop"] == {"added": [], "removed": [], "changed": []}
    assert a["work"]["shards"] == {"total": 2, "resumed": 1, "run": 1}  # DROP's shard came from the earlier run
    share = next(m for m in diff["metrics"] if m["input"] == "tqa" and m["metric"] == "american_share")
    assert share["status"] == "regressed" and share["delta"] < -0.05 and share["delta_low"] < share["delta"] < share["delta_high"]
    unchanged = next(m for m in diff["metrics"] if m["input"] == "drop" and m["metric"] == "coverage")
    assert unchanged["status"] == "unchanged" and unchanged["delta"] == 0
    # the rerun's numbers equal a fresh run's: reused shards change nothing
    fresh = json.loads((Path(main_run(tmp_path, tqa, drop)) / "summary.json").read_text())
    rerun = json.loads((out / "conventions" / a["run_id"] / "summary.json").read_text())
    assert rerun["headline"] == fresh["headline"]
    assert "**regressed**" in (third / "diff.md").read_text() and "tqa:0, tqa:1" in (third / "diff.md").read_text()


def main_run(tmp_path: Path, tqa: Path, drop: Path) -> str:
    from jobs.common.inputs.benchmarks import BenchmarkConfig
    from jobs.conventions.config import ConventionsConfig
    from jobs.conventions.run import run

    cfg = ConventionsConfig(benchmark=[BenchmarkConfig(name="tqa", preset="truthfulqa", paths=[str(tqa)]),
                                       BenchmarkConfig(name="drop", preset="drop", paths=[str(drop)])], bootstrap=300)
    return run(cfg, RunOptions(out=str(tmp_path / "fresh")))


WORDS = ["red", "blue", "green", "water", "fire", "earth", "king", "queen"]


def write_mcqa(path: Path, edited: tuple[int, ...] = ()) -> Path:
    rows = []
    for i in range(8):
        options = [WORDS[(i + j) % 8] for j in range(4)]
        q = f"Which color is at the center of picture {i}?" + (" Its colour, at the centre." if i in edited else "")
        rows.append({"id": f"q{i}", "q": q, "opts": options, "ans": options[i % 4]})
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


@pytest.fixture(scope="module")
def servers():
    from contextlib import ExitStack

    from tests.servers.completions_server import CompletionsServer
    from tests.servers.tiny_lm import shared_tiny_lm

    with ExitStack() as stack:
        yield [stack.enter_context(CompletionsServer(str(shared_tiny_lm()), model_name=n)) for n in ("tiny-a", "tiny-b", "tiny-c")]


def served(srv) -> int:
    return sum(srv.requests.values())


@pytest.mark.ray
def test_two_edited_items_and_a_swapped_model_recompute_only_those(ray_local, servers, tmp_path):
    a, b, c = servers
    bench = write_mcqa(tmp_path / "mcqa.jsonl")

    def model(srv, name):
        return {"spec": f"openai:{srv.base_url}#{srv.model_name}", "name": name, "actors": 1,
                "settings": {"label_method": "echo", "concurrency": 2, "backoff_s": 0.0, "max_backoff_s": 0.0}}

    def plan(models):
        return write_plan(tmp_path / "plan.yaml", models=models,
                          benchmarks=[{"name": "toy", "paths": [str(bench)], "question": "q", "id": "id", "options": "opts",
                                       "gold": "ans"}],
                          audits=[{"job": "landscape", "options": {"perturbations": ["none"], "batch_size": 4}},
                                  {"job": "conventions", "options": {"bootstrap": 200}}])

    opts = RunOptions(out=str(tmp_path / "runs"))
    first, diff, failed = reaudit(ReauditConfig(plan=str(plan([model(a, "a"), model(b, "b")]))), opts)
    assert not failed and {i: x["action"] for i, x in diff["audits"].items()} == {"landscape": "first run", "conventions": "first run"}
    per_item = served(a) / 8
    assert per_item >= 1 and served(b) == served(a)

    before = [served(s) for s in servers]
    write_mcqa(bench, edited=(2, 5))
    second, diff, failed = reaudit(ReauditConfig(plan=str(plan([model(a, "a"), model(c, "c")]))), opts)
    assert not failed
    assert served(a) - before[0] == 2 * per_item  # model a: only the two edited items reach it
    assert served(b) - before[1] == 0  # the model taken out: nothing
    assert served(c) - before[2] == 8 * per_item  # the model swapped in: every item
    land = diff["audits"]["landscape"]
    assert land["action"] == "rerun" and land["models"] == {"added": ["c"], "removed": ["b"], "changed": []}
    assert land["items"] == {"toy": {"added": [], "removed": [], "changed": ["q2", "q5"]}}
    assert land["work"]["models"]["a"]["cache_hits"] == 6 and land["work"]["models"]["a"]["computed"] == 2
    assert land["work"]["models"]["c"]["cache_hits"] == 0 and land["work"]["models"]["c"]["computed"] == 8
    conv = diff["audits"]["conventions"]
    assert conv["items"] == {"toy": {"added": [], "removed": [], "changed": ["q2", "q5"]}} and conv["models"] == {
        "added": [], "removed": [], "changed": []}
    text = (Path(second) / "diff.md").read_text()
    assert "toy: 2 item(s) changed: q2, q5" in text and "models added: c" in text and "models removed: b" in text


def test_item_ids_and_names_in_diff_md_are_shown_never_rendered():
    """An item id holding a newline and Markdown must not forge a heading, a metric row or raw HTML."""
    from jobs.reaudit.report import diff_of, render_diff

    forged = "q1\n\n## FORGED\n| toy | accuracy | 0 | 1 | 1 | | **improved** |\n<img src=x onerror=alert(1)>"
    records = {"conventions": {
        "job": "conventions", "action": "rerun", "reasons": ["inputs changed: toy\n## FORGED REASON"], "run_id": "r2",
        "path": "/x", "error": None, "work": {},
        "diff": {"items": {"toy<script>": {"added": [forged], "removed": [], "changed": ["q2"]}},
                 "models": {"added": ["m|<b>x</b>"], "removed": [], "changed": []}, "base_run": "r1",
                 "metrics": [{"input": "toy\n## FORGED", "metric": "share|**improved**", "old": 0.5, "new": 0.25,
                              "delta": -0.25, "delta_low": -0.3, "delta_high": -0.2, "status": "regressed", "rule": "r"}]}}}
    text = render_diff(diff_of("weekly\n# FORGED PLAN <img>", None, "r0", "r9", records))
    lines = text.splitlines()
    assert [line for line in lines if line.startswith("#")] == [
        "# Re-audit weekly \\# FORGED PLAN &lt;img&gt;: r9 against r0", "## conventions (conventions): rerun -> r2"]
    assert "<" not in text and not any("FORGED" in line and line.startswith(("#", "|")) and "\\" not in line for line in lines)
    table = [line for line in lines if line.startswith("|")]
    assert len(table) == 3 and all(line.replace("\\|", "").count("|") == 8 for line in table)  # header, rule, one row
    assert table[2].endswith("| **regressed** |")
    assert "q1 \\#\\# FORGED \\| toy" in text and "q2" in text


@pytest.mark.ray
def test_one_failed_audit_is_reported_in_the_diff_and_the_others_go_on(ray_local, tmp_path, capsys):
    """The geo audit's corpus holds no JSON object (it fails when geo plans it); the conventions audit
    after it still runs, and diff.md and diff.json say which failed and why (today: KeyError 'diff')."""
    tqa = tmp_path / "tqa.csv"
    shutil.copy(FIXTURES / "truthfulqa_slice.csv", tqa)
    bad = tmp_path / "bad.jsonl"
    bad.write_text("[1]\n[2]\n")
    plan = write_plan(tmp_path / "plan.yaml", benchmarks=[{"name": "tqa", "preset": "truthfulqa", "paths": [str(tqa)]}],
                      corpora=[{"name": "bad", "preset": "redcaps", "paths": [str(bad)]}],
                      audits=[{"job": "geo"}, {"job": "conventions", "options": {"bootstrap": 200}}])
    out = tmp_path / "runs"
    assert main(["reaudit", "--plan", str(plan), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "reaudit: 1 audit(s) failed (first: audit geo: " in err and "the diff of the others is in" in err
    final = next((out / "reaudit").iterdir())
    diff = json.loads((final / "diff.json").read_text())
    geo, conv = diff["audits"]["geo"], diff["audits"]["conventions"]
    assert geo["action"] == "failed" and "bad.jsonl" in geo["error"] and "JSON object" in geo["error"]
    assert conv["action"] == "first run" and (out / "conventions" / conv["run_id"] / "_SUCCESS").exists()
    text = (final / "diff.md").read_text()
    assert "## geo (geo): failed" in text and "Error: " in text and "## conventions (conventions): first run" in text
    # the next re-audit reruns the failed audit (nothing to reuse) and reuses the one that ran
    _, diff, failed = reaudit(ReauditConfig(plan=str(plan)), RunOptions(out=str(out)))
    assert diff["audits"]["geo"]["action"] == "failed" and diff["audits"]["geo"]["reasons"] == ["its last run failed"]
    assert diff["audits"]["conventions"]["action"] == "reused" and len(failed) == 1
