"""A store that cannot be reached as configured names the input, the store and what to do."""
from __future__ import annotations

import importlib.util
import os
import subprocess
import sys

import pytest

from jobs.cli import main


@pytest.mark.skipif(importlib.util.find_spec("gcsfs") is not None, reason="gcsfs is installed: the extra is not missing")
def test_a_gs_input_without_the_gcs_extra_names_the_input_and_the_install_command(tmp_path, capsys):
    url = "gs://bucket/wit/part-0.tsv.gz"
    assert main(["geo", "--corpus", f"wit:wit:{url}", "--limit", "5", "--out", str(tmp_path / "runs")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and url in err[0] and "needs the gcs extra" in err[0] and "scripts/setup gcs" in err[0], err
    assert main(["geo", "--out", "gs://bucket/audits", "--limit", "5"]) == 2
    assert "--out gs://bucket/audits: reading gs:// needs the gcs extra" in capsys.readouterr().err


@pytest.mark.s3
@pytest.mark.parametrize("argv, url", [
    (["geo", "--corpus", "coyo:coyo:s3://bucket/coyo/*.parquet", "--limit", "5"], "s3://bucket/coyo/*.parquet"),
    (["conventions", "--benchmark", "arc:arc:s3://bucket/arc.jsonl", "--limit", "5"], "s3://bucket/arc.jsonl"),
    (["reaudit", "cluster/schedule/reaudit-plan.yaml", "--dry-run"], "s3://BUCKET/benchmarks/TruthfulQA.csv"),
], ids=["corpus", "benchmark", "plan"])
def test_an_s3_input_without_credentials_names_the_input_the_bucket_and_the_variables(argv, url, tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    env.update(AWS_CONFIG_FILE=str(tmp_path / "none"), AWS_SHARED_CREDENTIALS_FILE=str(tmp_path / "none"),
               AWS_EC2_METADATA_DISABLED="true")
    done = subprocess.run([sys.executable, "-m", "jobs.cli", *argv, "--out", str(tmp_path / "runs")],
                          capture_output=True, text=True, env=env, timeout=120)
    err = done.stderr.strip().splitlines()
    assert done.returncode == 2 and len(err) == 1, done.stderr
    store = url.split("/", 3)[2]
    assert f"{url}: no credentials were found for s3://{store}; set AWS_ACCESS_KEY_ID" in err[0]
    assert not (tmp_path / "runs").exists()
