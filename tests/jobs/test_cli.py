"""The benchaudit command line: help, lexicon export, clear errors."""
from __future__ import annotations

import subprocess
import sys

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from jobs.cli import main


def test_help_explains_every_geo_option():
    out = subprocess.run([sys.executable, "-m", "jobs.cli", "geo", "--help"], capture_output=True, text=True, check=True).stdout
    for flag in ("--corpus", "--group-by", "--write-records", "--lexicon-profile", "--address", "--resume", "--on-error", "--seed"):
        assert flag in out
    assert "ray://" in out and "preset" in out


def test_geo_lexicon_export(tmp_path, capsys):
    assert main(["geo", "lexicon", "--profile", "extended", "--out", str(tmp_path / "lex.csv"), "--rejected", str(tmp_path / "rej.csv")]) == 0
    lex, rej = pd.read_csv(tmp_path / "lex.csv"), pd.read_csv(tmp_path / "rej.csv")
    assert "region" in set(lex.match_type) and {"alias", "reason"} <= set(rej.columns) and len(rej) > 100
    assert main(["geo", "lexicon", "--out", str(tmp_path / "lex.parquet")]) == 0
    assert pq.read_table(tmp_path / "lex.parquet").num_rows == len(pd.read_csv(tmp_path / "lex.csv").query("match_type != 'region'"))


def test_bad_corpus_is_a_clear_error_with_exit_code_2(tmp_path, capsys):
    pq.write_table(pa.table({"caption": ["x"]}), tmp_path / "a.parquet")
    code = main(["geo", "--corpus", f"dc:datacomp:{tmp_path / 'a.parquet'}", "--out", str(tmp_path / "runs")])
    err = capsys.readouterr().err
    assert code == 2 and "a.parquet: mapped column(s)" in err and "Traceback" not in err
    assert main(["geo", "--corpus", "no-colons", "--out", str(tmp_path / "runs")]) == 2
    assert "NAME:PRESET:PATH" in capsys.readouterr().err
    assert main(["geo", "--corpus", f"x:nosuchpreset:{tmp_path}", "--out", str(tmp_path / "runs")]) == 2
    assert "unknown preset" in capsys.readouterr().err
