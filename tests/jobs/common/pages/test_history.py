"""How the history tells runs apart: option texts, like-for-like, and the config labels of trend lines."""
from __future__ import annotations

from connectors.runs.store import RunEntry
from jobs.common.cli.config import non_default_options
from jobs.common.pages.history import config_differences, config_groups, differences_text, options_text, same_config, value_text
from jobs.geo.config import GeoConfig


def entry(run_id: str, config: dict | None, config_hash: str = "h") -> RunEntry:
    return RunEntry(run_id=run_id, job="geo", status="complete", path="/r", config=config, config_hash=config_hash)


def test_the_options_a_run_set_are_those_that_differ_from_the_defaults():
    assert non_default_options(GeoConfig()) == {}
    assert non_default_options(GeoConfig(lexicon_profile="extended", limit=200, seed=2026)) == {
        "lexicon_profile": "extended", "limit": 200}  # the default seed, given again, is no difference
    corpus = GeoConfig(corpus=["c:coco:/data/coco/captions.csv"])
    assert options_text(non_default_options(corpus)) == "corpus=[c]"  # a named input by its name


def test_option_texts_for_people():
    assert value_text("/tmp/inputs/rubric.yaml") == "rubric.yaml" and value_text("s3://b/x/") == "x"
    assert value_text(["a", "b"]) == "a,b" and value_text([]) == "none" and value_text(0.5) == "0.5"
    assert len(value_text("x" * 100)) == 40 and value_text("x" * 100).endswith("…")
    assert options_text({}) == "defaults" and options_text(None) == "?"
    assert options_text({"limit": 200, "bootstrap": 0}) == "bootstrap=0 limit=200"


def test_like_for_like_and_what_differs():
    a, b = entry("a", {"limit": 200}), entry("b", {"limit": 300, "lexicon_profile": "gazetteer"})
    assert same_config(a, entry("c", {"limit": 200})) and not same_config(a, b)
    assert config_differences(a, b) == [("lexicon_profile", "default", "gazetteer"), ("limit", 200, 300)]
    assert differences_text(config_differences(a, b)) == "lexicon_profile default → gazetteer; limit 200 → 300"
    old = entry("old", None, "h1")  # recorded before options were kept: the config hash decides
    assert same_config(old, entry("x", None, "h1")) and not same_config(old, entry("y", {}, "h2"))


def test_trend_labels_name_only_the_options_that_vary():
    runs = [entry("1", {"rubric": "r.yaml", "per_outcome": 2}), entry("2", {"rubric": "r.yaml", "per_outcome": 3}),
            entry("3", {"rubric": "r.yaml"})]
    assert config_groups(runs) == {"1": "per_outcome=2", "2": "per_outcome=3", "3": "defaults"}
    same = [entry("1", {"rubric": "r.yaml"}), entry("2", {"rubric": "r.yaml"})]
    assert config_groups(same) == {"1": "", "2": ""}  # one config: no label
