"""Model spec strings and backend settings."""
from __future__ import annotations

import pytest

from connectors.models.base import BackendError
from connectors.models.registry import build_backend
from connectors.models.spec import ModelSpec, ModelSpecError, parse_model_spec


@pytest.mark.parametrize("text, spec", [
    ("hf:Qwen/Qwen2.5-7B-Instruct", ModelSpec("hf", "Qwen/Qwen2.5-7B-Instruct")),
    ("hf:/models/llama-3-8b", ModelSpec("hf", "/models/llama-3-8b")),
    ("vllm:meta-llama/Llama-3.1-8B", ModelSpec("vllm", "meta-llama/Llama-3.1-8B")),
    ("openai:http://host:8000/v1#my-model", ModelSpec("openai", "my-model", "http://host:8000/v1")),
    ("openai:https://api.example.com/v1/#gpt-x", ModelSpec("openai", "gpt-x", "https://api.example.com/v1")),
])
def test_specs_parse_and_print_back(text, spec):
    assert parse_model_spec(text) == spec
    assert parse_model_spec(str(spec)) == spec


@pytest.mark.parametrize("text, message", [
    ("llama-3-8b", "expected one of hf:"),
    ("tgi:foo", "expected one of hf:"),
    ("hf:", "no model after 'hf'"),
    ("openai:localhost:8000#m", "needs an http"),
    ("openai:http://host:8000/v1", "name the served model after '#'"),
    ("openai:http://user:secret@host/v1#m", "credentials do not belong in the URL"),
])
def test_bad_specs_say_what_was_expected(text, message):
    with pytest.raises(ModelSpecError, match=message) as info:
        parse_model_spec(text)
    assert "secret" not in str(info.value) or "credentials" not in message


def test_unknown_setting_names_the_spec_and_the_known_settings():
    with pytest.raises(BackendError, match=r"openai:http://127.0.0.1:9/v1#m: unknown setting\(s\) \['temprature'\]"):
        build_backend("openai:http://127.0.0.1:9/v1#m", {"temprature": 0})
