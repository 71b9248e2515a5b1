"""The hf backend on a tiny random-weight model saved to disk and loaded like a real one."""
from __future__ import annotations

import math

import pyarrow as pa
import pytest

from audit.mcqa.prompt import Prompt
from connectors.models.base import LabelTokenError
from connectors.models.batches import score_prompt_batch
from connectors.models.registry import build_backend
from connectors.models.render import render_prompt
from tests.servers.tiny_lm import shared_tiny_lm

pytestmark = pytest.mark.models  # builds transformers models (torch)

QUESTIONS = [
    Prompt("Question: which planet is red?\nA. water\nB. fire\nC. earth\nD. ocean", "Answer with the letter only.", "Answer:"),
    Prompt("Question: the largest ocean?\nA. blue\nB. green\nC. red", None, "Answer:"),
    Prompt("Question: what is the first number of the year in the smallest country of the king and queen?\nA. one\nB. two",
           "Answer with the letter only.", "Answer:"),
]
LABELS = [list("ABCD"), list("ABC"), list("AB")]


@pytest.fixture(scope="module")
def backend():
    return build_backend(f"hf:{shared_tiny_lm()}", {"batch_size": 2})


def _reference(model_dir, prompt, labels):
    """Log-probs by hand: one unpadded sequence, plain transformers, log-softmax of the last logits."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(model_dir)
    model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32)
    ids = tok(render_prompt(prompt))["input_ids"]
    with torch.inference_mode():
        logp = torch.log_softmax(model(input_ids=torch.tensor([ids])).logits[0, -1], -1)
    return [float(logp[tok.encode(" " + lab, add_special_tokens=False)[0]]) for lab in labels]


def test_label_logprobs_are_one_forward_per_item_and_match_a_hand_forward(backend):
    scores = backend.choice_logprobs(QUESTIONS, LABELS)
    assert backend.counters["forward_passes"] == 2  # 3 items in batches of 2: not one pass per option
    for prompt, labels, s in zip(QUESTIONS, LABELS, scores):
        assert s.error is None and len(s.logprobs) == len(labels)
        assert s.logprobs == pytest.approx(_reference(shared_tiny_lm(), prompt, labels), abs=1e-5)
        assert s.label_mass == pytest.approx(sum(math.exp(v) for v in s.logprobs))
        assert 0 < s.label_mass < 1


def test_padding_and_batching_do_not_change_an_items_logprobs(backend):
    together = backend.choice_logprobs(QUESTIONS, LABELS)
    alone = [backend.choice_logprobs([p], [lab])[0] for p, lab in zip(QUESTIONS, LABELS)]
    for a, b in zip(together, alone):
        assert a.logprobs == pytest.approx(b.logprobs, abs=1e-5)


def test_settings_hold_what_changes_outputs(backend):
    s = backend.settings()
    assert s["backend"] == "hf" and s["dtype"] == "float32" and s["device"] == "cpu" and s["trust_remote_code"] is False
    assert s["revision"].startswith("local:") and s["chat_template"] is False


def test_arrow_batch_gets_per_option_logprobs_prediction_and_mass(backend):
    batch = pa.table({"id": ["a", "b", "c"], "system": [p.system for p in QUESTIONS], "user": [p.user for p in QUESTIONS],
                      "answer_prefix": [p.answer_prefix for p in QUESTIONS], "labels": LABELS, "gold": [0, 1, 1]})
    out = score_prompt_batch(backend, batch)
    assert out.column_names[:6] == ["id", "system", "user", "answer_prefix", "labels", "gold"]
    assert out.schema.field("option_logprobs").type == pa.list_(pa.float64())
    rows = out.to_pylist()
    for row in rows:
        best = max(range(len(row["option_logprobs"])), key=lambda i: row["option_logprobs"][i])
        assert row["pred_index"] == best and row["pred_label"] == row["labels"][best] and row["error"] is None


def test_chat_template_is_used_when_the_tokenizer_has_one():
    template = ("{% for m in messages %}<{{ m['role'] }}>{{ m['content'] }}\n{% endfor %}"
                "{% if add_generation_prompt %}<assistant>{% endif %}")
    chat = build_backend(f"hf:{shared_tiny_lm(chat_template=template)}")
    text = chat.render(QUESTIONS[0])
    assert text.startswith("<system>Answer with the letter only.\n<user>Question:") and text.endswith("<assistant>Answer:")
    assert chat.settings()["chat_template"] is True and len(chat.settings()["chat_template_sha256"]) == 64
    plain = build_backend(f"hf:{shared_tiny_lm(chat_template=template)}", {"chat_template": "never"})
    assert plain.render(QUESTIONS[0]) == render_prompt(QUESTIONS[0])
    assert chat.choice_logprobs(QUESTIONS[:1], LABELS[:1])[0].error is None


def test_tokenizer_without_single_token_labels_is_a_clear_error_naming_model_and_label():
    spec = f"hf:{shared_tiny_lm(single_token_labels=False)}"
    split = build_backend(spec)
    with pytest.raises(LabelTokenError, match=rf"{spec}: label ' A' is 2 tokens \[' ', 'A'\]"):
        split.choice_logprobs(QUESTIONS[:1], LABELS[:1])


def test_nan_from_the_model_is_reported_on_the_items_it_touches(tmp_path):
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    src = shared_tiny_lm()
    tok = AutoTokenizer.from_pretrained(src)
    model = AutoModelForCausalLM.from_pretrained(src, dtype=torch.float32)
    poisoned = tok.encode(" smallest", add_special_tokens=False)
    with torch.no_grad():
        model.get_input_embeddings().weight[poisoned] = float("nan")
    model.save_pretrained(tmp_path)
    tok.save_pretrained(tmp_path)
    scores = build_backend(f"hf:{tmp_path}", {"batch_size": 3}).choice_logprobs(QUESTIONS, LABELS)
    assert [s.error for s in scores] == [None, None, "NaN log-probs from the model at the final position"]
    assert scores[2].logprobs is None and scores[0].logprobs is not None


def test_too_long_prompts_and_missing_weights(tmp_path):
    short = build_backend(f"hf:{shared_tiny_lm()}", {"max_length": 20})
    scores = short.choice_logprobs(QUESTIONS, LABELS)
    assert scores[0].error.startswith("prompt is ") and "takes at most 20" in scores[0].error
    from connectors.models.base import BackendError

    with pytest.raises(BackendError, match=f"hf:{tmp_path}/none: cannot load the tokenizer"):
        build_backend(f"hf:{tmp_path}/none")


def test_greedy_generation_is_deterministic_and_counts_tokens(backend):
    from connectors.models.base import Decoding

    params = Decoding(max_new_tokens=12)
    first = backend.generate(QUESTIONS, params)
    again = backend.generate(QUESTIONS[::-1], params)[::-1]
    for a, b in zip(first, again):
        assert a.text == b.text and a.error is None and 0 < a.completion_tokens <= 12 and a.prompt_tokens > 0


def test_a_folder_with_two_ggufs_is_an_error_naming_them(tmp_path):
    from connectors.models.base import BackendError
    from connectors.models.registry import build_backend

    for name in ("a.Q4_0.gguf", "b.Q8_0.gguf"):
        (tmp_path / name).write_bytes(b"GGUF")
    with pytest.raises(BackendError, match=rf"hf:{tmp_path}: {tmp_path} holds 2 GGUF files \(a.Q4_0.gguf, b.Q8_0.gguf\); name one"):
        build_backend(f"hf:{tmp_path}")
    with pytest.raises(BackendError, match=r"a.Q4_0.gguf: not a readable GGUF file"):
        build_backend(f"hf:{tmp_path}/a.Q4_0.gguf")


def test_a_rerun_the_cache_answers_whole_never_loads_the_weights_and_keys_as_a_loaded_one(tmp_path):
    """The weights load on the first miss, not at the start: a fully cached rerun skips the load (most of an
    actor's start), and its cache identity (settings: content hashes, max length) is the loaded model's."""
    from connectors.models.registry import open_backend

    spec = f"hf:{shared_tiny_lm()}"
    first = open_backend(spec, {"batch_size": 2}, cache_root=str(tmp_path / "cache"))
    scores = first.choice_logprobs(QUESTIONS, LABELS)
    assert first.backend._model is not None and first.counters["forward_passes"] == 2
    rerun = open_backend(spec, {"batch_size": 2}, cache_root=str(tmp_path / "cache"))
    assert rerun.settings() == first.settings() and rerun.settings()["max_length"] == 1024  # the config's, unloaded
    assert rerun.choice_logprobs(QUESTIONS, LABELS) == scores
    assert rerun.backend._model is None and rerun.counters["forward_passes"] == 0


def test_weights_that_do_not_load_fail_the_first_forward_as_a_failed_model_start(tmp_path):
    import shutil

    from connectors.models.hf import ModelLoadError
    from jobs.common.runtime.errors import failure_reason

    shutil.copytree(shared_tiny_lm(), tmp_path / "m")
    for weights in (tmp_path / "m").glob("*.safetensors"):
        weights.write_bytes(b"not a safetensors file")
    backend = build_backend(f"hf:{tmp_path / 'm'}")
    with pytest.raises(ModelLoadError, match=f"hf:{tmp_path / 'm'}: cannot load the model") as failed:
        backend.choice_logprobs(QUESTIONS, LABELS)
    assert failure_reason(failed.value) == ("model_init_failed", False)  # what an actor whose start failed gives
