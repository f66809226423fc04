"""Forecasts of held-out windows, and the calibration fitted on them: a network's forecasts
of windows it never trained on (:func:`held_out_forecasts`), pooled and calibrated
(:func:`calibrate`), and cross-fitting over series after ``pretrain``
(:func:`calibrate_across_series`)."""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import numpy as np

from ..training import progress_label
from .features import (
    channel_ages,
    channel_counts,
    channel_spacing,
    population_levels,
    query_positions,
    samples_ahead,
)
from .fit import fit_forecasts
from .table import LeadCalibration

if TYPE_CHECKING:  # annotations only: calibration sits below the training loop
    from ..training import LevyNeuralNet
    from ..windows import SeriesWindows


def held_out_forecasts(
    net: LevyNeuralNet,
    windows: SeriesWindows,
    n_channels: int,
    population: np.ndarray | None = None,
) -> tuple[np.ndarray, ...]:
    """``net``'s forecasts of held-out ``windows``: targets, means and σ in the windows'
    normalised units (measured from each window's level, the anchor), channels, leads (the
    time from the channel's last context observation to the target), weights (each
    window's forecasts of a channel weigh 1 together), the population's level (see
    :func:`population_levels`), the window (origin) of each forecast, how many samples
    ahead it is (:func:`samples_ahead`) and how many observations of its channel the window
    saw (:func:`channel_counts`), the inputs of :func:`~levy_sklearn.calibration.fit_forecasts`."""
    if not windows.series.size:
        empty = (np.empty(0),) * 3 + (np.empty(0, int),) + (np.empty(0),) * 3
        return empty + (np.empty(0, int), np.empty(0), np.empty(0))
    out = net.predict_moments(windows.tokens)
    chans = windows.tokens["query_channels"]
    ages = channel_ages(windows.tokens, n_channels)
    held = windows.query_valid & np.isfinite(windows.targets)
    lead = windows.tokens["query_times"] + np.take_along_axis(ages, chans, axis=1)
    ahead = samples_ahead(
        lead,
        np.take_along_axis(channel_spacing(windows.tokens, n_channels), chans, axis=1),
        query_positions(windows.tokens["query_times"], held, chans),
    )
    per_origin = np.zeros(held.shape)
    for ch in range(n_channels):
        mine = held & (chans == ch)
        count = mine.sum(axis=1)
        per_origin[mine] = np.repeat(1.0 / np.maximum(count, 1), count)
    # The window and series scales cancel in the scores: the same in data units.
    return (
        windows.targets[held],
        out.mean[held],
        np.sqrt(out.variance[held]),
        chans[held],
        lead[held],
        per_origin[held],
        population_levels(
            population, windows.series[:, None], chans, windows.query_loc, windows.query_scale
        )[held],
        np.broadcast_to(np.arange(held.shape[0])[:, None], held.shape)[held],
        ahead[held],
        np.take_along_axis(channel_counts(windows.tokens, n_channels), chans, axis=1)[held],
    )


def calibrate(parts: list[tuple[np.ndarray, ...]], n_channels: int) -> LeadCalibration:
    """Split-conformal calibration of σ, by channel and lead, on held-out forecasts (pooled
    over ``parts``, each from :func:`held_out_forecasts`), the mean shrunk towards the
    window's level where that forecast the held-out data better
    (:func:`~levy_sklearn.calibration.fit_forecasts`); with too few of them, the Normal's with a
    warning that says how to hold out more."""
    # Window indexes count within each part: one id per held-out origin across the parts.
    offsets = np.cumsum([0] + [int(p[7].max(initial=-1)) + 1 for p in parts[:-1]])
    parts = [(*p[:7], p[7] + o, *p[8:]) for p, o in zip(parts, offsets, strict=True)]
    pooled = [np.concatenate(p) for p in zip(*parts, strict=True)]
    reason = "no calibration window could be cut"
    if pooled[0].size:
        try:
            return fit_forecasts(
                *pooled[:5],
                n_channels,
                weights=pooled[5],
                levels=pooled[6],
                origins=pooled[7],
                ahead=pooled[8],
                history=pooled[9],
            )
        except ValueError as err:  # too few held-out forecasts for a channel
            reason = str(err)
    warnings.warn(
        f"σ could not be calibrated ({reason}); intervals are the model's Normal ones. "
        "Hold out more data: a larger calibration_fraction, longer series, or more series "
        "in the pretraining panel.",
        stacklevel=6,  # the user's fit or pretrain, through sktime's public method
    )
    return LeadCalibration.identity(n_channels)


def calibrate_across_series(
    n_folds: int,
    scored: Sequence[int],
    returned: int | None,
    train: Callable[[int | None], LevyNeuralNet],
    score: Callable[[LevyNeuralNet, int], list[tuple[np.ndarray, ...]]],
    n_channels: int,
) -> tuple[LevyNeuralNet, LeadCalibration]:
    """A network and its calibration on series it never saw (cross-fitting over series).

    Each fold of series in ``scored`` (numbers among ``n_folds``) is forecast
    (``score(net, fold)``: a list of :func:`held_out_forecasts`, one per chunk of windows)
    by a network trained on every other fold (``train(fold)``). The network of the scored
    fold ``returned`` is the one returned; with ``None`` a last network learns from every
    series (``train(None)``). Series, not time points, are held out: a new subject is
    exchangeable with the held-out subjects, not with later points of subjects seen in
    training."""
    if returned is not None and returned not in scored:
        raise ValueError(f"The returned network's fold {returned} is not scored ({scored}).")
    parts, kept = [], None
    for fold in scored:
        with progress_label(f"fold {fold + 1}/{n_folds} held out"):
            net = train(fold)
        parts.extend(score(net, fold))
        kept = net if fold == returned else kept
    if returned is None:
        with progress_label("all series"):
            kept = train(None)
    return kept, calibrate(parts, n_channels)
