"""``benchaudit landscape`` end to end on the session's local Ray, with the tiny model through ``hf``
and through ``openai`` against a real completions server on loopback."""
from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest

from audit.landscape.prompts import load_template
from connectors.runs.tables import read_table
from jobs.cli import main
from jobs.common.cli.config import RunOptions
from jobs.landscape.config import LandscapeConfig
from jobs.landscape.run import run
from tests.servers.completions_server import CompletionsServer
from tests.servers.tiny_lm import shared_tiny_lm

pytestmark = pytest.mark.ray
FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "benchmarks"
VIROLOGY = FIXTURES / "mmlu_redux_virology.csv"
WORDS = ["red", "blue", "green", "water", "fire", "earth", "king", "queen"]
FAST = {"backoff_s": 0.0, "max_backoff_s": 0.0}


def load(run_dir: str | Path) -> tuple[dict, dict]:
    d = Path(run_dir)
    return json.loads((d / "summary.json").read_text()), json.loads((d / "manifest.json").read_text())


def write_toy(path: Path, n: int = 8, smallest: int = 0) -> Path:
    """``n`` good items (the first ``smallest`` ask about "the smallest") and three the landscape cannot score."""
    rows = []
    for i in range(n):
        options = [WORDS[(i + j) % len(WORDS)] for j in range(4)]
        word = "smallest" if i < smallest else WORDS[(i * 3) % 8]
        rows.append({"id": f"q{i}", "q": f"Which <i>{WORDS[i % 8]}</i> is the {word}?", "opts": options, "ans": options[i % 4]})
    rows += [{"id": "dup", "q": "Broken?", "opts": ["x", " x ", "y", "z"], "ans": "y"},
             {"id": "empty", "q": "Empty?", "opts": ["x", "", "y"], "ans": "x"},
             {"id": "one", "q": "One?", "opts": ["x"], "ans": "x"}]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def toy_inputs(path: Path) -> dict:
    return {"input": [str(path)], "name": "toy", "question_column": "q", "id_column": "id", "options_column": ["opts"],
            "gold_column": ["ans"]}


@pytest.fixture(scope="module")
def server():
    with CompletionsServer(str(shared_tiny_lm()), model_name="tiny") as srv:
        yield srv


@pytest.fixture(scope="module")
def mmlu(tmp_path_factory) -> Path:
    """The MMLU-Redux virology rows in the mmlu preset's layout, plus a row whose answer index is out of range."""
    path = tmp_path_factory.mktemp("mmlu") / "virology.csv"
    lines = VIROLOGY.read_text(encoding="utf-8").splitlines()
    path.write_text("\n".join([*lines, 'Out of range?,"[""a"",""b"",""c"",""d""]",7,OK,x,,']) + "\n", encoding="utf-8")
    return path


def test_hf_and_openai_agree_flags_validate_and_a_rerun_calls_no_model(ray_local, server, mmlu, tmp_path, capsys):
    models = tmp_path / "models.yaml"
    models.write_text(f"- spec: hf:{shared_tiny_lm()}\n  name: hf-tiny\n  settings: {{batch_size: 4}}\n  actors: 1\n"
                      f"- spec: openai:{server.base_url}#tiny\n  name: srv-tiny\n  settings: {{label_method: echo, concurrency: 2}}\n"
                      "  actors: 1\n")
    toy = write_toy(tmp_path / "toy.jsonl")
    labels = tmp_path / "labels.csv"
    cfg = LandscapeConfig(**toy_inputs(toy), benchmark=[{"name": "virology", "preset": "mmlu", "paths": [str(mmlu)]}],
                          models=str(models), perturbations=["noise"], min_wrong=1, reference=[str(VIROLOGY)],
                          classify=True, classifier_model="srv-tiny", batch_size=8)
    out = Path(run(cfg, RunOptions(out=str(tmp_path / "runs"))))
    summary, manifest = load(out)

    # one table row per benchmark x perturbation x model, none always run
    assert {(r["benchmark"], r["perturbation"], r["model"]) for r in summary["table"]} == {
        (b, p, m) for b in ("toy", "virology") for p in ("none", "noise") for m in ("hf-tiny", "srv-tiny")}
    assert all(r["n_items"] == {"toy": 8, "virology": 5}[r["benchmark"]] and r["n_errors"] == 0 for r in summary["table"])

    # the two backends' label log-probs agree within 1e-4 in the job's own outputs
    table = read_table(str(out), "scores").to_pylist()
    scores = {m: [r for r in table if r["model"] == m] for m in ("hf-tiny", "srv-tiny")}
    by_key = {m: {(r["benchmark"], r["perturbation"], r["id"]): r for r in rows} for m, rows in scores.items()}
    assert by_key["hf-tiny"].keys() == by_key["srv-tiny"].keys() and len(by_key["hf-tiny"]) == 2 * (8 + 5)
    for key, a in by_key["hf-tiny"].items():
        b = by_key["srv-tiny"][key]
        assert max(abs(x - y) for x, y in zip(a["option_logprobs"], b["option_logprobs"])) < 1e-4
        assert abs(a["ptop1"] - b["ptop1"]) < 1e-4 and a["pred_label"] == b["pred_label"] == "ABCD"[a["pred"]]
        assert a["correct"] == (a["pred"] == a["gold"]) and 0 < a["label_mass"] <= 1 and a["error"] is None

    # every item left out is listed with its reason; none stopped the run
    rejected = {(r["benchmark"], r["id"]): r["reason"] for r in read_table(str(out), "rejected").to_pylist()}
    assert rejected[("toy", "dup")] == "duplicate_options: options A and B both read 'x'"
    assert rejected[("toy", "empty")] == "empty_option: option B is ''" and rejected[("toy", "one")] == "too_few_options: 1 option(s)"
    assert rejected[("virology", None)].endswith("row 5, field 'answer': answer index 7 outside the 4 options")
    assert manifest["rejected"]["by_stage"] == {"read": 1, "item": 3}

    # manifest: resolved settings per model, template hash, seeds, call accounting
    hf, srv = manifest["models"]["hf-tiny"], manifest["models"]["srv-tiny"]
    assert hf["settings"][0]["backend"] == "hf" and hf["settings"][0]["revision"].startswith("local:")
    assert srv["settings"][0]["label_method"] == "echo" and "api_key" not in json.dumps(srv)
    assert hf["calls"]["forward_passes"] >= 1 and hf["calls"]["computed"] == 26 and hf["calls"]["cache_hits"] == 0
    assert srv["calls"]["requests"] == 26 and srv["calls"].get("retries", 0) == 0
    assert manifest["template"] == summary["template"] == {"name": "mcqa_letter", "version": 1, "sha256": load_template().sha256,
                                                           "source": "shipped"}
    assert manifest["seeds"] == {"sample": 2026, "perturbations": 2026, "mpd": 2026}
    assert manifest["cache"]["root"] == str(tmp_path / "runs" / "_cache" / "models")

    # flags: items at least one model missed under noise, with their text; validated on the matched MMLU-Redux rows
    noise = [r for rows in scores.values() for r in rows if r["perturbation"] == "noise"]
    missed = {(r["benchmark"], r["source_id"]) for r in noise if not r["correct"]}
    assert {(c["benchmark"], c["source_id"]) for c in summary["flags"]["candidates"]} == missed
    assert all(c["question"] and len(c["options"]) == 4 for c in summary["flags"]["candidates"])
    virology = [v for v in summary["validation"] if v["benchmark"] == "virology"]
    assert [v["min_wrong"] for v in virology] == [1, 2] and all(v["n_matched"] == 5 and v["n_expert_bad"] == 3 for v in virology)
    flagged_v = sum(1 for b, _ in missed if b == "virology")
    assert virology[0]["n_flagged"] == flagged_v
    classifier = read_table(str(out), "classifier").to_pylist()
    assert len(read_table(str(out), "candidates")) == len(missed) and len(read_table(str(out), "prompts")) == 26
    assert len(classifier) == len(missed) and all(c["structure_label"] in ("ok", "bad_question_clarity", "bad_options_clarity")
                                                  for c in classifier)
    sheet = (out / "review_candidates.csv").read_text().splitlines()
    assert sheet[0].endswith("structure_label,review_label,review_subtype,review_note") and len(sheet) == 1 + len(missed)

    # the reviewer's sheet comes back as labels; the rerun (a new run directory) calls no model at all
    first = sheet[1].split(",")
    labels.write_text(f"benchmark,source_id,review_label,review_subtype\n{first[0]},{first[1]},actionable,wrong_groundtruth\n")
    served = sum(server.requests.values())
    argv = ["landscape", "--models", str(models), "--input", str(toy), "--name", "toy", "--question-column", "q",
            "--id-column", "id", "--options-column", "opts", "--gold-column", "ans", "--benchmark", f"virology:mmlu:{mmlu}",
            "--perturbations", "noise", "--min-wrong", "1", "--reference", str(VIROLOGY), "--classify",
            "--classifier-model", "srv-tiny", "--review-labels", str(labels), "--out", str(tmp_path / "runs")]
    assert main(argv) == 0
    again = Path(capsys.readouterr().out.split("manifest: ")[1].strip()).parent
    summary2, manifest2 = load(again)
    assert sum(server.requests.values()) == served
    for name in ("hf-tiny", "srv-tiny"):
        calls = manifest2["models"][name]["calls"]
        assert calls["cache_hits"] == calls["rows"] == 26 and calls["computed"] == 0
        assert calls.get("forward_passes", 0) == 0 and calls.get("requests", 0) == 0
    assert manifest2["review"]["classifier"]["calls"]["computed"] == 0
    assert summary2["table"] == summary["table"] and again != out
    labelled = [c for c in summary2["flags"]["candidates"] if c["review_label"]]
    assert [(c["benchmark"], c["source_id"], c["review_subtype"]) for c in labelled] == [(first[0], first[1], "wrong_groundtruth")]
    html = (again / "report.html").read_text()
    assert "Ptop1–Hnorm landscapes" in html and "<svg" in html and "Validation against expert labels" in html
    assert any(c["benchmark"] == "toy" for c in summary2["flags"]["candidates"])
    assert "Which &lt;i&gt;" in html and "<i>" not in html  # item text is escaped


def test_bad_models_are_reported_and_the_run_completes_with_the_rest(ray_local, tmp_path):
    """NaN log-probs stay on their items; a tokenizer without single-token labels and an unreachable
    endpoint are models left out (--on-error skip), each with a clear error; retries are counted."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(shared_tiny_lm())
    model = AutoModelForCausalLM.from_pretrained(shared_tiny_lm(), dtype=torch.float32)
    with torch.no_grad():
        model.get_input_embeddings().weight[tok.encode(" smallest", add_special_tokens=False)] = float("nan")
    model.save_pretrained(tmp_path / "nan")
    tok.save_pretrained(tmp_path / "nan")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    models = tmp_path / "models.yaml"
    models.write_text(f"- spec: hf:{tmp_path / 'nan'}\n  name: nan\n  actors: 1\n"
                      f"- spec: hf:{shared_tiny_lm(single_token_labels=False)}\n  name: split\n  actors: 1\n"
                      f"- spec: openai:http://127.0.0.1:{port}/v1#tiny\n  name: down\n  actors: 1\n"
                      f"  settings: {{max_retries: 1, timeout_s: 2, backoff_s: 0.0, max_backoff_s: 0.0, concurrency: 1}}\n")
    cfg = LandscapeConfig(**toy_inputs(write_toy(tmp_path / "toy.jsonl", n=6, smallest=2)), models=str(models),
                          perturbations=["none"], batch_size=4)
    out = run(cfg, RunOptions(out=str(tmp_path / "runs"), on_error="skip", max_skipped_inputs=2, max_skipped=0.5))
    summary, manifest = load(out)
    errors = {r["id"]: r["error"] for r in read_table(out, "scores").to_pylist()}
    assert errors == {"q0": "NaN log-probs from the model at the final position",
                      "q1": "NaN log-probs from the model at the final position", **{f"q{i}": None for i in range(2, 6)}}
    assert manifest["rows"] == {"in": 6, "out": 4, "skipped_by_reason": {"NaN log-probs from the model at the final position": 2},
                                "unread": 0}
    failed = {f["model"]: f["error"] for f in manifest["failed_models"]}
    assert "label ' A' is 2 tokens" in failed["split"] and failed["split"].startswith("model split (hf:")
    assert failed["down"].startswith(f"model down (openai:http://127.0.0.1:{port}/v1#tiny) answered none of its 6 prompts "
                                     "(requests 6, retries 0, failures 6)")
    assert f"nothing listens at 127.0.0.1:{port}" in failed["down"]  # a refused connection fails fast: not retried
    assert "a refused connection is not retried" in failed["down"]
    assert manifest["models"]["down"]["calls"]["retries"] == 0 and manifest["skip_limits"]["skipped_inputs"] == 2
    assert [r["model"] for r in summary["table"]] == ["nan"] and summary["table"][0]["n_errors"] == 2
    assert "Models left out" in (Path(out) / "report.html").read_text()


def test_a_model_that_cannot_run_fails_the_run_naming_model_and_label(ray_local, tmp_path, capsys):
    toy = write_toy(tmp_path / "toy.jsonl", n=3)
    spec = f"hf:{shared_tiny_lm(single_token_labels=False)}"
    code = main(["landscape", "--input", str(toy), "--question-column", "q", "--options-column", "opts", "--gold-column",
                 "ans", "--model", spec, "--actors", "1", "--perturbations", "none", "--out", str(tmp_path / "runs")])
    err = capsys.readouterr().err
    assert code == 2 and f"error: model model ({spec}): {spec}: label ' A' is 2 tokens" in err and "Traceback" not in err
    partial = next((tmp_path / "runs" / "landscape").glob(".*.partial"))
    assert (partial / "error.log").exists() and json.loads((partial / "manifest.json").read_text())["failed_models"]
    assert main(["landscape", "--out", str(tmp_path / "runs")]) == 2  # the shipped ARC-Challenge, but no model
    assert "give a model (--model SPEC or --models YAML)" in capsys.readouterr().err
