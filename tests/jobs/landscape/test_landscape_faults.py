"""``benchaudit landscape`` when an endpoint, the response cache or an lm-eval file goes wrong: the key an
endpoint echoes is in no file and no output; a damaged cache file costs a recomputation, not the model; an
invalid answer is not cached, so the endpoint, once fixed, is asked again; one bad reply costs its item
(or a retry), not the run; bad lm-eval lines cost their line. Real CLI, real loopback servers
(tests/servers/faulty_completions.py), real Parquet and JSONL files."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from connectors.runs.tables import read_table
from jobs.cli import main
from tests.servers.faulty_completions import FaultyCompletionsServer

ROOT = Path(__file__).resolve().parents[3]
KEY = "sk-test-landscape-0123456789abcdef"
SETTINGS = json.dumps({"max_retries": 1, "backoff_s": 0.0, "max_backoff_s": 0.0, "concurrency": 1})
WORDS = ["red", "blue", "green", "water", "fire", "earth", "king", "queen"]


def write_items(path: Path, n: int) -> Path:
    rows = [{"id": f"q{i}", "q": f"Which {WORDS[i % 8]} is the {WORDS[(i * 3) % 8]}?",
             "opts": [WORDS[(i + j) % 8] for j in range(4)], "ans": WORDS[(i + i % 4) % 8]} for i in range(n)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def landscape_args(items: Path, out: Path, *servers: FaultyCompletionsServer) -> list[str]:
    models = [a for s in servers for a in ("--model", f"openai:{s.base_url}#{s.model_name}")]
    return ["landscape", "--input", str(items), "--id-column", "id", "--question-column", "q", "--options-column", "opts",
            "--gold-column", "ans", *models, "--model-settings", SETTINGS, "--actors", "1", "--perturbations", "none",
            "--out", str(out)]


def everything_under(root: Path) -> dict[Path, str]:
    """Every file's text: Parquet tables as their rows (a compressed page would hide a string from a byte search)."""
    texts = {}
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        texts[path] = str(pq.read_table(path).to_pylist()) if path.suffix == ".parquet" else path.read_bytes().decode("latin-1")
    return texts


@pytest.mark.ray
def test_a_key_the_endpoint_echoes_is_in_no_file_under_the_run_root_nor_on_stdout_or_stderr(tmp_path):
    """Three endpoints that repeat the request's Authorization header in their error bodies: a 401 on every
    request, a 500 on every request (retried), and a 401 on the first request only (one item's error, in
    the scores table). The CLI runs as a user runs it, the key in OPENAI_API_KEY, Ray started by the run."""
    with FaultyCompletionsServer("m401") as s401, FaultyCompletionsServer("m500") as s500, \
            FaultyCompletionsServer("mok") as sok:
        s401.always, s500.always, sok.faults = "echo_auth_401", "echo_auth_500", ["echo_auth_401"]
        out = tmp_path / "runs"
        args = [*landscape_args(write_items(tmp_path / "items.jsonl", 6), out, s401, s500, sok), "--on-error", "skip",
                "--max-skipped-inputs", "2", "--max-skipped", "0.5", "--num-cpus", "2"]
        env = {**os.environ, "OPENAI_API_KEY": KEY, "PYTHONPATH": str(ROOT)}
        done = subprocess.run([sys.executable, "-m", "jobs.cli", *args], cwd=ROOT, env=env, capture_output=True,
                              text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert {f"Bearer {KEY}"} == set(s401.seen_auth) == set(s500.seen_auth) == set(sok.seen_auth)  # the key was sent
    run_dir = Path(done.stdout.split("manifest: ")[1].split()[0]).parent
    manifest = json.loads((run_dir / "manifest.json").read_text())
    failed = {f["model"]: f["error"] for f in manifest["failed_models"]}
    assert "top reasons: 6 × HTTP 401 (first: " in failed["m401"] and "Authorization: Bearer [redacted]" in failed["m401"]
    assert "top reasons: 6 × HTTP 500 (first: " in failed["m500"] and "failed after 1 retries: HTTP 500" in failed["m500"]
    rows = read_table(str(run_dir), "scores").to_pylist()
    assert len([r for r in rows if r["model"] == "mok" and r["error"]]) == 1  # its first request: one item's error
    assert all("Authorization: Bearer [redacted]" in r["error"] for r in rows if r["error"])
    texts = everything_under(out)
    assert {p.name for p in texts} >= {"manifest.json", "summary.json", "report.html", "index.html"}
    for where, text in {**{str(p): t for p, t in texts.items()}, "stdout": done.stdout, "stderr": done.stderr}.items():
        assert KEY[:12] not in text, f"the key is in {where}"


def _cache_files(out: Path) -> list[Path]:
    return sorted((out / "_cache" / "models").glob("*/*.parquet"))


def _run(args: list[str], capsys) -> tuple[int, str, str]:
    code = main(args)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _manifest(out: str) -> dict:
    return json.loads((Path(out.split("manifest: ")[1].split()[0])).read_text())


def test_a_damaged_cache_file_costs_a_recomputation_not_the_model(ray_local, tmp_path, capsys):
    with FaultyCompletionsServer("m") as server:
        args = landscape_args(write_items(tmp_path / "items.jsonl", 6), tmp_path / "runs", server)
        code, out, err = _run(args, capsys)
        assert code == 0, err
        first = read_table(str(Path(out.split("manifest: ")[1].split()[0]).parent), "scores").to_pylist()
        files = _cache_files(tmp_path / "runs")
        for file in files:
            file.write_bytes(b"\x00not parquet\xff" * 64)
        requests = server.requests
        code, out, err = _run(args, capsys)
        assert code == 0, err
        assert server.requests - requests == 6  # recomputed
    again = read_table(str(Path(out.split("manifest: ")[1].split()[0]).parent), "scores").to_pylist()
    assert [r["option_logprobs"] for r in again] == [r["option_logprobs"] for r in first]
    assert _manifest(out)["models"]["m"]["calls"]["cache_bad"] == len(files) >= 1
    assert all((f.parent / (f.name + ".bad")).exists() for f in files)


def test_invalid_answers_are_not_cached_so_the_fixed_endpoint_is_asked_again(ray_local, tmp_path, capsys):
    with FaultyCompletionsServer("m") as server:
        server.always = "logprob_positive"
        args = landscape_args(write_items(tmp_path / "items.jsonl", 4), tmp_path / "runs", server)
        code, _, err = _run([*args, "--run-id", "r1"], capsys)
        assert code == 2, err  # the endpoint's answers are wrong, not late: resuming as it is cannot help
        assert "log-prob 0.5 of label ' A' is above 0" in err and "--resume" not in err
        assert _cache_files(tmp_path / "runs") == []
        server.always = None  # fixed
        requests = server.requests
        code, out, err = _run([*args, "--run-id", "r2"], capsys)
        assert code == 0, err
        assert server.requests - requests == 4
    assert _manifest(out)["models"]["m"]["calls"]["errors"] == 0


def test_one_bad_reply_of_each_kind_costs_its_item_or_a_retry_not_the_run(ray_local, tmp_path, capsys):
    with FaultyCompletionsServer("m") as server:
        server.faults = ["bad_utf8", "short_body", "logprob_string", "reset", "logprob_nan", "logprob_positive"]
        args = [*landscape_args(write_items(tmp_path / "items.jsonl", 8), tmp_path / "runs", server), "--max-skipped", "0.5"]
        code, out, err = _run(args, capsys)
    assert code == 0, err
    run_dir = Path(out.split("manifest: ")[1].split()[0]).parent
    errors = sorted(e.split(": ", 1)[1] for e in read_table(str(run_dir), "scores").column("error").to_pylist() if e)
    assert [e.split(" (byte")[0] for e in errors] == [
        "POST " + server.base_url + "/completions failed: the response is not UTF-8",
        "log-prob \"-0.5\" of label ' A' is not a number", "log-prob 0.5 of label ' A' is above 0",
        "log-prob nan of label ' A' is NaN"]
    calls = _manifest(out)["models"]["m"]["calls"]
    assert calls["retries"] == 2 and calls["errors"] == 4 and calls["rows"] == 8


# --- lm-eval samples: a bad line costs its line, a file of bad lines costs its task ---------------------------------

LM_EVAL = ROOT / "tests" / "fixtures" / "lm_eval" / "v0.4.13" / "benchaudit__tiny-llama"
DATE = "2026-12-02T02-27-04.119124"


@pytest.mark.ray  # the run reads its logs with Ray Data
def test_bad_lm_eval_lines_are_rejected_naming_file_and_line_and_a_file_of_them_is_an_unreadable_task(tmp_path, capsys):
    root = tmp_path / "lm-eval" / LM_EVAL.name
    root.mkdir(parents=True)
    for name in (f"samples_winogrande_{DATE}.jsonl", f"results_{DATE}.json"):
        shutil.copy(LM_EVAL / name, root / name)
    good = (LM_EVAL / f"samples_winogrande_{DATE}.jsonl").read_bytes().splitlines()  # doc_id 0..5 on lines 1..6
    second = json.loads(good[1])
    wino = root / f"samples_winogrande_{DATE}.jsonl"
    wino.write_bytes(b"\n".join([*good, b"[1, 2]", b'{"doc_id": 9, "doc": "caf\xe9"}', good[1],
                                 json.dumps({**second, "doc_id": 1.7}).encode(),
                                 json.dumps({**second, "doc_id": True}).encode()]) + b"\n")
    bad = root / f"samples_copa_{DATE}.jsonl"  # every line rejected
    bad.write_bytes(b'"a string"\n{"doc_id": 1.7}\n\xff\xfe\n')
    code, out, err = _run(["landscape", "--from-lm-eval", str(tmp_path / "lm-eval"), "--out", str(tmp_path / "runs")],
                          capsys)
    assert code == 0, err
    run_dir = Path(out.split("manifest: ")[1].split()[0]).parent
    reasons = [r["reason"] for r in read_table(str(run_dir), "rejected").to_pylist()]
    repeat = "doc_id 1 appears on lines 2 and 9: every copy dropped (lm-eval writes one record per document and filter)"
    assert sorted(reasons) == sorted([
        f"{wino}: line 2: {repeat}", f"{wino}: line 7: a JSON array, not an object",
        f"{wino}: line 8: not UTF-8 (byte 0xe9 at byte 26 of the line)", f"{wino}: line 9: {repeat}",
        f"{wino}: line 10: doc_id 1.7 is not an integer", f"{wino}: line 11: doc_id true is not an integer",
        f"{bad}: line 1: a JSON string, not an object", f"{bad}: line 2: doc_id 1.7 is not an integer",
        f"{bad}: line 3: not UTF-8 (byte 0xff at byte 1 of the line)"])
    manifest = _manifest(out)
    assert manifest["lm_eval"]["tasks"] == {"read": 1, "unreadable": 1}
    assert [(u["task"], u["reason"]) for u in manifest["lm_eval"]["unreadable"]] == [
        ("copa", f"{bad}: no readable record: all 3 rejected (first, line 1: a JSON string, not an object)")]
    assert {r["task"]: r["rows"] for r in manifest["lm_eval"]["runs"]} == {"winogrande": 5}  # doc_ids 0, 2-5: both copies of 1 dropped
