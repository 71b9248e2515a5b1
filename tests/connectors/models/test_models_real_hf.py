"""The hf backend on a real instruct model: SmolLM2-135M-Instruct from its Q4_1 GGUF."""
from __future__ import annotations

import hashlib
import math

import pytest

from connectors.models.fetch import FIXTURES
from tests.fixtures.mcqa_items import mcqa_items

pytestmark = pytest.mark.models

PROMPTS, LABELS, GOLDS = mcqa_items(5)


@pytest.fixture(scope="module")
def scores(smollm2):
    passes = smollm2.counters["forward_passes"]
    out = smollm2.choice_logprobs(PROMPTS, LABELS)
    assert smollm2.counters["forward_passes"] - passes == 2  # 5 items in batches of 4: padded batches, not one pass per option
    return out


def test_letter_logprobs_equal_a_direct_transformers_forward_on_the_rendered_prompt(smollm2, scores):
    """The backend (batched, left-padded, last position only) against one plain unpadded forward."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(smollm2.load_from)
    model = AutoModelForCausalLM.from_pretrained(smollm2.load_from, dtype=torch.float32).eval()
    for prompt, labels, s in zip(PROMPTS, LABELS, scores):
        ids = tok(smollm2.render(prompt), add_special_tokens=False)["input_ids"]
        with torch.inference_mode():
            logp = torch.log_softmax(model(input_ids=torch.tensor([ids])).logits[0, -1].float(), -1)
        direct = [float(logp[tok.encode(" " + label, add_special_tokens=False)[0]]) for label in labels]
        assert s.error is None and s.logprobs == pytest.approx(direct, abs=1e-4)
        assert s.label_mass == pytest.approx(sum(math.exp(v) for v in direct), abs=1e-4)


def test_a_real_model_puts_real_non_uniform_mass_on_the_letters(scores):
    for s in scores:
        probs = [math.exp(v) for v in s.logprobs]
        assert s.label_mass > 0.5  # an instruct model asked for a letter mostly answers with one
        assert max(probs) - min(probs) > 0.05


def test_the_chat_template_from_the_gguf_is_applied(smollm2, smollm2_reader):
    template = smollm2_reader.fields["tokenizer.chat_template"].contents()
    assert smollm2.tokenizer.chat_template == template
    text = smollm2.render(PROMPTS[0])
    assert text.startswith(f"<|im_start|>system\n{PROMPTS[0].system}<|im_end|>\n<|im_start|>user\nQuestion: ")
    assert text.endswith("<|im_end|>\n<|im_start|>assistant\nAnswer:")
    ids = smollm2.tokenizer(text, add_special_tokens=False)["input_ids"]
    assert ids[0] == smollm2.tokenizer.convert_tokens_to_ids("<|im_start|>")  # a special token, not the text "<|im_start|>"
    no_system = type(PROMPTS[0])(PROMPTS[0].user, None, "Answer:")
    assert smollm2.render(no_system).startswith("<|im_start|>system\nYou are a helpful AI assistant named SmolLM")


def test_settings_say_which_weights_quant_dtype_and_template_were_used(smollm2, smollm2_reader, smollm2_gguf):
    s = smollm2.settings()
    assert s["weights_sha256"] == {smollm2_gguf.name: FIXTURES["smollm2-135m"].sha256}
    assert s["gguf_quant"] == "Q4_1" and s["gguf_tensor_types"] == {"F32": 61, "Q4_1": 210, "Q8_0": 1}
    assert s["gguf_architecture"] == "llama" and s["dtype"] == "float32" and s["chat_template"] is True
    template = smollm2_reader.fields["tokenizer.chat_template"].contents()
    assert s["chat_template_sha256"] == hashlib.sha256(template.encode()).hexdigest()
    assert s["revision"].startswith("local:")


def test_the_dequantised_copy_holds_the_gguf_tensors(smollm2, smollm2_reader):
    """Tensors de-quantised here with the gguf package equal the weights the backend computes with
    (q/k projections are left out: the Llama conversion permutes their rows)."""
    import numpy as np
    from gguf.quants import dequantize

    tensors = {t.name: t for t in smollm2_reader.tensors}
    params = dict(smollm2.model.named_parameters())
    for gguf_name, hf_name in [("token_embd.weight", "model.embed_tokens.weight"),
                               ("blk.0.ffn_down.weight", "model.layers.0.mlp.down_proj.weight"),
                               ("blk.29.attn_v.weight", "model.layers.29.self_attn.v_proj.weight"),
                               ("output_norm.weight", "model.norm.weight")]:
        t = tensors[gguf_name]
        expected = dequantize(t.data, t.tensor_type).reshape(tuple(reversed([int(d) for d in t.shape])))
        assert np.array_equal(params[hf_name].detach().numpy(), expected.astype(np.float32)), gguf_name


def test_a_second_load_reuses_the_dequantised_copy(smollm2, smollm2_gguf):
    from connectors.models import gguf

    info, folder = gguf.prepare(smollm2_gguf)
    stamp = (folder / "source.json").stat().st_mtime_ns
    assert str(folder) == smollm2.load_from and info.sha256 == FIXTURES["smollm2-135m"].sha256
    assert gguf.prepare(smollm2_gguf)[1] == folder and (folder / "source.json").stat().st_mtime_ns == stamp
    assert gguf.find_gguf(smollm2_gguf.parent) == smollm2_gguf  # a folder holding one GGUF names it
