"""Errors are data, not strings: no code in the packages decides what to do by a regex or substring test over
an exception's text. A failure carries its reason code and transient flag from where it happened
(``connectors.models.http_client.EndpointError``, ``connectors.models.base.BackendError``, the answers'
``error_code``/``error_transient`` columns, ``connectors.runs.rundir.RunDirError.reason``).

The grep looks, in every module of audit/, connectors/ and jobs/, at the names bound by ``except ... as NAME``
(or a parameter annotated as an exception) and flags: ``... in str(NAME)``, ``str(NAME).startswith(...)``
and the like, a regex applied to ``str(NAME)``, and a variable holding ``str(NAME)`` that is then tested
the same ways. ``THIRD_PARTY`` lists the few places
where a library outside the project gives its failure as text only; each entry must still be found (a stale
entry fails too), so the list cannot grow silently.
"""
from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("audit", "connectors", "jobs")
# (file, text on the flagged line) -> why only text can tell
THIRD_PARTY = {
    ("jobs/submit/run.py", "text = str(exc)"): "Ray's JobSubmissionClient reports an HTTP refusal as a RuntimeError "
                                               "whose text holds the status and body, with no attribute for either",
    ("jobs/submit/run.py", '"already exists" in str(exc)'): "Ray's submit_job refuses a submission id in use with a "
                                                            "plain RuntimeError, its text the one sign of which refusal",
    ("connectors/io/fs.py", "Unable to locate credentials"): "s3fs re-raises botocore's missing credentials as a "
                                                              "plain error whose text is all that is left",
    ("connectors/io/read_report.py", "text = str(exc)"): "lzma and tarfile say a stream was cut short only in "
                                                         "the message of a generic LZMAError/ReadError",
    ("jobs/common/runtime/errors.py", "_RAISED.match, str(exc)"): "display only: which line of Ray's wrapped remote "
                                                          "traceback is the message to show; decides nothing",
}
_BOUND = re.compile(r"except\b[^:]*\bas\s+(\w+)\s*:|\b(\w+):\s*(?:BaseException|Exception|\w+Error)\b")
_TEXT_OPS = r"\.(?:startswith|endswith|find|rfind|index|count)\("
_REGEX = r"(?:\bre\.\w+\(|\.(?:search|match|fullmatch|findall|finditer|sub)\b)"


def _flags(text: str) -> list[tuple[int, str]]:
    """(line number, line) of every test over an exception's text in one module."""
    lines = text.splitlines()
    names = {name for pair in _BOUND.findall(text) for name in pair if name}
    if not names:
        return []
    exc = "|".join(sorted(map(re.escape, names)))
    as_text = rf"str\((?:{exc})\)"
    held = {m.group(1) for m in re.finditer(rf"^\s*(\w+)\s*=\s*{as_text}\s*$", text, re.M)}
    direct = re.compile("|".join(f"(?:{t})" for t in (rf"\bin\s+{as_text}", rf"{as_text}{_TEXT_OPS}", rf"{_REGEX}.*{as_text}")))
    found = [(i + 1, line) for i, line in enumerate(lines) if direct.search(line)]
    for var in held:  # a variable holding an exception's text, tested in the lines after: flag where it is made
        later = re.compile(rf"\bin\s+{var}\b|\b{var}{_TEXT_OPS}|{_REGEX}\(.*\b{var}\b")
        for i, line in enumerate(lines):
            if re.match(rf"^\s*{var}\s*=\s*{as_text}\s*$", line) and any(later.search(x) for x in lines[i + 1:i + 12]):
                found.append((i + 1, line))
    return found


def _scan() -> dict[tuple[str, int], str]:
    out = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            for number, line in _flags(path.read_text(encoding="utf-8")):
                out[(rel, number)] = line.strip()
    return out


def _allowed(rel: str, line: str) -> bool:
    return any(rel == f and snippet in line for f, snippet in THIRD_PARTY)


def test_no_behaviour_is_decided_by_an_exceptions_text():
    found = _scan()
    wrong = [f"{rel}:{n}: {line}" for (rel, n), line in sorted(found.items()) if not _allowed(rel, line)]
    assert not wrong, "tests over exception text (carry a reason code or attribute instead):\n" + "\n".join(wrong)


def test_every_third_party_exception_is_still_there():
    found = _scan()
    stale = [key for key in THIRD_PARTY if not any(rel == key[0] and key[1] in line for (rel, _), line in found.items())]
    assert not stale, f"no longer found (drop them from THIRD_PARTY): {stale}"


def test_the_grep_finds_what_it_forbids():
    """The checks above would pass on a grep that finds nothing: each form it forbids is found."""
    forms = [
        "try:\n    f()\nexcept OSError as exc:\n    if 'denied' in str(exc):\n        pass\n",
        "try:\n    f()\nexcept OSError as e:\n    ok = str(e).startswith(path)\n",
        "try:\n    f()\nexcept OSError as err:\n    if _PAT.search(str(err)):\n        pass\n",
        "try:\n    f()\nexcept OSError as exc:\n    text = str(exc)\n    if 'x' in text:\n        pass\n",
        "try:\n    f()\nexcept OSError as exc:\n    permanent = any(n in str(exc) for n in NAMES)\n",
    ]
    assert all(_flags(form) for form in forms)
    assert not _flags("try:\n    f()\nexcept OSError as exc:\n    raise Error(f'{path}: {exc}') from exc\n")
