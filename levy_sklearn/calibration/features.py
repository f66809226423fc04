"""Token features of a forecast, read from its window's tokens: how old each channel's last
observation is (:func:`channel_ages`), how many observations of it the window saw
(:func:`channel_counts`), its last sampling gap (:func:`channel_spacing`), how many samples
ahead a forecast is (:func:`samples_ahead`) and the population's level at a query
(:func:`population_levels`). They set a forecast's lead and its calibration group."""

from __future__ import annotations

import numpy as np

__all__ = ["channel_counts", "samples_ahead"]


def channel_ages(tokens: dict[str, np.ndarray], n_channels: int) -> np.ndarray:
    """Per window and channel, the time from the channel's last context observation to the
    window's origin (the last observation of any channel); 0 for a channel with none (its
    σ is the prior's)."""
    last = np.stack(
        [
            np.where(tokens["mask"] & (tokens["channels"] == ch), tokens["times"], -np.inf).max(1)
            for ch in range(n_channels)
        ],
        axis=1,
    )
    return np.where(np.isfinite(last), -last, 0.0)


def channel_counts(tokens: dict[str, np.ndarray], n_channels: int) -> np.ndarray:
    """Per window and channel, the channel's observations in the window's context: how much
    of the series the forecast saw (the history groups of a
    :class:`~levy_sklearn.calibration.LeadCalibration`).

    Parameters
    ----------
    tokens : dict of ndarray
        Window tokens with ``"channels"`` and ``"mask"``, ``(n_windows, n_tokens)``.
    n_channels : int

    Returns
    -------
    ndarray of shape (n_windows, n_channels)

    Examples
    --------
    >>> import numpy as np
    >>> from levy_sklearn.calibration import channel_counts
    >>> tokens = {"channels": np.array([[0, 1, 0]]), "mask": np.array([[True, True, False]])}
    >>> channel_counts(tokens, 2)  # the third token is padding
    array([[1., 1.]])
    """
    return np.stack(
        [(tokens["mask"] & (tokens["channels"] == ch)).sum(1) for ch in range(n_channels)],
        axis=1,
    ).astype(float)


def samples_ahead(lead: np.ndarray, spacing: np.ndarray, position: np.ndarray) -> np.ndarray:
    """How many samples ahead each forecast is: its ``position`` among the forecast times of
    its channel after the origin (1 for the first), or its lead in units of the channel's
    last sampling gap (``spacing``, :func:`channel_spacing`), whichever is larger.

    The forecast times asked for are read as the planned samples: an irregular series'
    next samples, as a study plans them. The lead in units of the last gap keeps a lone
    forecast far ahead from passing for the next sample, and makes a regular series' count
    its steps ahead.

    Parameters
    ----------
    lead, spacing, position : ndarray of the same shape (or broadcastable)
        Time from the channel's last observation, its last sampling gap (NaN with fewer
        than two observations: no spacing to count in, so as many samples ahead as the
        last group's) and position.

    Returns
    -------
    ndarray

    Examples
    --------
    >>> import numpy as np
    >>> from levy_sklearn.calibration import samples_ahead
    >>> samples_ahead(np.array([1.0, 2.0, 12.0]), np.array([1.0, 1.0, 1.0]), np.ones(3))
    array([ 1.,  2., 12.])
    >>> samples_ahead(np.array([15.0, 30.0]), np.array([15.0, 15.0]), np.array([1, 2]))
    array([1., 2.])
    """
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(spacing > 0, lead / spacing, np.inf)
    return np.maximum(position, ratio)


def channel_spacing(tokens: dict[str, np.ndarray], n_channels: int) -> np.ndarray:
    """Per window and channel, the gap between the channel's last two context observations
    (NaN with fewer than two)."""
    times = []
    for ch in range(n_channels):
        mine = tokens["mask"] & (tokens["channels"] == ch)
        times.append(np.sort(np.where(mine, tokens["times"], -np.inf), axis=1)[:, -2:])
    last_two = np.stack(times, axis=1)  # (n_windows, n_channels, ≤ 2)
    if last_two.shape[-1] < 2:  # one context token per window
        return np.full(last_two.shape[:2], np.nan)
    with np.errstate(invalid="ignore"):  # -inf - -inf: no observation
        gap = last_two[..., 1] - last_two[..., 0]
    return np.where(np.isfinite(gap) & (gap > 0), gap, np.nan)


def query_positions(times: np.ndarray, valid: np.ndarray, channels: np.ndarray) -> np.ndarray:
    """Each query's position (1, 2, …) by time among the valid queries of its channel in its
    window, ``(n_windows, n_queries)``."""
    position = np.zeros(times.shape)
    for ch in np.unique(channels[valid]):
        mine = valid & (channels == ch)
        order = np.argsort(np.where(mine, times, np.inf), axis=1, kind="stable")
        rank = np.empty_like(order)
        np.put_along_axis(rank, order, np.arange(1, times.shape[1] + 1)[None], axis=1)
        position[mine] = rank[mine]
    return position


def population_levels(
    population: np.ndarray | None,
    series: np.ndarray | int,
    channels: np.ndarray,
    loc: np.ndarray,
    scale: np.ndarray,
) -> np.ndarray:
    """The population's level at queries of ``channels`` of ``series``, in window units
    (``(level − loc) / scale``: relative to the window's anchor). ``population``: its level
    in each series' standardised units, ``(n_series, n_channels)``; ``None``: no level (0
    everywhere, so no pull is learned: a calibration on the later part of the fitted series
    themselves would learn it from a level that has seen that part)."""
    if population is None:
        return np.zeros(np.broadcast_shapes(np.shape(channels), np.shape(loc)))
    return (population[series, channels] - loc) / scale
