"""How much must the 90 % intervals widen before every backtest fold is covered at ≥ 75 %?

Issue 12 asks of LevyForecaster's 90 % intervals on the six regular series of
``benchmarks/forecasters.py`` (expanding-window backtests, refit every fold) both a pooled
coverage in [0.85, 0.95] and no fold below 0.75. This script asks whether any rescaling of the
interval width can meet the two bars together, for LevyForecaster (defaults,
``random_state=0``) and the classical peers of that benchmark (AutoARIMA, AutoETS, AutoTheta,
ARAR, seasonal naive).

The folds are those of ``forecasters.backtest`` (its ``splitter``: ``ExpandingWindowSplitter`` with
``fh = 1..horizon``, the same initial window and step; a fresh forecaster fitted with that
``fh`` at every fold). Per forecast point it records ``y``, ``predict`` and the 90 %
``predict_interval``, and its normalised error ``z = (y − mean) / (upper − mean)`` above the
mean, ``(mean − y) / (mean − lower)`` below it: the point is covered when every half-width is
multiplied by ``k`` iff ``z ≤ k``. From these it reports, per method,

* ``k_all``: the smallest factor, common to all six series, that gives every fold of every
  series a coverage ≥ 0.75 (per fold: the ⌈0.75 n⌉-th smallest ``z``; then the maximum);
* the pooled coverage (mean of the per-fold coverages over all folds of all series, as in
  ``forecasters.md``) at ``k = 1`` and at ``k_all``;
* the CRPS at ``k_all`` relative to ``k = 1``, both for a Normal with
  ``σ = k · (upper − lower) / 2 / z₀.₉₅`` around the predicted mean (per series, then the mean
  over series);
* whether some ``k ≥ k_all`` also keeps the pooled coverage in [0.85, 0.95] (both bars met);
* from the other side, the ``k`` at which the pooled coverage first exceeds 0.95 and the
  lowest fold coverage just below it (the best the fold bar can get inside the pooled bar);
* per series, the smallest ``k`` for that series alone and its pooled coverage there.

The points go to ``/tmp/fold_coverage_points.csv`` (``--points``), the summary to
``benchmarks/results/fold_coverage.md`` (``--report``). Run in the ``peers`` environment of
``forecasters.py``, from the repository root::

    OMP_NUM_THREADS=1 peers/bin/python -m benchmarks.fold_coverage

``--quick`` fits only the last 2 folds per series (a check of the script); ``--from-points``
rebuilds the report from a saved points CSV without fitting anything.
"""

from __future__ import annotations

import argparse
import math
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import torch
from scipy.stats import norm

from levy_sklearn import LevyForecaster
from levy_sklearn.metrics import gaussian_crps

from ._common import PEERS, RESULTS, git, make_peer, short_commit, splitter, write_report
from .forecasters import SERIES

REPORT = RESULTS / "fold_coverage.md"
POINTS = Path("/tmp/fold_coverage_points.csv")
COMMAND = "OMP_NUM_THREADS=1 peers/bin/python -m benchmarks.fold_coverage"
METHODS = ("LevyForecaster", *PEERS)
Z90 = norm.ppf(0.95)  # 1.6449: the half-width of a 90 % Normal interval in σ
FOLD_BAR = 0.75
POOLED_BAR = (0.85, 0.95)


# --------------------------------------------------------------------------- backtests
def make(method: str, sp: int):
    if method == "LevyForecaster":
        return LevyForecaster(random_state=0)
    return make_peer(method, sp)


def backtest_points(name: str, method: str, last: int | None) -> pd.DataFrame:
    """One row per forecast point: series, method, fold, h, y, mean, lower, upper."""
    load, sp, initial, step, horizon = SERIES[name]
    y = load()
    cv = splitter(y, initial, step, horizon, last)
    # Fold numbers as in the full backtest.
    first = splitter(y, initial, step, horizon).get_n_splits(y) - cv.get_n_splits(y)
    rows = []
    for i, (y_train, y_test) in enumerate(cv.split_series(y)):
        forecaster = make(method, sp)
        with warnings.catch_warnings():  # re-armed by imports inside the peers otherwise
            warnings.simplefilter("ignore")
            forecaster.fit(y_train, fh=cv.fh)
            mean = forecaster.predict(fh=cv.fh)
            bounds = forecaster.predict_interval(fh=cv.fh, coverage=0.9)
        lower = bounds.xs("lower", axis=1, level=-1).iloc[:, 0]
        upper = bounds.xs("upper", axis=1, level=-1).iloc[:, 0]
        if isinstance(mean, pd.DataFrame):
            mean = mean.iloc[:, 0]
        index = y_test.index
        rows.append(
            pd.DataFrame(
                {
                    "series": name,
                    "method": method,
                    "fold": first + i,
                    "h": np.arange(1, len(index) + 1),
                    "y": y_test.to_numpy(float),
                    "mean": mean.reindex(index).to_numpy(float),
                    "lower": lower.reindex(index).to_numpy(float),
                    "upper": upper.reindex(index).to_numpy(float),
                }
            )
        )
    return pd.concat(rows, ignore_index=True)


# --------------------------------------------------------------------------- analysis
def z_scores(p: pd.DataFrame) -> np.ndarray:
    """Error over the half-width on the side the point falls (covered at k iff z ≤ k)."""
    y, mean, lower, upper = (p[c].to_numpy(float) for c in ("y", "mean", "lower", "upper"))
    up, down = upper - mean, mean - lower
    with np.errstate(divide="ignore", invalid="ignore"):
        above = np.where(up > 0, (y - mean) / up, np.inf)
        below = np.where(down > 0, (mean - y) / down, np.inf)
    return np.where(y > mean, above, np.where(y < mean, below, 0.0))


def fold_k(z: pd.Series) -> float:
    """Smallest k that covers ≥ 75 % of a fold's points: its ⌈0.75 n⌉-th smallest z."""
    need = math.ceil(FOLD_BAR * len(z) - 1e-9)
    return float(np.sort(z.to_numpy())[need - 1])


def crps(p: pd.DataFrame, k: float) -> np.ndarray:
    """Gaussian CRPS per point with σ = k · half-width / z₀.₉₅."""
    sigma = k * (p["upper"] - p["lower"]).to_numpy(float) / 2 / Z90
    return gaussian_crps(p["y"], p["mean"], np.maximum(sigma, 1e-12), reduce=False)


def fold_coverage(p: pd.DataFrame, k: float) -> pd.Series:
    return (p["z"] <= k).groupby([p["series"], p["fold"]], sort=False).mean()


def both_bars(p: pd.DataFrame, k_all: float) -> str:
    """The factors k ≥ k_all whose pooled coverage is inside the bar, as ``[a, b)``."""
    lo, hi = POOLED_BAR
    z = p["z"].to_numpy()
    candidates = np.unique(np.r_[k_all, z[np.isfinite(z) & (z >= k_all)]])
    pooled = np.array([fold_coverage(p, k).mean() for k in candidates])
    inside = np.nonzero((pooled >= lo) & (pooled <= hi))[0]
    if not np.isfinite(k_all) or not inside.size:
        return "none"
    above = np.nonzero(pooled > hi)[0]
    end = f"{candidates[above[0]]:.3g})" if above.size else "∞)"
    return f"[{candidates[inside[0]]:.3g}, " + end


def pooled_cap(p: pd.DataFrame) -> tuple[float, float]:
    """The k at which pooled coverage first exceeds 0.95, and the lowest fold just below it."""
    z = p["z"].to_numpy()
    candidates = np.unique(np.r_[0.0, z[np.isfinite(z)]])
    covs = [fold_coverage(p, k) for k in candidates]
    within = [i for i, c in enumerate(covs) if c.mean() <= POOLED_BAR[1]]
    last = within[-1]  # coverage only grows with k: the widest intervals inside the bar
    over = candidates[last + 1] if last + 1 < len(candidates) else np.inf
    return float(over), float(covs[last].min())


def analyse(points: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    points = points.assign(z=z_scores(points))
    order = [s for s in SERIES if s in set(points.series)]
    table1, table2 = [], []
    for method in [m for m in METHODS if m in set(points.method)]:
        p = points[points.method == method]
        k_fold = p.groupby(["series", "fold"], sort=False)["z"].apply(fold_k)
        k_series = k_fold.groupby(level="series", sort=False).max().reindex(order)
        k_all = float(k_series.max())
        cov1, cov_all = fold_coverage(p, 1.0), fold_coverage(p, k_all)
        cap = pooled_cap(p)
        ratios = {}
        for name in order:
            s = p[p.series == name]
            c1, c_all = crps(s, 1.0).mean(), crps(s, k_all).mean()
            ratios[name] = c_all / c1
            alone = fold_coverage(s, k_series[name])
            table2.append(
                {
                    "method": method,
                    "series": name,
                    "folds": s.fold.nunique(),
                    "lowest fold cov, k=1": cov1.xs(name).min(),
                    "pooled cov, k=1": cov1.xs(name).mean(),
                    "k (this series)": k_series[name],
                    "pooled cov at that k": alone.mean(),
                    "pooled cov at k_all": cov_all.xs(name).mean(),
                    "CRPS, k=1": c1,
                    "CRPS ratio at k_all": c_all / c1,
                }
            )
        table1.append(
            {
                "method": method,
                "k_all": k_all,
                "set by": k_series.idxmax(),
                "pooled cov, k=1": cov1.mean(),
                "pooled cov at k_all": cov_all.mean(),
                "lowest fold cov at k_all": cov_all.min(),
                "k meeting both bars": both_bars(p, k_all),
                "k where pooled > 0.95": cap[0],
                "lowest fold cov just below it": cap[1],
                "mean CRPS ratio (k_all / k=1)": float(np.mean(list(ratios.values()))),
                "lowest fold cov, k=1": cov1.min(),
            }
        )
    return pd.DataFrame(table1), pd.DataFrame(table2)


def markdown(t: pd.DataFrame) -> str:
    """Three decimals; k and huge values to three significant digits (ARAR's can be ~1e8)."""
    t = t.copy()
    align = ["right" if t[c].dtype.kind in "fi" else "left" for c in t.columns]
    for column in t.columns:
        if t[column].dtype.kind == "f":
            k = column.startswith("k")
            t[column] = t[column].map(
                lambda v, k=k: format(v, ".3g" if k or abs(v) >= 1e4 else ".3f")
            )
    return t.to_markdown(index=False, disable_numparse=True, colalign=align)


def oddities(points: pd.DataFrame) -> list[str]:
    """Means outside their interval, and intervals of (almost) zero width."""
    notes = []
    outside = (points["mean"] < points["lower"]) | (points["mean"] > points["upper"])
    width = points["upper"] - points["lower"]
    flat = width <= 1e-6 * points["mean"].abs().clip(lower=1.0)
    for label, mask in (("mean outside its 90 % interval", outside), ("interval width ≈ 0", flat)):
        counts = points[mask].groupby(["method", "series", "fold"]).size()
        for (method, name, fold), n in counts.items():
            notes.append(f"- {label}: {method}, {name}, fold {fold} ({n} points)")
    return notes


def verdict(t1: pd.DataFrame) -> str:
    lo, hi = POOLED_BAR
    over = t1[t1["pooled cov at k_all"] > hi]
    both = t1[t1["k meeting both bars"] != "none"]
    lines = [
        f"At k_all (the smallest common widening with every fold ≥ {FOLD_BAR}), the pooled "
        f"coverage exceeds {hi} for {len(over)} of {len(t1)} methods"
        + (f" ({', '.join(over.method)})" if len(over) else "")
        + "."
    ]
    if len(over) == len(t1):
        lines.append(
            "The two bars conflict on these series for every method: no single rescaling of "
            "the interval width meets the fold bar without pushing pooled coverage above "
            f"{hi} (a larger k only raises both further)."
        )
    else:
        lines.append(
            "Methods for which some k ≥ k_all also puts the pooled coverage in "
            f"[{lo}, {hi}] (both bars met by a widening): "
            + (", ".join(both.method) if len(both) else "none")
            + "."
        )
    if "LevyForecaster" in set(t1.method):
        levy = t1.set_index("method").loc["LevyForecaster"]
        lines.append(
            f"LevyForecaster needs k = {levy['k_all']:.3g} (set by {levy['set by']}), which "
            f"lifts its pooled coverage to {levy['pooled cov at k_all']:.3f}; kept at or "
            f"below {hi} (k < {levy['k where pooled > 0.95']:.3g}) its lowest fold is at best "
            f"{levy['lowest fold cov just below it']:.3f}."
        )
    return " ".join(lines)


def provenance() -> str:
    """The commit, and the tracked files changed since it (read when the run starts)."""

    commit = short_commit()
    changed = git("diff", "--name-only", "HEAD").split()
    return f"commit `{commit}`" + (
        f" with uncommitted changes to {', '.join(f'`{c}`' for c in changed)}" if changed else ""
    )


def report(points: pd.DataFrame, path: Path, mode: str, seconds: dict | None, origin: str) -> str:
    t1, t2 = analyse(points)
    text = [
        "# Widening the 90 % intervals until every fold is covered at ≥ 75 %\n",
        f"Produced by `benchmarks/fold_coverage.py` at {origin}, torch {torch.__version__}, "
        f"{mode}. Command: `{COMMAND}`.\n",
        "Folds of `benchmarks/forecasters.py` (expanding window, refit every fold). A point is "
        "covered at factor k iff |y − mean| ≤ k × the interval's half-width on its side. "
        "Pooled coverage: the mean of the per-fold coverages (as in `forecasters.md`). CRPS: "
        "a Normal around the predicted mean with σ = k × (upper − lower) / 2 / 1.6449, "
        "its mean per series; the ratio is averaged over series.\n",
        "## Per method: the smallest common k that gives every fold of every series ≥ 75 %\n",
        markdown(t1) + "\n",
        "## Per method and series: the smallest k for that series alone\n",
        markdown(t2) + "\n",
        "## What the numbers show\n",
        verdict(t1) + "\n",
    ]
    notes = oddities(points)
    if notes:
        text += ["Odd forecasts:\n", "\n".join(notes) + "\n"]
    if seconds:
        total = pd.Series(seconds).unstack()
        total = total.reindex(index=[n for n in SERIES if n in total.index])
        total = total[[m for m in METHODS if m in total.columns]]
        text += [
            "Fit + predict seconds over all folds:\n",
            total.to_markdown(floatfmt=".1f") + "\n",
        ]
    write_report("\n".join(text), path, echo=False)
    return "\n".join(text)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="the last 2 folds per series")
    parser.add_argument("--series", default=",".join(SERIES), help="these series only")
    parser.add_argument("--methods", default=",".join(METHODS), help="these methods only")
    parser.add_argument("--points", default=str(POINTS), help="CSV of the per-point rows")
    parser.add_argument("--report", default=str(REPORT), help="the markdown summary")
    parser.add_argument(
        "--from-points", action="store_true", help="rebuild the report from --points"
    )
    args = parser.parse_args()
    torch.set_num_threads(1)
    warnings.simplefilter("ignore")  # sktime / statsforecast warnings would drown progress
    mode = "`--quick`: the last 2 folds per series" if args.quick else "every fold"
    seconds = {}
    origin = provenance()  # before fitting: the code the forecasts come from
    if args.from_points:
        origin += f" (report rebuilt from {args.points})"
        points = pd.read_csv(args.points)
    else:
        parts = []
        for name in args.series.split(","):
            for method in args.methods.split(","):
                t0 = time.perf_counter()
                p = backtest_points(name, method, 2 if args.quick else None)
                seconds[(name, method)] = time.perf_counter() - t0
                parts.append(p)
                pd.concat(parts, ignore_index=True).to_csv(args.points, index=False)
                inside = ((p.y >= p.lower) & (p.y <= p.upper)).groupby(p.fold).mean()
                print(
                    f"{name:14s} {method:15s} {seconds[(name, method)]:7.1f} s  folds "
                    f"{len(inside)}  cov90 pooled {inside.mean():.3f} min {inside.min():.3f}",
                    flush=True,
                )
        points = pd.concat(parts, ignore_index=True)
    print(report(points, Path(args.report), mode, seconds, origin))


if __name__ == "__main__":
    main()
