"""LevyForecaster with and without covariates ``X``, beside the peers a user would use them with.

One run, six sets, every method scored on the same forecasts by the same code:

``simulated``
    :func:`levy_sklearn.datasets.load_simulated_glucose`: pretrained on the adults, forecast
    on the adolescents (patients never seen). Origins: the CGM reading just before each
    meal after the first day; targets 30 and 60 min later. ``CHO`` and ``insulin`` are known
    ahead (the announced meal and its bolus).
``remifentanil``
    :func:`~levy_sklearn.datasets.load_remifentanil` (``include_rate=True``): 70 % of the
    patients pretrain, the others are forecast; from each concentration measurement, the
    next one within 60 min. The infusion rate is known ahead (it is the plan).
``quinidine``, ``phenobarb``
    :func:`~levy_sklearn.datasets.load_quinidine` / :func:`~levy_sklearn.datasets.load_phenobarb`
    (``include_dose=True``), subjects split as above; from each concentration measurement,
    the next one within 48 h (quinidine; 72 h phenobarb). The doses are known ahead: they
    are prescribed (a regimen), and the doses between two blood draws are exactly what moves
    the next concentration, so a forecaster that may not read them answers another question.
    ``dose`` is 0 at the records without a dose (a plan of "no dose" must be expressible);
    quinidine's ``interval`` (the regimen's dosing interval, where at steady state) stays
    past only, with its gaps.
``chicago``
    :func:`~levy_sklearn.datasets.load_chicago` (``include_covariates=True``): trained on the
    days before the last 728, forecast 1-7 days ahead from origins spread over those days.
    Weather and home games are known ahead (a weather forecast and the fixtures; here the
    realised weather, so an upper bound on what a forecast of it gives).
``us_change``
    :func:`~levy_sklearn.datasets.load_us_change` (``include_covariates=True``): trained on
    the quarters before the last 60, forecast one quarter ahead from each of them; income,
    production, savings and unemployment past only (they are published with consumption).

Methods, on every set unless said otherwise:

* ``Levy + X`` and ``Levy`` (the same LevyForecaster without ``X``): panels ``pretrain``
  on the training subjects, then each held-out subject is ``fit`` on its history up to
  its first origin (the library's zero-shot path: no training on it) and ``update``\\ d
  (``update_params=False``) to each later origin; regular sets ``fit`` on the training
  span and ``update`` to each origin. Quantiles from ``predict_quantiles`` (with the plan
  as ``X`` where columns are known ahead).
* ``HGB + X``: ``HistGradientBoostingRegressor(loss="quantile")``, one per level, on the
  change from the last observation, with the last observations (values and ages), the
  lead, and per covariate its last value, sums over past windows and, when known ahead,
  its sum up to the target time and its value there; trained on the same training
  subjects (every origin they offer) or span. ``HGB`` is the same without covariates.
* ``AutoARIMA + X`` (regular sets): statsforecast's ``AutoARIMA`` with the covariates as
  regressors (us_change: lagged one quarter, as they are past only), fitted once on the
  training span and applied to each origin with ``forward``.
* ``naive``: last value (Chicago: the same weekday last week), with the quantiles of the
  training span's (or subjects') errors of that rule, per lead.

Metrics (one definition for all): MAE of the median; CRPS as 2 × the mean pinball loss
over levels 0.05, 0.10, ..., 0.95; empirical coverage of the 50/80/90/95 % central
intervals (quantiles 0.25-0.75, 0.1-0.9, 0.05-0.95, 0.025-0.975). The report
``benchmarks/results/covariates.md`` (and ``covariates.csv``) gives the issue's ratios
with pass/fail: CRPS of ``Levy + X`` over ``Levy`` (≤ 0.9 simulated, ≤ 0.95 remifentanil,
≤ 1.0 elsewhere) and over ``HGB + X`` (≤ 1.0).

statsforecast needs an environment of its own (see ``benchmarks/forecasters.py``); where it
cannot be imported the ARIMA rows are left out and the report says so. ``--quick`` (the
default) runs a small LevyForecaster budget on fewer origins and subjects to check the
script (a few minutes of CPU); ``--full`` runs everything above.
``--levy-params '{"max_steps": 150}'`` overrides the LevyForecaster settings of the run
(never the library's defaults)::

    OMP_NUM_THREADS=1 python -m benchmarks.covariates --full

``--ablation`` scores the same methods on inner splits of the training data instead
(:func:`ablation_problem`: the training subjects split 70/30 again, or the span before the
report's first origin), for choosing a change without looking at the reported subjects or
origins; write its report elsewhere with ``--results``.

``--plans`` asks whether σ stays honest when the plan changes (:func:`run_plans`; report
``covariates_plans.md``): ``Levy + X`` and ``Levy`` pretrained on the adults as for the
``simulated`` set, then at each meal origin of the adolescents forecast 30, 60 and 120 min
ahead (``max_horizon`` 120 min) under the plan as it happened and under each alternative plan
of :data:`PLANS_FILE` (that meal's bolus skipped; half its carbohydrate with the whole
meal's bolus), each scored against the CGM simulated under that plan; ``Levy`` cannot read a
plan, so its one forecast per origin meets every plan's outcome; ``HGB + X`` (trained on the
adults' tasks at the same leads) reads the plan in its features. Per plan: CRPS, coverage,
the intervals' mean widths, and how far the plan moved the forecast median and the
outcome::

    OMP_NUM_THREADS=1 python -m benchmarks.covariates --full --plans \
        --levy-params '{"max_steps": 10}'

``--missed-bolus-adults`` pretrains the ``simulated`` set (and ``--plans``) on the adults of
:data:`MISSED_BOLUS_FILE` instead: the same ten adults whose meal boluses are each skipped
with probability 0.25, so that insulin no longer always comes with a meal and sized to it
(the question a plan without a bolus asks is then in the data).
"""

from __future__ import annotations

import argparse
import json
import shlex
import time
import warnings
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
import pandas as pd
import torch
from sklearn.ensemble import HistGradientBoostingRegressor

from levy_sklearn import LevyForecaster
from levy_sklearn.datasets import (
    load_chicago,
    load_phenobarb,
    load_quinidine,
    load_remifentanil,
    load_simulated_glucose,
    load_us_change,
)
from levy_sklearn.metrics import interval_width

from ._common import (
    COVERAGES,
    CRPS_LEVELS,
    LEVELS,
    RESULTS,
    central_columns,
    interval_coverage,
    pinball,
    short_commit,
    stamp,
    write_report,
)

#: CRPS ratio of ``Levy + X`` over ``Levy`` that passes, per set (the issue's goals).
GOAL_WITHOUT = {"simulated": 0.9, "remifentanil": 0.95}
#: LevyForecaster's budget in this benchmark (``--levy-params`` overrides it): one network
#: and one calibration fold per pretraining, so that ``--full`` fits in 20 min on one core;
#: the library's ``max_steps``. Fewer steps (60) grew every batch eightfold on the larger
#: panels, cost more CPU and scored worse on the inner splits (``--ablation``; simulated
#: adults CRPS 22.4 → 15.3, 90 % coverage 0.64 → 0.83; benchmarks/results/covariates_notes.md,
#: "Budget").
FULL_LEVY = {"calibration_folds": 1}
QUICK_LEVY = {"max_steps": 20, "max_epochs": 2, "calibration_folds": 1}
SETS = ("us_change", "phenobarb", "quinidine", "remifentanil", "chicago", "simulated")
#: The simulated adolescents' meals re-simulated under alternative plans, written by
#: ``benchmarks/simglucose_cohorts.py --plans`` (its docstring has the command).
PLANS_FILE = Path(__file__).resolve().parent / "data" / "simglucose_plans.csv.gz"
#: The adults of ``--missed-bolus-adults``: the package's ten adults simulated again with
#: each meal bolus skipped with probability 0.25 (``benchmarks/simglucose_cohorts.py
#: --missed-bolus 0.25``; its docstring has the command).
MISSED_BOLUS_FILE = (
    Path(__file__).resolve().parent / "data" / "simglucose_adults_missed_bolus.csv.gz"
)
#: Where the ``simulated`` set's pretraining adults come from (``None``: the package's).
ADULTS_FILE: Path | None = None
HAPPENED = "as it happened"
#: ``--plans``' leads (rows of 3 min from the origin): the plans change glucose little in
#: the first hour (insulin acts slowly), clearly in the second.
PLAN_STEPS = {"30 min": 10, "60 min": 20, "120 min": 40}
#: The issue's goal per plan: each central interval's coverage within this of its level
#: (the 90 % interval: in [0.85, 0.95]).
COVERAGE_TOLERANCE = 0.05


# --------------------------------------------------------------------------- scoring
def quantile_crps(y: np.ndarray, q: np.ndarray, levels: np.ndarray = LEVELS) -> np.ndarray:
    """CRPS of each row from its quantiles: 2 × the mean pinball loss over the levels
    0.05, ..., 0.95 (the columns of ``q`` at :data:`CRPS_LEVELS`). A point forecast scores
    its absolute error, as the exact CRPS of a point mass does."""
    cols = [int(np.argmin(np.abs(levels - a))) for a in CRPS_LEVELS]
    return 2 * pinball(y, q[:, cols], levels[cols]).mean(axis=1)


def score(y: np.ndarray, q: np.ndarray, levels: np.ndarray = LEVELS) -> dict:
    """MAE of the median, quantile CRPS and the central intervals' coverage."""
    median = q[:, int(np.argmin(np.abs(levels - 0.5)))]
    out = {"n": len(y), "mae": float(np.mean(np.abs(y - median)))}
    out["crps"] = float(np.mean(quantile_crps(y, q, levels)))
    for c in COVERAGES:
        out[f"cov{round(100 * c)}"] = interval_coverage(y, q, c, levels)
    return out


def sorted_quantiles(q: np.ndarray) -> np.ndarray:
    """Quantiles made monotone across levels (independent per-level models may cross)."""
    return np.sort(q, axis=1)


# --------------------------------------------------------------------------- tasks
@dataclass
class Series:
    """One subject (or the one series of a regular set) on a float time axis."""

    key: object
    frame: pd.DataFrame  # the target column first, then the covariates, on the real index
    t: np.ndarray  # float times (set's unit)
    y: np.ndarray  # target, NaN where not observed
    X: np.ndarray  # (n, n_cov), NaN where not observed


@dataclass
class Problem:
    name: str
    target: str
    covariates: list
    known_ahead: list
    train: list  # Series
    test: list  # Series
    tasks: pd.DataFrame  # test: series index, origin row, target row, lead label
    train_tasks: pd.DataFrame
    windows: tuple  # past windows of the covariate sums (set's unit)
    n_lags: int
    levy: dict  # LevyForecaster settings of this set
    regular: bool = False
    seasonal_lag: int | None = None  # naive: same season's value (rows), else last value
    arima_season: int = 1
    notes: list = field(default_factory=list)


def _series(key, frame: pd.DataFrame, target: str, covariates: list, unit) -> Series:
    index = frame.index
    if isinstance(index, pd.PeriodIndex):
        t = np.arange(len(index), dtype=float)
    else:
        t = ((index - index[0]) / unit).to_numpy(float) if unit is not None else None
    return Series(key, frame, t, frame[target].to_numpy(float), frame[covariates].to_numpy(float))


def _split(panel: pd.DataFrame, fraction: float, seed: int) -> tuple[list, list]:
    keys = panel.index.get_level_values(0).unique().to_numpy()
    keys = keys[np.random.default_rng(seed).permutation(len(keys))]
    n = int(round(fraction * len(keys)))
    return sorted(keys[:n].tolist()), sorted(keys[n:].tolist())


def next_measurement_tasks(series: list, max_lead: float, label: str) -> pd.DataFrame:
    """From each target observation, the next one within ``max_lead``: (series, origin row,
    target row, lead label)."""
    rows = []
    for i, s in enumerate(series):
        obs = np.flatnonzero(~np.isnan(s.y))
        for a, b in zip(obs[:-1], obs[1:], strict=True):
            if s.t[b] - s.t[a] <= max_lead:
                rows.append((i, a, b, label))
    return pd.DataFrame(rows, columns=["series", "origin", "target", "lead"])


def lead_tasks(series: list, origins: dict, steps: dict) -> pd.DataFrame:
    """From each origin row of each series, the rows ``steps`` later (label: row offset)."""
    rows = [
        (i, o, o + k, label)
        for i, s in enumerate(series)
        for o in origins[i]
        for label, k in steps.items()
        if o + k < len(s.t)
    ]
    return pd.DataFrame(rows, columns=["series", "origin", "target", "lead"])


#: The longest lead of a next-measurement task, in the set's unit (min or h).
MAX_LEAD = {"remifentanil": 60, "quinidine": 48, "phenobarb": 72}


def _meal_origins(series: list) -> dict:
    """Per simulated patient, the reading just before each meal after the first day."""
    origins = {}
    for i, s in enumerate(series):
        cho = s.X[:, 0] > 0
        starts = np.flatnonzero(cho[1:] & ~cho[:-1]) + 1
        origins[i] = [o - 1 for o in starts if s.t[o - 1] >= 24 * 60]
    return origins


def _adults() -> pd.DataFrame:
    """The ``simulated`` set's pretraining adults, as
    :func:`~levy_sklearn.datasets.load_simulated_glucose` gives them: the package's, or
    those of :data:`ADULTS_FILE` (the same columns)."""
    if ADULTS_FILE is None:
        return load_simulated_glucose("adult")
    df = pd.read_csv(ADULTS_FILE)
    time = pd.to_timedelta(df["minute"].to_numpy(float), unit="min")
    index = pd.MultiIndex.from_arrays([df["patient"], time], names=["patient", "time"])
    columns = ["glucose", "CHO", "insulin"]
    return pd.DataFrame(df[columns].to_numpy(float), index=index, columns=columns).sort_index()


def load_problem(name: str, quick: bool, seed: int = 0) -> Problem:
    """The data, split and tasks of one set."""
    minute, hour = pd.Timedelta(minutes=1), pd.Timedelta(hours=1)
    if name == "simulated":
        cov = ["CHO", "insulin"]
        make = lambda panel: [  # noqa: E731
            _series(k, f.droplevel(0), "glucose", cov, minute) for k, f in panel.groupby(level=0)
        ]
        train, test = make(_adults()), make(load_simulated_glucose("adolescent"))
        if quick:  # pretraining with X on all ten adults alone takes minutes
            train, test = train[:4], test[:3]
        steps = {"30 min": 10, "60 min": 20}
        meal_origins = _meal_origins(test)
        stride = 6 if quick else 3  # training origins: every stride-th reading
        train_origins = {i: range(24, len(s.t), stride) for i, s in enumerate(train)}
        return Problem(
            name, "glucose", cov, cov, train, test,
            lead_tasks(test, meal_origins, steps), lead_tasks(train, train_origins, steps),
            windows=(30, 60, 120), n_lags=12,
            levy={"max_horizon": "60min", "context_length": "3h"},
        )  # fmt: skip
    if name in ("remifentanil", "quinidine", "phenobarb"):
        if name == "remifentanil":
            panel, cov, unit = load_remifentanil(include_rate=True), ["rate"], minute
            windows, horizon = (10, 30, 60), "60min"
        elif name == "quinidine":
            panel, cov, unit = load_quinidine(include_dose=True), ["dose", "interval"], hour
            windows, horizon = (12, 48, 168), "48h"
        else:
            panel, cov, unit = load_phenobarb(include_dose=True), ["dose"], hour
            windows, horizon = (12, 48, 168), "72h"
        known = ["rate"] if name == "remifentanil" else ["dose"]
        lead = MAX_LEAD[name]
        if name != "remifentanil":
            # A dose record's absence is a fact, not a gap: 0 at every other record, so
            # that a plan says "no dose before the next draw" (NaN there reads "no plan").
            panel = panel.assign(dose=panel["dose"].fillna(0.0))
        train_keys, test_keys = _split(panel, 0.7, seed)
        make = lambda keys: [  # noqa: E731
            _series(k, panel.loc[k], "conc", cov, unit) for k in keys
        ]
        train, test = make(train_keys), make(test_keys)
        label = f"next ≤ {lead} {'min' if unit == minute else 'h'}"
        tasks = next_measurement_tasks(test, lead, label)
        if quick:
            tasks = tasks[tasks.series < 8]
        return Problem(
            name, "conc", cov, known, train, test, tasks,
            next_measurement_tasks(train, lead, label), windows=windows, n_lags=3,
            levy={"max_horizon": horizon},
        )  # fmt: skip
    if name == "chicago":
        frame = load_chicago(include_covariates=True)
        cov = [c for c in frame.columns if c != "ridership"]
        s = _series("chicago", frame, "ridership", cov, pd.Timedelta(days=1))
        n_test = 728
        start = len(frame) - n_test
        origins = range(start - 1, len(frame) - 7, 28 if quick else 7)
        steps = {f"{k} d": k for k in range(1, 8)}
        train_origins = range(28, start - 7, 6 if quick else 2)
        return Problem(
            name, "ridership", cov, cov, [s], [s],
            lead_tasks([s], {0: origins}, steps), lead_tasks([s], {0: train_origins}, steps),
            windows=(7, 28), n_lags=14, levy={"max_horizon": 7}, regular=True,
            seasonal_lag=7, arima_season=7,
        )  # fmt: skip
    if name == "us_change":
        frame = load_us_change(include_covariates=True)
        cov = [c for c in frame.columns if c != "consumption"]
        s = _series("us_change", frame, "consumption", cov, None)
        start = len(frame) - 60
        origins = range(start - 1, len(frame) - 1, 3 if quick else 1)
        return Problem(
            name, "consumption", cov, [], [s], [s],
            lead_tasks([s], {0: origins}, {"1 q": 1}),
            lead_tasks([s], {0: range(8, start - 1)}, {"1 q": 1}),
            windows=(4,), n_lags=4, levy={"max_horizon": 4}, regular=True,
        )  # fmt: skip
    raise ValueError(f"unknown set {name!r}; choose among {list(SETS)}.")


#: Inner splits (``--ablation``) of the regular sets: how many of the steps before the
#: report's first origin are forecast, and the stride of those origins.
ABLATION_SPAN = {"chicago": (364, 7), "us_change": (40, 1)}


def ablation_problem(p: Problem, seed: int = 1) -> Problem:
    """The set's training data split again, for choosing a change without looking at the
    report's test subjects or origins.

    Panels: the training subjects split 70/30 (``_split``'s rule, ``seed``); the 70 %
    pretrain, the others are forecast with the report's tasks rule. Regular sets: the
    series up to the report's first origin, forecast at its last :data:`ABLATION_SPAN`
    steps (the report's leads) and trained before them (HGB: the report's stride).
    """
    if p.regular:
        s = p.test[0]
        stop = int(p.tasks.origin.min()) + 1
        unit = pd.Timedelta(days=1) if isinstance(s.frame.index, pd.DatetimeIndex) else None
        s = _series(s.key, s.frame.iloc[:stop], p.target, p.covariates, unit)
        n_test, stride = ABLATION_SPAN[p.name]
        start = stop - n_test
        steps = {lead: int(k) for lead, k in _lead_steps(p.tasks).items()}
        horizon = max(steps.values())
        first = int(p.train_tasks.origin.min())
        train_stride = int(np.diff(np.unique(p.train_tasks.origin))[0])
        tasks = lead_tasks([s], {0: range(start - 1, stop - horizon, stride)}, steps)
        train_tasks = lead_tasks([s], {0: range(first, start - horizon, train_stride)}, steps)
        return replace(p, train=[s], test=[s], tasks=tasks, train_tasks=train_tasks)
    keys = pd.Index([s.key for s in p.train])
    inner_keys, held_keys = _split(pd.DataFrame(index=keys), 0.7, seed)
    by_key = {s.key: s for s in p.train}
    train, test = [by_key[k] for k in inner_keys], [by_key[k] for k in held_keys]
    if p.name == "simulated":
        steps = _lead_steps(p.tasks)
        tasks = lead_tasks(test, _meal_origins(test), steps)
        train_tasks = lead_tasks(
            train, {i: range(24, len(s.t), 3) for i, s in enumerate(train)}, steps
        )
    else:
        label = p.tasks.lead.iloc[0]
        tasks = next_measurement_tasks(test, MAX_LEAD[p.name], label)
        train_tasks = next_measurement_tasks(train, MAX_LEAD[p.name], label)
    return replace(p, train=train, test=test, tasks=tasks, train_tasks=train_tasks)


def _lead_steps(tasks: pd.DataFrame) -> dict:
    """The row offset of each lead label of ``lead_tasks``' tasks."""
    steps = (tasks.target - tasks.origin).groupby(tasks.lead, sort=False).first()
    return steps.to_dict()


def observed(series: list, tasks: pd.DataFrame) -> np.ndarray:
    """The target value of each task."""
    return np.array([series[i].y[t] for i, t in zip(tasks.series, tasks.target, strict=True)])


# --------------------------------------------------------------------------- HGB
def features(s: Series, origin: int, target: int, p: Problem, with_x: bool) -> np.ndarray:
    """One task's row: the last ``n_lags`` observations (value relative to the last, age),
    the lead, and per covariate its last value, its sums over the past windows and, when
    known ahead, its sum up to the target time and its value there."""
    t0 = s.t[origin]
    obs = np.flatnonzero(~np.isnan(s.y[: origin + 1]))[-p.n_lags :]
    last = s.y[obs[-1]]
    values = np.full(p.n_lags, np.nan)
    ages = np.full(p.n_lags, np.nan)
    values[-len(obs) :] = s.y[obs] - last
    ages[-len(obs) :] = t0 - s.t[obs]
    row = [values, ages, [s.t[target] - t0, last]]
    if p.regular and isinstance(s.frame.index, pd.DatetimeIndex):
        row.append([s.frame.index[target].dayofweek])
    if with_x:
        for j, column in enumerate(p.covariates):
            x = s.X[:, j]
            seen = np.flatnonzero(~np.isnan(x[: origin + 1]))
            row.append([x[seen[-1]] if seen.size else np.nan])
            for w in p.windows:
                sel = (s.t > t0 - w) & (s.t <= t0)
                row.append([np.nansum(x[sel])])
            if column in p.known_ahead:
                sel = (s.t > t0) & (s.t <= s.t[target])
                upto = np.flatnonzero(~np.isnan(x[: target + 1]))
                row.append([np.nansum(x[sel]), x[upto[-1]] if upto.size else np.nan])
    return np.concatenate([np.asarray(r, float) for r in row])


def design(series: list, tasks: pd.DataFrame, p: Problem, with_x: bool):
    rows = [
        features(series[i], o, t, p, with_x)
        for i, o, t in zip(tasks.series, tasks.origin, tasks.target, strict=True)
    ]
    last = np.array([r[2 * p.n_lags + 1] for r in rows])
    target = observed(series, tasks)
    return np.vstack(rows), target, last


def hgb_quantiles(p: Problem, with_x: bool, seed: int) -> np.ndarray:
    X_te, _, last_te = design(p.test, p.tasks, p, with_x)
    return hgb_plan_quantiles(p, with_x, seed, {HAPPENED: (X_te, last_te)})[HAPPENED]


def hgb_plan_quantiles(p: Problem, with_x: bool, seed: int, designs: dict) -> dict:
    """One model per level trained on the training tasks, applied to each test design
    (features and last observation, as :func:`design` gives them) by name."""
    X_tr, y_tr, last_tr = design(p.train, p.train_tasks, p, with_x)
    out = {name: np.empty((len(X_te), len(LEVELS))) for name, (X_te, _) in designs.items()}
    for k, level in enumerate(LEVELS):
        model = HistGradientBoostingRegressor(loss="quantile", quantile=level, random_state=seed)
        model.fit(X_tr, y_tr - last_tr)
        for name, (X_te, last_te) in designs.items():
            out[name][:, k] = last_te + model.predict(X_te)
    return {name: sorted_quantiles(q) for name, q in out.items()}


def plan_design(p: Problem, plan) -> tuple[np.ndarray, np.ndarray]:
    """:func:`design` of the test tasks with each task's series under ``plan`` (a function
    as :func:`levy_plan_quantiles` takes) from its origin on."""
    rows = []
    for i, o, t in zip(p.tasks.series, p.tasks.origin, p.tasks.target, strict=True):
        s = p.test[i]
        X = s.X.copy()
        X[o + 1 : t + 1] = plan(s, o, t).to_numpy(float)
        rows.append(features(replace(s, X=X), o, t, p, True))
    return np.vstack(rows), np.array([r[2 * p.n_lags + 1] for r in rows])


# --------------------------------------------------------------------------- naive
def naive_quantiles(p: Problem) -> np.ndarray:
    """Last value (or last season's), plus the training tasks' error quantiles per lead."""

    def point(series, tasks):
        out = []
        for i, o, t in zip(tasks.series, tasks.origin, tasks.target, strict=True):
            s = series[i]
            if p.seasonal_lag is not None:
                back = t - p.seasonal_lag * int(np.ceil((t - o) / p.seasonal_lag))
                out.append(s.y[back])
            else:
                out.append(s.y[np.flatnonzero(~np.isnan(s.y[: o + 1]))[-1]])
        return np.array(out)

    train_point = point(p.train, p.train_tasks)
    train_y = observed(p.train, p.train_tasks)
    test_point = point(p.test, p.tasks)
    out = np.empty((len(p.tasks), len(LEVELS)))
    for lead in p.tasks.lead.unique():
        errors = (train_y - train_point)[(p.train_tasks.lead == lead).to_numpy()]
        sel = (p.tasks.lead == lead).to_numpy()
        out[sel] = test_point[sel, None] + np.nanquantile(errors, LEVELS)[None, :]
    return out


# --------------------------------------------------------------------------- AutoARIMA
def full_rank_columns(X: np.ndarray) -> list[int]:
    """Columns of ``X`` kept in order while each adds to the rank (ARIMA's regression
    refuses collinear regressors, e.g. a day's mean temperature beside its extremes and
    their change); columns with a missing value are left out."""
    keep: list[int] = []
    for j in range(X.shape[1]):
        if np.isnan(X[:, j]).any():
            continue
        trial = X[:, [*keep, j]]
        if np.linalg.matrix_rank(trial - trial.mean(axis=0)) == len(keep) + 1:
            keep.append(j)
    return keep


def arima_quantiles(p: Problem) -> np.ndarray | None:
    """statsforecast AutoARIMA with the covariates as regressors (past-only ones lagged by
    the lead); ``None`` without statsforecast."""
    try:
        from statsforecast.models import AutoARIMA
    except ImportError:
        return None
    from scipy.stats import norm

    s = p.test[0]
    horizon = int((p.tasks.target - p.tasks.origin).max())
    lag = 0 if p.known_ahead else horizon
    first = int(p.tasks.origin.min())
    start = max(lag, 0)
    X = pd.DataFrame(s.X[:, full_rank_columns(s.X[: first + 1])]).shift(lag).to_numpy(float)
    model = AutoARIMA(season_length=p.arima_season)
    model.fit(s.y[start : first + 1], X=X[start : first + 1])
    out = np.empty((len(p.tasks), len(LEVELS)))
    for origin in sorted(p.tasks.origin.unique()):
        fc = model.forward(
            s.y[start : origin + 1],
            h=horizon,
            X=X[start : origin + 1],
            X_future=X[origin + 1 : origin + 1 + horizon],
            level=[68.27],
        )
        mean = np.asarray(fc["mean"], float)
        sd = (np.asarray(fc["hi-68.27"], float) - np.asarray(fc["lo-68.27"], float)) / 2
        sel = (p.tasks.origin == origin).to_numpy()
        steps = (p.tasks.target - p.tasks.origin).to_numpy()[sel] - 1
        out[sel] = mean[steps, None] + sd[steps, None] * norm.ppf(LEVELS)[None, :]
    return out


# --------------------------------------------------------------------------- LevyForecaster
def _panel(series: list, columns: list) -> pd.DataFrame:
    return pd.concat({s.key: s.frame[columns] for s in series}, names=["subject", "time"])


def levy_quantiles(p: Problem, with_x: bool, params: dict, seed: int) -> tuple[np.ndarray, dict]:
    """Quantiles of every task (with the plan as it happened as ``X``), and the seconds spent
    training and forecasting."""
    q, seconds = levy_plan_quantiles(p, with_x, params, seed, {HAPPENED: happened_plan(p)})
    return q[HAPPENED], seconds


def happened_plan(p: Problem):
    """The plan as it happened: the known-ahead covariates of the series after the origin."""
    return lambda s, origin, stop: s.frame[p.covariates].iloc[origin + 1 : stop + 1]


def levy_plan_quantiles(
    p: Problem, with_x: bool, params: dict, seed: int, plans: dict
) -> tuple[dict, dict]:
    """Quantiles of every task under each plan, by the plan's name, and the seconds spent
    training and forecasting.

    ``plans`` maps a name to a function of (series, origin row, last target row) that gives
    the covariates from the row after the origin to the last target under that plan; at
    each origin one fitted forecaster answers every plan (``predict_quantiles(fh, X=plan)``).
    Without ``X`` (or without known-ahead columns) the forecast cannot see the plan: the
    same quantiles stand for every plan.
    """
    settings = {"random_state": seed, **p.levy, **params}
    if with_x:
        settings["known_ahead"] = list(p.known_ahead) or None
    forecaster = LevyForecaster(**settings)
    seconds = {"train_s": 0.0, "forecast_s": 0.0}
    t_start = time.perf_counter()
    if not p.regular:
        y = _panel(p.train, [p.target])
        forecaster.pretrain(y, X=_panel(p.train, p.covariates) if with_x else None)
    seconds["train_s"] = time.perf_counter() - t_start
    out = {name: np.full((len(p.tasks), len(LEVELS)), np.nan) for name in plans}
    t_forecast = time.perf_counter()
    for i, tasks in p.tasks.groupby("series"):
        s = p.test[i]
        y, X = s.frame[[p.target]], s.frame[p.covariates]
        origins = sorted(tasks.origin.unique())
        t_fit = time.perf_counter()
        forecaster.fit(y.iloc[: origins[0] + 1], X=X.iloc[: origins[0] + 1] if with_x else None)
        if p.regular:  # the training of a regular set is this fit
            seconds["train_s"] += time.perf_counter() - t_fit
            t_forecast = time.perf_counter()
        last = origins[0]
        for origin in origins:
            if origin > last:
                new = slice(last + 1, origin + 1)
                forecaster.update(
                    y.iloc[new], X=X.iloc[new] if with_x else None, update_params=False
                )
                last = origin
            sel = ((p.tasks.series == i) & (p.tasks.origin == origin)).to_numpy()
            targets = p.tasks.target[sel].to_numpy()
            if p.regular:
                fh = (targets - origin).tolist()
            else:
                # Leads from the cutoff (sktime reads a TimedeltaIndex fh as leads).
                fh = y.index[targets] - y.index[origin]
            q = None
            for name, plan in plans.items():
                if q is None or (with_x and p.known_ahead):
                    future = plan(s, origin, targets.max()) if with_x and p.known_ahead else None
                    q = forecaster.predict_quantiles(fh=fh, X=future, alpha=LEVELS.tolist())
                    if not q.index.equals(y.index[targets]):
                        raise RuntimeError(f"forecast times {q.index} are not the targets'")
                out[name][sel] = q.to_numpy(float)
    seconds["forecast_s"] = time.perf_counter() - t_forecast
    return {name: sorted_quantiles(q) for name, q in out.items()}, seconds


# --------------------------------------------------------------------------- run
def run_set(
    name: str, quick: bool, params: dict, seed: int, ablation: bool = False
) -> pd.DataFrame:
    p = load_problem(name, quick, seed)
    if ablation:
        p = ablation_problem(p)
    y = observed(p.test, p.tasks)
    print(f"{name}: {len(p.tasks)} test tasks, {len(p.train_tasks)} training tasks", flush=True)
    forecasts = {}
    errors = {}
    for with_x in (True, False):
        method = "Levy + X" if with_x else "Levy"
        try:
            forecasts[method] = levy_quantiles(p, with_x, params, seed)
        except Exception as error:  # a refusal is a result: the report names it
            errors[method] = f"{type(error).__name__}: {error}"
            forecasts[method] = (np.full((len(y), len(LEVELS)), np.nan), {})
        print(f"  {method}: {forecasts[method][1]} {errors.get(method, '')}", flush=True)
    for with_x in (True, False):
        t0 = time.perf_counter()
        q = hgb_quantiles(p, with_x, seed)
        forecasts["HGB + X" if with_x else "HGB"] = (q, {"train_s": time.perf_counter() - t0})
    if p.regular:
        t0 = time.perf_counter()
        q = arima_quantiles(p)
        if q is not None:
            forecasts["AutoARIMA + X"] = (q, {"train_s": time.perf_counter() - t0})
    forecasts["naive"] = (naive_quantiles(p), {})
    rows = []
    for method, (q, seconds) in forecasts.items():
        for lead in ["all", *p.tasks.lead.unique()]:
            sel = np.ones(len(y), bool) if lead == "all" else (p.tasks.lead == lead).to_numpy()
            rows.append(
                {
                    "set": name,
                    "lead": lead,
                    "method": method,
                    **score(y[sel], q[sel]),
                    **seconds,
                    "error": errors.get(method, ""),
                }
            )
        print(f"  {method}: {rows[-len(p.tasks.lead.unique()) - 1]}", flush=True)
    return pd.DataFrame(rows)


def verdicts(table: pd.DataFrame) -> pd.DataFrame:
    """The issue's ratios per set (all leads pooled) with pass/fail."""
    pooled = table[table.lead == "all"].set_index(["set", "method"])["crps"]
    rows = []
    for name in pooled.index.get_level_values("set").unique():
        c = pooled.loc[name]
        goal = GOAL_WITHOUT.get(name, 1.0)
        r_without = c["Levy + X"] / c["Levy"]
        r_hgb = c["Levy + X"] / c["HGB + X"]
        rows.append(
            {
                "set": name,
                "Levy+X / Levy": r_without,
                "goal": f"≤ {goal}",
                "pass": "yes" if r_without <= goal else "no",
                "Levy+X / HGB+X": r_hgb,
                "pass (≤ 1.0)": "yes" if r_hgb <= 1.0 else "no",
                "HGB+X / HGB": c["HGB + X"] / c["HGB"],
            }
        )
    return pd.DataFrame(rows)


def report(table: pd.DataFrame, mode: str, params: dict, seconds: float, command: str) -> str:
    show = table.drop(columns=[c for c in ("train_s", "forecast_s") if c in table])
    times = table[table.lead == "all"].pivot_table(
        index="set", columns="method", values="train_s", sort=False
    )
    arima = "AutoARIMA + X" in set(table.method)
    text = [
        "# Covariates: LevyForecaster with and without X, beside its peers\n",
        f"Produced by `benchmarks/covariates.py` ({stamp(short_commit())}), {mode}, in "
        f"{seconds / 60:.1f} min on one thread: `{command}`. LevyForecaster settings over "
        f"each set's own (`max_horizon`, context): `{json.dumps(params)}`. The protocol "
        "(splits, origins, features, metrics) is the script's docstring.\n",
        "CRPS: 2 × mean pinball loss over levels 0.05–0.95 (the same quantiles for every "
        "method); MAE of the median; cov*: coverage of the central 50/80/90/95 % interval.\n",
        "## The issue's ratios (CRPS, all leads pooled)\n",
        verdicts(table).to_markdown(index=False, floatfmt=".3f") + "\n",
    ]
    if not arima:
        text.append(
            "statsforecast could not be imported, so AutoARIMA + X is missing on the "
            "regular sets.\n"
        )
    text += [
        "## Scores per set and lead\n",
        show.to_markdown(index=False, floatfmt=".3f") + "\n",
        "## Training seconds (LevyForecaster: pretraining, or the fit on a regular set)\n",
        times.reset_index().to_markdown(index=False, floatfmt=".1f") + "\n",
    ]
    return "\n".join(text)


# --------------------------------------------------------------------------- plans
def load_plans(path: Path = PLANS_FILE) -> dict:
    """The alternative plans' outcomes by (plan, patient, origin minute): from the step
    after the origin, ``glucose``, ``CHO`` and ``insulin`` on the time index of
    :func:`~levy_sklearn.datasets.load_simulated_glucose` (time since midnight of day 0)."""
    frame = pd.read_csv(path)
    out = {}
    for (plan, patient, origin), part in frame.groupby(["plan", "patient", "origin"]):
        index = pd.to_timedelta(part["minute"].to_numpy(float), unit="min").rename("time")
        out[plan, patient, int(origin)] = part[["glucose", "CHO", "insulin"]].set_axis(index)
    return out


def plan_problem(p: Problem, outcomes: dict) -> tuple[Problem, dict, dict]:
    """The simulated set at its meal origins with :data:`PLAN_STEPS`' leads (HGB's training
    tasks too, at the set's stride), each task's
    covariates under every plan (functions for :func:`levy_plan_quantiles`) and its
    target under every plan, by plan name (:data:`HAPPENED` first)."""
    step = p.test[0].t[1] - p.test[0].t[0]  # minutes between readings
    stride = int(np.diff(np.unique(p.train_tasks.origin))[0])
    p = replace(
        p,
        tasks=lead_tasks(p.test, _meal_origins(p.test), PLAN_STEPS),
        train_tasks=lead_tasks(
            p.train, {i: range(24, len(s.t), stride) for i, s in enumerate(p.train)}, PLAN_STEPS
        ),
        levy={**p.levy, "max_horizon": f"{max(PLAN_STEPS.values()) * step:g}min"},
    )
    names = sorted({plan for plan, _, _ in outcomes})

    def outcome(name, s, origin):
        key = (name, s.key, int(round(s.t[origin])))
        if key not in outcomes:
            raise KeyError(f"{PLANS_FILE.name} has no plan {key}; rerun its command")
        return outcomes[key]

    plans = {HAPPENED: happened_plan(p)}
    targets = {HAPPENED: observed(p.test, p.tasks)}
    for name in names:
        plans[name] = lambda s, origin, stop, name=name: outcome(name, s, origin).loc[
            : s.frame.index[stop], p.covariates
        ]
        targets[name] = np.array(
            [
                outcome(name, p.test[i], o).at[p.test[i].frame.index[t], "glucose"]
                for i, o, t in zip(p.tasks.series, p.tasks.origin, p.tasks.target, strict=True)
            ]
        )
    return p, plans, targets


def meets_coverage_goal(row: dict, tolerance: float = COVERAGE_TOLERANCE) -> bool:
    """Whether every central interval's coverage (``cov50`` ...) is within ``tolerance``
    of its level: the issue's goal per plan. Coverages are shares of counts, so a share
    on the bound (0.55 of 20 tasks) meets it despite its rounding."""
    return all(abs(row[f"cov{round(100 * c)}"] - c) <= tolerance + 1e-9 for c in COVERAGES)


def plan_scores(
    y: dict, q: dict, lead: np.ndarray, levels: np.ndarray = LEVELS, base: str = HAPPENED
) -> pd.DataFrame:
    """Per plan and lead (and all leads pooled): :func:`score`, the mean width of the 50 and
    90 % central intervals, whether the coverages meet :func:`meets_coverage_goal`, and
    how far the plan moves the median and the outcome from plan ``base`` (mean over the
    tasks of plan minus base)."""
    mid = int(np.argmin(np.abs(levels - 0.5)))
    rows = []
    for name in y:
        for label in ["all", *pd.unique(lead)]:
            sel = np.ones(len(lead), bool) if label == "all" else lead == label
            qs = q[name][sel]
            row = {"plan": name, "lead": label, **score(y[name][sel], qs, levels)}
            for c in (0.5, 0.9):
                lo, hi = central_columns(c, levels)
                row[f"width{round(100 * c)}"] = interval_width(qs[:, lo], qs[:, hi])
            row["goal met"] = "yes" if meets_coverage_goal(row) else "no"
            row["median shift"] = float(np.mean(qs[:, mid] - q[base][sel, mid]))
            row["outcome shift"] = float(np.mean(y[name][sel] - y[base][sel]))
            rows.append(row)
    return pd.DataFrame(rows)


def run_plans(quick: bool, params: dict, seed: int) -> tuple[pd.DataFrame, dict]:
    """``Levy + X`` and ``Levy`` pretrained as the simulated set has them, and the peer
    ``HGB + X`` trained on the adults' tasks at the same leads, scored at each meal origin
    under every plan of :data:`PLANS_FILE` against the outcome simulated under it; the
    forecasters' seconds by method."""
    p, plans, y = plan_problem(load_problem("simulated", quick, seed), load_plans())
    print(f"plans: {len(p.tasks)} tasks x {len(plans)} plans", flush=True)
    forecasts, seconds = {}, {}
    for with_x in (True, False):
        method = "Levy + X" if with_x else "Levy"
        forecasts[method], seconds[method] = levy_plan_quantiles(p, with_x, params, seed, plans)
        print(f"  {method}: {seconds[method]}", flush=True)
    t0 = time.perf_counter()
    designs = {name: plan_design(p, plan) for name, plan in plans.items()}
    forecasts["HGB + X"] = hgb_plan_quantiles(p, True, seed, designs)
    seconds["HGB + X"] = {"train_s": time.perf_counter() - t0}
    parts = []
    for method, q in forecasts.items():
        parts.append(plan_scores(y, q, p.tasks.lead.to_numpy()))
        parts[-1].insert(0, "method", method)
    return pd.concat(parts, ignore_index=True), seconds


def plans_report(
    table: pd.DataFrame, mode: str, params: dict, seconds: dict, total: float, command: str
) -> str:
    """The ``--plans`` report: coverage per plan."""
    pooled = table[table.lead == "all"]
    text = [
        "# Covariates: coverage per plan (simulated adolescents near meals)\n",
        f"Produced by `benchmarks/covariates.py` ({stamp(short_commit())}), {mode} `--plans`, "
        f"in {total / 60:.1f} min on one thread: `{command}`. LevyForecaster settings over "
        f"the simulated set's own: `{json.dumps(params)}`, and `max_horizon` for the "
        f"longest of the leads {', '.join(PLAN_STEPS)}.\n",
        "Pretrained on the adults as the `simulated` set is"
        + (f" (those of `{MISSED_BOLUS_FILE.name}`)" if ADULTS_FILE is not None else "")
        + ", then at each meal origin of the "
        "adolescents (never pretrained on) forecast under the plan as it happened and under "
        "each alternative plan of `benchmarks/data/simglucose_plans.csv.gz` (the same "
        "patient re-simulated from the state at the origin, same sensor noise, only that "
        "meal's plan changed; `benchmarks/simglucose_cohorts.py`), each scored against the "
        "CGM simulated under that plan. `Levy + X` reads the plan "
        "(`predict_quantiles(fh, X=plan)`); `Levy` cannot, so its one forecast per origin "
        "is scored against every plan's outcome (σ without the covariates). `HGB + X`: the "
        "set's peer (quantile HistGradientBoosting on lags and the covariates, the plan's "
        "among them), trained on the adults' plans as they happened.\n",
        "Goal (issue 54): per plan, 90 % coverage in [0.85, 0.95] and 50/80/95 % within "
        f"±{COVERAGE_TOLERANCE}. width50/width90: mean width of those intervals (mg/dL). "
        "median shift / outcome shift: mean change of the forecast median / of the "
        f"simulated CGM from the plan {HAPPENED!r}, over the same tasks.\n",
        "## All leads pooled\n",
        pooled.drop(columns="lead").to_markdown(index=False, floatfmt=".3f") + "\n",
        "## Per lead\n",
        table[table.lead != "all"].to_markdown(index=False, floatfmt=".3f") + "\n",
        "## Seconds\n",
        pd.DataFrame(seconds)
        .T.rename_axis("method")
        .reset_index()
        .to_markdown(index=False, floatfmt=".1f")
        + "\n",
    ]
    return "\n".join(text)


def main() -> None:
    import sys

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--quick", action="store_true", help="a short check (the default)")
    mode.add_argument("--full", action="store_true", help="the whole protocol")
    parser.add_argument("--sets", default=",".join(SETS), help="these sets only")
    parser.add_argument("--results", default=str(RESULTS), help="folder of the CSV and report")
    parser.add_argument("--levy-params", default="{}", help="LevyForecaster settings, as JSON")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--plans",
        action="store_true",
        help="coverage per plan on the simulated set (run_plans) instead of the sets; the "
        "report goes to covariates_plans.md in --results",
    )
    parser.add_argument(
        "--missed-bolus-adults",
        action="store_true",
        help="the simulated set pretrains on the adults of MISSED_BOLUS_FILE (a meal bolus "
        "skipped now and then) instead of the package's",
    )
    parser.add_argument(
        "--ablation",
        action="store_true",
        help="score the inner splits of the training data (ablation_problem), never the "
        "report's test subjects or origins; the report goes to --results",
    )
    args = parser.parse_args()
    global ADULTS_FILE  # the simulated set's adults, for every load of it in this run
    ADULTS_FILE = MISSED_BOLUS_FILE if args.missed_bolus_adults else None
    torch.set_num_threads(1)
    # sktime's and the optimiser's warnings would drown the progress lines.
    warnings.simplefilter("ignore")
    quick = not args.full
    params = json.loads(args.levy_params)
    if quick:
        params = {**QUICK_LEVY, **params}
    else:
        params = {**FULL_LEVY, **params}
    results = Path(args.results)
    results.mkdir(parents=True, exist_ok=True)
    command = "python -m benchmarks.covariates " + shlex.join(sys.argv[1:])
    mode_text = "`--quick`" if quick else "`--full`"
    if args.ablation:
        mode_text += " `--ablation` (inner splits of the training data)"
    t0 = time.perf_counter()
    if args.plans:
        table, seconds = run_plans(quick, params, args.seed)
        text = plans_report(table, mode_text, params, seconds, time.perf_counter() - t0, command)
        write_report(text, results / "covariates_plans.md", echo=True)
        return
    parts = []
    for name in args.sets.split(","):
        parts.append(run_set(name, quick, params, args.seed, args.ablation))
        table = pd.concat(parts, ignore_index=True)  # written after each set: a partial run
        table.to_csv(results / "covariates.csv", index=False, float_format="%.4g")
        text = report(table, mode_text, params, time.perf_counter() - t0, command)
        write_report(text, results / "covariates.md", echo=False)
    print(text)


if __name__ == "__main__":
    main()
