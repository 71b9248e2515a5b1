"""A tiny causal LM built from nothing (random weights, a byte-level BPE trained here), saved the
way a real checkpoint is (``save_pretrained``), so tests and benches load it through the same
``hf`` path as a downloaded model. No hub, no network.
"""
from __future__ import annotations

from pathlib import Path

_WORD_TEXT = ("what which city river capital number answer option question is the of a in largest smallest first "
         "planet animal colour red blue green ocean mountain country king queen year water fire earth")
WORDS = tuple(_WORD_TEXT.split())
LABELS = tuple("ABCDEFGH")
EOS = "<|endoftext|>"


def _corpus() -> list[str]:
    lines = []
    for i in range(400):
        words = " ".join(WORDS[(i * 7 + j * 3) % len(WORDS)] for j in range(8))
        options = "\n".join(f"{label}. {WORDS[(i + k) % len(WORDS)]}" for k, label in enumerate(LABELS[:4]))
        lines.append(f"Question: {words}?\n{options}\nAnswer: {LABELS[i % len(LABELS)]}")
    return lines


def build_tokenizer(single_token_labels: bool = True, chat_template: str | None = None):
    """A byte-level BPE tokenizer; with ``single_token_labels=False`` it has no merges at all,
    so ``" A"`` is two tokens."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    vocab = 600 if single_token_labels else 257
    trainer = trainers.BpeTrainer(vocab_size=vocab, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                  special_tokens=[EOS], show_progress=False)
    tok.train_from_iterator(_corpus(), trainer)
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, eos_token=EOS, pad_token=EOS)
    if chat_template:
        fast.chat_template = chat_template
    return fast


def build_model(vocab_size: int, seed: int = 0, layers: int = 2, hidden: int = 64, heads: int = 4,
                max_positions: int = 1024, init_range: float = 0.4):
    """Random Llama weights; a wide init makes the next-token distribution far from uniform."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    config = LlamaConfig(vocab_size=vocab_size, hidden_size=hidden, intermediate_size=hidden * 2,
                         num_hidden_layers=layers, num_attention_heads=heads, num_key_value_heads=max(1, heads // 2),
                         max_position_embeddings=max_positions, initializer_range=init_range,
                         tie_word_embeddings=False, eos_token_id=0, pad_token_id=0, bos_token_id=0)
    torch.manual_seed(seed)
    return LlamaForCausalLM(config).eval()


def build_tiny_lm(path: str | Path, seed: int = 0, single_token_labels: bool = True,
                  chat_template: str | None = None, **model_kwargs) -> Path:
    """Save tokenizer and random model to ``path`` and return it."""
    path = Path(path)
    tokenizer = build_tokenizer(single_token_labels, chat_template)
    model = build_model(len(tokenizer), seed=seed, **model_kwargs)
    tokenizer.save_pretrained(path)
    model.save_pretrained(path)
    return path


_BUILT: dict[tuple, Path] = {}


def shared_tiny_lm(single_token_labels: bool = True, chat_template: str | None = None) -> Path:
    """One saved tiny LM per kind for the whole test session (built once, removed at exit)."""
    import atexit
    import shutil
    import tempfile

    key = (single_token_labels, chat_template)
    if key not in _BUILT:
        root = Path(tempfile.mkdtemp(prefix="tiny-lm-"))
        atexit.register(shutil.rmtree, root, True)
        _BUILT[key] = build_tiny_lm(root / "model", single_token_labels=single_token_labels, chat_template=chat_template)
    return _BUILT[key]
