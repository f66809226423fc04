"""Forecasts of fitted series at the times asked for.

:func:`series_forecasts` cuts one prediction window per series and forecast horizon (see
:meth:`~levy_sklearn.windows.WindowPlan.forecast_windows`), reads the network's moments
through steps 1–3 of :mod:`levy_sklearn.calibration` and returns them in data units with the
calibrated variance of step 4, rows indexed and columns ordered as sktime's outputs are.
:class:`~levy_sklearn.forecaster.LevyForecaster` calls it from its predict methods; intervals
and quantiles read the calibrated quantiles of each level on top.
"""

from __future__ import annotations

import warnings
from typing import NamedTuple

import numpy as np
import pandas as pd
from sktime.forecasting.base import ForecastingHorizon

from ._series_training import SeriesSpec, population_in_series_units, standardised
from .calibration import LeadCalibration, to_data_units
from .calibration.predictive import window_forecasts
from .training import LevyNeuralNet


class FittedSeries(NamedTuple):
    """What a fit keeps of its series to forecast them: the ``series`` (key → frame,
    channels in the network's order, the context of every forecast), the population's
    per-channel ``mean``, each series' own ``means`` and ``scales`` (``(n_series,
    n_channels)``, in the order of ``series``), the series' common ``step`` (see
    :meth:`~levy_sklearn._time_axis.TimeAxis.forecast_indexes`), the ``index_names`` of
    the rows, the output's ``columns`` (matched to the frames' by name: after ``pretrain``,
    the network's channels are the pretraining panel's) and whether a channel without
    context observations is ``anchored`` at the population's level (after ``pretrain``, see
    :func:`~levy_sklearn.windows.series_windows`' ``absent_levels``), else at 0, and
    each series' covariates with the plan of this forecast (``inputs``, see
    :class:`~levy_sklearn.windows.InputSeries`; ``None``: no ``X``)."""

    series: dict
    mean: np.ndarray
    means: np.ndarray
    scales: np.ndarray
    step: float | None
    index_names: list
    columns: list
    anchored: bool
    inputs: list | None = None


class SeriesForecasts(NamedTuple):
    """Forecasts of fitted series, ``(n_rows, n_channels)`` each, columns in the order of the
    outputs: the rows' index, the mean, the calibrated variance, the model's σ (before
    calibration: intervals scale it by the calibrated quantiles), the lead, the
    calibration's row of every forecast (its network channel, and its samples-ahead group;
    see :meth:`~levy_sklearn.calibration.LeadCalibration.rows`) and whether it is of a
    channel its series has never shown (forecast by the population, see
    :func:`series_forecasts`)."""

    rows: pd.Index
    mean: np.ndarray
    variance: np.ndarray
    sd: np.ndarray
    lead: np.ndarray
    group: np.ndarray
    unseen: np.ndarray


def series_forecasts(
    spec: SeriesSpec,
    fitted: FittedSeries,
    net: LevyNeuralNet,
    calibration: LeadCalibration,
    horizon: ForecastingHorizon,
    cutoff: pd.Index,
    diagnostics: dict | None = None,
) -> SeriesForecasts:
    """The forecasts of every ``fitted`` series at sktime's ``horizon`` from ``cutoff``, in
    data units, calibrated, rows indexed and columns ordered as ``fitted`` says.

    A ``diagnostics`` dict gets the per-head ``evidence`` and ``disagreement`` (data
    units², calibrated like the variance) and the ``noise`` variance, ``(n_rows,
    n_channels[, n_heads])``. Forecast times before a series' first observation (no
    context: the network's prior answers) are forecast with a warning.

    After ``pretrain``, a channel a series has never shown is forecast by the population:
    its mean, with its scale as σ, calibrated by the pretraining panel's spread about it
    (:func:`~levy_sklearn.calibration.population_spread`). The network never saw a subject
    without a channel that every pretraining subject showed, and its σ there was 2–3 times
    the population's (90 % coverage 0.99–1.00).
    """
    series, series_mean, series_scale = fitted.series, fitted.means, fitted.scales
    axis, keys, frames = spec.axis, list(series), list(series.values())
    anchored = fitted.anchored
    ends, tz = [f.index[-1] for f in frames], getattr(frames[0].index, "tz", None)
    indexes = axis.forecast_indexes(horizon, ends, cutoff, fitted.step, tz)
    n_ch = series_mean.shape[1]
    times, values = standardised(axis, list(series.items()), series_mean, series_scale)
    at = [axis.times(index) for index in indexes]
    early = [k for k, t, t_abs in zip(keys, times, at, strict=True) if (t_abs <= t[0]).any()]
    if early:
        where_ = "y" if early == [None] else f"series {early[:3]} of y"
        warnings.warn(
            f"fh holds times at or before the first observation of {where_}: there is no "
            "context then, so those forecasts are the network's prior alone.",
            UserWarning,
            stacklevel=6,  # the user's predict call, through sktime's public method
        )
    population = population_in_series_units(fitted.mean, series_mean, series_scale)
    windows, where = spec.plan().forecast_windows(
        times, values, at, population if anchored else None, fitted.inputs
    )
    f = window_forecasts(net, windows, where, at, calibration, axis.horizon_span, n_ch, population)
    unseen = np.zeros(f.mean.shape, bool)
    if anchored and calibration.has_unseen:
        # Such a channel's series units are the population's: its mean 0, its scale 1.
        never = np.array([~np.isfinite(v).any(axis=0) for v in values])
        unseen[:] = never[:, None, :]
    f_mean = np.where(unseen, population[:, None, :], f.mean)
    f_var = np.where(unseen, 1.0, f.variance)
    # Back to data units, each series by its own standardisation.
    scale, loc = series_scale[:, None], series_mean[:, None]
    mean, var = to_data_units(f_mean, f_var, loc, scale)
    if keys == [None]:
        rows = indexes[0]
    else:
        rows = pd.MultiIndex.from_tuples(
            [(*key, t) for key, index in zip(keys, indexes, strict=True) for t in index],
            names=fitted.index_names,
        )
    shape = (len(rows), n_ch)
    if diagnostics is not None:
        # A population forecast: nothing of the series supports it (evidence 0), and its
        # variance is the spread of the population's values (all disagreement).
        n_heads, cell = f.evidence.shape[-1], unseen[..., None]
        diagnostics["evidence"] = np.where(cell, 0.0, f.evidence).reshape(*shape, n_heads)
        disagreement = np.where(cell, f_var[..., None] / n_heads, f.disagreement)
        diagnostics["disagreement"] = (disagreement * scale[..., None] ** 2).reshape(
            *shape, n_heads
        )
        diagnostics["noise"] = (np.where(unseen, 0.0, f.noise) * scale**2).reshape(shape)
    internal = list(frames[0].columns)
    columns = fitted.columns
    order = [0] if len(columns) == 1 else [internal.index(c) for c in columns]
    return _calibrated(
        rows,
        mean.reshape(shape),
        var.reshape(shape),
        f.lead.reshape(shape),
        f.group.reshape(shape),
        unseen.reshape(shape),
        order,
        calibration,
        diagnostics,
    )


def _calibrated(
    rows: pd.Index,
    mean: np.ndarray,
    var: np.ndarray,
    lead: np.ndarray,
    group: np.ndarray,
    unseen: np.ndarray,
    order: list[int],
    calibration: LeadCalibration,
    diagnostics: dict | None,
) -> SeriesForecasts:
    """The forecasts with their channels in output ``order`` and the variance (and the
    ``diagnostics``) scaled by the calibrated second moment of the σ-normalised error."""
    mean, var, lead, group = mean[:, order], var[:, order], lead[:, order], group[:, order]
    unseen = unseen[:, order]
    factor = calibration.variance_factor(group, lead, unseen)
    if diagnostics is not None:
        diagnostics["evidence"] = diagnostics["evidence"][:, order]
        diagnostics["disagreement"] = diagnostics["disagreement"][:, order] * factor[..., None]
        diagnostics["noise"] = diagnostics["noise"][:, order] * factor
    return SeriesForecasts(rows, mean, var * factor, np.sqrt(var), lead, group, unseen)
