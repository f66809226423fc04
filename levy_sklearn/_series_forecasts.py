"""Forecasts of fitted series at the times asked for.

:func:`series_forecasts` cuts one prediction window per series and forecast horizon (see
:meth:`~levy_sklearn.windows.WindowPlan.forecast_windows`), reads the network's moments
through steps 1–3 of :mod:`levy_sklearn.uncertainty` and returns them in data units, rows
indexed as sktime's outputs are. :class:`~levy_sklearn.forecaster.LevyForecaster` calls it
from its predict methods; the calibration of step 4 is read there, per output.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

from ._series_training import SeriesSpec, standardised
from .training import LevyNeuralNet
from .uncertainty import LeadCalibration, to_data_units, window_forecasts


def series_forecasts(
    spec: SeriesSpec,
    series: dict,
    series_mean: np.ndarray,
    series_scale: np.ndarray,
    net: LevyNeuralNet,
    calibration: LeadCalibration,
    indexes: list[pd.Index],
    index_names: list,
    population: np.ndarray,
    diagnostics: dict | None = None,
) -> tuple[pd.Index, np.ndarray, np.ndarray, np.ndarray]:
    """Row index, mean, model variance and lead ``(n_rows, n_channels)`` of the forecasts of
    every series of ``series`` (key → frame, channels in the network's order) at its
    forecast times ``indexes``, in data units. ``population``: the population's per-channel
    mean in each series' standardised units, ``(n_series, n_channels)`` (see
    :func:`~levy_sklearn.uncertainty.population_levels`).

    A ``diagnostics`` dict gets the per-head ``evidence`` and ``disagreement`` (data
    units²) and the ``noise`` variance, ``(n_rows, n_channels[, n_heads])``. Forecast times
    before a series' first observation (no context: the network's prior answers) are
    forecast with a warning.
    """
    axis, keys = spec.axis, list(series)
    n_ch = series_mean.shape[1]
    times, values = standardised(axis, list(series.items()), series_mean, series_scale)
    at = [axis.times(index) for index in indexes]
    early = [k for k, t, t_abs in zip(keys, times, at, strict=True) if (t_abs < t[0]).any()]
    if early:
        where_ = "y" if early == [None] else f"series {early[:3]} of y"
        warnings.warn(
            f"fh holds times before the first observation of {where_}: there is no "
            "context then, so those forecasts are the network's prior alone.",
            UserWarning,
            stacklevel=6,  # the user's predict call, through sktime's public method
        )
    windows, where = spec.plan().forecast_windows(times, values, at)
    f = window_forecasts(net, windows, where, at, calibration, axis.horizon_span, n_ch, population)
    # Back to data units, each series by its own standardisation.
    scale, loc = series_scale[:, None], series_mean[:, None]
    mean, var = to_data_units(f.mean, f.variance, loc, scale)
    if keys == [None]:
        rows = indexes[0]
    else:
        rows = pd.MultiIndex.from_tuples(
            [(*key, t) for key, index in zip(keys, indexes, strict=True) for t in index],
            names=index_names,
        )
    shape = (len(rows), n_ch)
    if diagnostics is not None:
        n_heads = f.evidence.shape[-1]
        diagnostics["evidence"] = f.evidence.reshape(*shape, n_heads)
        disagreement = f.disagreement * scale[..., None] ** 2
        diagnostics["disagreement"] = disagreement.reshape(*shape, n_heads)
        diagnostics["noise"] = (f.noise * scale**2).reshape(shape)
    return rows, mean.reshape(shape), var.reshape(shape), f.lead.reshape(shape)
