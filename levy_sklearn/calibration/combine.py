"""Calibrations from calibrations: the larger of two (a series calibrated on its own after
``pretrain`` never narrows the pretrained intervals), and a calibration given the population's
spread for channels a subject has never shown."""

from __future__ import annotations

import dataclasses

import numpy as np

from .table import LeadCalibration

__all__ = ["at_least", "with_unseen"]


def at_least(mine: LeadCalibration, theirs: LeadCalibration) -> LeadCalibration:
    """The larger of two calibrations at every channel, lead and level: a series
    calibrated on its own after ``pretrain`` never narrows the pretrained intervals.
    The mean's weights stay ``mine``'s.

    Parameters
    ----------
    mine, theirs : LeadCalibration
        Of the same number of channels.

    Returns
    -------
    LeadCalibration
        On the union of both lead-bin edges and of both groups.

    Examples
    --------
    >>> import numpy as np
    >>> from levy_sklearn.calibration import LeadCalibration, at_least, fit_scores
    >>> rng = np.random.default_rng(0)
    >>> wide = fit_scores(3 * np.abs(rng.standard_normal(100)), np.zeros(100, int),
    ...                   np.zeros(100), 1)
    >>> both = at_least(LeadCalibration.identity(1), wide)
    >>> bool(both.quantile(0.9, np.array([0]), np.array([0.0]))[0] > 3)
    True
    """
    ahead = np.union1d(mine.ahead_edges, theirs.ahead_edges)
    history = np.union1d(mine.history_edges, theirs.history_edges)
    mine, theirs = _regrouped(mine, ahead, history), _regrouped(theirs, ahead, history)
    # A calibration of a series' own held-out data has no population to read.
    unseen = mine if mine.has_unseen else theirs
    # Both are exact on the union of their knots, linear between them and flat beyond,
    # so the larger of the two at each knot, read linearly, is at least either anywhere.
    knots = np.union1d(_knots(mine), _knots(theirs))
    rows = np.arange(mine.quantiles.shape[0])[:, None]
    at = np.broadcast_to(knots, (rows.size, knots.size))

    def larger(name: str) -> np.ndarray:
        return np.maximum(
            mine.read(getattr(mine, name), rows, at), theirs.read(getattr(theirs, name), rows, at)
        )

    total = mine.n_scores.sum(axis=1) + theirs.n_scores.sum(axis=1)
    return LeadCalibration(
        quantiles=larger("quantiles"),
        second_moment=larger("second_moment"),
        edges=(knots[1:] + knots[:-1]) / 2,
        n_scores=np.repeat(total[:, None], knots.size, axis=1),
        centres=knots,
        mean_weight=mine.read(mine.mean_weight, rows, at),
        level_weight=mine.read(mine.level_weight, rows, at),
        ahead_edges=mine.ahead_edges,
        growth=np.maximum(mine.growth, theirs.growth),
        unseen_quantiles=unseen.unseen_quantiles,
        unseen_second_moment=unseen.unseen_second_moment,
        history_edges=mine.history_edges,
    )


def with_unseen(
    calibration: LeadCalibration, quantiles: np.ndarray, second_moment: np.ndarray
) -> LeadCalibration:
    """``calibration``, calibrating the forecasts of channels a subject has never shown by
    ``quantiles`` and ``second_moment`` (see
    :func:`~levy_sklearn.calibration.population_spread`).

    Parameters
    ----------
    calibration : LeadCalibration
    quantiles : ndarray of shape (n_channels, len(LEVELS))
    second_moment : ndarray of shape (n_channels,)

    Returns
    -------
    LeadCalibration
        A new value; ``calibration`` is unchanged.

    Examples
    --------
    >>> import numpy as np
    >>> from levy_sklearn.calibration import LeadCalibration, with_unseen
    >>> from levy_sklearn.calibration.schema import LEVELS
    >>> cal = with_unseen(LeadCalibration.identity(1), np.full((1, LEVELS.size), 3.0), [9.0])
    >>> seen, unseen = np.array([0, 0]), np.array([False, True])
    >>> cal.quantile(0.9, seen, np.zeros(2), unseen).round(3)  # the Normal's, then 3
    array([1.645, 3.   ])
    >>> cal.variance_factor(seen, np.zeros(2), unseen)
    array([1., 9.])
    """
    return dataclasses.replace(
        calibration, unseen_quantiles=quantiles, unseen_second_moment=second_moment
    )


def _regrouped(
    calibration: LeadCalibration, ahead_edges: np.ndarray, history_edges: np.ndarray
) -> LeadCalibration:
    """``calibration`` on the groups of ``ahead_edges`` and ``history_edges``, which hold
    its own edges: each group takes the rows of the group of ``calibration`` it lies in."""
    if np.array_equal(ahead_edges, calibration.ahead_edges) and np.array_equal(
        history_edges, calibration.history_edges
    ):
        return calibration
    # The fewest samples ahead and observations of each new group, channel-major.
    chans, ahead, history = np.meshgrid(
        np.arange(calibration.n_channels),
        np.concatenate([[-np.inf], ahead_edges]),
        np.concatenate([[-np.inf], history_edges]),
        indexing="ij",
    )
    rows = calibration.rows(chans.ravel(), ahead.ravel(), history.ravel())
    per_row = ("quantiles", "second_moment", "n_scores", "mean_weight", "level_weight", "growth")
    return dataclasses.replace(
        calibration,
        ahead_edges=ahead_edges,
        history_edges=history_edges,
        **{name: getattr(calibration, name)[rows] for name in per_row},
    )


def _knots(calibration: LeadCalibration) -> np.ndarray:
    """Leads at which the calibration's tables, read linearly between them and flat beyond,
    are the calibration exactly: its centres, or each inner bin edge and the float just
    below it (the steps of a calibration read by bin)."""
    if calibration.centres.size > 1:
        return calibration.centres
    edges = calibration.edges
    return np.union1d(edges, np.nextafter(edges, -np.inf)) if edges.size else np.zeros(1)
