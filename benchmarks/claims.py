"""The paper's claims, side by side: Lévy attention against its twins and peers on real data.

Every dataset becomes supervised rows of lagged observations: the target is one observation of
the target channel (at its own time ``t``), the features are the latest observation of every
channel in each lag bin ``(a, b]`` before ``t`` (``NaN`` when the bin is empty) with
``feature_times`` the bin centres (negative), so a regular series gives ordinary lags and an
irregular one a continuous-time window. The sparsity sweep keeps 100 / 50 / 20 / 10 % of the
underlying observations at random (:func:`levy_sklearn.datasets.make_irregular`, seeded)
*before* windowing, so features and targets thin out alike. Rows are split in time
(60 / 20 / 20 % train / calibration / test; panels by subject), capped by even striding, and
identical for every method of a (dataset, keep, seed) cell.

Methods (same network, same training budget, seeds matched): ``levy`` (``attention="levy"``,
mean and σ in one pass); ``softmax`` (the twin, ``attention="softmax"``, its variance head);
``mc_dropout`` (20 dropout passes of the twin, σ = spread of the passes, no variance head) and
``mc_dropout+head`` (the same spread plus the twin's deterministic variance head);
``ensemble`` (5 softmax twins, Gaussian-mixture moments; the first member is the twin);
``levy_sampler50`` (50 Poisson draws of the Lévy output layer, sample CRPS); peers
``hgb_enbpi`` (MAPIE ``TimeSeriesRegressor`` EnbPI around ``HistGradientBoostingRegressor`` on
the same rows) and, on regular series at 100 % keep, sktime forecasters one step ahead.

Writes ``benchmarks/results/claims.md`` (``--full``) or ``claims_fast.md`` (``--fast``) with
PNG figures, and a claims section computed from the table by the rules in :func:`claims`.

Run: ``OMP_NUM_THREADS=1 python -m benchmarks.claims --fast`` (≤ 5 min) or ``--full``
(``--workers 2``).
"""

from __future__ import annotations

import argparse
import statistics
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import torch
from joblib import Parallel, delayed
from scipy import stats

from levy_sklearn.conformal import conformal_interval, fit_conformal
from levy_sklearn.datasets import (
    load_co2,
    load_glucose,
    load_lynx,
    load_remifentanil,
    load_solar,
    make_irregular,
    make_irregular_vitals,
)
from levy_sklearn.metrics import (
    aurc,
    gaussian_crps,
    gaussian_interval,
    interval_coverage,
    interval_width,
    risk_coverage_curve,
    sample_crps,
    spearman_uncertainty,
)
from levy_sklearn.regressor import LevyAttentionRegressor

from ._common import RESULTS, short_commit, stamp, write_report

COVERAGE = 0.9
Z90 = float(stats.norm.ppf(0.5 + COVERAGE / 2))
MSE_TOLERANCE = 1.056  # claim (1): "at most 5.6% accuracy lost"
COVERAGE_TOLERANCE = 0.02  # claim (5): "within ±2 points"
MIN_TRAIN_ROWS, MIN_HELD_OUT_ROWS = 20, 10
SPLIT = (0.6, 0.2, 0.2)
N_ENSEMBLE, N_MC_PASSES, N_SAMPLER_DRAWS = 5, 20, 50
STD_FLOOR = 1e-9  # relative to the target's scale: a sampler's spread can be exactly 0

MODES = {
    "fast": {
        "datasets": ["co2", "remifentanil", "vitals"],
        "keeps": [1.0, 0.2],
        "seeds": [0],
        "max_epochs": 10,
        "caps": (300, 100, 100),
        "timing_repeats": 1,
    },
    "full": {
        "datasets": ["co2", "sst", "glucose", "remifentanil", "vitals", "solar", "lynx"],
        "keeps": [1.0, 0.5, 0.2, 0.1],
        "seeds": [0, 1, 2, 3, 4],
        "max_epochs": 16,
        "caps": (300, 100, 100),
        "timing_repeats": 3,
    },
}
# The network and training budget every neural method shares: one encoder block, so that
# dropout, and hence MC dropout, acts; fewer epochs than the regressor's default 40 to fit
# the time budget.
NETWORK = {
    "d_model": 32,
    # 4 heads (value width 8) by benchmarks/ablation_sigma.py, on seeds 5-6 (not reported here).
    "n_heads": 4,
    "n_layers": 1,
    "dropout": 0.1,
    "lr": 5e-3,
    "batch_size": 64,
}


# ---------------------------------------------------------------------------
# data: observation histories -> rows of lag bins
# ---------------------------------------------------------------------------
@dataclass(frozen=True)
class Dataset:
    """How to load one dataset and turn its observations into lag-bin rows.

    ``load`` returns a pandas series or panel that :func:`make_irregular` can thin;
    ``edges`` are the lag-bin edges (in ``stays``' time unit), ``target`` the target column,
    ``normalise`` subtracts each row's mean observed lag from its features and target (for
    series whose level drifts out of the training range: trends, seasons).
    """

    load: Callable[[], pd.Series | pd.DataFrame]
    edges: np.ndarray
    real: bool
    regular: bool
    target: int = 0
    normalise: bool = False
    unit: str = ""


def _lags(step: float, n_lags: int) -> np.ndarray:
    """Bin edges ``(k − ½, k + ½] · step`` for lags ``k = 1 … n_lags`` of a regular series."""
    return step * (np.arange(n_lags + 1) + 0.5)


def _load_sst() -> pd.Series:
    """Half-hourly sea surface temperature (bokeh-sampledata; about 19,000 readings)."""
    from bokeh_sampledata.sea_surface_temperature import sea_surface_temperature

    return sea_surface_temperature["temperature"].astype(float)


def _load_vitals() -> pd.DataFrame:
    return make_irregular_vitals(n_patients=100, n_channels=3, random_state=0, time_as="float")


DATASETS = {
    "co2": Dataset(load_co2, _lags(7.0, 16), True, True, normalise=True, unit="days"),
    "sst": Dataset(_load_sst, _lags(30.0, 12), True, True, normalise=True, unit="minutes"),
    "glucose": Dataset(load_glucose, _lags(5.0, 12), True, False, unit="minutes"),
    "remifentanil": Dataset(
        lambda: load_remifentanil(time_as="float"),
        np.array([0.0, 1, 2, 4, 8, 16, 32, 64, 128]),
        True,
        False,
        unit="minutes",
    ),
    "vitals": Dataset(_load_vitals, np.arange(7.0), False, False, target=1, unit="hours"),
    "solar": Dataset(load_solar, _lags(30.0, 12), True, True, unit="minutes"),
    "lynx": Dataset(lambda: np.log10(load_lynx()), _lags(1.0, 10), True, True, unit="years"),
}


def _series_times(index: pd.Index, unit: str) -> np.ndarray:
    """Float times of an index: datetimes in ``unit`` since the start, periods as ordinals."""
    if isinstance(index, pd.PeriodIndex):
        return index.asi8.astype(float)
    seconds = {"minutes": 60.0, "hours": 3600.0, "days": 86400.0}[unit]
    return (index - index[0]).total_seconds().to_numpy() / seconds


def to_stays(data: pd.Series | pd.DataFrame, unit: str) -> list[tuple[np.ndarray, np.ndarray]]:
    """``(times, values (n, C))`` per subject (one for a plain series), sorted in time."""
    if isinstance(data.index, pd.MultiIndex):
        return [
            (
                stay.index.get_level_values(-1).to_numpy(dtype=float),
                stay.to_numpy(dtype=float),
            )
            for _, stay in data.groupby(level=0, sort=True)
        ]
    values = data.to_numpy(dtype=float).reshape(len(data), -1)
    return [(_series_times(data.index, unit), values)]


def lag_rows(
    stays: list[tuple[np.ndarray, np.ndarray]], target: int, edges: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Rows of lag bins: features, target and subject per observation of the target channel.

    Feature ``(c, k)`` of the row for a target observed at ``t`` is the latest observation of
    channel ``c`` with lag ``t − s`` in ``(edges[k], edges[k + 1]]``, ``NaN`` if none.
    Columns are channel-major: column ``c · K + k``.

    Examples
    --------
    >>> times, values = np.arange(4.0), np.array([[1.0], [np.nan], [3.0], [4.0]])
    >>> X, y, _ = lag_rows([(times, values)], 0, np.array([0.5, 1.5, 2.5]))
    >>> X.tolist(), y.tolist()
    [[nan, nan], [nan, 1.0], [3.0, nan]]
    """
    n_bins = len(edges) - 1
    X_parts, y_parts, group_parts = [], [], []
    for group, (times, values) in enumerate(stays):
        is_target = ~np.isnan(values[:, target])
        t_target = times[is_target]
        features = np.full((t_target.size, values.shape[1], n_bins), np.nan)
        for c in range(values.shape[1]):
            seen = ~np.isnan(values[:, c])
            t_c, v_c = times[seen], values[seen, c]
            if t_c.size == 0:
                continue
            for k in range(n_bins):
                # latest observation before t − edges[k], kept if not before t − edges[k+1]
                last = np.searchsorted(t_c, t_target - edges[k], side="left") - 1
                hit = last >= 0
                hit[hit] = t_c[last[hit]] >= t_target[hit] - edges[k + 1]
                features[hit, c, k] = v_c[last[hit]]
        X_parts.append(features.reshape(t_target.size, values.shape[1] * n_bins))
        y_parts.append(values[is_target, target])
        group_parts.append(np.full(t_target.size, group))
    return np.concatenate(X_parts), np.concatenate(y_parts), np.concatenate(group_parts)


def feature_times(edges: np.ndarray, n_channels: int) -> np.ndarray:
    """Bin centres as negative times, one per column of :func:`lag_rows`."""
    return -np.tile((edges[:-1] + edges[1:]) / 2, n_channels)


def _stride(index: np.ndarray, cap: int) -> np.ndarray:
    """At most ``cap`` rows, evenly spaced (keeps the time order and the span)."""
    if index.size <= cap:
        return index
    return index[np.unique(np.linspace(0, index.size - 1, cap).round().astype(int))]


def split_rows(groups: np.ndarray, caps: tuple[int, int, int]) -> list[np.ndarray]:
    """Train / calibration / test row indices: in time for one series, by subject for panels."""
    n_groups = int(groups.max()) + 1
    if n_groups == 1:
        key, n = np.arange(groups.size), groups.size
    else:
        key, n = groups, n_groups
    bounds = np.round(np.cumsum((0.0,) + SPLIT) * n).astype(int)
    return [
        _stride(np.flatnonzero((key >= lo) & (key < hi)), cap)
        for lo, hi, cap in zip(bounds[:-1], bounds[1:], caps, strict=True)
    ]


def make_cell_data(name: str, raw, keep: float, seed: int, caps: tuple[int, int, int]):
    """Thin, window, normalise and split one (dataset, keep, seed) cell."""
    spec = DATASETS[name]
    thinned = raw if keep == 1.0 else make_irregular(raw, keep=keep, random_state=seed)
    stays = to_stays(thinned, spec.unit)
    X, y, groups = lag_rows(stays, spec.target, spec.edges)
    if spec.normalise:
        seen = ~np.isnan(X).all(axis=1)  # a row with no history has no level to subtract
        X, y, groups = X[seen], y[seen], groups[seen]
        offset = np.nanmean(X, axis=1)
        X, y = X - offset[:, None], y - offset
    parts = split_rows(groups, caps)
    times = feature_times(spec.edges, stays[0][1].shape[1])
    return [(X[p], y[p]) for p in parts], times


# ---------------------------------------------------------------------------
# methods and metrics
# ---------------------------------------------------------------------------
def _timed(fn: Callable, repeats: int):
    """``fn()``'s result and its median wall time over ``repeats`` calls."""
    seconds = []
    for _ in range(repeats):
        start = time.perf_counter()
        out = fn()
        seconds.append(time.perf_counter() - start)
    return out, statistics.median(seconds)


def _point_scores(y, mean, std, lower, upper) -> dict[str, float]:
    """MSE, MAE, Gaussian CRPS, ranking of |error| by σ, and a (conformal) 90 % interval."""
    errors = np.abs(y - mean)
    return {
        "mse": float(np.mean(errors**2)),
        "mae": float(np.mean(errors)),
        "crps": gaussian_crps(y, mean, std),
        "cov_conf": interval_coverage(y, lower, upper),
        "width_conf": interval_width(lower, upper),
        "spearman": spearman_uncertainty(errors, std),
        "aurc": aurc(errors, std),
    }


def _gaussian_scores(y, mean, std, cal, floor) -> dict[str, float]:
    """Point scores, raw Gaussian and conformal 90 % intervals (calibrated on ``cal``)."""
    std = np.maximum(std, floor)
    y_cal, mean_cal, std_cal = cal
    conf = fit_conformal(mean_cal, np.maximum(std_cal, floor), y_cal, COVERAGE)
    c_lower, c_upper = conformal_interval(conf, mean, std)
    lower, upper = gaussian_interval(mean, std, COVERAGE)
    scores = _point_scores(y, mean, std, c_lower[:, 0], c_upper[:, 0])
    scores.update(cov=interval_coverage(y, lower, upper), width=interval_width(lower, upper))
    return scores


def _mixture(means: list[np.ndarray], stds: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Mean and σ of an equal-weight mixture of Gaussians (a deep ensemble's prediction)."""
    mu = np.stack(means)
    second = np.mean(np.stack(stds) ** 2 + mu**2, axis=0)
    mean = mu.mean(axis=0)
    return mean, np.sqrt(np.maximum(second - mean**2, 0.0))


def mc_dropout_with_head(draws: np.ndarray, head_std: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``mc_dropout+head``: the passes' mean, σ² = their spread + the twin's variance head."""
    return draws.mean(1), np.sqrt(draws.var(1, ddof=1) + head_std**2)


def run_twins(data, times, seed: int, max_epochs: int, repeats: int):
    """Every neural method on one cell: metric rows, Lévy diagnostics and plot arrays."""
    (X_tr, y_tr), (X_cal, y_cal), (X_te, y_te) = data
    floor = STD_FLOOR * float(np.std(y_tr) or 1.0)

    def model(attention: str, k: int) -> LevyAttentionRegressor:
        return LevyAttentionRegressor(
            **NETWORK,
            attention=attention,
            max_epochs=max_epochs,
            feature_times=times,
            random_state=100 * seed + k,
        ).fit(X_tr, y_tr)

    rows, fit_seconds = {}, {}
    start = time.perf_counter()
    levy = model("levy", 0)
    fit_seconds["levy"] = time.perf_counter() - start
    start = time.perf_counter()
    twins = [model("softmax", k) for k in range(N_ENSEMBLE)]
    fit_seconds["softmax x5"] = time.perf_counter() - start
    twin = twins[0]

    # -- predictions on the test rows, timed, and on the calibration rows
    (mean_s, std_s), t_soft = _timed(lambda: twin.predict(X_te, return_std=True), repeats)
    (mean_l, std_l), t_levy = _timed(lambda: levy.predict(X_te, return_std=True), repeats)
    why = levy.predict_uncertainty(X_te)

    def mc(X):
        return twin.sample_y(X, N_MC_PASSES, method="mc_dropout", random_state=seed)

    mc_draws, t_mc = _timed(lambda: mc(X_te), repeats)
    mc_cal = mc(X_cal)

    def members(X):
        return [m.predict(X, return_std=True) for m in twins]

    ens, t_ens = _timed(lambda: members(X_te), repeats)

    def sampler(X):
        return levy.sample_y(X, N_SAMPLER_DRAWS, method="poisson", random_state=seed)

    draws, t_sampler = _timed(lambda: sampler(X_te), repeats)
    draws_cal = sampler(X_cal)

    cal_s = twin.predict(X_cal, return_std=True)
    cal_l = levy.predict(X_cal, return_std=True)
    ens_cal = _mixture(*zip(*members(X_cal), strict=True))
    ens_mean, ens_std = _mixture(*zip(*ens, strict=True))

    gaussians = {
        "levy": (mean_l, std_l, cal_l, t_levy),
        "softmax": (mean_s, std_s, cal_s, t_soft),
        "mc_dropout": (
            mc_draws.mean(1),
            mc_draws.std(1, ddof=1),
            (mc_cal.mean(1), mc_cal.std(1, ddof=1)),
            t_mc,
        ),
        "mc_dropout+head": (
            *mc_dropout_with_head(mc_draws, std_s),
            mc_dropout_with_head(mc_cal, cal_s[1]),
            t_mc + t_soft,
        ),
        "ensemble": (ens_mean, ens_std, ens_cal, t_ens),
    }
    for name, (mean, std, (m_cal, s_cal), seconds) in gaussians.items():
        rows[name] = _gaussian_scores(y_te, mean, std, (y_cal, m_cal, s_cal), floor)
        rows[name]["time_ratio"] = seconds / t_soft
    # Lévy's own conformal intervals (conformalize + predict_interval, the public path).
    levy.conformalize(X_cal, y_cal)
    bounds = levy.predict_interval(X_te, COVERAGE, method="conformal")
    rows["levy"]["cov_conf"] = interval_coverage(y_te, bounds[:, 0], bounds[:, 1])
    rows["levy"]["width_conf"] = interval_width(bounds[:, 0], bounds[:, 1])

    # The sampler: scored on its draws (sample CRPS, empirical quantiles), conformal on its
    # draws' mean and spread.
    s_mean, s_std = draws.mean(1), draws.std(1, ddof=1)
    row = _gaussian_scores(
        y_te, s_mean, s_std, (y_cal, draws_cal.mean(1), draws_cal.std(1, ddof=1)), floor
    )
    q_lower, q_upper = np.quantile(draws, [(1 - COVERAGE) / 2, (1 + COVERAGE) / 2], axis=1)
    row.update(
        crps=sample_crps(y_te, draws.T),
        crps_fair=sample_crps(y_te, draws.T, fair=True),
        cov=interval_coverage(y_te, q_lower, q_upper),
        width=interval_width(q_lower, q_upper),
        time_ratio=t_sampler / t_soft,
    )
    rows["levy_sampler50"] = row

    errors = np.abs(y_te - mean_l)
    diagnostics = {
        "spearman_evidence": spearman_uncertainty(errors, why.evidence),
        "p_evidence": _spearman_p_less(errors, why.evidence),
        "spearman_disagreement": spearman_uncertainty(errors, why.disagreement),
        "fit_levy_s": fit_seconds["levy"],
        "fit_softmax_s": fit_seconds["softmax x5"] / N_ENSEMBLE,
    }
    arrays = {
        "y": y_te,
        "levy": (mean_l, std_l),
        "mc_dropout": gaussians["mc_dropout"][:2],
        "ensemble": (ens_mean, ens_std),
        "softmax": (mean_s, std_s),
    }
    return rows, diagnostics, arrays


def _spearman_p_less(errors: np.ndarray, evidence: np.ndarray) -> float:
    """One-sided p-value of Spearman(evidence, |error|) < 0 over the test rows."""
    if np.ptp(errors) == 0 or np.ptp(evidence) == 0:
        return 1.0
    return float(stats.spearmanr(evidence, errors, alternative="less").pvalue)


def run_enbpi(data, seed: int) -> dict[str, float]:
    """MAPIE EnbPI (block bootstrap, out-of-bag residuals) around HistGradientBoosting."""
    from mapie.regression import TimeSeriesRegressor
    from mapie.subsample import BlockBootstrap
    from sklearn.ensemble import HistGradientBoostingRegressor
    from sklearn.feature_selection import VarianceThreshold
    from sklearn.pipeline import make_pipeline

    (X_tr, y_tr), _, (X_te, y_te) = data
    enbpi = TimeSeriesRegressor(
        # HistGradientBoosting fails on a column with no observed value, which a bootstrap
        # sample of sparse rows can have; such columns (and constant ones) carry no split.
        make_pipeline(VarianceThreshold(), HistGradientBoostingRegressor(random_state=seed)),
        method="enbpi",
        cv=BlockBootstrap(n_resamplings=10, n_blocks=10, random_state=seed),
        agg_function="mean",
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        enbpi.fit(X_tr, y_tr)
        mean, bounds = enbpi.predict(X_te, ensemble=True, confidence_level=COVERAGE)
    lower, upper = bounds[:, 0, 0], bounds[:, 1, 0]
    return _interval_peer_scores(y_te, mean, lower, upper)


def _interval_peer_scores(y, mean, lower, upper) -> dict[str, float]:
    """Scores of a peer that gives a point and a 90 % interval (σ implied by its half-width)."""
    std = np.maximum((upper - lower) / (2 * Z90), STD_FLOOR * float(np.std(y) or 1.0))
    return _point_scores(y, mean, std, lower, upper)


def run_cell(name: str, raw, keep: float, seed: int, mode: dict) -> dict:
    """One (dataset, keep, seed) cell: every method, or the reason it was skipped."""
    torch.set_num_threads(1)
    start = time.perf_counter()
    data, times = make_cell_data(name, raw, keep, seed, mode["caps"])
    sizes = [len(y) for _, y in data]
    cell = {"dataset": name, "keep": keep, "seed": seed, "sizes": sizes}
    if sizes[0] < MIN_TRAIN_ROWS or min(sizes[1:]) < MIN_HELD_OUT_ROWS:
        cell["skipped"] = True
        return cell
    # A failure is recorded and reported, not allowed to take the other cells down with it.
    try:
        rows, diagnostics, arrays = run_twins(
            data, times, seed, mode["max_epochs"], mode["timing_repeats"]
        )
    except Exception as exc:  # noqa: BLE001
        cell["failed"] = f"twins: {type(exc).__name__}: {exc}"
        return cell
    try:
        rows["hgb_enbpi"] = run_enbpi(data, seed)
    except Exception as exc:  # noqa: BLE001
        cell["failed"] = f"hgb_enbpi: {type(exc).__name__}: {exc}"
    cell.update(rows=rows, diagnostics=diagnostics, arrays=arrays if seed == 0 else None)
    cell["seconds"] = time.perf_counter() - start
    print(f"{name} keep {keep:.0%} seed {seed}: {cell['seconds']:.0f} s", flush=True)
    return cell


# ---------------------------------------------------------------------------
# sktime peers: one step ahead on regular series at full observation
# ---------------------------------------------------------------------------
def run_sktime_peers(name: str, raw: pd.Series, caps: tuple[int, int, int]) -> dict:
    """One-step-ahead forecasts of the test targets at 100 % keep, refitted never, updated."""
    from sktime.forecasting.naive import NaiveForecaster
    from sktime.forecasting.sarimax import SARIMAX

    spec = DATASETS[name]
    y = raw.interpolate(limit_direction="both").reset_index(drop=True)  # peers need no NaN
    # The same test rows as the twins: positions of the target observations in the series.
    stays = to_stays(raw, spec.unit)
    positions = np.flatnonzero(~np.isnan(stays[0][1][:, 0]))
    _, _, groups = lag_rows(stays, 0, spec.edges)
    if spec.normalise:
        X, _, _ = lag_rows(stays, 0, spec.edges)
        positions = positions[~np.isnan(X).all(axis=1)]
        groups = groups[~np.isnan(X).all(axis=1)]
    test = positions[split_rows(groups, caps)[2]]
    out = {}
    forecasters = {
        "sktime_naive_last": NaiveForecaster(strategy="last"),
        "sktime_arima111": SARIMAX(order=(1, 1, 1)),
    }
    for label, forecaster in forecasters.items():
        start = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            forecaster.fit(y.iloc[: test[0]])
            means, lowers, uppers = [], [], []
            end = test[0]
            for pos in test:
                if pos > end:
                    forecaster.update(y.iloc[end:pos], update_params=False)
                    end = pos
                fh = [1]
                interval = forecaster.predict_interval(fh=fh, coverage=COVERAGE)
                means.append(float(forecaster.predict(fh=fh).iloc[0]))
                lowers.append(float(interval.iloc[0, 0]))
                uppers.append(float(interval.iloc[0, 1]))
        y_test = raw.to_numpy(dtype=float)[test]
        # With instance normalisation the twins' targets are shifted per row; errors, σ and
        # widths are not, so the peers' are comparable as they are.
        out[label] = _interval_peer_scores(
            y_test, np.array(means), np.array(lowers), np.array(uppers)
        )
        out[label]["seconds"] = time.perf_counter() - start
    return out


# ---------------------------------------------------------------------------
# aggregation, claims, report
# ---------------------------------------------------------------------------
METRICS = {
    "mse": "MSE",
    "mae": "MAE",
    "crps": "CRPS",
    "crps_fair": "CRPS fair",
    "cov": "cov90 raw",
    "width": "width90 raw",
    "cov_conf": "cov90 conformal",
    "width_conf": "width90 conformal",
    "spearman": "Spearman(σ, \\|err\\|)",
    "aurc": "AURC",
    "time_ratio": "predict time / softmax",
}


def long_table(cells: list[dict], peers: dict[str, dict]) -> pd.DataFrame:
    """One row per (dataset, keep, seed, method) with every metric."""
    records = [
        {"dataset": c["dataset"], "keep": c["keep"], "seed": c["seed"], "method": m, **scores}
        for c in cells
        for m, scores in c.get("rows", {}).items()
    ]
    records += [
        {"dataset": name, "keep": 1.0, "seed": 0, "method": m, **scores}
        for name, methods in peers.items()
        for m, scores in methods.items()
    ]
    return pd.DataFrame.from_records(records)


def _cell_means(table: pd.DataFrame, method: str, metric: str) -> pd.Series:
    rows = table[table["method"] == method]
    return rows.groupby(["dataset", "keep"])[metric].mean()


def claims(table: pd.DataFrame, diagnostics: pd.DataFrame) -> list[tuple[str, bool, str]]:
    """Met / not met for claims (1), (2), (3), (5), (6), by rules fixed before any result.

    Cell = (dataset, keep); values are means over seeds. (1) Lévy MSE ≤ 1.056 × softmax-twin
    MSE in every cell, and ≤ the twin's at each dataset's sparsest keep. (2) In every cell the
    Lévy σ has a higher Spearman with |error| and a lower AURC than MC dropout (pass spread).
    (3) In every cell Lévy's closed-form CRPS ≤ the 50-draw sampler's CRPS (standard estimator:
    the score of the 50-sample forecast actually issued). (5) On every dataset the Lévy
    conformal 90 % coverage, averaged over keeps and seeds, is within ±0.02 of 0.90. (6) At
    10 % and 20 % keep Spearman(evidence, |error|) is significantly negative on every dataset
    (one-sided one-sample t-test over seeds, p < 0.05; with a single seed, Spearman's own
    one-sided p-value over the test rows), and Spearman(disagreement, |error|) is positive
    (mean over seeds) in every cell.
    """
    out = []
    mse_ratio = _cell_means(table, "levy", "mse") / _cell_means(table, "softmax", "mse")
    sparsest = mse_ratio.groupby(level="dataset").apply(
        lambda r: r.xs(r.index.get_level_values("keep").min(), level="keep").iloc[0]
    )
    ok = bool((mse_ratio <= MSE_TOLERANCE).all() and (sparsest <= 1.0).all())
    worst = mse_ratio.idxmax()
    out.append(
        (
            "(1) Lévy MSE ≤ 1.056 × softmax twin in every cell; ≤ 1 at the sparsest keep",
            ok,
            f"MSE ratio Lévy/softmax: median {mse_ratio.median():.3f}, "
            f"worst {mse_ratio.max():.3f} "
            f"({worst[0]}, keep {worst[1]:.0%}); {(mse_ratio <= MSE_TOLERANCE).sum()}/"
            f"{mse_ratio.size} cells ≤ 1.056; at the sparsest keep ≤ 1 on "
            f"{(sparsest <= 1.0).sum()}/{sparsest.size} datasets ("
            + ", ".join(f"{d} {r:.3f}" for d, r in sparsest.items())
            + ")",
        )
    )
    for baseline, tag in (("mc_dropout", "(2)"), ("mc_dropout+head", "(2b)")):
        rho = _cell_means(table, "levy", "spearman") - _cell_means(table, baseline, "spearman")
        area = _cell_means(table, "levy", "aurc") - _cell_means(table, baseline, "aurc")
        both = (rho > 0) & (area < 0)
        out.append(
            (
                f"{tag} Lévy σ ranks |error| better than {baseline} (Spearman higher and "
                "AURC lower in every cell)",
                bool(both.all()),
                f"Spearman higher in {(rho > 0).sum()}/{rho.size} cells (mean difference "
                f"{rho.mean():+.3f}); AURC lower in {(area < 0).sum()}/{area.size} cells; both in "
                f"{both.sum()}/{both.size}",
            )
        )
    for metric, tag in (("crps", "(3)"), ("crps_fair", "(3b)")):
        sampler = _cell_means(table, "levy_sampler50", metric)
        diff = _cell_means(table, "levy", "crps") / sampler
        estimator = "fair" if metric == "crps_fair" else "standard"
        out.append(
            (
                f"{tag} Lévy closed-form CRPS ≤ 50-draw sampler CRPS ({estimator} estimator) in "
                "every cell",
                bool((diff <= 1.0).all()),
                f"ratio closed-form/sampler: median {diff.median():.3f}, worst {diff.max():.3f}; "
                f"≤ 1 in {(diff <= 1.0).sum()}/{diff.size} cells",
            )
        )
    coverage = (
        table[table["method"] == "levy"].groupby("dataset")["cov_conf"].mean()
    )  # over keeps and seeds
    off = (coverage - COVERAGE).abs()
    out.append(
        (
            "(5) Lévy conformal 90 % coverage within ±0.02 on every dataset",
            bool((off <= COVERAGE_TOLERANCE).all()),
            ", ".join(f"{d} {c:.3f}" for d, c in coverage.items()),
        )
    )
    sparse = diagnostics[diagnostics["keep"] <= 0.2]
    significant = sparse.groupby(["dataset", "keep"]).apply(_evidence_significant)
    disagreement = diagnostics.groupby(["dataset", "keep"])["spearman_disagreement"].mean()
    evidence = sparse.groupby(["dataset", "keep"])["spearman_evidence"].mean()
    out.append(
        (
            "(6a) evidence informative on sparse data: Spearman(evidence, |err|) significantly "
            "< 0 at 10 % and 20 % keep on every dataset",
            bool(significant.all()) and significant.size > 0,
            f"significant in {significant.sum()}/{significant.size} cells; mean Spearman "
            + ", ".join(f"{d} {k:.0%} {v:+.3f}" for (d, k), v in evidence.items()),
        )
    )
    out.append(
        (
            "(6b) disagreement informative at every level: Spearman(disagreement, |err|) > 0 "
            "in every cell",
            bool((disagreement > 0).all()),
            f"> 0 in {(disagreement > 0).sum()}/{disagreement.size} cells; range "
            f"{disagreement.min():+.3f} … {disagreement.max():+.3f}",
        )
    )
    return out


def _evidence_significant(group: pd.DataFrame) -> bool:
    rho = group["spearman_evidence"].to_numpy()
    if rho.size >= 3:
        return bool(stats.ttest_1samp(rho, 0.0, alternative="less").pvalue < 0.05)
    return bool((group["p_evidence"] < 0.05).all() and (rho < 0).all())


def _escape(text: str) -> str:
    """Escape ``|`` so that text stays inside one markdown table cell."""
    return text.replace("|", "\\|")


def _fmt(values: pd.Series) -> str:
    values = values.dropna()
    if values.empty:
        return "—"
    if len(values) == 1:
        return f"{values.iloc[0]:.3g}"
    return f"{values.mean():.3g} ± {values.std(ddof=1):.2g}"


def results_tables(table: pd.DataFrame, order: list[str]) -> list[str]:
    """One markdown table per dataset: mean ± s.d. over seeds per keep × method."""
    lines = []
    metrics = [m for m in METRICS if m in table.columns]
    methods = list(dict.fromkeys(table["method"]))
    for name in order:
        rows = table[table["dataset"] == name]
        if rows.empty:
            continue
        spec = DATASETS[name]
        lines += [
            f"### {name} ({'real' if spec.real else 'synthetic'}, "
            f"{'regular' if spec.regular else 'irregular'})",
            "",
            "| keep | method | seeds | " + " | ".join(METRICS[m] for m in metrics) + " |",
            "|---|---|---|" + "---|" * len(metrics),
        ]
        for keep in sorted(rows["keep"].unique(), reverse=True):
            for method in methods:
                cell = rows[(rows["keep"] == keep) & (rows["method"] == method)]
                if cell.empty:
                    continue
                values = " | ".join(_fmt(cell[m]) for m in metrics)
                lines.append(f"| {keep:.0%} | {method} | {len(cell)} | {values} |")
        lines.append("")
    return lines


def diagnostics_table(diagnostics: pd.DataFrame, cells: list[dict]) -> list[str]:
    lines = [
        "| dataset | keep | rows train/cal/test | Spearman(evidence, \\|err\\|) "
        "| Spearman(disagreement, \\|err\\|) | fit s (Lévy) | fit s (softmax) |",
        "|---|---|---|---|---|---|---|",
    ]
    sizes = {(c["dataset"], c["keep"]): c["sizes"] for c in cells if c["seed"] == cells[0]["seed"]}
    for (name, keep), group in diagnostics.groupby(["dataset", "keep"], sort=False):
        rows = "/".join(str(n) for n in sizes.get((name, keep), []))
        lines.append(
            f"| {name} | {keep:.0%} | {rows} | {_fmt(group['spearman_evidence'])} | "
            f"{_fmt(group['spearman_disagreement'])} | {_fmt(group['fit_levy_s'])} | "
            f"{_fmt(group['fit_softmax_s'])} |"
        )
    skipped: dict[tuple[str, float], list[list[int]]] = {}
    for c in cells:
        if c.get("skipped"):
            skipped.setdefault((c["dataset"], c["keep"]), []).append(c["sizes"])
    for (name, keep), sizes_list in skipped.items():
        lines.append(
            f"| {name} | {keep:.0%} | {'/'.join(map(str, sizes_list[0]))} | skipped "
            f"({len(sizes_list)} seed(s)): fewer than {MIN_TRAIN_ROWS} train or "
            f"{MIN_HELD_OUT_ROWS} held-out rows | | | |"
        )
    for c in cells:
        if "failed" in c:
            lines.append(
                f"| {c['dataset']} | {c['keep']:.0%} | seed {c['seed']} | failed: "
                f"{_escape(c['failed'])} | | | |"
            )
    return lines + [""]


# ---------------------------------------------------------------------------
# figures
# ---------------------------------------------------------------------------
CURVES = ("levy", "softmax", "mc_dropout", "ensemble")


def plot_figures(cells: list[dict], diagnostics: pd.DataFrame, table: pd.DataFrame, prefix: str):
    """Risk–coverage curves, σ against |error|, and sparsity curves; returns the file names."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    shown = [c for c in cells if c.get("arrays") is not None]
    names = list(dict.fromkeys(c["dataset"] for c in shown))
    keeps = sorted({c["keep"] for c in shown}, reverse=True)
    files = {}

    def save(fig, key: str, xlabel: str | None = None, ylabel: str | None = None) -> None:
        if xlabel:
            fig.supxlabel(xlabel)
            fig.supylabel(ylabel)
        fig.tight_layout()
        files[key] = f"{prefix}_{key}.png"
        fig.savefig(RESULTS / files[key], dpi=90)
        plt.close(fig)

    fig, axes = plt.subplots(
        len(keeps), len(names), figsize=(3.2 * len(names), 2.8 * len(keeps)), squeeze=False
    )
    for c in shown:
        ax = axes[keeps.index(c["keep"]), names.index(c["dataset"])]
        y = c["arrays"]["y"]
        for method in CURVES:
            mean, std = c["arrays"][method]
            coverage, risk = risk_coverage_curve(np.abs(y - mean), std)
            ax.plot(coverage, risk, label=method)
        ax.set_title(f"{c['dataset']}, keep {c['keep']:.0%}", fontsize=9)
        ax.tick_params(labelsize=7)
    for ax in axes.flat:
        if not ax.lines:
            ax.set_visible(False)
    axes[0, 0].legend(fontsize=7)
    save(fig, "risk_coverage", "coverage (fraction kept, most certain first)", "mean |error|")

    fig, axes = plt.subplots(1, len(names), figsize=(3.2 * len(names), 3.0), squeeze=False)
    for c in shown:
        ax = axes[0, names.index(c["dataset"])]
        mean, std = c["arrays"]["levy"]
        ax.scatter(std, np.abs(c["arrays"]["y"] - mean), s=4, alpha=0.5, label=f"{c['keep']:.0%}")
        ax.set_xscale("log")
        ax.set_yscale("symlog", linthresh=float(np.median(std)) / 10)
        ax.set_title(c["dataset"], fontsize=9)
        ax.tick_params(labelsize=7)
    axes[0, 0].legend(title="keep", fontsize=7)
    save(fig, "sigma_error", "Lévy σ", "|error|")

    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 3.6))
    means = diagnostics.groupby(["dataset", "keep"])[
        ["spearman_evidence", "spearman_disagreement"]
    ].mean()
    ratio = _cell_means(table, "levy", "mse") / _cell_means(table, "softmax", "mse")
    for i, name in enumerate(means.index.get_level_values("dataset").unique()):
        part = means.xs(name, level="dataset")
        color = f"C{i}"
        ax1.plot(part.index, part["spearman_evidence"], "o--", color=color)
        ax1.plot(part.index, part["spearman_disagreement"], "s-", color=color, label=name)
        r = ratio.xs(name, level="dataset")
        ax2.plot(r.index, r.to_numpy(), "o-", color=color, label=name)
    ax1.axhline(0, color="grey", lw=0.8)
    ax1.set_title("Spearman with |error|: disagreement (—), evidence (- -)", fontsize=9)
    ax2.axhline(MSE_TOLERANCE, color="red", lw=0.8, ls=":", label="1.056")
    ax2.axhline(1.0, color="grey", lw=0.8)
    ax2.set_title("MSE ratio Lévy / softmax twin", fontsize=9)
    for ax in (ax1, ax2):
        ax.set_xscale("log")
        ax.set_xlabel("share of observations kept")
    ax1.legend(fontsize=7)
    ax2.legend(fontsize=7)
    save(fig, "sparsity")
    return files


# ---------------------------------------------------------------------------
# main
# ---------------------------------------------------------------------------
def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--fast", action="store_true", help="3 datasets, 2 keeps, 1 seed")
    group.add_argument("--full", action="store_true", help="all datasets, 4 keeps, 5 seeds")
    parser.add_argument("--workers", type=int, default=1, help="joblib worker processes")
    parser.add_argument(
        "--cache",
        type=Path,
        help="pickle of the computed cells: written after computing them, read instead of "
        "recomputing when it exists (to redo the report and figures only)",
    )
    args = parser.parse_args()
    mode_name = "full" if args.full else "fast"
    mode = MODES[mode_name]
    torch.set_num_threads(1)
    start = time.perf_counter()
    raw = {name: DATASETS[name].load() for name in mode["datasets"]}
    jobs = [
        (name, keep, seed)
        for keep in mode["keeps"]  # dense cells first: the longest jobs start early
        for name in mode["datasets"]
        for seed in mode["seeds"]
    ]
    if args.cache is not None and args.cache.exists():
        cells, peers, elapsed = pd.read_pickle(args.cache)
    else:
        cells = Parallel(n_jobs=args.workers, verbose=5)(
            delayed(run_cell)(name, raw[name], keep, seed, mode) for name, keep, seed in jobs
        )
        peers = {}
        for name in mode["datasets"]:
            if DATASETS[name].regular:
                try:
                    peers[name] = run_sktime_peers(name, raw[name], mode["caps"])
                except Exception as exc:  # noqa: BLE001
                    print(f"sktime peers failed on {name}: {type(exc).__name__}: {exc}")
        elapsed = time.perf_counter() - start
        if args.cache is not None:
            pd.to_pickle((cells, peers, elapsed), args.cache)

    table = long_table(cells, peers)
    diagnostics = pd.DataFrame.from_records(
        [
            {"dataset": c["dataset"], "keep": c["keep"], "seed": c["seed"], **c["diagnostics"]}
            for c in cells
            if "rows" in c
        ]
    )
    verdicts = claims(table, diagnostics)
    RESULTS.mkdir(exist_ok=True)
    stem = "claims" if mode_name == "full" else "claims_fast"
    files = plot_figures(cells, diagnostics, table, stem)
    table.to_csv(RESULTS / f"{stem}.csv", index=False)
    commit = short_commit()
    caps = "/".join(map(str, mode["caps"]))
    lines = [
        f"# The paper's claims, side by side ({mode_name} mode)",
        "",
        f"{stamp(commit)}, 1 torch thread per "
        f"process, {args.workers} worker process(es), total wall time {elapsed / 60:.1f} min. "
        f"Produced by `OMP_NUM_THREADS=1 python -m benchmarks.claims --{mode_name} "
        f"--workers {args.workers}`.",
        "",
        "## Claims",
        "",
        "| claim | verdict | numbers |",
        "|---|---|---|",
    ]
    lines += [
        f"| {_escape(c)} | {'met' if ok else '**not met**'} | {_escape(text)} |"
        for c, ok, text in verdicts
    ]
    lines += [
        "",
        "Rules (fixed in `claims()` before any result was seen): "
        + " ".join(claims.__doc__.split("\n\n")[1].split()),
        "",
        "## Settings",
        "",
        f"- datasets: {', '.join(mode['datasets'])}; keep "
        f"{', '.join(f'{k:.0%}' for k in mode['keeps'])}"
        f" of the observations (make_irregular, seeded by the seed); seeds {mode['seeds']}.",
        f"- rows: train/calibration/test split {SPLIT} in time (panels: by subject), each capped "
        f"at {caps} rows by even striding; cells with fewer than {MIN_TRAIN_ROWS} train or "
        f"{MIN_HELD_OUT_ROWS} calibration/test rows are skipped.",
        f"- network for every neural method: {NETWORK}, max_epochs {mode['max_epochs']}, "
        "LevyAttentionRegressor defaults otherwise; model seeds 100·seed + k (k = 0 Lévy and the "
        "softmax twin, k = 0…4 ensemble members).",
        "- lag bins per dataset (time unit, edges): "
        + "; ".join(
            f"{n} ({DATASETS[n].unit}, {np.round(DATASETS[n].edges, 2).tolist()}"
            f"{', row-mean normalised' if DATASETS[n].normalise else ''})"
            for n in mode["datasets"]
        )
        + ". co2 and sst drift in level (trend, season), so each row's mean observed lag is "
        "subtracted from its features and target (rows with no observed lag are dropped there); "
        "errors, σ and widths are unchanged by the shift.",
        "- vitals: make_irregular_vitals(n_patients=100, n_channels=3, random_state=0), target "
        "ch1, 3 channels × 6 hourly bins; remifentanil: concentration, geometric minute bins; "
        "lynx: log10 counts.",
        f"- `mc_dropout`: {N_MC_PASSES} passes of the softmax twin with dropout on, mean and σ "
        "from the passes' spread, **no** variance head; `mc_dropout+head` adds the twin's "
        "deterministic-pass variance to the spread. `ensemble`: "
        f"{N_ENSEMBLE} softmax twins, mixture mean and variance. `levy_sampler50`: "
        f"{N_SAMPLER_DRAWS} Poisson draws of the Lévy output layer; CRPS is the standard "
        "sample CRPS (the score of the 50-draw forecast actually issued), `CRPS fair` the "
        "unbiased estimator of the CRPS of the sampler's own distribution; its raw interval is "
        "the draws' 5–95 % quantiles.",
        "- conformal: Lévy via `conformalize` + `predict_interval(method='conformal')`; the "
        "other Gaussian methods via `levy_sklearn.conformal.fit_conformal` (same σ-normalised "
        "score) on the calibration rows. `hgb_enbpi`: MAPIE `TimeSeriesRegressor(method='enbpi')`"
        " around `HistGradientBoostingRegressor`, BlockBootstrap(10 resamplings, 10 blocks), "
        "fitted on the training rows only; its interval is conformal by construction and its "
        "CRPS is that of the Gaussian implied by the interval's half-width.",
        "- sktime peers (regular series, 100 % keep, seed-free): fitted on the series before the "
        "first test row (NaN interpolated), then updated without refitting and asked one step "
        "ahead at each test row; σ implied by their 90 % interval.",
        "- predict time: median of "
        f"{mode['timing_repeats']} calls on the test rows, as a ratio to the softmax twin's "
        "single `predict(return_std=True)`.",
        "",
        "## Results (mean ± s.d. over seeds)",
        "",
    ]
    lines += results_tables(table, mode["datasets"])
    lines += ["## Lévy diagnostics per sparsity level", ""]
    lines += diagnostics_table(diagnostics, cells)
    lines += [
        "## Figures",
        "",
        f"![risk–coverage curves]({files['risk_coverage']})",
        "",
        f"![Lévy σ against |error|]({files['sigma_error']})",
        "",
        f"![sparsity curves]({files['sparsity']})",
        "",
    ]
    text = "\n".join(lines)
    write_report(text, f"{stem}.md", echo=False)
    print("\n".join(f"{'met' if ok else 'NOT MET'}: {c} — {t}" for c, ok, t in verdicts))
    print(f"wrote {RESULTS / f'{stem}.md'} in {elapsed / 60:.1f} min")


if __name__ == "__main__":
    main()
