"""The model jobs name things alike: --model-settings means one thing in both, and both share one response cache."""
from __future__ import annotations

import os

import pytest

from jobs.common.cli.config import ConfigError
from jobs.common.cli.flags import make_config
from jobs.common.models.pool import response_cache_root
from jobs.contamination.config import ContaminationConfig
from jobs.landscape.config import LandscapeConfig

SPECS = ["hf:/models/a", "openai:http://127.0.0.1:1/v1#b"]
KEYED = '{"openai": {"label_method": "echo"}, "hf": {"batch_size": 8}, "hf:/models/a": {"dtype": "bfloat16"}}'


def per_model(job: str, settings: str) -> dict[str, dict]:
    if job == "landscape":
        cfg = LandscapeConfig(model=SPECS, model_settings=settings)
        return {m.spec: m.settings for m in cfg.model_configs()}
    cfg = ContaminationConfig(worker_model=SPECS, model_settings=settings)
    return {spec: cfg.settings_for(spec) for spec in SPECS}


@pytest.mark.parametrize("job", ["landscape", "contamination"])
def test_model_settings_mean_the_same_in_every_model_job(job):
    assert per_model(job, KEYED) == {"hf:/models/a": {"batch_size": 8, "dtype": "bfloat16"},
                                     "openai:http://127.0.0.1:1/v1#b": {"label_method": "echo"}}
    assert per_model(job, '{"timeout_s": 30}') == {spec: {"timeout_s": 30} for spec in SPECS}  # flat: every model's


@pytest.mark.parametrize("config", [LandscapeConfig, ContaminationConfig])
def test_a_misspelt_spec_key_or_bad_json_names_the_flag(config):
    models = {"model": SPECS[:1]} if config is LandscapeConfig else {"worker_model": SPECS[:1]}
    with pytest.raises(ConfigError, match=r"^--model-settings: .*model spec 'hf:'"):
        make_config(config, {**models, "model_settings": '{"hf:": {}}'})
    with pytest.raises(ConfigError, match=r"^--model-settings: not valid JSON"):
        make_config(config, {**models, "model_settings": '{"dtype": '})


def test_both_model_jobs_share_one_response_cache(tmp_path):
    out = str(tmp_path / "runs")
    assert response_cache_root(None, out) == os.path.join(out, "_cache", "models")
    assert response_cache_root("s3://b/cache", out) == "s3://b/cache"
