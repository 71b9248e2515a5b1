"""A landscape run whose model answers fail: counted by reason, refused over --max-skipped with the reasons
and the fix in its error, stopped early when the run cannot succeed, shown in the report and on the
terminal when within the limit; progress lines with cache hits against calls. The real CLI on the
session's local Ray, tiny transformers models built here and the loopback completions server."""
from __future__ import annotations

import json
import re
import socket
import time
from pathlib import Path

import pytest

from jobs.cli import main
from tests.builders import cell_text
from tests.jobs.landscape.test_landscape_job import write_toy
from tests.servers.completions_server import CompletionsServer
from tests.servers.tiny_lm import shared_tiny_lm

pytestmark = pytest.mark.ray


def argv(toy: Path, out: Path, *extra: str) -> list[str]:
    return ["landscape", "--input", str(toy), "--name", "toy", "--question-column", "q", "--id-column", "id",
            "--options-column", "opts", "--gold-column", "ans", "--perturbations", "none", "--actors", "1",
            "--out", str(out), *extra]


def run_dir(stdout: str) -> Path:
    return Path(stdout.split("manifest: ")[1].split()[0]).parent


def partial_dir(stderr: str) -> Path:
    return Path(re.search(r"traceback in (\S+)/error\.log", stderr).group(1))


@pytest.fixture(scope="module")
def nan_model(tmp_path_factory) -> Path:
    """The tiny LM with NaN weights for the token " smallest": every prompt asking about it fails."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    path = tmp_path_factory.mktemp("nan") / "model"
    tok = AutoTokenizer.from_pretrained(shared_tiny_lm())
    model = AutoModelForCausalLM.from_pretrained(shared_tiny_lm(), dtype=torch.float32)
    with torch.no_grad():
        model.get_input_embeddings().weight[tok.encode(" smallest", add_special_tokens=False)] = float("nan")
    model.save_pretrained(path)
    tok.save_pretrained(path)
    return path


def test_mostly_failing_answers_fail_the_run_with_counted_reasons_and_pass_within_the_limit(ray_local, nan_model, tmp_path,
                                                                                               capsys):
    toy = write_toy(tmp_path / "toy.jsonl", n=8, smallest=5)  # 5 of 8 prompts meet the NaN embedding
    code = main(argv(toy, tmp_path / "runs", "--model", f"hf:{nan_model}", "--batch-size", "8"))
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err
    assert ("error: landscape: 62.50% of model answers unusable (5 of 8), over --max-skipped 0.01 (--max-skipped 0.625 "
            "would accept it); top reasons: 5 × NaN log-probs from the model at the final position") in err
    assert "--resume" not in err  # NaN log-probs come back on a rerun
    manifest = json.loads((partial_dir(err) / "manifest.json").read_text())
    assert manifest["failed_answers"]["by_reason"] == {"NaN log-probs from the model at the final position": 5}

    # within the limit: the same skips on the terminal, in the report and in summary.json
    code = main(argv(toy, tmp_path / "runs", "--model", f"hf:{nan_model}", "--batch-size", "8", "--max-skipped", "0.7"))
    out, err = capsys.readouterr()
    assert code == 0
    assert ("landscape: warning: 5 of 8 model answers unusable (62.50%, within --max-skipped 0.7): 5 × NaN log-probs from "
            "the model at the final position") in err
    # the 3 good answers of the refused run came from the cache; failed answers are never cached, so are called again
    assert "[landscape] model model: 8/8 answers (100.0%) · cache hits 3 · calls 5 · unusable 5" in err
    done = run_dir(out)
    summary = json.loads((done / "summary.json").read_text())
    assert summary["failed_answers"]["total"] == 5 and summary["failed_answers"]["answers"] == 8
    report = cell_text((done / "report.html").read_text())
    assert "5 of 8 model answers failed and are left out of every figure" in report
    assert "Answers that failed (5 of 8" in report and "NaN log-probs from the model at the final position" in report


def test_an_all_failing_model_stops_early_naming_the_reason_and_its_fix(ray_local, tmp_path, capsys):
    toy = write_toy(tmp_path / "toy.jsonl", n=8)
    spec = f"hf:{shared_tiny_lm()}"
    code = main(argv(toy, tmp_path / "runs", "--model", spec, "--model-settings", '{"max_length": 8}', "--batch-size", "2"))
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.startswith("benchaudit landscape:")]
    assert code == 2 and len(lines) == 2 and "Traceback" not in err  # the error and where its traceback is
    assert re.search(rf"error: model model \({re.escape(spec)}\) (stopped after \d of 8 answers|answered none)", lines[0])
    assert f"× prompt is N tokens; {spec} takes at most N (first: prompt is " in lines[0]
    assert "fix: prompts (with the tokens to generate) longer than the model's context" in lines[0]
    assert "--resume" not in err


def test_labels_outside_the_top_logprobs_fail_fast_with_the_echo_fix(ray_local, tmp_path, capsys):
    """top_logprobs 2 cannot hold four labels: a configuration error the first batch back shows. The
    endpoint answers each request after 50 ms (a served model takes time; the tiny one alone would answer
    all 200 before the first batch reached the driver), and the run stops long before its 200th request,
    naming --model-settings label_method echo, not --resume."""
    toy = write_toy(tmp_path / "toy.jsonl", n=200)
    with CompletionsServer(str(shared_tiny_lm()), model_name="tiny") as server:
        real = server.complete
        server.complete = lambda prompt, body: (time.sleep(0.05), real(prompt, body))[1]
        settings = json.dumps({"top_logprobs": 2, "concurrency": 1, "backoff_s": 0.0, "max_backoff_s": 0.0})
        code = main(argv(toy, tmp_path / "runs", "--model", f"openai:{server.base_url}#tiny", "--model-settings", settings,
                         "--batch-size", "2"))
        requests = sum(server.requests.values())
    err = capsys.readouterr().err
    assert code == 2 and requests < 100, requests
    assert re.search(r"error: model tiny \(openai:\S+\) stopped after \d+ of 200 answers: the run has \d+ unusable answers "
                     r"so far, more than --max-skipped 0.01 allows \(2 of its 200 planned answers\)", err)
    assert "× label(s) […] not among the top-2 log-probs the endpoint returned" in err
    assert """fix: the endpoint's top log-probs do not hold every option label: score each label itself with \
--model-settings '{"label_method": "echo"}'""" in err
    assert "rerun the same command with --resume" not in err


def test_progress_shows_cache_hits_against_calls_and_the_report_warns_of_low_label_mass(ray_local, tmp_path, capsys):
    toy = write_toy(tmp_path / "toy.jsonl", n=6)
    args = argv(toy, tmp_path / "runs", "--model", f"hf:{shared_tiny_lm()}", "--batch-size", "2")
    assert main(args) == 0
    out, err = capsys.readouterr()
    assert "[landscape] model model: 6/6 answers (100.0%) · cache hits 0 · calls 6 · unusable 0" in err
    assert "ETA done" in err and "warning: model on toy: mean label mass" in err
    summary = json.loads((run_dir(out) / "summary.json").read_text())
    (low,) = summary["warnings"]
    assert low["kind"] == "low_label_mass" and low["mean_label_mass"] < 0.5 and low["threshold"] == 0.5
    assert "mostly not answering the question" in cell_text((run_dir(out) / "report.html").read_text())
    manifest = json.loads((run_dir(out) / "manifest.json").read_text())
    assert manifest["models"]["model"]["progress"][-1] | {"answers": 6, "calls": 6, "cache_hits": 0} == \
        manifest["models"]["model"]["progress"][-1]

    assert main(args) == 0  # the rerun: every answer from the response cache
    assert "[landscape] model model: 6/6 answers (100.0%) · cache hits 6 · calls 0 · unusable 0" in capsys.readouterr().err




def test_resume_is_advised_for_an_endpoint_that_refused_and_finishes_the_run(ray_local, tmp_path, capsys):
    """A transient reason -- the endpoint refused every connection (it is not up yet) -- is the one case
    where --resume can help: the error advises it, and once the server is up the resumed run completes."""
    toy = write_toy(tmp_path / "toy.jsonl", n=3)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    settings = json.dumps({"label_method": "echo", "max_retries": 0, "concurrency": 1})
    args = argv(toy, tmp_path / "runs", "--model", f"openai:http://127.0.0.1:{port}/v1#tiny", "--model-settings", settings)
    code = main(args)
    err = capsys.readouterr().err
    assert code == 1 and "answered none of its 3 prompts" in err and "3 × nothing listens at 127.0.0.1:N" in err and "fix:" not in err
    run_id = re.search(r"rerun the same command with --resume --run-id (\S+)", err).group(1)
    with CompletionsServer(str(shared_tiny_lm()), model_name="tiny", port=port):
        assert main([*args, "--resume", "--run-id", run_id]) == 0
    out, err = capsys.readouterr()
    assert run_dir(out).name == run_id and "[landscape] model tiny: 3/3 answers (100.0%) · cache hits 0 · calls 3 · unusable 0" in err
