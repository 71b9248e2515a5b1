"""A contamination audit whose model answers are unusable does not report success: router calls that all fail
(every prompt longer than the model's context) and worker answers without a letter (a random model) fail
the run with their counted reasons; within --max-skipped the run shows them in the report and on the
terminal, and the progress lines count router and worker answers, cache hits against calls. The real
CLI on the session's local Ray with the tiny transformers model."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from jobs.cli import main
from jobs.common.runtime.job import JobRun
from tests.builders import cell_text
from tests.jobs.contamination.test_contamination_job import WORDS, write_benchmark
from tests.servers.tiny_lm import shared_tiny_lm

pytestmark = pytest.mark.ray


def argv(bench: str, out: Path, *extra: str) -> list[str]:
    return ["contamination", "--input", bench, "--question-column", "question", "--id-column", "id", "--options-column",
            "options", "--gold-column", "gold", "--worker-model", f"hf:{shared_tiny_lm()}", "--sample", "3",
            "--max-routers", "2", "--router-max-tokens", "6", "--worker-max-tokens", "3", "--bootstrap", "200",
            "--actors", "1", "--batch-size", "3", "--out", str(out), *extra]


def partial_dir(stderr: str) -> Path:
    return Path(re.search(r"traceback in (\S+)/error\.log", stderr).group(1))


@pytest.fixture()
def bench(tmp_path) -> str:
    return write_benchmark(tmp_path / "b.jsonl", [f"Which {w} is the first colour?" for w in WORDS[:4]])


def test_router_calls_longer_than_the_context_fail_the_run_early_and_the_report_says_why(ray_local, bench, tmp_path, capsys):
    spec = f"hf:{shared_tiny_lm()}"
    code = main(argv(bench, tmp_path / "runs", "--model-settings", '{"max_length": 8}'))
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.startswith("benchaudit contamination:")]
    assert code == 2 and len(lines) == 2 and "Traceback" not in err
    # stopped at the first batch back, or, when every batch was back by then, refused at the end: no answer is usable
    assert re.match(rf"benchaudit contamination: error: contamination: (router calls of {re.escape(spec)} stopped after \d of 9 "
                    r"answers|no usable model answers: all 9 unusable)", lines[0])
    assert f"× prompt is N tokens; {spec} takes at most N (first: prompt is " in lines[0]
    assert "fix: prompts (with the tokens to generate) longer than the model's context" in lines[0] and "--resume" not in err
    manifest = json.loads((partial_dir(err) / "manifest.json").read_text())
    stage = manifest["model_calls"][f"router {spec}"]
    assert stage["expected"] == 9 and stage["unusable"]["by_reason"] == {
        f"prompt is N tokens; {spec} takes at most N": stage["progress"][-1]["answers"]}
    assert "worker " + spec not in manifest["model_calls"]  # no worker call was made

    # accepting every skip does not make an audit of no answer a success, but its report says why
    code = main(argv(bench, tmp_path / "runs", "--model-settings", '{"max_length": 8}', "--max-skipped", "1"))
    err = capsys.readouterr().err
    assert code == 2 and "error: contamination: no usable model answers: all 9 unusable; top reasons: 9 × prompt is N" in err
    report = cell_text((partial_dir(err) / "report.html").read_text())
    assert "All 9 router answers were unusable (9 × prompt is N tokens;" in report
    assert "No cell was scored (9 of 9 cells made no worker call), so this report has no figures" in report
    assert "<svg" not in report and "Models above baseline" not in report


def test_unparsable_worker_answers_fail_the_run_and_within_the_limit_are_shown(ray_local, bench, tmp_path, capsys,
                                                                              monkeypatch):
    code = main(argv(bench, tmp_path / "runs"))  # the random tiny model answers without a letter
    err = capsys.readouterr().err
    assert code == 2 and "× unparsable worker answer" in err and "--resume" not in err
    assert re.search(r"error: contamination: (worker calls of \S+ stopped after \d+ of \d+ answers|[\d.]+% of model answers "
                     r"unusable)", err)

    args = argv(bench, tmp_path / "runs", "--max-skipped", "1")
    written, write_json = [], JobRun.write_json

    def counted(job: JobRun, name: str, data: object) -> None:
        written.append(name)
        write_json(job, name, data)

    monkeypatch.setattr(JobRun, "write_json", counted)
    assert main(args) == 0
    assert written.count("manifest.json") == 1  # written once, when the run is committed
    out, err = capsys.readouterr()
    warning = re.search(r"contamination: warning: (\d+) of (\d+) model answers unusable \([\d.]+%, within --max-skipped 1\): "
                        r"(\d+) × unparsable worker answer", err)
    assert warning and int(warning.group(3)) <= int(warning.group(1))
    # the refused run's answers (its router calls, its first worker answers) are in the response cache
    assert re.search(r"\[contamination\] router calls of \S+: 9/9 answers \(100\.0%\) · cache hits 9 · calls 0 · ", err)
    assert re.search(r"\[contamination\] worker calls of \S+: (\d+)/\1 answers \(100\.0%\) · cache hits \d+ · calls \d+ · ", err)
    run_dir = Path(out.split("manifest: ")[1].split()[0]).parent
    report = cell_text((run_dir / "report.html").read_text())
    assert re.search(r"(All|\d+ of) \d+ worker answers were unusable \(\d+ × unparsable worker answer\)", report)
    assert "Unusable answers by reason" in report
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["calls"]["worker"]["unusable"]["by_reason"]["unparsable worker answer"] == int(warning.group(3))
    # answers come back, and are counted with progress, batch by batch (--batch-size 3): not the stage as one batch
    assert manifest["model_calls"][f"router hf:{shared_tiny_lm()}"]["batches"] == 3
    # a rerun of it, every call from the response cache: test_contamination_job.py::
    # test_hf_tiny_model_end_to_end_and_a_rerun_served_by_the_cache (the same model and sizes, computed 0)
