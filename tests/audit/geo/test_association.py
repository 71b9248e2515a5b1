"""Association with World Bank indicators: equal to scipy/statsmodels on the shipped table."""
from __future__ import annotations

import numpy as np
import pytest
import statsmodels.api as sm
from scipy import stats
from statsmodels.stats.weightstats import DescrStatsW

from audit.geo.association import INDICATORS, AssociationConfig, associate, country_table
from audit.geo.sources import country_codes
from connectors.geo.indicators import read_indicators


@pytest.fixture(scope="module")
def indicators():
    return read_indicators()[0]


@pytest.fixture(scope="module")
def counts():
    rng = np.random.default_rng(42)
    codes = ["US", "GB", "DE", "FR", "JP", "IN", "CN", "BR", "NG", "KE", "AU", "CA", "MX", "ES", "IT", "TV", "NR", "MC", "EG", "PE"]
    return {c: int(rng.integers(1, 5000)) for c in codes}


def test_shipped_indicators_have_every_indicator_with_years(indicators):
    latest = {"gdp_current_usd": 2023, "population": 2024, "gdp_per_capita_usd": 2022, "internet_users_pct": 2024, "tourism_arrivals": 2018}
    for k in INDICATORS:
        assert indicators[k].notna().sum() >= 200, k
        years = indicators[f"{k}_year"].dropna()
        assert years.max() == latest[k] and years.min() >= 1990, k  # the latest available year, kept per country
    assert indicators.loc["USA", "population"] > 3e8 and indicators.loc["USA", "gdp_current_usd"] > 2e13
    assert "WLD" not in indicators.index and "EUU" not in indicators.index  # aggregates dropped


def test_retained_set_is_exact(counts, indicators):
    cfg = AssociationConfig()
    df = country_table(counts, indicators, country_codes(), cfg)
    # Tuvalu, Nauru and Monaco are below one million people
    assert set(df.alpha2) == set(counts) - {"TV", "NR", "MC"}
    assert df.d.sum() == pytest.approx(1) and df.g.sum() == pytest.approx(1)
    small = country_table(counts, indicators, country_codes(), AssociationConfig(min_population=0))
    assert {"TV", "NR", "MC"} <= set(small.alpha2)
    strict = country_table(counts, indicators, country_codes(), AssociationConfig(min_records=counts["US"] + 1))
    assert "US" not in set(strict.alpha2)


def test_correlations_and_fits_equal_scipy_and_statsmodels(counts, indicators):
    res = associate(counts, indicators, country_codes(), AssociationConfig(bootstrap_replicates=500, seed=7))
    # the reference computation, written out independently
    a3 = country_codes()
    keep = [c for c in sorted(counts) if indicators.loc[a3[c], "population"] >= 1e6]
    n = np.array([counts[c] for c in keep], float)
    gdp = np.array([indicators.loc[a3[c], "gdp_current_usd"] for c in keep])
    x, y = np.log10(gdp / gdp.sum()), np.log10(n / n.sum())
    gdp_res = res["gdp"]
    assert res["countries"] == keep and res["n_countries"] == len(keep)
    assert gdp_res["pearson_r"] == pytest.approx(stats.pearsonr(x, y)[0], abs=1e-12)
    assert gdp_res["spearman_rho"] == pytest.approx(stats.spearmanr(x, y)[0], abs=1e-12)
    w = DescrStatsW(np.column_stack([x, y]), weights=n)
    assert gdp_res["weighted_pearson_r"] == pytest.approx(w.corrcoef[0, 1], abs=1e-12)
    ols = sm.OLS(y, sm.add_constant(x)).fit()
    assert gdp_res["ols_r2"] == pytest.approx(ols.rsquared, abs=1e-12)
    assert gdp_res["ols_slope"] == pytest.approx(ols.params[1], abs=1e-12)
    assert gdp_res["ols_r2"] == pytest.approx(stats.pearsonr(x, y)[0] ** 2, abs=1e-12)
    wls = sm.WLS(y, sm.add_constant(x), weights=n).fit()
    assert gdp_res["weighted_r2"] == pytest.approx(wls.rsquared, abs=1e-12)
    # GDP share plus internet users, weighted
    net = np.array([indicators.loc[a3[c], "internet_users_pct"] for c in keep])
    X = sm.add_constant(np.column_stack([x, np.log10(net)]))
    fit = res["gdp_plus_one"]["internet_users_pct"]["weighted"]
    ref = sm.WLS(y, X, weights=n).fit()
    assert fit["r2"] == pytest.approx(ref.rsquared, abs=1e-12)
    assert list(fit["coef"].values()) == pytest.approx(list(ref.params), abs=1e-12)
    assert fit["countries"] == keep and fit["n"] == len(keep)
    # single-indicator fit on population, unweighted
    pop = np.array([indicators.loc[a3[c], "population"] for c in keep])
    single = res["single"]["population"]["unweighted"]
    assert single["r2"] == pytest.approx(sm.OLS(y, sm.add_constant(np.log10(pop))).fit().rsquared, abs=1e-12)
    # tourism has gaps: the fit reports its own country list
    tour = res["single"]["tourism_arrivals"]["unweighted"]
    assert set(tour["countries"]) <= set(keep)


def test_bootstrap_interval_is_seeded_and_brackets_the_estimate(counts, indicators):
    a = associate(counts, indicators, country_codes(), AssociationConfig(bootstrap_replicates=400, seed=1))["gdp"]
    b = associate(counts, indicators, country_codes(), AssociationConfig(bootstrap_replicates=400, seed=1))["gdp"]
    c = associate(counts, indicators, country_codes(), AssociationConfig(bootstrap_replicates=400, seed=2))["gdp"]
    assert a["pearson_r_ci"] == b["pearson_r_ci"] and a["pearson_r_ci"] != c["pearson_r_ci"]
    lo, hi = a["pearson_r_ci"]
    assert lo < a["pearson_r"] < hi
    lo, hi = a["spearman_rho_ci"]
    assert lo < a["spearman_rho"] < hi


def test_too_few_countries_is_reported_not_raised(indicators):
    res = associate({"US": 3, "FR": 1}, indicators, country_codes(), AssociationConfig())
    assert "error" in res and res["n_countries"] == 2


def test_bad_indicator_file_names_file_and_row(tmp_path):
    p = tmp_path / "ind.csv"
    p.write_text("alpha3,indicator,year,value\nUSA,population,2020,3e8\nFRA,population,2020,-5\n")
    with pytest.raises(ValueError, match=r"ind\.csv:3: field value"):
        read_indicators(p)
    p.write_text("alpha3,value\nUSA,1\n")
    with pytest.raises(ValueError, match=r"lacks column\(s\) \['indicator', 'year'\]"):
        read_indicators(p)
