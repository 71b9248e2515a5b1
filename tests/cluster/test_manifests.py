"""Every manifest under cluster/ parses, has what its kind needs, and runs a real benchaudit command whose options parse."""
from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
import yaml

from jobs.common.cli.config import RunOptions
from jobs.common.cli.flags import make_config, resolve
from jobs.reaudit.config import ReauditPlan
from jobs.submit.runtime_env import render, requirements

CLUSTER = Path(__file__).resolve().parents[2] / "cluster"
MANIFESTS = sorted(p for p in CLUSTER.rglob("*.yaml"))
RAY_IMAGE = "rayproject/ray:2.60.0-py311"


def docs(path: Path) -> list[dict]:
    return [d for d in yaml.safe_load_all(path.read_text()) if d is not None]


def by_kind(kind: str) -> list[tuple[Path, dict]]:
    return [(p, d) for p in MANIFESTS for d in docs(p) if d.get("kind") == kind]


def plan() -> ReauditPlan:
    return ReauditPlan(**yaml.safe_load((CLUSTER / "schedule" / "reaudit-plan.yaml").read_text()))


def check_entrypoint(entrypoint: str) -> tuple:
    """A benchaudit command line (``benchaudit ...`` or ``python -m jobs.cli ...``) whose options parse and validate."""
    words = shlex.split(entrypoint)
    if words[:3] == ["python", "-m", "jobs.cli"]:
        words = words[3:]
    else:
        assert words[0] == "benchaudit", entrypoint
        words = words[1:]
    bound = resolve(words)
    assert bound is not None and bound.command.run is not None, entrypoint
    if bound.command.config is not None:
        make_config(bound.command.config, bound.given)
    opts = make_config(RunOptions, bound.given)
    assert opts.address == "auto" and opts.out.startswith("s3://"), entrypoint  # joins the cluster, writes where all reach
    return bound.command.name, bound.given


def check_cluster_spec(spec: dict, where: str) -> None:
    assert spec["rayVersion"] == "2.60.0", where
    groups = spec["workerGroupSpecs"]
    bounded = [g for g in groups if "minReplicas" in g or "maxReplicas" in g]
    if bounded:
        assert spec.get("enableInTreeAutoscaling") is True, f"{where}: min/max replicas without the autoscaler"
    for g in bounded:
        assert 0 <= g["minReplicas"] <= g.get("replicas", g["minReplicas"]) <= g["maxReplicas"], (where, g["groupName"])
    head = spec["headGroupSpec"]["template"]["spec"]["containers"][0]
    assert head["image"] == RAY_IMAGE, where
    assert {p["containerPort"] for p in head["ports"]} >= {6379, 8265, 10001}
    assert spec.get("authOptions", {}).get("mode") == "token", f"{where}: token authentication off"
    for g in groups:
        c = g["template"]["spec"]["containers"][0]
        gpus = c["resources"]["limits"].get("nvidia.com/gpu")
        assert c["image"] == (RAY_IMAGE + "-gpu" if gpus else RAY_IMAGE), (where, g["groupName"])
        if gpus:
            assert c["resources"]["requests"]["nvidia.com/gpu"] == gpus and g["rayStartParams"]["num-gpus"] == gpus


def check_rayjob_spec(spec: dict, where: str) -> str:
    job, given = check_entrypoint(spec["entrypoint"])
    env = yaml.safe_load(spec["runtimeEnvYAML"])
    assert env["working_dir"].startswith("s3://") and env["working_dir"].endswith(".zip"), where
    extras = ["s3", "models"] if job in ("landscape", "reaudit", "contamination") else ["s3"]
    assert env["pip"] == requirements(extras), f"{where}: pip list drifted from pyproject.toml"
    assert spec["shutdownAfterJobFinishes"] is True
    check_cluster_spec(spec["rayClusterSpec"], where)
    return job


def strings(value: object):
    """Every string of a parsed manifest, with the YAML embedded in strings (runtimeEnvYAML, ConfigMap data) parsed too."""
    if isinstance(value, str):
        yield value
        if "\n" in value:
            try:
                yield from strings(list(yaml.safe_load_all(value)))
            except yaml.YAMLError:
                pass
    elif isinstance(value, dict):
        for v in value.values():
            yield from strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from strings(v)


def pip_lists(value: object):
    if isinstance(value, dict):
        if isinstance(value.get("pip"), list):
            yield value["pip"]
        for v in value.values():
            yield from pip_lists(v)
    elif isinstance(value, list):
        for v in value:
            yield from pip_lists(v)
    elif isinstance(value, str) and "pip:" in value:
        yield from pip_lists(list(yaml.safe_load_all(value)))


@pytest.mark.parametrize("path", MANIFESTS, ids=[str(p.relative_to(CLUSTER)) for p in MANIFESTS])
def test_every_manifest_parses_and_never_installs_benchaudit_by_name(path):
    parsed = docs(path)
    assert parsed
    for text in strings(parsed):  # what runs, not the comments that warn against it
        assert not re.search(r"pip install\s+(-\S+\s+)*['\"]?benchaudit\b", text), text
    for pip in pip_lists(parsed):
        assert not any(re.split(r"[\s\[<>=!~;]", req, maxsplit=1)[0].lower() == "benchaudit" for req in pip), pip


@pytest.mark.parametrize("path", MANIFESTS, ids=[str(p.relative_to(CLUSTER)) for p in MANIFESTS])
def test_every_pip_list_installs_every_dependency(path):
    """A manifest's hand-written pip list that lacks a dependency fails on the cluster with an ImportError
    in the workers, after the pods started: caught here instead."""
    needed = requirements()
    for pip in pip_lists(docs(path)):
        assert not [r for r in needed if r not in pip], (path.name, [r for r in needed if r not in pip])


@pytest.mark.parametrize("extras", [["s3"], ["s3", "models"]])
def test_runtime_envs_are_generated_from_pyproject(extras):
    name = "runtime_env.yaml" if extras == ["s3"] else "runtime_env_models.yaml"
    assert (CLUSTER / name).read_text() == render(extras)
    env = yaml.safe_load((CLUSTER / name).read_text())
    assert env["working_dir"] == "." and not any(r.startswith("ray") for r in env["pip"]) and "numpy>=1.26" in env["pip"]


def test_launcher_config_has_cpu_head_and_bounded_cpu_and_gpu_groups():
    cfg = yaml.safe_load((CLUSTER / "launcher" / "benchaudit.yaml").read_text())
    for key in ("cluster_name", "provider", "available_node_types", "head_node_type", "max_workers", "setup_commands",
                "head_start_ray_commands", "worker_start_ray_commands"):
        assert key in cfg, key
    types = cfg["available_node_types"]
    assert types[cfg["head_node_type"]]["resources"] == {"CPU": 0}
    workers = {k: v for k, v in types.items() if k != cfg["head_node_type"]}
    assert {"GPU" in v["resources"] for v in workers.values()} == {True, False}  # a CPU group and a GPU group
    for v in workers.values():
        assert 0 <= v["min_workers"] <= v["max_workers"]
    assert sum(v["max_workers"] for v in workers.values()) <= cfg["max_workers"]
    assert cfg["docker"]["image"] == RAY_IMAGE and any("RAY_AUTH_MODE=token" in c for c in cfg["head_start_ray_commands"])
    assert any("/home/ray/benchaudit[" in c for c in cfg["setup_commands"])  # this checkout, from its copy


def test_raycluster_and_rayjobs():
    clusters = by_kind("RayCluster")
    assert [d["metadata"]["name"] for _, d in clusters] == ["benchaudit"]  # its head service: benchaudit-head-svc
    check_cluster_spec(clusters[0][1]["spec"], "raycluster")
    assert any(g["template"]["spec"]["containers"][0]["resources"]["limits"].get("nvidia.com/gpu")
               for g in clusters[0][1]["spec"]["workerGroupSpecs"])
    jobs = {check_rayjob_spec(d["spec"], str(p)) for p, d in by_kind("RayJob")}
    assert jobs == {"geo", "landscape"}


def test_the_scheduled_reaudit_creates_one_rayjob_per_week_with_the_plans_schedule():
    p = plan()
    assert p.schedule == "0 3 * * 1"
    (_, cron), = by_kind("CronJob")
    assert cron["spec"]["concurrencyPolicy"] == "Forbid" and cron["spec"]["schedule"] == p.schedule
    pod = cron["spec"]["jobTemplate"]["spec"]["template"]["spec"]
    templates = {v["configMap"]["name"] for v in pod["volumes"]}
    maps = {d["metadata"]["name"]: d for _, d in by_kind("ConfigMap")}
    (name,) = templates
    rayjob = yaml.safe_load(maps[name]["data"]["rayjob.yaml"].replace("SLOT", "2026-w49"))
    assert rayjob["kind"] == "RayJob" and rayjob["metadata"]["name"] == rayjob["spec"]["jobId"] == "benchaudit-reaudit-2026-w49"
    assert check_rayjob_spec(rayjob["spec"], "cronjob template") == "reaudit"
    assert "kubectl create -f -" in pod["containers"][0]["command"][-1]  # create, not apply: a second one is refused
    roles = [d for _, d in by_kind("Role") if d["metadata"]["name"] == pod["serviceAccountName"]]
    assert roles and any("rayjobs" in r["resources"] and "create" in r["verbs"] for r in roles[0]["rules"])
    head = rayjob["spec"]["rayClusterSpec"]["headGroupSpec"]["template"]["spec"]
    assert {v["configMap"]["name"] for v in head["volumes"]} == {"benchaudit-reaudit-plan"}

    (_, raycron), = by_kind("RayCronJob")
    assert raycron["apiVersion"] == "ray.io/v1" and raycron["spec"]["schedule"] == p.schedule
    assert check_rayjob_spec(raycron["spec"]["jobTemplate"], "raycronjob") == "reaudit"


def test_the_shipped_plan_resolves_into_valid_job_configs():
    from jobs.reaudit.run import resolve

    audits = [resolve(plan(), a, "reaudit-plan.yaml") for a in plan().audits]
    assert [a.job for a in audits] == ["conventions", "geo", "landscape"]
    assert [m.name for m in audits[2].config.model_configs()] == ["llama-3-8b", "qwen-7b"]
    assert [b.name for b in audits[0].config.benchmark_configs()] == ["truthfulqa", "arc"]
