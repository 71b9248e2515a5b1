"""Cross-model item audit: which items' gold labels are most likely wrong, from many models' answers.

The principle is the one-coin annotator model of Dawid and Skene (1979): each model m is an
annotator that gives the true option with probability a_m and otherwise one of the K - 1 others
uniformly; the published gold is one more annotator, right with probability pi. Given the answers,
the posterior of the true option j of an item is

    P(true = j) ∝ prior_j · Π_m L_m(j),   prior_gold = pi, prior_other = (1 - pi) / (K - 1),

and the label-error score is P(true ≠ gold): the posterior probability that the gold is wrong.
A model that gives a distribution p_m over the options instead of one letter contributes its
expected likelihood, L_m(j) = a_m p_mj + (1 - a_m)(1 - p_mj)/(K - 1) (a hard answer is the one-hot
case). a_m is the model's accuracy against the gold (clipped into (1/K, 1): a model at chance says
nothing) under Laplace's rule of succession, (right + 1) / (answered + 2), so that a model right on all
of a few items is not taken for infallible; a strong model's confident disagreement counts for more than a weak one's, and models
that disagree with the gold on *the same* other option add up while scattered misses cancel --
which the plain count "how many models miss the item" cannot tell apart. pi is estimated from the
data by EM on the per-item sums (its only free parameter), as the posterior mode under a Beta(9, 1)
prior -- a published benchmark's labels are mostly right, a belief worth ten items -- so a handful of
items answered by weak models cannot drive it to 0; over thousands of items the data decide. It is
never fitted to expert labels. The ranking itself does not depend on pi: every item's posterior odds
that the gold is wrong are (1 - pi)/pi times its Bayes factor, the same factor for all items.

Everything a model adds is a per-item sum over models (``model_sums``), so logs of thousands of
models combine without holding their records together; ``score_items`` turns the sums into the
per-item table. ``flagged`` is the Bayes decision: P(gold wrong) > 1/2.

The models are treated as independent; correlated models (one family, one training set) make the
posterior overconfident, which changes its calibration but not the ranking's order among items
with the same models.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

SUM_FIELDS = ("n_models", "n_wrong", "gold_prob", "votes", "prob", "log_evidence")
_EPS = 1e-6
EM_TOL = 1e-9
GOLD_PRIOR = (9.0, 1.0)  # Beta prior of the share of right gold labels: mean 0.9, the weight of ten items
EM_MAX_ITER = 500


def reliability(right: float, answered: float) -> float:
    """A model's accuracy against the gold as annotator reliability: Laplace's (right + 1) / (answered + 2)."""
    return (right + 1.0) / (answered + 2.0)


def clip_accuracy(accuracy: float, k: int) -> float:
    """A model's accuracy as annotator reliability: strictly between chance (1/K) and 1."""
    return float(np.clip(accuracy, 1.0 / k + _EPS, 1.0 - _EPS))


def probabilities(logprobs: Sequence[Sequence[float]], kmax: int) -> np.ndarray:
    """(n, kmax) softmax of each item's option log-probs, 0 past its K; NaN rows for unreadable items."""
    out = np.zeros((len(logprobs), kmax))
    for i, row in enumerate(logprobs):
        x = np.asarray(row, dtype=np.float64)
        if len(x) < 2 or not np.isfinite(x).any() or np.isnan(x).any():
            out[i] = np.nan
            continue
        out[i, : len(x)] = np.exp(x - np.logaddexp.reduce(x))
    return out


def one_hot(pred: ArrayLike, kmax: int) -> np.ndarray:
    """(n, kmax) hard answers as distributions; a negative prediction (no answer) is a NaN row."""
    p = np.asarray(pred, dtype=np.int64)
    out = np.zeros((len(p), kmax))
    ok = p >= 0
    out[np.flatnonzero(ok), p[ok]] = 1.0
    out[~ok] = np.nan
    return out


def model_sums(prob: np.ndarray, gold: Sequence[int], k: Sequence[int], accuracy: float) -> dict[str, np.ndarray]:
    """One model's contribution to the per-item sums (add them over models with ``add_sums``).

    ``prob`` is (n, kmax): the model's distribution over each item's options (``probabilities`` or
    ``one_hot``); NaN rows (unanswered) add nothing. ``accuracy`` is the model's ``reliability`` on this
    benchmark.
    """
    g = np.asarray(gold, dtype=np.int64)
    kk = np.asarray(k, dtype=np.int64)
    n, kmax = prob.shape
    answered = ~np.isnan(prob).any(axis=1)
    p = np.where(answered[:, None], prob, 0.0)
    rows = np.arange(n)
    valid = np.arange(kmax)[None, :] < kk[:, None]
    a = np.array([clip_accuracy(accuracy, int(x)) for x in np.maximum(kk, 2)])
    like = a[:, None] * p + (1 - a[:, None]) * (1 - p) / np.maximum(kk - 1, 1)[:, None]
    log_ev = np.where(valid & answered[:, None], np.log(np.maximum(like, 1e-300)), 0.0)
    pred = np.where(answered, np.argmax(np.where(valid, p, -1.0), axis=1), -1)
    votes = np.zeros((n, kmax))
    votes[rows[answered], pred[answered]] = 1.0
    return {"n_models": answered.astype(np.float64), "n_wrong": (answered & (pred != g)).astype(np.float64),
            "gold_prob": p[rows, g], "votes": votes, "prob": p, "log_evidence": log_ev}


def add_sums(total: dict[str, np.ndarray] | None, part: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Elementwise sum of two per-item sums over the same items (``None`` is the empty sum)."""
    return dict(part) if total is None else {f: total[f] + part[f] for f in SUM_FIELDS}


def posterior(log_ev: np.ndarray, gold: np.ndarray, k: np.ndarray, pi: float) -> np.ndarray:
    """(n, kmax) posterior of each item's true option from the summed log-evidence and the gold's prior pi."""
    n, kmax = log_ev.shape
    valid = np.arange(kmax)[None, :] < k[:, None]
    prior = np.where(valid, (1 - pi) / np.maximum(k - 1, 1)[:, None], 0.0)
    prior[np.arange(n), gold] = pi
    with np.errstate(divide="ignore"):
        x = np.where(valid, np.log(prior) + log_ev, -np.inf)
    x -= x.max(axis=1, keepdims=True)
    post = np.exp(x)
    return post / post.sum(axis=1, keepdims=True)


def estimate_gold_accuracy(log_ev: np.ndarray, gold: np.ndarray, k: np.ndarray,
                           prior: tuple[float, float] = GOLD_PRIOR) -> tuple[float, int]:
    """EM for pi, the share of gold labels that are right, at the mode of its posterior under a Beta ``prior``:
    pi <- (sum of the gold's posteriors + a - 1) / (n + a + b - 2). Returns (pi, iterations)."""
    a, b = prior
    pi = a / (a + b)
    for it in range(1, EM_MAX_ITER + 1):
        post = posterior(log_ev, gold, k, pi)
        new = float(np.clip((post[np.arange(len(gold)), gold].sum() + a - 1) / (len(gold) + a + b - 2), _EPS, 1 - _EPS))
        if abs(new - pi) < EM_TOL:
            return new, it
        pi = new
    return pi, EM_MAX_ITER


@dataclass(frozen=True)
class ItemScores:
    """The per-item table (one row per item, most likely defective first) and the fitted pi."""

    table: pd.DataFrame
    gold_accuracy: float
    em_iterations: int


def score_items(keys: pd.DataFrame, sums: dict[str, np.ndarray], gold: Sequence[int], k: Sequence[int]) -> ItemScores:
    """Per item: ``n_models, n_wrong, mean_gold_prob``, the option the models favour instead of the
    gold (``agreed_option``, its mean probability ``agreed_mass`` and ``agreed_votes``), ``score`` =
    P(gold wrong) and ``flagged`` = score > 1/2; sorted by score (ties: more models missing first).

    ``keys`` holds the item columns (benchmark, source_id, text ...) in the order of the sums.
    """
    g = np.asarray(gold, dtype=np.int64)
    kk = np.asarray(k, dtype=np.int64)
    n = len(g)
    rows = np.arange(n)
    models = np.maximum(sums["n_models"], 1)
    pi, iterations = estimate_gold_accuracy(sums["log_evidence"], g, kk) if n else (float("nan"), 0)
    post = posterior(sums["log_evidence"], g, kk, pi) if n else np.zeros((0, 1))
    valid = np.arange(sums["prob"].shape[1])[None, :] < kk[:, None]
    other = np.where(valid, sums["prob"], -np.inf)
    other[rows, g] = -np.inf
    agreed = np.argmax(other, axis=1)
    out = keys.reset_index(drop=True).copy()
    out["gold"] = g
    out["k"] = kk
    out["n_models"] = sums["n_models"].astype(np.int64)
    out["n_wrong"] = sums["n_wrong"].astype(np.int64)
    out["mean_gold_prob"] = sums["gold_prob"] / models
    out["agreed_option"] = agreed
    out["agreed_mass"] = sums["prob"][rows, agreed] / models
    out["agreed_votes"] = sums["votes"][rows, agreed].astype(np.int64)
    out["score"] = 1.0 - post[rows, g] if n else np.zeros(0)
    out["flagged"] = out["score"] > 0.5
    out = out.sort_values(["score", "n_wrong"], ascending=False, kind="stable").reset_index(drop=True)
    return ItemScores(out, pi, iterations)


def score_answers(answers: pd.DataFrame, items: pd.DataFrame, item: str = "source_id", model: str = "model") -> ItemScores:
    """``score_items`` from a long table of answers (one row per item x model): ``pred`` (index; -1 or an index
    past the item's options is no answer) or ``option_probs`` (a distribution per row). Each model's accuracy is over its answered items.
    ``items`` has ``item``, ``gold``, ``k`` and whatever text should be carried into the table."""
    items = items.reset_index(drop=True)
    index = pd.Series(np.arange(len(items)), index=items[item])
    kmax = int(items["k"].max())
    total = None
    for _, rows in answers.groupby(model, sort=True):
        pos = index.loc[rows[item]].to_numpy()
        prob = np.full((len(items), kmax), np.nan)
        if "option_probs" in rows:
            prob[pos] = np.array([np.pad(np.asarray(p, float), (0, kmax - len(p))) for p in rows["option_probs"]])
        else:
            pred = rows["pred"].to_numpy()
            prob[pos] = one_hot(np.where(pred < items["k"].to_numpy()[pos], pred, -1), kmax)  # not an option: no answer
        answered = ~np.isnan(prob).any(axis=1)
        pred = np.argmax(np.nan_to_num(prob, nan=-1.0), axis=1)
        right = float((pred[answered] == items["gold"].to_numpy()[answered]).sum())
        total = add_sums(total, model_sums(prob, items["gold"], items["k"], reliability(right, answered.sum())))
    if total is None:
        raise ValueError("no answers to score the items with")
    return score_items(items.drop(columns=["gold", "k"]), total, items["gold"], items["k"])


# ranking against expert labels ---------------------------------------------------------------------------------------

def precision_at_k(scores: ArrayLike, labels: ArrayLike, k: int) -> float:
    """Share of expert-flagged items among the k highest scores; items tied at the cut count by their
    expected share under a random order (so a coarse score such as a count is not favoured by tie order)."""
    s, y = np.asarray(scores, float), np.asarray(labels, bool)
    if not 0 < k <= len(s):
        raise ValueError(f"k={k} must be between 1 and the {len(s)} items")
    cut = np.sort(s)[::-1][k - 1]
    above, tied = s > cut, s == cut
    return float((y[above].sum() + (k - above.sum()) * y[tied].mean()) / k)


def average_precision(scores: ArrayLike, labels: ArrayLike) -> float:
    """Average precision: sum over distinct score thresholds (highest first) of precision x the gain in
    recall (tied items enter together), as scikit-learn's ``average_precision_score`` computes it."""
    s, y = np.asarray(scores, float), np.asarray(labels, bool)
    if not y.any():
        return float("nan")
    order = np.argsort(-s, kind="stable")
    s, y = s[order], y[order]
    last = np.r_[np.flatnonzero(np.diff(s) != 0), len(s) - 1]  # the last index of each run of equal scores
    tp = np.cumsum(y)[last]
    precision = tp / (last + 1)
    recall_gain = np.diff(np.r_[0, tp]) / y.sum()
    return float((precision * recall_gain).sum())


def precision_recall_curve(scores: ArrayLike, labels: ArrayLike) -> pd.DataFrame:
    """(threshold, precision, recall, flagged) at each distinct score, highest threshold first."""
    s, y = np.asarray(scores, float), np.asarray(labels, bool)
    order = np.argsort(-s, kind="stable")
    s, y = s[order], y[order]
    last = np.r_[np.flatnonzero(np.diff(s) != 0), len(s) - 1]
    tp = np.cumsum(y)[last]
    return pd.DataFrame({"threshold": s[last], "precision": tp / (last + 1), "recall": tp / max(int(y.sum()), 1),
                         "flagged": last + 1})


def ranking_report(scores: ArrayLike, labels: ArrayLike, ks: Sequence[int] = (50, 100, 200, 500)) -> dict:
    """AP, precision and recall at each k, enrichment at each k over the base rate and its
    hypergeometric p = P(X >= hits) when k items are drawn at random (tied items at the cut by expectation)."""
    from scipy.stats import hypergeom  # here, not at the top: a landscape run starts without scipy.stats (~1 s)

    s, y = np.asarray(scores, float), np.asarray(labels, bool)
    n, bad = len(s), int(y.sum())
    base_rate = bad / n if n else float("nan")
    at_k: list[dict] = []
    for k in ks:
        if k > n:
            continue
        p = precision_at_k(s, y, k)
        hits = p * k
        at_k.append({"k": k, "precision": p, "recall": hits / bad if bad else float("nan"),
                     "enrichment": p / base_rate if bad else float("nan"),
                     "p_value": float(hypergeom.sf(int(np.ceil(hits - 1e-9)) - 1, n, bad, k))})
    return {"n": n, "expert_bad": bad, "base_rate": base_rate, "average_precision": average_precision(s, y), "at_k": at_k}
