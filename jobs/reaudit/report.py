"""The re-audit's outputs: diff.json (for scripts), diff.md (for people), summary.json and the lines it prints."""
from __future__ import annotations

import io

from connectors.io.markup import md_text
from jobs.common.runtime.summaries import headline

SHOWN_IDS = 50  # item ids listed per input and kind in diff.md (all of them are in diff.json)


def diff_of(plan: str, schedule: str | None, base: str | None, run_id: str, records: dict[str, dict]) -> dict:
    """diff.json: per audit what ran and why, items and models that changed; every metric row with its status."""
    metrics = [{"audit": i, **m} for i, r in records.items() for m in r["diff"]["metrics"]] if records else []
    by = {s: sum(m["status"] == s for m in metrics) for s in ("regressed", "improved", "unchanged", "changed")}
    audits = {i: {k: r.get(k) for k in ("job", "action", "reasons", "run_id", "path", "error", "work")} | {
        "items": r["diff"]["items"], "models": r["diff"]["models"], "base_run": r["diff"]["base_run"]} for i, r in records.items()}
    return {"plan": plan, "schedule": schedule, "base": base, "run_id": run_id, "audits": audits, "metrics": metrics,
            "counts": by, "regressed": [m for m in metrics if m["status"] == "regressed"]}


def summary_of(run_id: str, diff: dict) -> dict:
    """summary.json: the metric rows as the table; per audit the items changed and the metrics regressed as headline."""
    table = [{"audit": m["audit"], "input": m["input"], "metric": m["metric"], "old": m["old"], "new": m["new"],
              "delta": m["delta"], "delta_low": m["delta_low"], "delta_high": m["delta_high"], "status": m["status"]}
             for m in diff["metrics"]]
    rows = [headline(i, "items_changed", sum(len(v["changed"]) + len(v["added"]) + len(v["removed"])
                                              for v in (a["items"] or {}).values())) for i, a in diff["audits"].items()]
    rows += [headline(i, "regressed_metrics", sum(m["status"] == "regressed" for m in diff["metrics"] if m["audit"] == i))
             for i in diff["audits"]]
    return {"job": "reaudit", "run_id": run_id, "plan": diff["plan"], "base": diff["base"], "table": table, "headline": rows}


def _ids(ids: list[str]) -> str:
    shown = ", ".join(map(md_text, ids[:SHOWN_IDS]))
    return shown + (f" … (+{len(ids) - SHOWN_IDS})" if len(ids) > SHOWN_IDS else "")


def render_diff(diff: dict) -> str:
    """diff.md: what changed, what ran, and what moved, for people. Every value from the plan or the
    inputs (names, ids, reasons, errors) goes through ``md_text``: it is shown, never rendered."""
    out = io.StringIO()
    w = out.write
    w(f"# Re-audit {md_text(diff['plan'])}: {md_text(diff['run_id'])}"
      + (f" against {md_text(diff['base'])}\n\n" if diff["base"] else " (first run)\n\n"))
    c = diff["counts"]
    w(f"{c['regressed']} regressed, {c['improved']} improved, {c['unchanged']} unchanged, {c['changed']} changed "
      "without a threshold.\n")
    for audit_id, a in diff["audits"].items():
        w(f"\n## {md_text(audit_id)} ({md_text(a['job'])}): {md_text(a['action'])}"
          + (f" -> {md_text(a['run_id'])}" if a.get("run_id") else "") + "\n\n")
        if a["reasons"]:
            w(f"Why: {md_text('; '.join(a['reasons']))}.\n")
        if a.get("error"):
            w(f"Error: {md_text(a['error'])}\n")
        for name, ch in (a["items"] or {}).items():
            for kind in ("added", "removed", "changed"):
                if ch[kind]:
                    w(f"- {md_text(name)}: {len(ch[kind])} item(s) {kind}: {_ids(ch[kind])}\n")
        for kind, names in (a["models"] or {}).items():
            if names:
                w(f"- models {kind}: {', '.join(map(md_text, names))}\n")
        work = a.get("work") or {}
        if work.get("shards"):
            s = work["shards"]
            w(f"- shards: {s['resumed']} of {s['total']} reused, {s['run']} recomputed\n")
        for name, calls in (work.get("models") or {}).items():
            if calls:
                w(f"- model {md_text(name)}: {calls.get('cache_hits', 0)} answers from the cache, {calls.get('computed', 0)} computed\n")
        rows = [m for m in diff["metrics"] if m["audit"] == audit_id and m["status"] != "unchanged"]
        if rows:
            w("\n| input | metric | old | new | delta | interval | status |\n|---|---|---|---|---|---|---|\n")
            for m in rows:
                iv = "" if m["delta_low"] is None else f"[{m['delta_low']:.4g}, {m['delta_high']:.4g}]"
                vals = ["" if m[k] is None else f"{m[k]:.4g}" for k in ("old", "new", "delta")]
                w(f"| {md_text(m['input'])} | {md_text(m['metric'])} | {vals[0]} | {vals[1]} | {vals[2]} | {iv} "
                  f"| **{md_text(m['status'])}** |\n")
    return out.getvalue()


def render_summary_lines(diff: dict, final: str) -> str:
    c = diff["counts"]
    lines = [f"reaudit {diff['plan']}: " + ", ".join(f"{a}: {v['action']}" for a, v in diff["audits"].items())]
    lines += [f"metrics: {c['regressed']} regressed, {c['improved']} improved, {c['unchanged']} unchanged, {c['changed']} changed"]
    lines += [f"regressed: {m['audit']} {m['input']} {m['metric']} {m['old']:.4g} -> {m['new']:.4g} ({m['rule']})"
              for m in diff["regressed"]]
    lines += [f"diff: {final}/diff.md", f"summary: {final}/summary.json", f"manifest: {final}/manifest.json"]
    return "\n".join(lines)

