"""Fitting a :class:`~levy_sklearn.calibration.LeadCalibration` from held-out forecasts.

From held-out forecasts (whole held-out series after ``pretrain``, the last part of each
series in a plain fit), the σ-normalised scores ``|y − mean| / σ`` are grouped by channel and
by lead bin (quantiles of the held-out leads, at most ``MAX_BINS`` bins, each with at least
``MIN_SCORES_PER_BIN`` scores per channel; fewer scores give fewer bins). For every stored
level ``c`` the factor is the conformal quantile, the ``⌈(n + 1)c⌉``-th smallest score (with
weights, the smallest score whose cumulative weight reaches ``c·(W + W/n_o)``: a new forecast
weighs what one of the ``n_o`` held-out origins weighs in the bin on average; where ``n``
scores are too few for ``c``, above ``n/(n + 1)``, the highest level they resolve keeps its
ratio to the Normal quantile, at least the largest score), raised where needed so that a
typical interval never narrows further ahead: the factor times the bin's median held-out σ
is non-decreasing in lead (a factor may fall where σ grows with lead; :func:`fit_scores`,
which sees no σ, keeps the factors themselves non-decreasing).

Where every channel has enough held-out scores (``MIN_SCORES_PER_GROUP``), each channel is
split further into groups by how many samples ahead the forecast is
(:func:`~levy_sklearn.calibration.samples_ahead`; ``AHEAD_EDGES``), each calibrated on its
own, and each of those further by how many observations of the channel the forecast's window
saw (:func:`~levy_sklearn.calibration.channel_counts`: up to ``HISTORY_GROUPS`` groups near
quantiles of the held-out counts, where each still holds ``MIN_SCORES_PER_GROUP`` scores), so
that the intervals are calibrated for a subject seen briefly apart from one seen long: a
study's first samples come in its most variable phase. Within a samples-ahead group the
factor follows the held-out scores in lead without the running maximum: at the same
position, a later sample comes in a calmer phase of the series (studies sample densely where
it moves), which held-out subjects show and a running maximum would hide.

Split conformal guarantees coverage for forecasts exchangeable with the held-out ones: across
subjects when whole series are held out (a new subject drawn like the held-out ones), not
across time within one subject, whose errors are correlated.
"""

from __future__ import annotations

import numpy as np

from .schema import LEVELS, NORMAL_AT_LEVELS
from .table import LeadCalibration, group_rows, read_at

__all__ = ["fit_forecasts", "fit_scores", "population_spread"]

# Fewest calibration scores per channel and lead bin: bins are merged until each holds this
# many (a 95 % conformal quantile needs 19, and the quantile of 30 is still loose).
MIN_SCORES_PER_BIN = 30
MAX_BINS = 5
# Calibration groups by how many samples ahead a forecast is (samples_ahead): the next
# sample, the 2nd–3rd, the 4th or later. At one lead, a forecast of the next sample is easier
# than one with samples before it: a study samples densely where the series moves.
AHEAD_EDGES = np.array([1.5, 3.5])
# Fewest scores of every channel and group for the groups to be kept: each then fills as
# many lead bins as one channel does (smaller panels keep one group per channel).
MIN_SCORES_PER_GROUP = MAX_BINS * MIN_SCORES_PER_BIN
# Calibration groups by how much of the series a forecast's window saw (channel_counts): up
# to this many, split near quantiles of the held-out counts, within the samples-ahead groups.
# Calibrated only across origins, short histories under-covered on three of four held-out
# clinical panels and long ones over-covered (benchmarks/results/zero_shot.md, coverage by
# history length).
HISTORY_GROUPS = 3
# The grid of the mean's weights is scored on this many forecasts at a time (see
# _grid_errors): a block's errors at every pair of the grid take 441 numbers per forecast.
_GRID_ROWS = 8192


def fit_scores(
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
    >>> from levy_sklearn.calibration import fit_scores
    >>> scores = np.abs(np.random.default_rng(0).standard_normal(20_000))
    >>> cal = fit_scores(scores, np.zeros(20_000, int), np.arange(20_000.0), 1)
    >>> float(cal.quantile(0.9, np.array([0]), np.array([0.0]))[0].round(1))  # Normal: 1.645
    1.6
    >>> cal = fit_scores(np.full(60, 2.0), np.zeros(60, int), np.zeros(60), 1)
    >>> cal.variance_factor(np.array([0]), np.array([0.0]))  # every score two σ out
    array([4.])
    """
    scores, leads = np.asarray(scores, float), np.asarray(leads, float)
    channels = np.asarray(channels, int)
    edges, bins, centres = _lead_bins(channels, leads, n_channels)
    tables = np.ones((n_channels, centres.size))
    return _from_scores(
        scores,
        channels,
        bins,
        edges,
        centres,
        n_channels,
        mean_weight=tables,
        level_weight=np.zeros_like(tables),
        weights=np.ones_like(scores),
        origins=np.arange(scores.size),
        ahead_edges=np.empty(0),
        history_edges=np.empty(0),
        growth=np.ones(n_channels),
        typical_sigma=tables,
    )


def _from_scores(
    scores: np.ndarray,
    channels: np.ndarray,
    bins: np.ndarray,
    edges: np.ndarray,
    centres: np.ndarray,
    n_channels: int,
    *,
    mean_weight: np.ndarray,
    level_weight: np.ndarray,
    weights: np.ndarray,
    origins: np.ndarray,
    ahead_edges: np.ndarray,
    history_edges: np.ndarray,
    growth: np.ndarray,
    typical_sigma: np.ndarray,
) -> LeadCalibration:
    """The weighted conformal quantiles and second moments of ``scores`` per table row
    (channel and groups) and bin. A new forecast weighs what a held-out origin weighs in
    the group on average, ``W / n_o`` (``W`` the group's total weight, ``n_o`` its
    distinct ``origins``): the level-``c`` quantile is the smallest score whose cumulative
    weight reaches ``c·(W + W / n_o)``. With unit weights that is the ``⌈(n + 1)c⌉``-th
    smallest; with each origin's weight spread over its forecasts' lead bins, a new origin
    weighs in a bin the share a held-out one has there (the pooled conformal quantile of
    two-level data: origins exchangeable, each weighing the same), where a whole unit would
    err wide on panels of few origins. Without samples-ahead groups, a typical width (the
    factor times ``typical_sigma``, the bin's median held-out σ) is made non-decreasing in
    lead (see the module docstring)."""
    n_bins = centres.size
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
    if not ahead_edges.size:  # never narrower further ahead
        sigma = typical_sigma
        quantiles = np.maximum.accumulate(quantiles * sigma[..., None], axis=1)
        quantiles /= sigma[..., None]
        second = np.maximum.accumulate(second * sigma**2, axis=1) / sigma**2
    return LeadCalibration(
        quantiles=quantiles,
        second_moment=second,
        edges=edges,
        n_scores=n_scores,
        centres=centres,
        mean_weight=mean_weight,
        level_weight=level_weight,
        ahead_edges=ahead_edges,
        growth=growth,
        unseen_quantiles=np.empty((0, LEVELS.size)),
        unseen_second_moment=np.empty(0),
        history_edges=history_edges,
    )


def fit_forecasts(
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
    scores ``|y − w·mean| / σ`` are then calibrated as by :func:`fit_scores`. Two numbers per
    channel and bin are fitted on the held-out forecasts that calibrate them, a
    negligible loss of exchangeability beside the 30 or more scores behind each. The
    errors ``|y − w·mean|`` also tell how each channel's variance grows beyond the
    training horizon (``growth``, :func:`~levy_sklearn.calibration.horizon_floor`): their
    median's square per lead bin, fitted as ``a + b·lead`` (``a, b ≥ 0``: a level plus a
    random walk), gives the share ``b·L / (a + b·L)`` of the growing part at the last bin's
    lead ``L`` (:func:`fit_scores`, which sees only scores, keeps 1).

    Parameters
    ----------
    targets, means, sigmas : ndarray of shape (n,)
        Held-out targets and forecasts, relative to the anchor, and σ.
    channels : ndarray of int of shape (n,)
    leads : ndarray of shape (n,)
    n_channels : int
    weights : ndarray of shape (n,) or None, default=None
        Weight of each forecast in the mean's weight, the quantiles and the second
        moment; ``None``: 1 each. Each held-out origin (window) weighs 1 in total per
        channel, so that a new forecast, one origin, is exchangeable with the weighed
        units: unweighted, the many far targets of a long held-out window would outweigh
        its few near ones.
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
        (see the module docstring); ``None``: each forecast is its own origin.
    ahead : ndarray of shape (n,) or None, default=None
        Samples ahead of each forecast (:func:`~levy_sklearn.calibration.samples_ahead`):
        the channels are split into the groups of ``AHEAD_EDGES`` where every channel and
        group has ``MIN_SCORES_PER_GROUP`` scores (the weights and quantiles per group, see
        the module docstring); ``None``: one group per channel.
    history : ndarray of shape (n,) or None, default=None
        Observations of the channel in each forecast's context
        (:func:`~levy_sklearn.calibration.channel_counts`): each row (channel and
        samples-ahead group) is split further near quantiles of ``history``, into as many
        groups (up to ``HISTORY_GROUPS``) as keep ``MIN_SCORES_PER_GROUP`` scores in each;
        ``None``: no history groups.

    Returns
    -------
    LeadCalibration

    Examples
    --------
    >>> import numpy as np
    >>> from levy_sklearn.calibration import fit_forecasts
    >>> rng = np.random.default_rng(0)
    >>> y, noise = rng.normal(size=600), rng.normal(size=600)
    >>> good = fit_forecasts(y, y + 0.1 * noise, np.ones(600), np.zeros(600, int),
    ...                      np.zeros(600), 1)
    >>> bad = fit_forecasts(y, 3 * noise, np.ones(600), np.zeros(600, int), np.zeros(600), 1)
    >>> float(good.mean_weight[0, 0]), float(bad.mean_weight[0, 0])
    (1.0, 0.0)
    """
    targets, means = np.asarray(targets, float), np.asarray(means, float)
    sigmas, leads = np.asarray(sigmas, float), np.asarray(leads, float)
    channels, ahead_edges, history_edges = np.asarray(channels, int), np.empty(0), np.empty(0)
    by_channel, n_by_channel = channels, n_channels
    if ahead is not None and (split := _filled_split(channels, ahead, AHEAD_EDGES, n_channels)):
        (channels, n_channels), ahead_edges = split, AHEAD_EDGES
    if history is not None:
        history = np.asarray(history, float)
        for candidate in _history_edges(history):  # the most groups that fill
            if split := _filled_split(channels, history, candidate, n_channels):
                (channels, n_channels), history_edges = split, candidate
                break
    weights = np.ones_like(targets) if weights is None else np.asarray(weights, float)
    origins = np.arange(targets.size) if origins is None else origins
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
        err = _grid_errors(
            targets[members], means[members], levels[members], weights[members], w_pairs, u_pairs
        )
        # Equal errors may differ in the last bits (the product's summation order).
        best = np.flatnonzero(err <= err.min() * (1 + 1e-12))[0]
        weight[ch, b], pull[ch, b] = w_pairs[best], u_pairs[best]
    shrunk = (
        read_at(weight, channels, leads, edges, centres) * means
        + read_at(pull, channels, leads, edges, centres) * levels
    )
    errors = np.abs(targets - shrunk)
    growth = _error_growth(errors, weights, by_channel, bins, centres, n_by_channel)
    return _from_scores(
        errors / sigmas,
        channels,
        bins,
        edges,
        centres,
        n_channels,
        mean_weight=weight,
        level_weight=pull,
        weights=weights,
        origins=origins,
        ahead_edges=ahead_edges,
        history_edges=history_edges,
        growth=np.repeat(growth, n_channels // n_by_channel),
        typical_sigma=typical_sigma,
    )


def _grid_errors(
    targets: np.ndarray,
    means: np.ndarray,
    levels: np.ndarray,
    weights: np.ndarray,
    w_pairs: np.ndarray,
    u_pairs: np.ndarray,
) -> np.ndarray:
    """The weighted absolute error of the forecast ``w·mean + u·level`` for every pair of
    ``(w_pairs, u_pairs)``, summed over ``_GRID_ROWS`` forecasts at a time: memory holds one
    block's errors at every pair (441 of them), not every forecast's."""
    err = np.zeros(w_pairs.size)
    for start in range(0, targets.size, _GRID_ROWS):
        rows = slice(start, start + _GRID_ROWS)
        forecast = w_pairs * means[rows, None] + u_pairs * levels[rows, None]
        err += weights[rows] @ np.abs(targets[rows, None] - forecast)
    return err


def population_spread(
    values: list[np.ndarray], population: np.ndarray, ratio: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """How far a pretraining panel's values lie from their population's level, for the
    forecasts of a channel a subject has never shown.

    Nothing of that subject tells where such a channel lies, and the network never saw a
    subject without it (a dense channel is in every training context): the forecast is the
    population's mean, with the population's scale ``s`` as σ, and its calibration the
    conformal quantiles (at ``LEVELS``) and the mean square of ``|y − m| / s`` over
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
    >>> from levy_sklearn.calibration import population_spread
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
    quantiles = np.tile(NORMAL_AT_LEVELS, (n_channels, 1))
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


def _weighted_conformal(
    scores: np.ndarray, weights: np.ndarray, origins: np.ndarray
) -> tuple[np.ndarray, float]:
    """The weighted conformal quantiles of ``scores`` at ``LEVELS`` and their weighted
    mean square, a new forecast weighing what one of the ``origins`` weighs on average (see
    :func:`_from_scores`)."""
    order = np.argsort(scores, kind="stable")
    # A series forecast exactly (a flat one) scores 0, and a factor of 0 would make σ 0: a
    # certainty no Normal can hold and that a model file refuses. float64's resolution is
    # the smallest error a forecast can be said to have made.
    s, w = np.maximum(scores[order], np.finfo(np.float64).eps), weights[order]
    cum = np.cumsum(w)
    new = cum[-1] / np.unique(origins).size
    # A relative tolerance: unit weights must give exactly the unweighted ranks.
    rank = np.searchsorted(cum, LEVELS * (cum[-1] + new) * (1 - 1e-12), side="left")
    return _conformal_quantiles(s, rank), float(np.average(s**2, weights=w))


def _conformal_quantiles(scores: np.ndarray, rank: np.ndarray) -> np.ndarray:
    """The sorted ``scores`` at ``rank`` (one per level of ``LEVELS``); a level its
    scores cannot resolve (``rank`` past the last score: above ``n/(n + 1)`` for ``n``
    unit-weight scores, where split conformal's interval is unbounded) extends the highest
    resolved level's ratio to the Normal quantile, never below the largest score, so that
    99.9 % stays wider than 98 %."""
    resolved = rank < scores.size
    quantiles = scores[np.minimum(rank, scores.size - 1)]
    if resolved.all() or not resolved.any():
        return quantiles
    z, top = NORMAL_AT_LEVELS, np.flatnonzero(resolved)[-1]
    return np.where(resolved, quantiles, np.maximum(scores[-1], quantiles[top] * z / z[top]))


def _filled_split(
    rows: np.ndarray, value: np.ndarray, edges: np.ndarray, n_rows: int
) -> tuple[np.ndarray, int] | None:
    """``rows`` split by ``value`` into the groups of ``edges``, and the number of rows
    then, where every row and group keeps ``MIN_SCORES_PER_GROUP`` scores; ``None`` where
    one would not (samples-ahead and history groups alike)."""
    grouped, n_grouped = group_rows(rows, value, edges), n_rows * (edges.size + 1)
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
