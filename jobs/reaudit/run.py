"""``benchaudit reaudit --plan plan.yaml``: rerun what changed since the plan's last run, and say what moved.

For each audit of the plan: build the job's config (the plan's benchmarks, corpora and models
added to the audit's options) and validate every audit before anything runs; fingerprint its
inputs by content (``fingerprint``); compare the key -- job, config, code version of the job's
package, input fingerprints -- with the one recorded by the plan's previous re-audit. Unchanged:
the previous run is reused as it is. Changed: the job runs again, seeded with the previous run's
finished shards of unchanged files (``seed``), and model audits find their unchanged prompts in
the response cache under the run root; so only changed items, shards and models cost anything.

The diff (``diff.json``, ``diff.md``) lists per audit the items added, removed and changed, the
models added, removed and changed, and each headline metric's delta with its interval and a
status against the plan's thresholds (``audit.stats.deltas``). Exit code 3 when a metric
regressed, so a CI step or a scheduler can gate on it.
"""
from __future__ import annotations

import hashlib
import json
import os
import tempfile
from dataclasses import dataclass
from fnmatch import fnmatchcase
from functools import partial
from typing import Any, cast

import pyarrow as pa
import pyarrow.parquet as pq
import yaml
from pydantic import BaseModel

from audit.stats.deltas import Threshold, compare_headlines
from connectors.runs.rundir import RunDirError, is_complete, join, new_run_id, read_json
from connectors.runs.store import RunEntry, code_version, get_run, list_runs, store_of
from jobs.common.cli.config import ConfigError, RunOptions, validated
from jobs.common.cli.flags import Command, UsageError, command_path
from jobs.common.cli.registry import JOBS, attribute
from jobs.common.runtime.errors import JobError, one_line
from jobs.common.runtime.job import JobRun
from jobs.common.runtime.manifest import StageTimer
from jobs.reaudit.config import AuditSpec, ReauditConfig, ReauditPlan, read_plan
from jobs.reaudit.fingerprint import Fingerprints, fingerprint, item_changes
from jobs.reaudit.report import diff_of, render_diff, render_summary_lines, summary_of
from jobs.reaudit.seed import drop_seed, seed_run, unchanged_files

JOB = "reaudit"
REGRESSED_EXIT = 3


@dataclass
class Audit:
    """One audit of the plan, resolved: its command, validated config and what it reads."""

    spec: AuditSpec
    command: Command
    config: BaseModel
    models: list[dict]
    code: str
    fingerprints: Fingerprints | None = None

    @property
    def job(self) -> str:
        return "-".join(self.spec.path)

    def key(self) -> str:
        config = self.config.model_dump()
        config.pop("models", None)  # a temporary file's path; the models themselves are hashed below
        payload = {"job": self.job, "config": config, "models": self.models, "code": self.code,
                   "inputs": self.fingerprints.digest() if self.fingerprints else {}}
        return hashlib.sha256(json.dumps(payload, sort_keys=True, default=str).encode()).hexdigest()

    def fingerprinted(self) -> Fingerprints:
        """The fingerprints ``reaudit`` takes before it decides anything about the audit."""
        if self.fingerprints is None:
            raise RuntimeError(f"audit {self.spec.id}: used before it was fingerprinted")
        return self.fingerprints


def _command(path: tuple[str, ...]) -> Command:
    try:
        commands, rest = command_path(path) if path else ((), [])
    except UsageError as exc:
        jobs = ", ".join(c.name for c in JOBS if c.name != JOB)
        raise ConfigError(f"unknown job {' '.join(path)!r}; jobs: {jobs} ({exc})") from None
    found = commands[-1] if commands and not rest else None
    if found is None or found.run is None or found.config is None or "out" not in found.run_options or found.name == JOB:
        raise ConfigError(f"{' '.join(path)!r} is not a job that writes a run (choose one of its subcommands)")
    return found


def _models_file(models: list[dict]) -> str:
    """The plan's models as a --models YAML, at a path named by its content (stable across re-audits)."""
    text = yaml.safe_dump(models, sort_keys=True)
    path = os.path.join(tempfile.gettempdir(), f"benchaudit-models-{hashlib.sha256(text.encode()).hexdigest()[:16]}.yaml")
    if not os.path.exists(path):
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(text)
    return path


def resolve(plan: ReauditPlan, spec: AuditSpec, where: str) -> Audit:
    """The audit's job config: its options plus the plan's inputs where the job takes them."""
    command = _command(spec.path)
    model = command.config
    assert model is not None, "_command returns only jobs with a config"
    fields = model.model_fields
    values = dict(spec.options)
    if plan.benchmarks and "benchmark" in fields and "benchmark" not in values:
        values["benchmark"] = plan.benchmarks
    if plan.corpora and "corpus" in fields and "corpus" not in values:
        values["corpus"] = plan.corpora
    models = plan.models if "models" in fields and "models" not in values and "model" not in values else []
    if models:
        values["models"] = _models_file(models)
    config = validated(model, values, f"{where}: audit {spec.id}")
    return Audit(spec, command, config, models, code_version("jobs." + spec.path[0]))


def validate_file(path: str, check_files: bool) -> list:
    """``benchaudit validate`` of a plan: its fields, each benchmark, corpus and model entry, and every
    audit's options resolved into its job's config (what a re-audit checks before it runs anything)."""
    from jobs.common.cli.validation import Checked, check_entries
    from jobs.common.inputs.benchmarks import check_benchmark
    from jobs.common.inputs.corpora import check_corpus
    from jobs.common.models.pool import check_model

    plan, _ = read_plan(path)
    out = [Checked(f"plan {plan.name}", f"{len(plan.audits)} audit(s)" + (f", schedule {plan.schedule!r}" if plan.schedule else ""))]
    for what, entries, check in (("benchmark", plan.benchmarks, check_benchmark), ("corpus", plan.corpora, check_corpus),
                                 ("model", plan.models, check_model)):
        out += [Checked(f"{what} {c.label}", c.detail, c.problem)
                for c in check_entries(entries, partial(check, check_files=check_files))]
    by_id = {a.id: a for a in plan.audits}

    def check_audit(entry: dict) -> str:
        return f"benchaudit {' '.join(resolve(plan, by_id[entry['name']], path).spec.path)}: options valid"

    return out + [Checked(f"audit {c.label}", c.detail, c.problem)
                  for c in check_entries([{"name": a.id} for a in plan.audits], check_audit)]


def _previous(store: str, plan: ReauditPlan) -> tuple[RunEntry, dict] | None:
    """The plan's last complete re-audit and its manifest."""
    runs = [e for e in list_runs(store, JOB) if e.status == "complete" and (e.inputs.get("plan") or {}).get("name") == plan.name]
    for entry in reversed(runs):
        if is_complete(entry.path):
            return entry, read_json(join(entry.path, "manifest.json"))
    return None


def _read_table(url: str) -> pa.Table | None:
    import fsspec

    fs, path = fsspec.core.url_to_fs(url)
    if not fs.exists(path):
        return None
    with fs.open(path, "rb") as fh:
        return pq.read_table(fh)


def _reasons(audit: Audit, old: dict | None, key: str) -> list[str]:
    if old is None:
        return ["first run of this audit"]
    if old.get("action") == "failed":  # nothing to reuse: its last run has no results
        return ["its last run failed"]
    if old.get("key") == key:
        return []
    out = []
    config = audit.config.model_dump()
    config.pop("models", None)
    if old.get("config") != json.loads(json.dumps(config, default=str)):
        out.append("config changed")
    if old.get("models", []) != audit.models:
        out.append("models changed")
    if old.get("code_version") != audit.code:
        out.append(f"code changed ({old.get('code_version')} -> {audit.code})")
    digests = audit.fingerprinted().digest()
    changed = sorted(k for k in set(digests) | set(old.get("inputs", {})) if digests.get(k) != old.get("inputs", {}).get(k))
    if changed:
        out.append("inputs changed: " + ", ".join(changed))
    return out or ["key changed"]


def _action(old: dict | None) -> str:
    """What running an audit is: its "first run" when no earlier re-audit of the plan ran it, else a "rerun"."""
    return "first run" if old is None else "rerun"


def _audit_options(opts: RunOptions, **kw: Any) -> RunOptions:
    return RunOptions(**{**opts.model_dump(), **kw})


def _run_audit(audit: Audit, opts: RunOptions, old: dict | None, old_files: pa.Table | None) -> str:
    """Run the audit's job; seeded from ``old``'s unchanged shards when it has any. Returns the run directory."""
    assert audit.command.run is not None, "_command returns only jobs that run"
    run = attribute(audit.command.run)
    run_id = new_run_id()
    seeded = 0
    if old is not None and old.get("path") and is_complete(old["path"]):
        seeded = seed_run(old["path"], opts.out, audit.job, run_id, unchanged_files(old_files, audit.fingerprinted().files))
    if seeded:
        try:
            return run(audit.config, _audit_options(opts, run_id=run_id, resume=True))
        except RunDirError as exc:  # refused before it started: the seed is not a run of anyone's
            drop_seed(opts.out, audit.job, run_id)
            if exc.reason != "config_mismatch":
                raise
            run_id = new_run_id()  # the job's own configuration moved on: nothing to reuse
    return run(audit.config, _audit_options(opts, run_id=run_id, resume=False))


def _model_changes(old: list[dict], new: list[dict]) -> dict[str, list[str]]:
    def named(models: list[dict]) -> dict[Any, dict]:  # by name, else spec (a model entry has one)
        return {m.get("name") or m.get("spec"): m for m in models}

    b, a = named(old), named(new)
    return {"added": sorted(set(a) - set(b)), "removed": sorted(set(b) - set(a)),
            "changed": sorted(k for k in set(a) & set(b) if a[k] != b[k])}


def _thresholds(plan: ReauditPlan, audit_id: str) -> list[Threshold]:
    return [Threshold(t.metric, t.better, t.tolerance, t.input, t.require_interval)
            for t in plan.thresholds if fnmatchcase(audit_id, t.audit)]


def _work(manifest: dict) -> dict:
    """What the rerun reused: resumed shards, and per model the cache hits and the calls it made."""
    out: dict[str, Any] = {}
    if isinstance(manifest.get("shards"), dict):
        out["shards"] = {k: manifest["shards"].get(k) for k in ("total", "resumed", "run")}
    if isinstance(manifest.get("models"), dict):
        out["models"] = {name: (info or {}).get("calls") for name, info in manifest["models"].items()}
    return out


def run(cfg: ReauditConfig, opts: RunOptions) -> str:
    """The command: run the plan, print what moved; exit 3 (after writing the diff) when a metric regressed."""
    result = reaudit(cfg, opts)
    if isinstance(result, str):  # --dry-run
        return result
    final, diff, failures = result
    text = render_summary_lines(diff, final)
    if failures:
        print(text, flush=True)
        raise JobError(f"{JOB}: {len(failures)} audit(s) failed (first: {failures[0]}); the diff of the others is in {final}")
    if diff["regressed"]:
        print(text, flush=True)
        raise SystemExit(REGRESSED_EXIT)
    return text


def reaudit(cfg: ReauditConfig, opts: RunOptions) -> tuple[str, dict, list[str]] | str:
    """Run the plan: (the re-audit's run directory, its diff, failed audits), or the --dry-run text."""
    if not cfg.plan:
        raise ConfigError("--plan: give the re-audit plan (a YAML file)")
    timer = StageTimer()
    plan, raw = read_plan(cfg.plan)
    audits = [resolve(plan, a, cfg.plan) for a in plan.audits]  # every audit is valid before any runs
    store = store_of(opts.out)
    previous = _previous(store, plan)
    prev_audits = previous[1].get("audits", {}) if previous else {}
    with timer("fingerprint"):
        for a in audits:
            models_file = cast(str, getattr(a.config, "models", None))  # resolve's --models YAML when a.models
            a.fingerprints = fingerprint(a.job, a.config, ignore=[models_file] if a.models else ())
    decisions = {a.spec.id: _reasons(a, prev_audits.get(a.spec.id), a.key()) for a in audits}
    if cfg.dry_run:
        return "\n".join(f"{i}: " + ("; ".join(r) + f" -> {_action(prev_audits.get(i))}" if r else
                                     f"unchanged -> reuse {prev_audits[i]['run_id']}") for i, r in decisions.items())
    plan_sha = hashlib.sha256(raw).hexdigest()
    payload = {"plan": plan.model_dump(), "plan_sha256": plan_sha}
    failures: list[str] = []
    records: dict[str, dict] = {}
    with JobRun(JOB, cfg, opts, payload, seed=None, timer=timer, use_ray=False) as job:
        base = previous[0].path if previous else None
        for a in audits:
            old = prev_audits.get(a.spec.id)
            reasons = decisions[a.spec.id]
            job.write_parquet(f"fingerprints/{a.spec.id}.files.parquet", a.fingerprinted().files)
            job.write_parquet(f"fingerprints/{a.spec.id}.items.parquet", a.fingerprinted().items)
            record = {"job": a.job, "key": a.key(), "code_version": a.code, "models": a.models, "reasons": reasons,
                      "inputs": a.fingerprinted().digest(),
                      "config": json.loads(json.dumps({k: v for k, v in a.config.model_dump().items() if k != "models"},
                                                      default=str))}
            if not reasons:
                assert old is not None, "_reasons gives none only for an earlier run of the same key"
                record.update(action="reused", run_id=old["run_id"], path=old["path"], headline=old.get("headline", []),
                              work={})
            else:
                old_files = _read_table(join(base, "fingerprints", f"{a.spec.id}.files.parquet")) if base and old else None
                try:
                    with job.timer(f"audit_{a.spec.id}"):
                        path = _run_audit(a, opts, old, old_files)
                except Exception as exc:  # noqa: BLE001 -- one audit's failure is reported in the diff; the others go on
                    failures.append(f"audit {a.spec.id}: {one_line(exc)}")
                    record.update(action="failed", error=one_line(exc), run_id=getattr(exc, "run_id", None), path=None,
                                  headline=[], work={})
                else:
                    run_id = path.rstrip("/").rsplit("/", 1)[-1]
                    entry = get_run(store, run_id, a.job)
                    record.update(action=_action(old), run_id=run_id, path=path, headline=entry.headline,
                                  work=_work(read_json(join(path, "manifest.json"))))
            measured = record["action"] != "failed"  # a failed audit has no metrics to compare: its error is the diff
            old_items = _read_table(join(base, "fingerprints", f"{a.spec.id}.items.parquet")) if base and old else None
            record["diff"] = {
                "items": item_changes(old_items, a.fingerprinted().items) if old else None,
                "models": _model_changes(old.get("models", []), a.models) if old else None,
                "metrics": [d.as_dict() for d in compare_headlines(old.get("headline", []) if old else [], record["headline"],
                                                                   _thresholds(plan, a.spec.id))] if old and measured else [],
                "base_run": old.get("run_id") if old else None,
            }
            records[a.spec.id] = record
        diff = diff_of(plan.name, plan.schedule, previous[0].run_id if previous else None, job.run_id, records)
        job.write_json("diff.json", diff)
        job.write_text("diff.md", render_diff(diff))
        job.write_summary(summary_of(job.run_id, diff))
        manifest = job.manifest(inputs={"plan": {"name": plan.name, "path": cfg.plan, "sha256": plan_sha, "schedule": plan.schedule}},
                                audits=records, base_reaudit=diff["base"], failures=failures)
        final = job.commit(manifest)
    return final, diff, failures
