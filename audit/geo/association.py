"""Does a corpus's country share track the country's economy? Correlations and fits on log shares.

Per corpus: countries with population ≥ ``min_population`` (1 million by default) that have
indicator data and at least ``min_records`` resolved records; country share d and GDP share g are
renormalized within that set, and everything is fitted on log10 values. The small table (≈200
rows) is all the statistics need, so it runs on the driver after the distributed scan.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd

from audit.stats.choices import DEFAULT_LEVEL, DEFAULT_REPLICATES, DEFAULT_SEED

# The World Bank indicators the association is computed against (the indicator table's ``indicator`` values).
INDICATORS = ("gdp_current_usd", "population", "gdp_per_capita_usd", "internet_users_pct", "tourism_arrivals")


@dataclass(frozen=True)
class AssociationConfig:
    min_population: float = 1_000_000
    min_records: int = 1
    bootstrap_replicates: int = DEFAULT_REPLICATES
    seed: int = DEFAULT_SEED
    level: float = DEFAULT_LEVEL

    def __post_init__(self) -> None:
        if self.min_records < 1:
            raise ValueError("min_records must be ≥ 1: a log share needs at least one record")
        if self.bootstrap_replicates < 0:
            raise ValueError("bootstrap_replicates must be ≥ 0")
        if not 0 < self.level < 1:
            raise ValueError(f"level must be a fraction in (0, 1), got {self.level}")


def country_table(counts: dict[str, int], indicators: pd.DataFrame, alpha3_of: dict[str, str], cfg: AssociationConfig) -> pd.DataFrame:
    """The retained countries with records, d, g and the log10 of every indicator."""
    rows = []
    for code, n in counts.items():
        a3 = alpha3_of.get(code)
        if a3 is None or a3 not in indicators.index or n < cfg.min_records:
            continue
        row = indicators.loc[a3]
        if not (row.get("population", np.nan) >= cfg.min_population and row.get("gdp_current_usd", np.nan) > 0):
            continue
        rows.append({"alpha2": code, "alpha3": a3, "records": n, **{k: row.get(k, np.nan) for k in INDICATORS}})
    df = pd.DataFrame(rows, columns=["alpha2", "alpha3", "records", *INDICATORS]).sort_values("alpha2").reset_index(drop=True)
    df["d"] = df["records"] / df["records"].sum()
    df["g"] = df["gdp_current_usd"] / df["gdp_current_usd"].sum()
    df["log_d"] = np.log10(df["d"])
    df["log_g"] = np.log10(df["g"])
    for k in INDICATORS:
        df[f"log_{k}"] = np.log10(df[k].where(df[k] > 0))
    return df


def weighted_pearson(x: np.ndarray, y: np.ndarray, w: np.ndarray) -> float:
    w = w / w.sum()
    mx, my = (w * x).sum(), (w * y).sum()
    cov = (w * (x - mx) * (y - my)).sum()
    return float(cov / np.sqrt((w * (x - mx) ** 2).sum() * (w * (y - my) ** 2).sum()))


def _fit(df: pd.DataFrame, predictors: list[str], weighted: bool) -> dict:
    import statsmodels.api as sm

    sub = df.dropna(subset=predictors)
    X = sm.add_constant(sub[predictors].to_numpy(), has_constant="add")
    y = sub["log_d"].to_numpy()
    if len(sub) <= len(predictors) + 1:
        return {"n": len(sub), "countries": sub["alpha2"].tolist(), "error": "too few countries to fit"}
    model = sm.WLS(y, X, weights=sub["records"].to_numpy()).fit() if weighted else sm.OLS(y, X).fit()
    names = ["const", *predictors]
    return {
        "n": int(len(sub)),
        "countries": sub["alpha2"].tolist(),
        "weighted": weighted,
        "coef": dict(zip(names, map(float, model.params))),
        "se": dict(zip(names, map(float, model.bse))),
        "pvalues": dict(zip(names, map(float, model.pvalues))),
        "r2": float(model.rsquared),
        "adj_r2": float(model.rsquared_adj),
    }


def _bootstrap_r(x: np.ndarray, y: np.ndarray, replicates: int, seed: int, level: float) -> dict:
    """Percentile intervals for Pearson r and Spearman ρ, resampling countries; vectorised."""
    if replicates == 0 or len(x) < 3:
        return {}
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, len(x), size=(replicates, len(x)))

    def rows_r(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        a = a - a.mean(axis=1, keepdims=True)
        b = b - b.mean(axis=1, keepdims=True)
        with np.errstate(invalid="ignore", divide="ignore"):
            return (a * b).sum(axis=1) / np.sqrt((a * a).sum(axis=1) * (b * b).sum(axis=1))

    from scipy import stats

    xs, ys = x[idx], y[idx]
    r = rows_r(xs, ys)
    rho = rows_r(stats.rankdata(xs, axis=1), stats.rankdata(ys, axis=1))
    tail = 50 * (1 - level)
    ci = lambda v: [float(np.nanpercentile(v, tail)), float(np.nanpercentile(v, 100 - tail))]  # noqa: E731
    return {"replicates": replicates, "seed": seed, "level": level, "pearson_r_ci": ci(r), "spearman_rho_ci": ci(rho)}


def associate(counts: dict[str, int], indicators: pd.DataFrame, alpha3_of: dict[str, str], cfg: AssociationConfig) -> dict:
    """GDP-share correlations, single-indicator fits and GDP-plus-one fits for one corpus.

    With few countries a statistic can be undefined (constant input, zero variance); it is then
    reported as NaN (``null`` in summary.json), so numpy's and scipy's warnings about it are noise.
    """
    from scipy import stats

    with warnings.catch_warnings(), np.errstate(divide="ignore", invalid="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        warnings.simplefilter("ignore", stats.ConstantInputWarning)
        return _associate(counts, indicators, alpha3_of, cfg)


def _associate(counts: dict[str, int], indicators: pd.DataFrame, alpha3_of: dict[str, str], cfg: AssociationConfig) -> dict:
    # statsmodels and scipy.stats (~3 s to import) only here: a geo shard worker imports this module with the job's
    # code and never fits a model
    import statsmodels.api as sm
    from scipy import stats

    df = country_table(counts, indicators, alpha3_of, cfg)
    out: dict = {"config": cfg.__dict__, "n_countries": int(len(df)), "countries": df["alpha2"].tolist()}
    if len(df) < 3:
        out["error"] = f"only {len(df)} countries pass the filters; correlations need at least 3"
        return out
    x, y, w = df["log_g"].to_numpy(), df["log_d"].to_numpy(), df["records"].to_numpy(float)
    ols = sm.OLS(y, sm.add_constant(x)).fit()
    out["gdp"] = {
        "pearson_r": float(stats.pearsonr(x, y).statistic),
        "spearman_rho": float(stats.spearmanr(x, y).statistic),
        "weighted_pearson_r": weighted_pearson(x, y, w),
        "ols_r2": float(ols.rsquared),
        "ols_slope": float(ols.params[1]),
        "ols_intercept": float(ols.params[0]),
        "weighted_r2": float(sm.WLS(y, sm.add_constant(x), weights=w).fit().rsquared),
        **_bootstrap_r(x, y, cfg.bootstrap_replicates, cfg.seed, cfg.level),
    }
    predictors = {"gdp_current_usd": "log_g", **{k: f"log_{k}" for k in INDICATORS if k != "gdp_current_usd"}}
    out["single"] = {k: {"unweighted": _fit(df, [p], False), "weighted": _fit(df, [p], True)} for k, p in predictors.items()}
    out["gdp_plus_one"] = {
        k: {"unweighted": _fit(df, ["log_g", p], False), "weighted": _fit(df, ["log_g", p], True)}
        for k, p in predictors.items() if k != "gdp_current_usd"
    }
    out["points"] = df[["alpha2", "records", "d", "g", "log_d", "log_g"]].to_dict(orient="records")
    return out
