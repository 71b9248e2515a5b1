"""Small builders of real input files for tests (no mocks: real tar shards, real Parquet)."""
from __future__ import annotations

import hashlib
import io
import json
import math
import re
import subprocess
import tarfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest


@contextmanager
def small_disk(mount: Path, size: str) -> Iterator[Path]:
    """A real filesystem of ``size`` (a tmpfs, e.g. ``"120k"``) at ``mount``, for disk-full tests; the test
    is skipped where it cannot be mounted (that needs root)."""
    mount.mkdir(parents=True, exist_ok=True)
    if subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(mount)], capture_output=True).returncode:
        pytest.skip("cannot mount a small tmpfs here")
    try:
        yield mount
    finally:
        subprocess.run(["umount", str(mount)], capture_output=True)


def write_tar(path, samples: list[tuple[str, bytes | None, dict | None]]) -> None:
    with tarfile.open(path, "w") as tar:
        for key, txt, meta in samples:
            for ext, payload in (("jpg", b"\xff\xd8fake"), ("txt", txt), ("json", None if meta is None else json.dumps(meta).encode())):
                if payload is None:
                    continue
                info = tarfile.TarInfo(f"{key}.{ext}")
                info.size = len(payload)
                tar.addfile(info, io.BytesIO(payload))


# ---- lm-evaluation-harness --log_samples output, in lm-eval's own format --------------------------
DATE = "2026-05-13T10-21-33.123456"
CONTEXT = "Question: Which gas do plants absorb?\nAnswer:"


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def lm_eval_sample(doc_id: int, lls: list[float], target: int | str, options: list[str] | None = None) -> dict:
    """One line as lm-eval's EvaluationTracker.save_results_samples writes it (values through sanitize_list),
    with ``acc``/``acc_norm`` as ``ConfigurableTask.process_results`` computes them (argmax, first on ties; the
    gold an index or the option equal to the target; an index outside the options is never right)."""
    options = options or [f" option {i}" for i in range(len(lls))]
    greedy = [i == max(range(len(lls)), key=lambda j: lls[j]) for i in range(len(lls))]
    doc = {"question": "Which gas do plants absorb?", "choices": {"text": [o.strip() for o in options]}, "answerKey": target}
    gold = target if isinstance(target, int) else [o.strip() for o in options].index(target.strip())
    pred = max(range(len(lls)), key=lambda j: (lls[j], -j))
    pred_norm = max(range(len(lls)), key=lambda j: (lls[j] / len(options[j].strip()), -j))
    return {
        "doc_id": doc_id, "doc": doc, "target": str(target),
        "arguments": {f"gen_args_{i}": {"arg_0": CONTEXT, "arg_1": o} for i, o in enumerate(options)},
        "resps": [[[str(ll), str(g)]] for ll, g in zip(lls, greedy)],
        "filtered_resps": [[str(ll), str(g)] for ll, g in zip(lls, greedy)],
        "filter": "none", "metrics": ["acc", "acc_norm"],
        "doc_hash": _sha(json.dumps(doc)), "prompt_hash": _sha(CONTEXT), "target_hash": _sha(str(target)),
        "acc": float(pred == gold), "acc_norm": float(pred_norm == gold),
    }


def write_lm_eval_run(root: Path, model: str, records: list[dict], acc: float) -> None:
    folder = root / model.replace("/", "__")
    folder.mkdir(parents=True)
    (folder / f"samples_arc_easy_{DATE}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    results = {"results": {"arc_easy": {"alias": "arc_easy", "acc,none": acc}}, "config": {"model": "hf",
               "model_args": f"pretrained={model}"}, "model_name": model}
    (folder / f"results_{DATE}.json").write_text(json.dumps(results))


LN = math.log
A = [[LN(0.05), LN(0.025), LN(0.0125), LN(0.0125)], [-3.0, -3.0, -3.0, -3.0], [LN(0.08), LN(0.02)]]
B = [[LN(0.1), LN(0.3), LN(0.3), LN(0.3)], [-1.0, -2.0, -3.0, -4.0], [LN(0.02), LN(0.08)]]
TARGETS = [0, 2, " option 1"]


def write_lm_eval_runs(root: Path, option_text: str = " option") -> Path:
    """Two models' runs of one task (4-, 4- and 2-option items, and one item whose answer index is out of
    range) under ``root``; returns the folder ``--from-lm-eval`` takes."""
    two = [f"{option_text} 0", f"{option_text} 1"]
    for model, lls, acc in (("org/model-a", A, 1 / 3), ("org/model-b", B, 1 / 3)):
        records = [lm_eval_sample(i, ll, t, two if len(ll) == 2 else [f"{option_text} {j}" for j in range(len(ll))])
                   for i, (ll, t) in enumerate(zip(lls, TARGETS))]
        records.append(lm_eval_sample(3, [-1.0, -2.0, -3.0, -4.0], 7))  # answer index out of range
        write_lm_eval_run(root, model, records, acc)
    return root


def cell_text(html: str) -> str:
    """A report with its table cells' alignment classes removed, so tests can match ``<td>value</td>``."""
    return re.sub(r'<td class="(?:num|txt)">', "<td>", html)
