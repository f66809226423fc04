"""The calibration table, a frozen value, and how a forecast reads it.

Fitting a table is :mod:`levy_sklearn.calibration.fit`; combining two is
:mod:`levy_sklearn.calibration.combine`; its file schema is
:mod:`levy_sklearn.calibration.schema`.
"""

from __future__ import annotations

import dataclasses

import numpy as np
from scipy.stats import norm

from .schema import FIELDS, LEVELS, NORMAL_AT_LEVELS, SCHEMA, migrate, validate


@dataclasses.dataclass(frozen=True, eq=False)
class LeadCalibration:
    """Split-conformal calibration of σ per table row (channel and group) and lead, at
    every coverage level: a frozen value of arrays.

    The interval at coverage ``c`` of a forecast with model σ ``σ`` is
    ``mean ± quantile(c)·σ``, its calibrated variance ``σ²`` times the mean squared score.
    A forecast's factor is read linearly in lead between the bins' median held-out leads
    (``centres``), flat beyond the outer ones; without centres, or with a single bin, by
    the lead's bin. A row is a channel, or a channel's samples-ahead and history group
    (:meth:`rows`). :func:`~levy_sklearn.calibration.fit_forecasts` fits it and says what
    coverage it guarantees; :meth:`from_state` reads older states migrated.

    Parameters
    ----------
    quantiles : ndarray of shape (n_rows, n_bins, len(LEVELS))
        Conformal quantiles of the σ-normalised held-out scores at ``LEVELS``.
    second_moment : ndarray of shape (n_rows, n_bins)
        Mean squared score.
    edges : ndarray of shape (n_bins - 1,)
        Inner lead-bin edges in time units.
    n_scores : ndarray of shape (n_rows, n_bins)
        Number of held-out scores behind each bin.
    centres : ndarray of shape (n_bins,) or (0,)
        Median held-out lead of each bin, increasing; none: each bin's factor holds across
        the bin.
    mean_weight : ndarray of shape (n_rows, n_bins)
        The weight ``w`` of the network's forecast against its anchor (1: as it is).
    level_weight : ndarray of shape (n_rows, n_bins)
        The weight ``u`` of the pull from the anchor towards the population's level (0: none).
    ahead_edges : ndarray of shape (n_ahead - 1,)
        Inner edges of the samples-ahead groups within each channel.
    growth : ndarray of shape (n_rows,)
        The share in ``[0, 1]`` of the variance that keeps growing linearly beyond the
        training horizon (:func:`~levy_sklearn.calibration.horizon_floor`; 1: a random
        walk's).
    unseen_quantiles : ndarray of shape (n_channels, len(LEVELS)) or (0, len(LEVELS))
        After ``pretrain``: the quantiles of ``|y − m| / s`` over the pretraining panel
        (:func:`~levy_sklearn.calibration.population_spread`), which calibrate the forecast
        of a channel a subject has never shown; none without a population.
    unseen_second_moment : ndarray of shape (n_channels,) or (0,)
        The mean square of those scores.
    history_edges : ndarray of shape (n_history - 1,)
        Inner edges of the history groups within each samples-ahead group; ``n_rows`` is
        ``n_channels · n_ahead · n_history``.

    Examples
    --------
    >>> import numpy as np
    >>> from levy_sklearn.calibration import LeadCalibration
    >>> unit = LeadCalibration.identity(n_channels=2)
    >>> unit.quantile(0.9, np.array([0, 1]), np.array([0.0, 5.0])).round(3)
    array([1.645, 1.645])
    """

    quantiles: np.ndarray
    second_moment: np.ndarray
    edges: np.ndarray
    n_scores: np.ndarray
    centres: np.ndarray
    mean_weight: np.ndarray
    level_weight: np.ndarray
    ahead_edges: np.ndarray
    growth: np.ndarray
    unseen_quantiles: np.ndarray
    unseen_second_moment: np.ndarray
    history_edges: np.ndarray

    def __post_init__(self) -> None:
        for name in FIELDS:  # a value: its own read-only copies
            table = np.array(getattr(self, name), np.int64 if name == "n_scores" else np.float64)
            table.flags.writeable = False
            object.__setattr__(self, name, table)

    def __setstate__(self, state: dict) -> None:
        # A pickle, perhaps of an earlier version's table: migrated as a file's state is.
        self.__init__(**migrate({name: state[name] for name in FIELDS if name in state}))

    @property
    def n_bins(self) -> int:
        """Number of lead bins."""
        return self.quantiles.shape[1]

    @property
    def n_groups(self) -> int:
        """Number of groups per channel: samples-ahead groups times history groups."""
        return (self.ahead_edges.size + 1) * (self.history_edges.size + 1)

    @property
    def n_channels(self) -> int:
        """Number of channels."""
        return self.quantiles.shape[0] // self.n_groups

    @property
    def has_unseen(self) -> bool:
        """Whether it calibrates the forecasts of channels a subject has never shown."""
        return self.unseen_second_moment.size > 0

    @classmethod
    def identity(cls, n_channels: int) -> LeadCalibration:
        """No calibration: the Normal's quantiles and variance.

        Parameters
        ----------
        n_channels : int

        Examples
        --------
        >>> import numpy as np
        >>> from levy_sklearn.calibration import LeadCalibration
        >>> LeadCalibration.identity(1).variance_factor(np.array([0]), np.array([3.0]))
        array([1.])
        """
        return cls.from_state(
            {
                "quantiles": np.broadcast_to(NORMAL_AT_LEVELS, (n_channels, 1, LEVELS.size)),
                "second_moment": np.ones((n_channels, 1)),
                "edges": np.empty(0),
                "n_scores": np.zeros((n_channels, 1), dtype=np.int64),
            }
        )

    def to_state(self) -> dict[str, np.ndarray | int]:
        """The table's fields, and ``"schema"``, the version of their schema
        (:data:`~levy_sklearn.calibration.schema.SCHEMA`), for a file.

        Examples
        --------
        >>> from levy_sklearn.calibration import LeadCalibration
        >>> state = LeadCalibration.identity(1).to_state()
        >>> state["schema"], state["growth"]
        (2, array([1.]))
        """
        return {"schema": SCHEMA} | {name: getattr(self, name) for name in FIELDS}

    @classmethod
    def from_state(cls, state: dict) -> LeadCalibration:
        """The table of a state (:meth:`to_state`'s, or an older schema's, migrated), checked:
        a ``ValueError`` names the field a table cannot hold (see :meth:`check`).

        Parameters
        ----------
        state : dict

        Examples
        --------
        >>> from levy_sklearn.calibration import LeadCalibration
        >>> cal = LeadCalibration.identity(2)
        >>> LeadCalibration.from_state(cal.to_state()).n_channels
        2
        """
        table = cls(**migrate(state))
        table.check(table.n_channels)
        return table

    def check(self, n_channels: int) -> None:
        """Raise a ``ValueError`` naming the first table that a calibration of
        ``n_channels`` channels cannot hold, as a fit writes them
        (:func:`~levy_sklearn.calibration.schema.validate`).

        Parameters
        ----------
        n_channels : int
            Channels of the forecaster the calibration belongs to.

        Examples
        --------
        >>> from levy_sklearn.calibration import LeadCalibration
        >>> LeadCalibration.identity(2).check(2)
        >>> LeadCalibration.identity(2).check(3)
        Traceback (most recent call last):
        ...
        ValueError: quantiles has 2 rows, not 3 (3 channels × 1 groups).
        """
        validate({name: getattr(self, name) for name in FIELDS}, n_channels)

    def rows(
        self,
        channels: np.ndarray,
        ahead: np.ndarray | None = None,
        history: np.ndarray | None = None,
    ) -> np.ndarray:
        """The table row of each forecast (an int array of the shape of ``channels``): its
        channel, and its samples-ahead and history groups where the calibration has groups.
        The other methods take these rows as ``channels``.

        Parameters
        ----------
        channels : ndarray of int
        ahead, history : ndarray of the same shape or None, default=None
            Samples ahead of each forecast, and observations of its channel in its context;
            ``None``: as many as the last group's.

        Examples
        --------
        >>> import numpy as np
        >>> from levy_sklearn.calibration import LeadCalibration
        >>> cal = LeadCalibration.identity(2)
        >>> cal.rows(np.array([0, 1]), np.array([1.0, 7.0]))  # one group: the channel
        array([0, 1])
        """
        channels = np.asarray(channels, int)
        ahead = np.full(channels.shape, np.inf) if ahead is None else ahead
        history = np.full(channels.shape, np.inf) if history is None else history
        rows = group_rows(channels, ahead, self.ahead_edges)
        return group_rows(rows, history, self.history_edges)

    def read(self, table: np.ndarray, rows: np.ndarray, leads: np.ndarray) -> np.ndarray:
        """One of this calibration's tables (row × bin [× level]) at each forecast.

        Parameters
        ----------
        table : ndarray
        rows, leads : ndarray of the same shape
            Table row (:meth:`rows`) and lead of each forecast.

        Examples
        --------
        >>> import numpy as np
        >>> from levy_sklearn.calibration import LeadCalibration
        >>> cal = LeadCalibration.identity(1)
        >>> cal.read(cal.mean_weight, np.array([0]), np.array([2.0]))
        array([1.])
        """
        return read_at(table, rows, leads, self.edges, self.centres)

    def quantile(
        self,
        coverage: float,
        channels: np.ndarray,
        leads: np.ndarray,
        unseen: np.ndarray | None = None,
    ) -> np.ndarray:
        """The calibrated half-width in units of σ of the central interval at ``coverage``.

        Parameters
        ----------
        coverage : float
            In ``(0, 1)``.
        channels, leads : ndarray of the same shape
            Table row and lead of each forecast.
        unseen : ndarray of bool of the same shape or None, default=None
            Forecasts of a channel the subject has never shown, whose σ is the
            population's scale: read from ``unseen_quantiles`` (where there are some).

        Examples
        --------
        >>> import numpy as np
        >>> from levy_sklearn.calibration import LeadCalibration
        >>> LeadCalibration.identity(1).quantile(0.5, np.array([0]), np.array([1.0])).round(3)
        array([0.674])
        """
        q = self.read(_at_coverage(self.quantiles, coverage), channels, leads)
        if not self.has_unseen:
            return q
        return self._unseen(q, _at_coverage(self.unseen_quantiles, coverage), channels, unseen)

    def variance_factor(
        self, channels: np.ndarray, leads: np.ndarray, unseen: np.ndarray | None = None
    ) -> np.ndarray:
        """The calibrated variance in units of σ² (the mean squared score).

        Parameters
        ----------
        channels, leads : ndarray of the same shape
            Table row and lead of each forecast.
        unseen : ndarray of bool of the same shape or None, default=None
            As for :meth:`quantile`.

        Examples
        --------
        >>> import numpy as np
        >>> from levy_sklearn.calibration import LeadCalibration
        >>> LeadCalibration.identity(1).variance_factor(np.array([0]), np.array([0.0]))
        array([1.])
        """
        factor = self.read(self.second_moment, channels, leads)
        return self._unseen(factor, self.unseen_second_moment, channels, unseen)

    def _unseen(self, values, per_channel, rows, unseen: np.ndarray | None) -> np.ndarray:
        """``values`` with those of the ``unseen`` forecasts replaced by ``per_channel``'s
        value for their channel (``rows`` are table rows, see :meth:`rows`)."""
        if not self.has_unseen or unseen is None or not np.any(unseen):
            return values
        return np.where(unseen, per_channel[np.asarray(rows, int) // self.n_groups], values)


def _at_coverage(table: np.ndarray, coverage: float) -> np.ndarray:
    """``table`` (``[...,] len(LEVELS)``) read at ``coverage``: linear in the Normal quantile
    between stored levels (exact for the Normal, and non-decreasing in coverage, nested
    intervals, as the stored quantiles are), and the end's ratio to the Normal beyond."""
    z, z_levels = norm.ppf(0.5 + coverage / 2), NORMAL_AT_LEVELS
    if coverage < LEVELS[0] or coverage > LEVELS[-1]:
        end = 0 if coverage < LEVELS[0] else -1
        return z * table[..., end] / z_levels[end]
    return np.apply_along_axis(lambda r: np.interp(z, z_levels, r), -1, table)


def group_rows(rows: np.ndarray, value: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """Table rows (``rows``-major) of forecasts in ``rows`` split by ``value`` into the
    groups of ``edges`` (samples ahead within channels, history within those): one place
    for fitting and reading them."""
    return rows * (edges.size + 1) + np.searchsorted(edges, value, side="right")


def read_at(
    table: np.ndarray,
    rows: np.ndarray,
    leads: np.ndarray,
    edges: np.ndarray,
    centres: np.ndarray,
) -> np.ndarray:
    """``table`` (row × bin [× level]) at each forecast: linear in lead between the
    centres and flat beyond them, or the lead's bin with fewer than two centres."""
    if centres.size < 2:
        return table[rows, np.searchsorted(edges, leads, side="right")]
    c = centres
    lo = np.clip(np.searchsorted(c, leads, side="right") - 1, 0, c.size - 2)
    width = c[lo + 1] - c[lo]
    with np.errstate(divide="ignore", invalid="ignore"):
        w = np.where(width > 0, (leads - c[lo]) / width, leads >= c[lo + 1])
    w = np.clip(w, 0.0, 1.0)[(...,) + (None,) * (table.ndim - 2)]  # over a table's levels
    return (1 - w) * table[rows, lo] + w * table[rows, lo + 1]
