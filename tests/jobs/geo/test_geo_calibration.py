"""``benchaudit geo --calibration``: corrected shares in summary.json and a report that says which shares are corrected."""
from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from connectors.geo.calibration import read_calibration, shipped_path
from jobs.common.cli.config import RunOptions
from jobs.geo.config import CorpusConfig, GeoConfig
from jobs.geo.run import run

pytestmark = pytest.mark.ray


def _load(run_dir: str) -> tuple[dict, dict, str]:
    d = Path(run_dir)
    return (json.loads((d / "summary.json").read_text()), json.loads((d / "manifest.json").read_text()),
            (d / "report.html").read_text())


def test_shipped_demo_with_the_shipped_sample_reports_corrected_shares(tmp_path):
    cfg = GeoConfig(calibration=str(shipped_path()), limit=6000, bootstrap=100, seed=3)
    summary, manifest, report = _load(run(cfg, RunOptions(out=str(tmp_path), executor="local")))
    cal = summary["calibration"]
    assert cal["captions"] == 231 and cal["with_country"] == 38 and cal["weighted"]
    assert manifest["calibration"] == {"path": str(shipped_path()), "sha256": read_calibration(shipped_path()).sha256,
                                       "captions": 231, "seed": 3}
    assert {r["region"] for r in cal["by_region"]} >= {"Europe", "Americas", "none"}
    assert summary["shares"]["corrected"] is True
    for name, block in summary["corpora"].items():
        got = cal["corpora"][name]
        assert "error" not in got, got
        # every country the corpus resolved has a corrected share with an interval around it
        assert set(got["countries"]) == set(block["country_counts"])
        for c in got["countries"].values():
            assert c["ci"][0] - 1e-9 <= c["share"] <= c["ci"][1] + 1e-9
        assert sum(r["corrected_share"] for r in got["regions"]) == pytest.approx(1.0)
        observed_none = next(r["observed_share"] for r in got["regions"] if r["region"] == "none")
        assert observed_none == pytest.approx(1 - block["coverage"])
        # how each share was found: the records per evidence tier add up to the country's records
        tiers = summary["evidence"]["corpora"][name]
        assert {c: sum(t.values()) for c, t in tiers.items()} == block["country_counts"]
    assert "Calibration: the resolver on 231 labelled captions" in report
    assert "Shares corrected for the resolver" in report and "corrected share</th>" in report
    assert "how each share was found" in report and "country, region or address</th>" in report


def test_without_a_sample_the_report_says_shares_are_of_resolved_captions(tmp_path):
    src = tmp_path / "c.csv"
    pd.DataFrame({"caption": ["Lions in Kenya", "Tokyo at night", "a dog on a sofa"] * 4}).to_csv(src, index=False)
    cfg = GeoConfig(corpus=[CorpusConfig(name="c", paths=[str(src)], format="csv", text="caption")], bootstrap=0)
    summary, manifest, report = _load(run(cfg, RunOptions(out=str(tmp_path / "runs"), executor="local")))
    assert summary["calibration"] is None and manifest["calibration"] is None
    assert summary["shares"] == {"of": "resolved captions", "corrected": False, "note": summary["shares"]["note"]}
    assert "not of all captions and not of the world" in summary["shares"]["note"]
    assert "Shares are of resolved captions: the captions the resolver placed in a country, not of all captions" in report
    assert "corrected share</th>" not in report


def test_a_bad_sample_stops_the_run_before_the_scan_naming_file_row_and_field(tmp_path):
    bad = tmp_path / "cal.csv"
    bad.write_text("caption,country\nParis at dusk,FR\nSomewhere,ZZ\n")
    with pytest.raises(ValueError, match=r"cal\.csv: row 2, field 'country': 'ZZ'"):
        run(GeoConfig(calibration=str(bad), limit=10), RunOptions(out=str(tmp_path / "runs"), executor="local"))
    assert not (tmp_path / "runs" / "geo").exists() or not any((tmp_path / "runs" / "geo").iterdir())


def test_a_region_the_resolver_cannot_separate_gets_no_corrected_shares_and_says_why(tmp_path):
    src = tmp_path / "c.csv"
    pd.DataFrame({"caption": ["Paris, France", "a dog on a sofa", "Danish style sideboard"] * 4}).to_csv(src, index=False)
    sample = tmp_path / "cal.csv"
    # Europe: its one labelled caption is missed, while a caption with no country is placed in Denmark
    sample.write_text("caption,country\na quiet cafe by the river Seine,FR\nDanish style sideboard,\na dog,\n")
    cfg = GeoConfig(corpus=[CorpusConfig(name="c", paths=[str(src)], format="csv", text="caption")], bootstrap=20,
                    calibration=str(sample))
    summary, _, report = _load(run(cfg, RunOptions(out=str(tmp_path / "runs"), executor="local")))
    error = summary["calibration"]["corpora"]["c"]["error"]
    assert error.startswith("the resolver places 0.0% of the sample's 'Europe' captions in 'Europe', no more than 50.0% "
                            "of its 'none' captions")
    assert "No corrected shares: the resolver places 0.0% of the sample&#x27;s &#x27;Europe&#x27; captions" in report
