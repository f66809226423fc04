"""The forecaster's predictive distribution, in one place.

:class:`~levy_sklearn.forecaster.LevyForecaster` turns the network's moments into the
distribution it reports in four steps, each written once here or named here:

1. **Network moments** (:class:`~levy_sklearn.network.LevyNet`): mean ``m`` and the
   closed-form Lévy variance ``v`` of every query, in the window's normalised units, the
   mean weighed against the window's level by the calibration's weight ``w`` (1 where the
   network forecast held-out data better than the level) and, after ``pretrain``, pulled
   towards the population's level ``ℓ`` by its weight ``u``: ``w·m + u·ℓ`` (see step 4).
2. **Data units**: ``mean = loc + s·(w·m + u·ℓ)``, ``var = s²·v`` with ``s`` the window's scale
   times the series' scale (:func:`to_data_units`).
3. **Beyond the training horizon**: ``var`` is floored by the variance at ``max_horizon``
   times ``1 + ρ·(lead / max_horizon − 1)``, ``ρ`` in ``[0, 1]`` the share of the held-out
   error variance that grew linearly with lead within the horizon (1: a random walk's
   growth; 0: a level's, none; :func:`horizon_floor`, :class:`LeadCalibration`).
4. **Calibration** (:class:`LeadCalibration`): on held-out forecasts, the weights ``w`` and
   ``u`` with the least absolute error, each held-out origin weighing 1, and the weighted
   split-conformal quantiles of the σ-normalised error ``|y − mean| / σ``, per channel
   (and, with enough held-out forecasts, per group of samples ahead, :func:`samples_ahead`,
   and of observations the window saw, :func:`channel_counts`) and lead bin, for every
   coverage level. Intervals and quantiles read them level by level; ``predict_var`` and
   ``predict_proba`` use the calibrated second moment (the Normal with the calibrated
   distribution's variance).

After ``pretrain``, a channel a series has never shown skips steps 1–4: the population's
mean with its scale as σ, calibrated by the pretraining panel's spread about that mean
(:func:`population_spread`).

The lead of a forecast is the time from its channel's last observation to the forecast time,
in time units: a forecast across a gap, or of a channel silent for longer than the others, has
a longer lead, and its interval is calibrated like other forecasts that far ahead.

Examples
--------
>>> import numpy as np
>>> from levy_sklearn.uncertainty import LeadCalibration
>>> rng = np.random.default_rng(0)
>>> leads = rng.uniform(0, 12, 3000)
>>> scores = np.abs(rng.standard_t(4, 3000)) * (1 + leads / 12)  # heavier, wider further out
>>> cal = LeadCalibration.fit(scores, np.zeros(3000, int), leads, n_channels=1)
>>> cal.n_bins
5
>>> near, far = cal.quantile(0.9, np.array([0, 0]), np.array([1.0, 11.0]))
>>> bool(far > near > 1.645)  # wider than the Normal's, and wider further out
True
"""

from __future__ import annotations

import copy
import warnings
from collections.abc import Callable
from typing import TYPE_CHECKING, NamedTuple

import numpy as np
from scipy.stats import norm

if TYPE_CHECKING:  # annotations only: uncertainty sits below the training loop
    from .training import LevyNeuralNet
    from .windows import SeriesWindows

__all__ = [
    "LeadCalibration",
    "channel_counts",
    "horizon_floor",
    "population_spread",
    "samples_ahead",
    "to_data_units",
]

# The coverage levels at which conformal quantiles are stored; other levels interpolate the
# ratio to the Normal quantile between them (and keep it beyond the ends).
LEVELS = np.concatenate([np.arange(1, 100) / 100, [0.995, 0.999]])
# The Normal's half-widths (in σ) at LEVELS: the identity calibration, and what stored
# quantiles are read against between, beyond and above the levels their scores resolve.
_NORMAL_AT_LEVELS = norm.ppf(0.5 + LEVELS / 2)
# Fewest calibration scores per channel and lead bin: bins are merged until each holds this
# many (a 95 % conformal quantile needs 19, and the quantile of 30 is still loose).
MIN_SCORES_PER_BIN = 30
MAX_BINS = 5
# Calibration groups by how many samples ahead a forecast is (:func:`samples_ahead`): the
# next sample, the 2nd–3rd, the 4th or later. At one lead, a forecast of the next sample is
# easier than one with samples before it: a study samples densely where the series moves.
AHEAD_EDGES = np.array([1.5, 3.5])
# Fewest scores of every channel and group for the groups to be kept: each then fills as
# many lead bins as one channel does (smaller panels keep one group per channel).
MIN_SCORES_PER_GROUP = MAX_BINS * MIN_SCORES_PER_BIN
# Calibration groups by how much of the series a forecast's window saw (:func:`channel_counts`):
# up to this many, split near quantiles of the held-out counts, within the samples-ahead groups.
# Calibrated only across origins, short histories under-covered on three of four held-out
# clinical panels and long ones over-covered (zero_shot.md, coverage by history length).
HISTORY_GROUPS = 3


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
    >>> from levy_sklearn.uncertainty import to_data_units
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
    variance ``∝ lead``; 0: it stays at the horizon's). :class:`LeadCalibration` learns the
    share from how the held-out errors grew with lead within the horizon.

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
    >>> from levy_sklearn.uncertainty import horizon_floor
    >>> horizon_floor(np.array([1.0, 1.0]), np.array([2.0, 2.0]), np.array([6.0, 24.0]), 12.0)
    array([1., 4.])
    >>> horizon_floor(np.ones(2), np.full(2, 2.0), np.full(2, 48.0), 12.0, np.array([0.0, 0.5]))
    array([2., 5.])
    """
    grown = 1 + growth * (lead / horizon - 1)
    return np.where(lead > horizon, np.maximum(variance, variance_at_horizon * grown), variance)


# The tables that define a LeadCalibration, in the order a model file lists them; those
# after the first four are absent from files written before they existed (their defaults).
_LEAD_CALIBRATION_FIELDS = (
    "quantiles",
    "second_moment",
    "edges",
    "n_scores",
    "centres",
    "mean_weight",
    "level_weight",
    "ahead_edges",
    "growth",
    "unseen_quantiles",
    "unseen_second_moment",
    "history_edges",
)


class LeadCalibration:
    """Split-conformal calibration of σ per channel and lead, at every coverage level.

    From held-out forecasts (whole held-out series after ``pretrain``, the last part of each
    series in a plain fit), the σ-normalised scores ``|y − mean| / σ`` are grouped by channel
    and by lead bin (quantiles of the held-out leads, at most five bins, each with at least
    30 scores per channel; fewer scores give fewer bins). For every stored level ``c`` the
    factor is the conformal quantile, the ``⌈(n + 1)c⌉``-th smallest score (with weights,
    the smallest score whose cumulative weight reaches ``c·(W + W/n_o)``: a new forecast
    weighs what one of the ``n_o`` held-out origins weighs in the bin on average; where
    ``n`` scores are too few for ``c``, above ``n/(n + 1)``, the highest level they resolve
    keeps its ratio to the Normal quantile, at least the largest score), raised where needed
    so that a typical interval never narrows further ahead: the factor times the bin's
    median held-out σ is non-decreasing in lead (a factor may fall where σ grows with lead;
    :meth:`fit`, which sees no σ, keeps the factors themselves non-decreasing). A forecast's
    factor is read linearly in lead between the bins' median leads (``centres``), so that it
    follows the lead within a bin too; flat beyond the outer centres (nearer than the first,
    a little wide). The interval at coverage ``c`` is ``mean ± quantile(c)·σ``; the
    calibrated variance is ``σ²`` times the mean squared score.

    Where every channel has enough held-out scores (``MIN_SCORES_PER_GROUP``), each channel
    is split further into groups by how many samples ahead the forecast is
    (:func:`samples_ahead`; ``ahead_edges``), each calibrated on its own, and each of those
    further by how many observations of the channel the forecast's window saw
    (:func:`channel_counts`; ``history_edges``: up to ``HISTORY_GROUPS`` groups near quantiles
    of the held-out counts, where each still holds ``MIN_SCORES_PER_GROUP`` scores), so that
    the intervals are calibrated for a subject seen briefly apart from one seen long: a
    study's first samples come in its most variable phase. Within a group the
    factor follows the held-out scores in lead without the running maximum: at the same
    position, a later sample comes in a calmer phase of the series (studies sample densely
    where it moves), which held-out subjects show and a running maximum would hide.

    Split conformal guarantees coverage for forecasts exchangeable with the held-out ones:
    across subjects when whole series are held out (a new subject drawn like the held-out
    ones), not across time within one subject, whose errors are correlated.

    Parameters
    ----------
    quantiles : ndarray of shape (n_channels, n_bins, len(LEVELS))
        Conformal quantiles of the scores at :data:`LEVELS`.
    second_moment : ndarray of shape (n_channels, n_bins)
        Mean squared score.
    edges : ndarray of shape (n_bins - 1,)
        Inner lead-bin edges in time units.
    n_scores : ndarray of shape (n_channels, n_bins)
        Number of held-out scores behind each bin.
    centres : ndarray of shape (n_bins,) or None, default=None
        Median held-out lead of each bin, increasing; ``None`` (a calibration saved before
        they were kept): the bin's factor holds across the bin.
    mean_weight : ndarray of shape (n_channels, n_bins) or None, default=None
        The weight ``w`` of the network's forecast against its anchor (see
        :meth:`fit_forecasts`); ``None``: 1, the network's forecast as it is.
    level_weight : ndarray of shape (n_channels, n_bins) or None, default=None
        The weight ``u`` of the pull from the anchor towards the population's level (see
        :meth:`fit_forecasts`); ``None``: 0, no pull.
    ahead_edges : ndarray of shape (n_groups - 1,) or None, default=None
        Inner edges of the samples-ahead groups; every table then has ``n_channels ·
        n_groups`` rows (channel-major, see :meth:`rows`). ``None``: one group per channel.
    growth : ndarray of shape (n_rows,) or None, default=None
        Per table row, the share in ``[0, 1]`` of the variance that keeps growing linearly
        beyond the training horizon (:func:`horizon_floor`; see :meth:`fit_forecasts`);
        ``None``: 1, a random walk's.
    unseen_quantiles : ndarray of shape (n_channels, len(LEVELS)) or None, default=None
        After ``pretrain``: the quantiles of ``|y − m| / s`` over the pretraining panel, with
        ``m`` and ``s`` the population's mean and scale of the channel
        (:func:`population_spread`), which calibrate the forecast of a channel a subject has
        never shown (its population's level and scale; see the ``unseen`` argument of
        :meth:`quantile`). ``None``: no such forecasts.
    unseen_second_moment : ndarray of shape (n_channels,) or None, default=None
        The mean square of those scores.
    history_edges : ndarray of shape (n_history - 1,) or None, default=None
        Inner edges of the history groups (observations of the channel in the forecast's
        context) within each samples-ahead group; every table then has ``n_channels ·
        n_groups`` rows, ``n_groups`` the product of both group counts (see :meth:`rows`).
        ``None``: one history group.

    Examples
    --------
    >>> import numpy as np
    >>> from levy_sklearn.uncertainty import LeadCalibration
    >>> unit = LeadCalibration.identity(n_channels=2)
    >>> unit.quantile(0.9, np.array([0, 1]), np.array([0.0, 5.0])).round(3)
    array([1.645, 1.645])
    """

    def __init__(
        self,
        quantiles: np.ndarray,
        second_moment: np.ndarray,
        edges: np.ndarray,
        n_scores: np.ndarray,
        centres: np.ndarray | None = None,
        mean_weight: np.ndarray | None = None,
        level_weight: np.ndarray | None = None,
        ahead_edges: np.ndarray | None = None,
        growth: np.ndarray | None = None,
        unseen_quantiles: np.ndarray | None = None,
        unseen_second_moment: np.ndarray | None = None,
        history_edges: np.ndarray | None = None,
    ) -> None:
        self.quantiles = np.asarray(quantiles, dtype=np.float64)
        self.second_moment = np.asarray(second_moment, dtype=np.float64)
        self.edges = np.asarray(edges, dtype=np.float64)
        self.n_scores = np.asarray(n_scores, dtype=np.int64)
        self.centres = None if centres is None else np.asarray(centres, dtype=np.float64)
        self.mean_weight = None if mean_weight is None else np.asarray(mean_weight, np.float64)
        self.level_weight = None if level_weight is None else np.asarray(level_weight, np.float64)
        self.ahead_edges = np.empty(0) if ahead_edges is None else np.asarray(ahead_edges, float)
        rows = self.quantiles.shape[0]
        self.growth = np.ones(rows) if growth is None else np.asarray(growth, dtype=np.float64)
        self.unseen_quantiles = _floats_or_none(unseen_quantiles)
        self.unseen_second_moment = _floats_or_none(unseen_second_moment)
        self.history_edges = (
            np.empty(0) if history_edges is None else np.asarray(history_edges, float)
        )

    @property
    def n_bins(self) -> int:
        """Number of lead bins."""
        return self.quantiles.shape[1]

    @property
    def n_groups(self) -> int:
        """Number of groups per channel: samples-ahead groups times history groups."""
        return (self.ahead_edges.size + 1) * (self.history_edges.size + 1)

    def rows(
        self,
        channels: np.ndarray,
        ahead: np.ndarray | None = None,
        history: np.ndarray | None = None,
    ) -> np.ndarray:
        """The table row of each forecast: its channel, and its samples-ahead and history
        groups where the calibration has groups. The other methods take these rows as
        ``channels``.

        Parameters
        ----------
        channels : ndarray of int
        ahead : ndarray of the same shape or None, default=None
            Samples ahead of each forecast (:func:`samples_ahead`); ``None``: as many as
            the last group's.
        history : ndarray of the same shape or None, default=None
            Observations of the channel in each forecast's context
            (:func:`channel_counts`); ``None``: as many as the last group's.

        Returns
        -------
        ndarray of int of the shape of ``channels``

        Examples
        --------
        >>> import numpy as np
        >>> from levy_sklearn.uncertainty import LeadCalibration
        >>> cal = LeadCalibration.identity(2)
        >>> cal.rows(np.array([0, 1]), np.array([1.0, 7.0]))  # one group: the channel
        array([0, 1])
        """
        channels = np.asarray(channels, int)
        ahead = np.full(channels.shape, np.inf) if ahead is None else ahead
        history = np.full(channels.shape, np.inf) if history is None else history
        rows = _group_rows(channels, ahead, self.ahead_edges)
        return _group_rows(rows, history, self.history_edges)

    def _grouped(self, ahead_edges: np.ndarray, history_edges: np.ndarray) -> LeadCalibration:
        """This calibration on the groups of ``ahead_edges`` and ``history_edges``, which
        hold its own edges: each group takes the rows of the group of this one it lies in."""
        if np.array_equal(ahead_edges, self.ahead_edges) and np.array_equal(
            history_edges, self.history_edges
        ):
            return self
        # The fewest samples ahead and observations of each new group, channel-major.
        n_channels = self.quantiles.shape[0] // self.n_groups
        chans, ahead, history = np.meshgrid(
            np.arange(n_channels),
            np.concatenate([[-np.inf], ahead_edges]),
            np.concatenate([[-np.inf], history_edges]),
            indexing="ij",
        )
        rows = self.rows(chans.ravel(), ahead.ravel(), history.ravel())

        def take(t: np.ndarray | None) -> np.ndarray | None:
            return None if t is None else t[rows]

        return LeadCalibration(
            take(self.quantiles),
            take(self.second_moment),
            self.edges,
            take(self.n_scores),
            self.centres,
            take(self.mean_weight),
            take(self.level_weight),
            ahead_edges,
            take(self.growth),
            self.unseen_quantiles,
            self.unseen_second_moment,
            history_edges,
        )

    def check(self, n_channels: int) -> None:
        """Raise a ``ValueError`` naming the first table that a calibration of
        ``n_channels`` channels cannot hold, as a fit writes them: shapes that agree,
        finite values, non-negative factors rising with the level, a positive second moment,
        sorted edges and centres, a growth share in ``[0, 1]``. Used on loading a model
        file, where a table edited by hand gave NaN or negative variances.

        Parameters
        ----------
        n_channels : int
            Channels of the forecaster the calibration belongs to.

        Examples
        --------
        >>> from levy_sklearn.uncertainty import LeadCalibration
        >>> LeadCalibration.identity(2).check(2)
        >>> LeadCalibration.identity(2).check(3)
        Traceback (most recent call last):
        ...
        ValueError: quantiles has 2 rows, not 3 (3 channels × 1 groups).
        """
        rows = n_channels * self.n_groups
        q = self.quantiles
        if q.ndim != 3 or q.shape[0] != rows or q.shape[1] < 1 or q.shape[2] != LEVELS.size:
            raise ValueError(
                f"quantiles has {q.shape[0] if q.ndim else 0} rows, not {rows} ({n_channels} "
                f"channels × {self.n_groups} groups)."
                if q.ndim and q.shape[0] != rows
                else f"quantiles has shape {q.shape}, not ({rows}, bins, {LEVELS.size})."
            )
        bins = q.shape[1]
        shapes = {
            "second_moment": (self.second_moment, (rows, bins)),
            "n_scores": (self.n_scores, (rows, bins)),
            "edges": (self.edges, (bins - 1,)),
            "centres": (self.centres, (bins,)),
            "mean_weight": (self.mean_weight, (rows, bins)),
            "level_weight": (self.level_weight, (rows, bins)),
            "growth": (self.growth, (rows,)),
            "unseen_quantiles": (self.unseen_quantiles, (n_channels, LEVELS.size)),
            "unseen_second_moment": (self.unseen_second_moment, (n_channels,)),
        }
        for name, (table, shape) in shapes.items():
            if table is not None and table.shape != shape:
                raise ValueError(f"{name} has shape {table.shape}, not {shape}.")
        edge_tables = [("ahead_edges", self.ahead_edges), ("history_edges", self.history_edges)]
        for name, table in [("quantiles", q), *edge_tables] + [
            (name, table) for name, (table, _) in shapes.items()
        ]:
            if table is not None and not np.isfinite(table).all():
                raise ValueError(f"{name} holds NaN or infinite values.")
        rules = [
            ("quantiles", (q >= 0).all() and (np.diff(q, axis=2) >= 0).all(), "rise from 0"),
            ("second_moment", (self.second_moment > 0).all(), "be positive"),
            ("growth", ((self.growth >= 0) & (self.growth <= 1)).all(), "lie in [0, 1]"),
        ]
        for name, table in [("edges", self.edges), ("centres", self.centres)]:
            rules.append((name, table is None or (np.diff(table) >= 0).all(), "be sorted"))
        for name, table in edge_tables:
            rules.append((name, (np.diff(table) > 0).all(), "be sorted"))
        if self.unseen_quantiles is not None:
            u = self.unseen_quantiles
            good = (u >= 0).all() and (np.diff(u, axis=1) >= 0).all()
            rules.append(("unseen_quantiles", good, "rise from 0"))
        if self.unseen_second_moment is not None:
            rules.append(
                ("unseen_second_moment", (self.unseen_second_moment > 0).all(), "be positive")
            )
        if (self.unseen_quantiles is None) != (self.unseen_second_moment is None):
            rules.append(("unseen_quantiles", False, "come with unseen_second_moment"))
        for name, ok, must in rules:
            if not ok:
                raise ValueError(f"{name} must {must}.")

    def to_state(self) -> dict[str, np.ndarray | None]:
        """The tables that define this calibration, by name (what a model file holds).

        Returns
        -------
        dict of str to ndarray or None

        Examples
        --------
        >>> from levy_sklearn.uncertainty import LeadCalibration
        >>> state = LeadCalibration.identity(2).to_state()
        >>> state["quantiles"].shape, state["centres"]
        ((2, 1, 101), None)
        """
        return {name: getattr(self, name) for name in _LEAD_CALIBRATION_FIELDS}

    @classmethod
    def from_state(cls, state: dict) -> LeadCalibration:
        """The calibration of :meth:`to_state`'s tables, checked as :meth:`check` does
        (for the channel count its tables imply).

        Parameters
        ----------
        state : dict
            Tables by name; the first four are required, later ones default when absent.

        Returns
        -------
        LeadCalibration

        Raises
        ------
        ValueError
            If a table is unknown, missing, or one a fit never writes (the message names it).

        Examples
        --------
        >>> from levy_sklearn.uncertainty import LeadCalibration
        >>> state = LeadCalibration.identity(2).to_state()
        >>> LeadCalibration.from_state(state).n_bins
        1
        >>> LeadCalibration.from_state({**state, "second_moment": -state["second_moment"]})
        Traceback (most recent call last):
        ...
        ValueError: second_moment must be positive.
        """
        unknown = sorted(set(state) - set(_LEAD_CALIBRATION_FIELDS))
        missing = [name for name in _LEAD_CALIBRATION_FIELDS[:4] if name not in state]
        if unknown or missing:
            raise ValueError(f"unknown tables {unknown} or missing tables {missing}.")
        table = cls(**state)
        rows = table.quantiles.shape[0] if table.quantiles.ndim else 0
        table.check(rows // table.n_groups)
        return table

    @classmethod
    def identity(cls, n_channels: int) -> LeadCalibration:
        """No calibration: the Normal's quantiles and variance.

        Parameters
        ----------
        n_channels : int

        Returns
        -------
        LeadCalibration

        Examples
        --------
        >>> import numpy as np
        >>> from levy_sklearn.uncertainty import LeadCalibration
        >>> LeadCalibration.identity(1).variance_factor(np.array([0]), np.array([3.0]))
        array([1.])
        """
        return cls(
            np.broadcast_to(_NORMAL_AT_LEVELS, (n_channels, 1, LEVELS.size)).copy(),
            np.ones((n_channels, 1)),
            np.empty(0),
            np.zeros((n_channels, 1), dtype=np.int64),
        )

    @classmethod
    def fit(
        cls,
        scores: np.ndarray,
        channels: np.ndarray,
        leads: np.ndarray,
        n_channels: int,
    ) -> LeadCalibration:
        """Calibrate from held-out σ-normalised scores.

        Parameters
        ----------
        scores : ndarray of shape (n,)
            ``|y − mean| / σ`` of held-out forecasts.
        channels : ndarray of int of shape (n,)
            The channel of each.
        leads : ndarray of shape (n,)
            The lead of each (time units).
        n_channels : int

        Returns
        -------
        LeadCalibration

        Raises
        ------
        ValueError
            If a channel has fewer than ``MIN_SCORES_PER_BIN`` scores.

        Examples
        --------
        >>> import numpy as np
        >>> from levy_sklearn.uncertainty import LeadCalibration
        >>> scores = np.abs(np.random.default_rng(0).standard_normal(20_000))
        >>> cal = LeadCalibration.fit(scores, np.zeros(20_000, int), np.arange(20_000.0), 1)
        >>> float(cal.quantile(0.9, np.array([0]), np.array([0.0]))[0].round(1))  # Normal: 1.645
        1.6
        """
        scores, leads = np.asarray(scores, float), np.asarray(leads, float)
        channels = np.asarray(channels, int)
        edges, bins, centres = _lead_bins(channels, leads, n_channels)
        return cls._from_scores(scores, channels, bins, edges, centres, n_channels)

    @classmethod
    def _from_scores(
        cls,
        scores: np.ndarray,
        channels: np.ndarray,
        bins: np.ndarray,
        edges: np.ndarray,
        centres: np.ndarray,
        n_channels: int,
        mean_weight: np.ndarray | None = None,
        weights: np.ndarray | None = None,
        level_weight: np.ndarray | None = None,
        origins: np.ndarray | None = None,
        ahead_edges: np.ndarray | None = None,
        growth: np.ndarray | None = None,
        typical_sigma: np.ndarray | None = None,
        history_edges: np.ndarray | None = None,
    ) -> LeadCalibration:
        """The weighted conformal quantiles and second moments of ``scores`` per table row
        (channel and groups) and bin. A new forecast weighs what a held-out origin weighs in
        the group on average, ``W / n_o`` (``W`` the group's total weight, ``n_o`` its
        distinct ``origins``; one origin per score when ``None``): the level-``c`` quantile
        is the smallest score whose cumulative weight reaches ``c·(W + W / n_o)``. With unit
        weights that is the ``⌈(n + 1)c⌉``-th smallest; with each origin's weight spread over
        its forecasts' lead bins, a new origin weighs in a bin the share a held-out one has
        there (the pooled conformal quantile of two-level data: origins exchangeable, each
        weighing the same), where a whole unit would err wide on panels of few origins.
        Without samples-ahead groups, a typical width (the factor times ``typical_sigma``,
        the bin's median held-out σ; 1 without it) is made non-decreasing in lead (see the
        class docstring)."""
        n_bins = centres.size
        weights = np.ones_like(scores) if weights is None else weights
        origins = np.arange(scores.size) if origins is None else origins
        quantiles = np.empty((n_channels, n_bins, LEVELS.size))
        second = np.empty((n_channels, n_bins))
        n_scores = np.zeros((n_channels, n_bins), dtype=np.int64)
        for ch, b, members in _groups(channels, bins, n_channels, n_bins):
            quantiles[ch, b], second[ch, b] = _weighted_conformal(
                scores[members], weights[members], origins[members]
            )
            n_scores[ch, b] = members.sum()
        # History groups keep the running maximum: unlike a samples-ahead group, one holds
        # forecasts at every position, whose typical interval widens with lead.
        if ahead_edges is None or not ahead_edges.size:  # never narrower further ahead
            sigma = np.ones(second.shape) if typical_sigma is None else typical_sigma
            quantiles = np.maximum.accumulate(quantiles * sigma[..., None], axis=1)
            quantiles /= sigma[..., None]
            second = np.maximum.accumulate(second * sigma**2, axis=1) / sigma**2
        return cls(
            quantiles,
            second,
            edges,
            n_scores,
            centres,
            mean_weight,
            level_weight,
            ahead_edges,
            growth,
            history_edges=history_edges,
        )

    @classmethod
    def fit_forecasts(
        cls,
        targets: np.ndarray,
        means: np.ndarray,
        sigmas: np.ndarray,
        channels: np.ndarray,
        leads: np.ndarray,
        n_channels: int,
        weights: np.ndarray | None = None,
        levels: np.ndarray | None = None,
        origins: np.ndarray | None = None,
        ahead: np.ndarray | None = None,
        history: np.ndarray | None = None,
    ) -> LeadCalibration:
        """Calibrate from held-out forecasts, the mean shrunk towards its anchor by lead.

        ``targets`` and ``means`` are measured from the forecast's anchor (the window's
        level: with ``normalization="last"`` the channel's last observation), in any units
        shared with ``sigmas``. Per channel and lead bin, the weight ``w`` in
        ``{0, 0.05, …, 1}`` of the forecast ``w·mean`` with the least absolute error on the
        held-out forecasts is kept (read linearly in lead, as the quantiles): 1 where the
        network beats its anchor, less where it does not, so that a forecast is never
        worse than the last value on the data held out (a larger weight wins a tie). The
        scores ``|y − w·mean| / σ`` are then calibrated as by :meth:`fit`. Two numbers per
        channel and bin are fitted on the held-out forecasts that calibrate them, a
        negligible loss of exchangeability beside the 30 or more scores behind each. The
        errors ``|y − w·mean|`` also tell how each channel's variance grows beyond the
        training horizon (``growth``, :func:`horizon_floor`): their median's square per
        lead bin, fitted as ``a + b·lead`` (``a, b ≥ 0``: a level plus a random walk), gives
        the share ``b·L / (a + b·L)`` of the growing part at the last bin's lead ``L``
        (:meth:`fit`, which sees only scores, keeps 1).

        Parameters
        ----------
        targets, means, sigmas : ndarray of shape (n,)
            Held-out targets and forecasts, relative to the anchor, and σ.
        channels : ndarray of int of shape (n,)
        leads : ndarray of shape (n,)
        n_channels : int
        weights : ndarray of shape (n,) or None, default=None
            Weight of each forecast in the mean's weight, the quantiles and the second
            moment; ``None``: 1 each. :func:`held_out_forecasts` gives each held-out origin
            (window) a total weight of 1 per channel, so that a new forecast, one origin,
            is exchangeable with the weighed units: unweighted, the many far targets of a
            long held-out window would outweigh its few near ones.
        levels : ndarray of shape (n,) or None, default=None
            The population's level relative to the anchor, in the units of ``targets``.
            Given, the forecast is ``w·mean + u·level``: the pair ``(w, u)`` of the grid
            ``{0, 0.05, …, 1}²`` with the least absolute error per channel and lead bin
            (the larger ``w``, then the smaller ``u``, wins a tie), so that a sparse
            history's forecast can move from its last observation towards the population
            as the lead grows, where that forecast the held-out subjects better. ``None``:
            ``u = 0``.
        origins : ndarray of shape (n,) or None, default=None
            The held-out origin (window) of each forecast: a new forecast weighs in the
            conformal quantiles what an origin weighs in its channel and lead bin on average
            (see the class docstring); ``None``: each forecast is its own origin.
        ahead : ndarray of shape (n,) or None, default=None
            Samples ahead of each forecast (:func:`samples_ahead`): the channels are split
            into the groups of ``AHEAD_EDGES`` where every channel and group has
            ``MIN_SCORES_PER_GROUP`` scores (the weights and quantiles per group, see the
            class docstring); ``None``: one group per channel.
        history : ndarray of shape (n,) or None, default=None
            Observations of the channel in each forecast's context (:func:`channel_counts`):
            each row (channel and samples-ahead group) is split further near quantiles of
            ``history``, into as many groups (up to ``HISTORY_GROUPS``) as keep
            ``MIN_SCORES_PER_GROUP`` scores in each; ``None``: no history groups.

        Returns
        -------
        LeadCalibration

        Examples
        --------
        >>> import numpy as np
        >>> from levy_sklearn.uncertainty import LeadCalibration
        >>> rng = np.random.default_rng(0)
        >>> y, noise = rng.normal(size=600), rng.normal(size=600)
        >>> good = LeadCalibration.fit_forecasts(y, y + 0.1 * noise, np.ones(600),
        ...                                      np.zeros(600, int), np.zeros(600), 1)
        >>> bad = LeadCalibration.fit_forecasts(y, 3 * noise, np.ones(600), np.zeros(600, int),
        ...                                     np.zeros(600), 1)
        >>> float(good.mean_weight[0, 0]), float(bad.mean_weight[0, 0])
        (1.0, 0.0)
        """
        targets, means = np.asarray(targets, float), np.asarray(means, float)
        sigmas, leads = np.asarray(sigmas, float), np.asarray(leads, float)
        channels, ahead_edges, history_edges = np.asarray(channels, int), np.empty(0), np.empty(0)
        by_channel, n_by_channel = channels, n_channels
        if ahead is not None and (
            split := _filled_split(channels, ahead, AHEAD_EDGES, n_channels)
        ):
            (channels, n_channels), ahead_edges = split, AHEAD_EDGES
        if history is not None:
            history = np.asarray(history, float)
            for candidate in _history_edges(history):  # the most groups that fill
                if split := _filled_split(channels, history, candidate, n_channels):
                    (channels, n_channels), history_edges = split, candidate
                    break
        weights = np.ones_like(targets) if weights is None else np.asarray(weights, float)
        edges, bins, centres = _lead_bins(channels, leads, n_channels)
        levels = np.zeros_like(targets) if levels is None else np.asarray(levels, float)
        # The grid of (w, u), w from 1 down and u from 0 up: the first of a tie is kept.
        w_grid = np.arange(20, -1, -1) / 20
        u_grid = np.arange(21) / 20 if levels.any() else np.zeros(1)
        w_pairs, u_pairs = (g.ravel() for g in np.meshgrid(w_grid, u_grid, indexing="ij"))
        weight = np.ones((n_channels, centres.size))
        pull = np.zeros((n_channels, centres.size))
        typical_sigma = np.ones((n_channels, centres.size))
        for ch, b, members in _groups(channels, bins, n_channels, centres.size):
            typical_sigma[ch, b] = np.median(sigmas[members])
            forecast = w_pairs * means[members, None] + u_pairs * levels[members, None]
            err = weights[members] @ np.abs(targets[members, None] - forecast)
            # Equal errors may differ in the last bits (the product's summation order).
            best = np.flatnonzero(err <= err.min() * (1 + 1e-12))[0]
            weight[ch, b], pull[ch, b] = w_pairs[best], u_pairs[best]
        shrunk = (
            _read_at(weight, channels, leads, edges, centres) * means
            + _read_at(pull, channels, leads, edges, centres) * levels
        )
        errors = np.abs(targets - shrunk)
        scores = errors / sigmas
        return cls._from_scores(
            scores,
            channels,
            bins,
            edges,
            centres,
            n_channels,
            weight,
            weights,
            pull,
            origins,
            ahead_edges,
            np.repeat(
                _error_growth(errors, weights, by_channel, bins, centres, n_by_channel),
                n_channels // n_by_channel,
            ),
            typical_sigma,
            history_edges,
        )

    def mean_weight_at(self, channels: np.ndarray, leads: np.ndarray) -> np.ndarray:
        """The weight of the network's forecast against its anchor at each forecast.

        Parameters
        ----------
        channels, leads : ndarray of the same shape

        Returns
        -------
        ndarray of the shape of ``leads``

        Examples
        --------
        >>> import numpy as np
        >>> from levy_sklearn.uncertainty import LeadCalibration
        >>> LeadCalibration.identity(1).mean_weight_at(np.array([0]), np.array([2.0]))
        array([1.])
        """
        return self._weight_at(self.mean_weight, 1.0, channels, leads)

    def level_weight_at(self, channels: np.ndarray, leads: np.ndarray) -> np.ndarray:
        """The weight of the pull towards the population's level at each forecast.

        Parameters
        ----------
        channels, leads : ndarray of the same shape

        Returns
        -------
        ndarray of the shape of ``leads``

        Examples
        --------
        >>> import numpy as np
        >>> from levy_sklearn.uncertainty import LeadCalibration
        >>> LeadCalibration.identity(1).level_weight_at(np.array([0]), np.array([2.0]))
        array([0.])
        """
        return self._weight_at(self.level_weight, 0.0, channels, leads)

    def _weight_at(
        self, table: np.ndarray | None, default: float, channels: np.ndarray, leads: np.ndarray
    ) -> np.ndarray:
        """``table`` read at each forecast, or ``default`` everywhere without one."""
        if table is None:
            return np.full(np.shape(leads), default)
        return self._read(table, channels, leads)

    def at_least(self, other: LeadCalibration) -> LeadCalibration:
        """The larger of two calibrations at every channel, lead and level: a series
        calibrated on its own after ``pretrain`` never narrows the pretrained intervals.
        The mean's weights stay this calibration's.

        Parameters
        ----------
        other : LeadCalibration
            Same number of channels.

        Returns
        -------
        LeadCalibration
            On the union of both lead-bin edges.

        Examples
        --------
        >>> import numpy as np
        >>> from levy_sklearn.uncertainty import LeadCalibration
        >>> rng = np.random.default_rng(0)
        >>> wide = LeadCalibration.fit(3 * np.abs(rng.standard_normal(100)), np.zeros(100, int),
        ...                            np.zeros(100), 1)
        >>> both = LeadCalibration.identity(1).at_least(wide)
        >>> bool(both.quantile(0.9, np.array([0]), np.array([0.0]))[0] > 3)
        True
        """
        ahead = np.union1d(self.ahead_edges, other.ahead_edges)
        history = np.union1d(self.history_edges, other.history_edges)
        mine, theirs = self._grouped(ahead, history), other._grouped(ahead, history)
        if mine is not self or theirs is not other:  # both on all groups
            return mine.at_least(theirs)
        # A calibration of a series' own held-out data has no population to read.
        unseen = (self.unseen_quantiles, self.unseen_second_moment)
        if self.unseen_quantiles is None:
            unseen = (other.unseen_quantiles, other.unseen_second_moment)
        # Both are exact on the union of their knots, linear between them and flat beyond,
        # so the larger of the two at each knot, read linearly, is at least either anywhere.
        knots = np.union1d(self._knots(), other._knots())
        chans = np.arange(self.quantiles.shape[0])[:, None]
        at = np.broadcast_to(knots, (chans.size, knots.size))

        def larger(mine: np.ndarray, theirs: np.ndarray) -> np.ndarray:
            return np.maximum(self._read(mine, chans, at), other._read(theirs, chans, at))

        total = self.n_scores.sum(axis=1) + other.n_scores.sum(axis=1)
        return LeadCalibration(
            larger(self.quantiles, other.quantiles),
            larger(self.second_moment, other.second_moment),
            (knots[1:] + knots[:-1]) / 2,
            np.repeat(total[:, None], knots.size, axis=1),
            knots,
            None if self.mean_weight is None else self._read(self.mean_weight, chans, at),
            None if self.level_weight is None else self._read(self.level_weight, chans, at),
            self.ahead_edges,
            np.maximum(self.growth, other.growth),
            *unseen,
            self.history_edges,
        )

    def _knots(self) -> np.ndarray:
        """Leads at which this calibration's tables, read linearly between them and flat
        beyond, are the calibration exactly: its centres, or each inner bin edge and the
        float just below it (the steps of a calibration read by bin)."""
        if self.centres is not None and self.centres.size > 1:
            return self.centres
        return (
            np.union1d(self.edges, np.nextafter(self.edges, -np.inf))
            if self.edges.size
            else np.zeros(1)
        )

    def _read(self, table: np.ndarray, channels: np.ndarray, leads: np.ndarray) -> np.ndarray:
        return _read_at(table, channels, leads, self.edges, self.centres)

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
            Channel and lead of each forecast.
        unseen : ndarray of bool of the same shape or None, default=None
            Forecasts of a channel the subject has never shown, whose σ is the
            population's scale: read from ``unseen_quantiles`` (where there are some).

        Returns
        -------
        ndarray of the shape of ``leads``

        Examples
        --------
        >>> import numpy as np
        >>> from levy_sklearn.uncertainty import LeadCalibration
        >>> LeadCalibration.identity(1).quantile(0.5, np.array([0]), np.array([1.0])).round(3)
        array([0.674])
        """
        q = self._read(_at_coverage(self.quantiles, coverage), channels, leads)
        if self.unseen_quantiles is None:
            return q
        return self._unseen(q, _at_coverage(self.unseen_quantiles, coverage), channels, unseen)

    def variance_factor(
        self, channels: np.ndarray, leads: np.ndarray, unseen: np.ndarray | None = None
    ) -> np.ndarray:
        """The calibrated variance in units of σ² (the mean squared score).

        Parameters
        ----------
        channels, leads : ndarray of the same shape
            Channel and lead of each forecast.
        unseen : ndarray of bool of the same shape or None, default=None
            As for :meth:`quantile`.

        Returns
        -------
        ndarray of the shape of ``leads``

        Examples
        --------
        >>> import numpy as np
        >>> from levy_sklearn.uncertainty import LeadCalibration
        >>> scores = np.full(60, 2.0)  # every held-out error two σ out
        >>> cal = LeadCalibration.fit(scores, np.zeros(60, int), np.zeros(60), 1)
        >>> cal.variance_factor(np.array([0]), np.array([0.0]))
        array([4.])
        """
        factor = self._read(self.second_moment, channels, leads)
        return self._unseen(factor, self.unseen_second_moment, channels, unseen)

    def with_unseen(self, quantiles: np.ndarray, second_moment: np.ndarray) -> LeadCalibration:
        """This calibration, calibrating the forecasts of channels a subject has never shown
        by ``quantiles`` and ``second_moment`` (see :func:`population_spread`).

        Parameters
        ----------
        quantiles : ndarray of shape (n_channels, len(LEVELS))
        second_moment : ndarray of shape (n_channels,)

        Returns
        -------
        LeadCalibration
            A copy; this one is unchanged.

        Examples
        --------
        >>> import numpy as np
        >>> from levy_sklearn.uncertainty import LEVELS, LeadCalibration
        >>> cal = LeadCalibration.identity(1).with_unseen(np.full((1, LEVELS.size), 3.0), [9.0])
        >>> seen, unseen = np.array([0, 0]), np.array([False, True])
        >>> cal.quantile(0.9, seen, np.zeros(2), unseen).round(3)  # the Normal's, then 3
        array([1.645, 3.   ])
        >>> cal.variance_factor(seen, np.zeros(2), unseen)
        array([1., 9.])
        """
        new = copy.copy(self)
        new.unseen_quantiles = _floats_or_none(quantiles)
        new.unseen_second_moment = _floats_or_none(second_moment)
        return new

    def _unseen(
        self,
        values: np.ndarray,
        per_channel: np.ndarray | None,
        rows: np.ndarray,
        unseen: np.ndarray | None,
    ) -> np.ndarray:
        """``values`` with those of the ``unseen`` forecasts replaced by ``per_channel``'s
        value for their channel (``rows`` are table rows, see :meth:`rows`)."""
        if per_channel is None or unseen is None or not np.any(unseen):
            return values
        return np.where(unseen, per_channel[np.asarray(rows, int) // self.n_groups], values)


def _at_coverage(table: np.ndarray, coverage: float) -> np.ndarray:
    """``table`` (``[...,] len(LEVELS)``) read at ``coverage``: linear in the Normal quantile
    between stored levels (exact for the Normal, and non-decreasing in coverage, nested
    intervals, as the stored quantiles are), and the end's ratio to the Normal beyond."""
    z, z_levels = norm.ppf(0.5 + coverage / 2), _NORMAL_AT_LEVELS
    if coverage < LEVELS[0] or coverage > LEVELS[-1]:
        end = 0 if coverage < LEVELS[0] else -1
        return z * table[..., end] / z_levels[end]
    return np.apply_along_axis(lambda r: np.interp(z, z_levels, r), -1, table)


def _floats_or_none(a: np.ndarray | None) -> np.ndarray | None:
    return None if a is None else np.asarray(a, dtype=np.float64)


def _weighted_conformal(
    scores: np.ndarray, weights: np.ndarray, origins: np.ndarray
) -> tuple[np.ndarray, float]:
    """The weighted conformal quantiles of ``scores`` at :data:`LEVELS` and their weighted
    mean square, a new forecast weighing what one of the ``origins`` weighs on average (see
    :meth:`LeadCalibration._from_scores`)."""
    order = np.argsort(scores, kind="stable")
    s, w = scores[order], weights[order]
    cum = np.cumsum(w)
    new = cum[-1] / np.unique(origins).size
    # A relative tolerance: unit weights must give exactly the unweighted ranks.
    rank = np.searchsorted(cum, LEVELS * (cum[-1] + new) * (1 - 1e-12), side="left")
    return _conformal_quantiles(s, rank), float(np.average(s**2, weights=w))


def population_spread(
    values: list[np.ndarray], population: np.ndarray, ratio: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """How far a pretraining panel's values lie from their population's level, for the
    forecasts of a channel a subject has never shown.

    Nothing of that subject tells where such a channel lies, and the network never saw a
    subject without it (a dense channel is in every training context): the forecast is the
    population's mean, with the population's scale ``s`` as σ, and its calibration the
    conformal quantiles (at :data:`LEVELS`) and the mean square of ``|y − m| / s`` over
    every observed value of the panel, each series weighing 1 per channel and a new subject
    what one series weighs. A channel the panel never observed keeps the Normal's.

    Parameters
    ----------
    values : list of ndarray of shape (n_times, n_channels)
        Each series' standardised values (``NaN``: unobserved).
    population : ndarray of shape (n_series, n_channels)
        The population's mean in each series' standardised units.
    ratio : ndarray of shape (n_series, n_channels)
        Each series' scale over the population's.

    Returns
    -------
    quantiles : ndarray of shape (n_channels, len(LEVELS))
    second_moment : ndarray of shape (n_channels,)

    Examples
    --------
    >>> import numpy as np
    >>> from levy_sklearn.uncertainty import population_spread
    >>> rng = np.random.default_rng(0)
    >>> values = [rng.normal(size=(50, 1)) for _ in range(40)]  # a standard Normal population
    >>> q, m2 = population_spread(values, np.zeros((40, 1)), np.ones((40, 1)))
    >>> float(m2[0].round(2))  # the Normal's mean square
    1.0
    >>> # 90 %: the Normal's 1.645 widened for one new subject among 40 (its 92 % quantile)
    >>> float(q[0, 89].round(2))
    1.74
    """
    n_channels = population.shape[1]
    quantiles = np.tile(_NORMAL_AT_LEVELS, (n_channels, 1))
    second = np.ones(n_channels)
    for c in range(n_channels):
        scores, weights, origins = [], [], []
        for i, v in enumerate(values):
            observed = v[np.isfinite(v[:, c]), c]
            scores.append(np.abs(observed - population[i, c]) * ratio[i, c])
            weights.append(np.full(observed.size, 1.0 / max(observed.size, 1)))
            origins.append(np.full(observed.size, i))
        if sum(a.size for a in scores):
            quantiles[c], second[c] = _weighted_conformal(
                *(np.concatenate(a) for a in (scores, weights, origins))
            )
    return quantiles, second


def _conformal_quantiles(scores: np.ndarray, rank: np.ndarray) -> np.ndarray:
    """The sorted ``scores`` at ``rank`` (one per level of :data:`LEVELS`); a level its
    scores cannot resolve (``rank`` past the last score: above ``n/(n + 1)`` for ``n``
    unit-weight scores, where split conformal's interval is unbounded) extends the highest
    resolved level's ratio to the Normal quantile, never below the largest score. Capped at
    the largest score instead, all those levels got one interval: 99.9 % as wide as 98 %."""
    resolved = rank < scores.size
    quantiles = scores[np.minimum(rank, scores.size - 1)]
    if resolved.all() or not resolved.any():
        return quantiles
    z, top = _NORMAL_AT_LEVELS, np.flatnonzero(resolved)[-1]
    return np.where(resolved, quantiles, np.maximum(scores[-1], quantiles[top] * z / z[top]))


def _group_rows(rows: np.ndarray, value: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """Table rows (``rows``-major) of forecasts in ``rows`` split by ``value`` into the
    groups of ``edges`` (samples ahead within channels, history within those): one place
    for fitting and reading them."""
    return rows * (edges.size + 1) + np.searchsorted(edges, value, side="right")


def _filled_split(
    rows: np.ndarray, value: np.ndarray, edges: np.ndarray, n_rows: int
) -> tuple[np.ndarray, int] | None:
    """``rows`` split by ``value`` into the groups of ``edges``, and the number of rows
    then, where every row and group keeps ``MIN_SCORES_PER_GROUP`` scores; ``None`` where
    one would not (samples-ahead and history groups alike)."""
    grouped, n_grouped = _group_rows(rows, value, edges), n_rows * (edges.size + 1)
    if np.bincount(grouped, minlength=n_grouped).min() < MIN_SCORES_PER_GROUP:
        return None
    return grouped, n_grouped


def _history_edges(history: np.ndarray) -> list[np.ndarray]:
    """Candidate inner edges of the history groups, from ``HISTORY_GROUPS`` groups down to
    two: halfway between adjacent held-out counts, those whose share of the forecasts at or
    below lies nearest to ``1/n, 2/n, …`` (counts tie: a context full of observations is the
    most common count of a dense series). None with a single count."""
    values, counts = np.unique(history, return_counts=True)
    if values.size < 2:
        return []
    between = (values[:-1] + values[1:]) / 2
    share = np.cumsum(counts)[:-1] / history.size
    return [
        np.unique(between[np.abs(share[:, None] - np.arange(1, n) / n).argmin(axis=0)])
        for n in range(HISTORY_GROUPS, 1, -1)
    ]


def _lead_bins(
    channels: np.ndarray, leads: np.ndarray, n_channels: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Inner edges, bin of each score and centres of the lead bins: quantiles of the leads,
    as many bins (up to ``MAX_BINS``) as the scarcest channel fills with
    ``MIN_SCORES_PER_BIN`` scores each."""
    counts = np.bincount(channels, minlength=n_channels)
    if counts.min() < MIN_SCORES_PER_BIN:
        raise ValueError(
            f"{counts.min()} held-out forecasts for channel {int(counts.argmin())}; at "
            f"least {MIN_SCORES_PER_BIN} per channel are needed to calibrate σ."
        )
    n_bins = int(min(MAX_BINS, counts.min() // MIN_SCORES_PER_BIN))
    edges = np.quantile(leads, np.arange(1, n_bins) / n_bins) if n_bins > 1 else np.empty(0)
    bins = np.searchsorted(edges, leads, side="right")
    # A bin left empty by tied leads (a regular series' leads are multiples of its step) is
    # centred on its lower edge; ties read as a step.
    lower = np.concatenate([edges[:1], edges])[:n_bins] if n_bins > 1 else np.zeros(1)
    centres = np.array(
        [np.median(leads[bins == b]) if (bins == b).any() else lower[b] for b in range(n_bins)]
    )
    return edges, bins, np.maximum.accumulate(centres)


def _error_growth(
    errors: np.ndarray,
    weights: np.ndarray,
    channels: np.ndarray,
    bins: np.ndarray,
    centres: np.ndarray,
    n_channels: int,
) -> np.ndarray:
    """Per channel, the share in ``[0, 1]`` of the held-out error variance at the last lead
    bin that grew linearly with lead: the weighted median of ``|error|`` squared per lead bin
    of ``MIN_SCORES_PER_BIN`` or more (robust to the errors' heavy tails), fitted by least
    squares as ``a + b·lead`` with ``a, b ≥ 0`` (a level plus a random walk), read as
    ``b·L / (a + b·L)`` at the farthest such bin's centre ``L``; 1, a random walk's, where
    fewer than two bins tell."""
    growth = np.ones(n_channels)
    for ch in range(n_channels):
        x, y = [], []
        for b, centre in enumerate(centres):
            members = (channels == ch) & (bins == b)
            if members.sum() < MIN_SCORES_PER_BIN:
                continue
            order = np.argsort(errors[members], kind="stable")
            cum = np.cumsum(weights[members][order])
            x.append(centre)
            y.append(errors[members][order][np.searchsorted(cum, cum[-1] / 2)] ** 2)
        x, y = np.asarray(x), np.asarray(y)
        if x.size < 2 or np.ptp(x) == 0 or not y.any():
            continue
        slope, level = np.polyfit(x, y, 1)
        if slope <= 0:  # no growth: a level
            slope, level = 0.0, y.mean()
        elif level < 0:  # through the origin: all of it grows
            slope, level = (x @ y) / (x @ x), 0.0
        growth[ch] = slope * x[-1] / (level + slope * x[-1])
    return growth


def _groups(channels: np.ndarray, bins: np.ndarray, n_channels: int, n_bins: int):
    """``(channel, bin, members)`` for every channel and lead bin: the members are the
    channel's scores in the bin, or all the channel's in a thin bin (fewer than
    ``MIN_SCORES_PER_BIN``)."""
    for ch in range(n_channels):
        for b in range(n_bins):
            members = (channels == ch) & (bins == b)
            if members.sum() < MIN_SCORES_PER_BIN:
                members = channels == ch
            yield ch, b, members


def _read_at(
    table: np.ndarray,
    channels: np.ndarray,
    leads: np.ndarray,
    edges: np.ndarray,
    centres: np.ndarray | None,
) -> np.ndarray:
    """``table`` (channel × bin [× level]) at each forecast: linear in lead between the
    centres and flat beyond them, or the lead's bin without centres."""
    if centres is None or centres.size == 1:
        return table[channels, np.searchsorted(edges, leads, side="right")]
    c = centres
    lo = np.clip(np.searchsorted(c, leads, side="right") - 1, 0, c.size - 2)
    width = c[lo + 1] - c[lo]
    with np.errstate(divide="ignore", invalid="ignore"):
        w = np.where(width > 0, (leads - c[lo]) / width, leads >= c[lo + 1])
    w = np.clip(w, 0.0, 1.0)[(...,) + (None,) * (table.ndim - 2)]  # over a table's levels
    return (1 - w) * table[channels, lo] + w * table[channels, lo + 1]


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
    of the series the forecast saw (the history groups of :class:`LeadCalibration`).

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
    >>> from levy_sklearn.uncertainty import channel_counts
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
    >>> from levy_sklearn.uncertainty import samples_ahead
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


def _positions(times: np.ndarray, valid: np.ndarray, channels: np.ndarray) -> np.ndarray:
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
    saw (:func:`channel_counts`), the inputs of :meth:`LeadCalibration.fit_forecasts`."""
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
        _positions(windows.tokens["query_times"], held, chans),
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
    (:meth:`LeadCalibration.fit_forecasts`); with too few of them, the Normal's with a
    warning that says how to hold out more."""
    # Window indexes count within each part: one id per held-out origin across the parts.
    offsets = np.cumsum([0] + [int(p[7].max(initial=-1)) + 1 for p in parts[:-1]])
    parts = [(*p[:7], p[7] + o, *p[8:]) for p, o in zip(parts, offsets, strict=True)]
    pooled = [np.concatenate(p) for p in zip(*parts, strict=True)]
    reason = "no calibration window could be cut"
    if pooled[0].size:
        try:
            return LeadCalibration.fit_forecasts(
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
    n_series: int,
    n_folds: int,
    n_scored: int,
    seed: int,
    train: Callable[[np.ndarray], LevyNeuralNet],
    score: Callable[[LevyNeuralNet, np.ndarray], tuple[np.ndarray, ...]],
    n_channels: int,
) -> tuple[LevyNeuralNet, LeadCalibration]:
    """A network and its calibration on series it never saw (cross-fitting over series).

    The series are dealt into ``n_folds`` seeded folds; each of the first ``n_scored`` is
    forecast (``score(net, in_fold)``, see :func:`held_out_forecasts`) by a network trained
    without it (``train(in_training)``, both boolean masks over the series). With one
    scored fold that network is the one returned; with more, a last one learns from every
    series. Series, not time points, are held out: a new subject is exchangeable with the
    held-out subjects, not with later points of subjects seen in training."""
    folds = np.random.default_rng(seed).permutation(n_series) % n_folds
    parts = []
    for fold in range(n_scored):
        net = train(folds != fold)
        parts.append(score(net, folds == fold))
    if n_scored > 1:
        net = train(np.ones(n_series, bool))
    return net, calibrate(parts, n_channels)


class Forecasts(NamedTuple):
    """Forecasts of every series at its forecast times, ``(n_series, n_times, n_channels)``,
    in each series' standardised units (see :func:`window_forecasts`); ``evidence`` and
    ``disagreement`` have a trailing head axis; ``group`` is each forecast's row in the
    calibration (:meth:`LeadCalibration.rows`)."""

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
    """Steps 1–3 of the module: the network's moments of prediction ``windows`` (each with
    a last query at ``horizon_span`` after its origin; ``where``: the series and forecast
    positions each answers, see :meth:`~levy_sklearn.windows.WindowPlan.forecast_windows`)
    at the forecast times ``at``, the mean weighed by ``calibration``'s mean weight and
    pulled towards the ``population``'s level (see :func:`population_levels`) by its level
    weight, back from window units, the variance floored beyond ``horizon_span``.

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
        weight[:-1] = calibration.mean_weight_at(group[i, k], rel)
        pull[:-1] = calibration.level_weight_at(group[i, k], rel)
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
