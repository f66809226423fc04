"""Steps 1–3 of the predictive distribution (see :mod:`levy_sklearn.calibration`): the
network's moments of prediction windows weighed by the calibration's mean and level weights,
in data units (:func:`to_data_units`), the variance floored beyond the training horizon
(:func:`horizon_floor`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from .features import (
    channel_ages,
    channel_counts,
    channel_spacing,
    population_levels,
    samples_ahead,
)
from .table import LeadCalibration

if TYPE_CHECKING:  # annotations only: calibration sits below the training loop
    from ..training import LevyNeuralNet
    from ..windows import SeriesWindows

__all__ = ["horizon_floor", "to_data_units"]


def to_data_units(
    mean: np.ndarray, variance: np.ndarray, loc: np.ndarray, scale: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Map normalised moments to data units: ``loc + scale·mean`` and ``scale²·variance``.

    Parameters
    ----------
    mean, variance : ndarray
        Moments in normalised units.
    loc, scale : ndarray
        The normalisation (broadcast against the moments).

    Returns
    -------
    mean, variance : ndarray

    Examples
    --------
    >>> import numpy as np
    >>> from levy_sklearn.calibration import to_data_units
    >>> to_data_units(np.array([1.0]), np.array([4.0]), np.array([10.0]), np.array([3.0]))
    (array([13.]), array([36.]))
    """
    return loc + scale * mean, scale**2 * variance


def horizon_floor(
    variance: np.ndarray,
    variance_at_horizon: np.ndarray,
    lead: np.ndarray,
    horizon: float,
    growth: np.ndarray | float = 1.0,
) -> np.ndarray:
    """Variance floored beyond the training horizon: at least the variance at ``horizon``
    times ``1 + growth · (lead / horizon − 1)`` where ``lead > horizon`` (no training signal
    there): the share ``growth`` of the horizon's variance keeps growing linearly in lead
    like a random walk's, the rest stays like a level's (``growth`` 1: a random walk,
    variance ``∝ lead``; 0: it stays at the horizon's).
    :func:`~levy_sklearn.calibration.fit_forecasts` learns the share from how the held-out
    errors grew with lead within the horizon.

    Parameters
    ----------
    variance, variance_at_horizon, lead : ndarray
        The forecast's variance, the variance at ``horizon`` after the same origin, and the
        lead, all broadcast together.
    horizon : float
        The training horizon in time units.
    growth : ndarray or float, default=1.0
        The growing share in ``[0, 1]``, broadcast with ``lead``.

    Returns
    -------
    ndarray

    Examples
    --------
    >>> import numpy as np
    >>> from levy_sklearn.calibration import horizon_floor
    >>> horizon_floor(np.array([1.0, 1.0]), np.array([2.0, 2.0]), np.array([6.0, 24.0]), 12.0)
    array([1., 4.])
    >>> horizon_floor(np.ones(2), np.full(2, 2.0), np.full(2, 48.0), 12.0, np.array([0.0, 0.5]))
    array([2., 5.])
    """
    grown = 1 + growth * (lead / horizon - 1)
    return np.where(lead > horizon, np.maximum(variance, variance_at_horizon * grown), variance)


class Forecasts(NamedTuple):
    """Forecasts of every series at its forecast times, ``(n_series, n_times, n_channels)``,
    in each series' standardised units (see :func:`window_forecasts`); ``evidence`` and
    ``disagreement`` have a trailing head axis; ``group`` is each forecast's row in the
    calibration (:meth:`~levy_sklearn.calibration.LeadCalibration.rows`)."""

    mean: np.ndarray
    variance: np.ndarray
    lead: np.ndarray
    noise: np.ndarray
    evidence: np.ndarray
    disagreement: np.ndarray
    group: np.ndarray


def window_forecasts(
    net: LevyNeuralNet,
    windows: SeriesWindows,
    where: list[tuple[int, np.ndarray]],
    at: list[np.ndarray],
    calibration: LeadCalibration,
    horizon_span: float,
    n_channels: int,
    population: np.ndarray | None = None,
) -> Forecasts:
    """Steps 1–3 of the package docstring: the network's moments of prediction ``windows``
    (each with a last query at ``horizon_span`` after its origin; ``where``: the series and
    forecast positions each answers, see
    :meth:`~levy_sklearn.windows.WindowPlan.forecast_windows`) at the forecast times ``at``,
    the mean weighed by ``calibration``'s mean weight and pulled towards the
    ``population``'s level (see :func:`population_levels`) by its level weight, back from
    window units, the variance floored beyond ``horizon_span``.

    The lead counts from each channel's last observation, so a gap before the cutoff, or a
    channel silent for longer than the others, counts as lead too. The forecast times of a
    window count as its planned samples (see :func:`samples_ahead`)."""
    out = net.predict_moments(windows.tokens)
    loc, scale = windows.query_loc, windows.query_scale
    n_ch, n_heads = n_channels, out.evidence.shape[-1]
    mean = np.empty((len(at), len(at[0]), n_ch))
    var, noise, lead = np.empty_like(mean), np.empty_like(mean), np.empty_like(mean)
    evidence = np.empty((*mean.shape, n_heads))
    disagreement = np.empty_like(evidence)
    group = np.empty(mean.shape, dtype=np.int64)
    age, spacing = channel_ages(windows.tokens, n_ch), channel_spacing(windows.tokens, n_ch)
    seen = channel_counts(windows.tokens, n_ch)
    for w, (i, k) in enumerate(where):
        rel = (at[i][k] - windows.origins[w])[:, None] + age[w]
        q = (k.size + 1) * n_ch
        # The horizon query only lends its variance: its mean keeps weight 1 and no pull.
        weight, pull = np.ones((k.size + 1, n_ch)), np.zeros((k.size + 1, n_ch))
        position = np.argsort(np.argsort(at[i][k], kind="stable"), kind="stable") + 1
        ahead = samples_ahead(rel, spacing[w], position[:, None])
        chans = np.broadcast_to(np.arange(n_ch), rel.shape)
        group[i, k] = calibration.rows(chans, ahead, np.broadcast_to(seen[w], rel.shape))
        weight[:-1] = calibration.read(calibration.mean_weight, group[i, k], rel)
        pull[:-1] = calibration.read(calibration.level_weight, group[i, k], rel)
        shrunk = weight.ravel() * out.mean[w, :q]
        level = population_levels(
            population, i, windows.tokens["query_channels"][w, :q], loc[w, :q], scale[w, :q]
        )
        shrunk += pull.ravel() * level
        m, s2 = to_data_units(shrunk, out.variance[w, :q], loc[w, :q], scale[w, :q])
        m, s2 = m.reshape(k.size + 1, n_ch), s2.reshape(k.size + 1, n_ch)
        scale2 = scale[w, :q] ** 2  # variances and their parts scale alike
        mean[i, k] = m[:-1]
        var[i, k] = horizon_floor(
            s2[:-1], s2[-1], rel, horizon_span, calibration.growth[group[i, k]]
        )
        lead[i, k] = rel
        noise[i, k] = (scale2 * out.noise[w, :q]).reshape(k.size + 1, n_ch)[:-1]
        evidence[i, k] = out.evidence[w, :q].reshape(k.size + 1, n_ch, n_heads)[:-1]
        d = scale2[:, None] * out.disagreement[w, :q]
        disagreement[i, k] = d.reshape(k.size + 1, n_ch, n_heads)[:-1]
    return Forecasts(mean, var, lead, noise, evidence, disagreement, group)
