"""Series windows: continuous-time windowing of (irregular) series into observation tokens.

A series is a pandas index (datetime, timedelta, period or integer) and a (T, C) value array
whose NaN cells are unobserved. Time becomes a float in "time units" (a characteristic spacing
fitted once, e.g. the median spacing), and every window is expressed relative to its own
origin (history negative, targets positive), so time encodings generalise across windows and
series. Values are instance-normalised: level (and trend) from the window's own context, scale
never below that of the series' whole history up to the cutoff. The forecaster's training and
prediction inputs are these windows.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from ._normalisation import (
    NORMALIZATIONS,
    HistoryScale,
    normalised_window,
    seasonal_coefficients,
    seasonal_term,
    window_location,
)
from ._time_axis import infer_seasonal_period, seasonal_periods
from .tokens import tokens_from_events

# What a user calls to cut windows for a front-end of one's own; the time-axis helpers are the
# forecaster's plumbing, importable but not promised.
__all__ = [
    "InputSeries",
    "SeriesWindows",
    "infer_seasonal_period",
    "seasonal_periods",
    "series_windows",
]

# Share of the gap windows of observation_dropout that are holes before a last observation
# (chosen on held-out series: benchmarks/results/forecaster_ablation_notes.md, "hole windows").
HOLE_SHARE = 0.5

# Share of training windows whose known-ahead inputs end at a time drawn uniformly in the
# horizon instead of at its end: a forecast's X need only reach its last forecast time, so
# a network that saw every plan to the horizon read a plan's end as "nothing after it"
# (chosen on the covariates benchmark's inner splits: benchmarks/results/covariates_notes.md,
# "Plans that end before the horizon").
PLAN_CUT_SHARE = 0.5


class SeriesWindows(NamedTuple):
    """Windows cut from series, ready for :class:`~levy_sklearn.network.LevyNet`.

    ``n`` windows, ``Q`` queries per window (padded). Values are in the window's normalised
    units: ``value = query_loc + query_scale · normalised`` maps predictions back (variances by
    the square of ``query_scale``).

    Attributes
    ----------
    tokens : dict of ndarray
        Token arrays (see the module docstring); times relative to each window's cutoff.
        ``query_loc`` and ``query_scale`` (float32 copies of the attributes below) are
        among them, for a network that reads each window's level (``level_gain``).
    targets : ndarray of shape (n, Q)
        Normalised observed values at the queries; ``NaN`` where unobserved or padding.
    query_loc, query_scale : ndarray of shape (n, Q)
        The window's instance normalisation at each query (``0`` and ``1`` on padding).
    query_valid : ndarray of shape (n, Q)
        ``True`` for real queries, ``False`` for padding.
    series : ndarray of shape (n,)
        Which input series each window was cut from.
    cutoffs : ndarray of shape (n,)
        Absolute cutoff time of each window.
    origins : ndarray of shape (n,)
        Absolute time origin of each window: its last context observation (its cutoff when
        the context is empty). Token and query times are relative to it.
    n_context : ndarray of shape (n,)
        Number of tokens in each window's context.

    Examples
    --------
    >>> import numpy as np
    >>> from levy_sklearn.windows import series_windows
    >>> t, v = np.arange(8.0), np.arange(8.0)[:, None]  # one series, one channel
    >>> w = series_windows([t, t], [v, 2 * v], [np.array([3.0, 5.0]), np.array([4.0])],
    ...                    context_length=3, horizon=2)
    >>> w.series.tolist(), w.cutoffs.tolist(), w.n_context.tolist()  # three windows
    ([0, 0, 1], [3.0, 5.0, 4.0], [3, 3, 3])
    >>> w.targets.shape
    (3, 2)
    >>> sorted(w.tokens)  # doctest: +NORMALIZE_WHITESPACE
    ['channels', 'mask', 'query_channels', 'query_loc', 'query_scale', 'query_times',
     'times', 'values']
    """

    tokens: dict[str, np.ndarray]
    targets: np.ndarray
    query_loc: np.ndarray
    query_scale: np.ndarray
    query_valid: np.ndarray
    series: np.ndarray
    cutoffs: np.ndarray
    origins: np.ndarray
    n_context: np.ndarray


class _LastCells:
    """Adds to a context the last observation of each channel it holds none of.

    A channel silent for longer than the look-back would otherwise drop out of the context
    and be answered by the learned prior, whose σ can be smaller than that of a channel
    seen recently; with its last value in the context it is anchored there, its horizon
    counts from it, and σ grows with the time since (the forecaster's floor)."""

    def __init__(self, t: np.ndarray, v: np.ndarray) -> None:
        self.cells = []
        for ch in range(v.shape[1]):
            ok = np.isfinite(v[:, ch])
            self.cells.append((t[ok], v[ok, ch]))

    def __call__(
        self, end: float, cutoff: float, event: tuple[np.ndarray, np.ndarray, np.ndarray]
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``event`` (tokens relative to ``cutoff``) plus the last cell at or before ``end``
        of every channel without a token in it."""
        extra = []
        for ch, (times, values) in enumerate(self.cells):
            if np.any(event[1] == ch):
                continue
            last = int(np.searchsorted(times, end, side="right")) - 1
            if last >= 0:
                extra.append((times[last] - cutoff, ch, values[last]))
        if not extra:
            return event
        tt, chans, vv = (np.asarray(x) for x in zip(*extra, strict=True))
        return (
            np.concatenate([tt, event[0]]),
            np.concatenate([chans, event[1]]).astype(event[1].dtype),
            np.concatenate([vv, event[2]]),
        )


class InputSeries(NamedTuple):
    """A series' input channels (covariates ``X``): observed, never forecast.

    Attributes
    ----------
    times : ndarray of shape (T,)
        Increasing times of the rows, in time units (the series' own or any others).
    values : ndarray of shape (T, K)
        Standardised values, ``NaN`` where not observed.
    known : ndarray of shape (K,)
        ``True`` for a channel known ahead (a plan, a calendar, a weather forecast): its
        observations after a window's cutoff are tokens of that window too.
    static : ndarray of shape (K,)
        A static trait's standardised value (one token per window, at its origin), ``NaN``
        for a channel that varies in time.
    in_target_units : bool, default=False
        Divide the values of the time-varying channels, in each window, by that window's
        scale of ``y`` (the one its single forecast channel is divided by), so that an
        input reads in the units of the change of ``y`` it causes: an infusion rate moves a
        concentration by an amount that the window's units of ``y`` measure, whatever the
        subject's level and spread. ``values`` should then keep 0 at 0 (scaled, not
        centred). Needs a single forecast channel.

    Examples
    --------
    >>> import numpy as np
    >>> from levy_sklearn.windows import InputSeries, series_windows
    >>> t, v = np.arange(6.0), np.arange(6.0)[:, None]
    >>> dose = InputSeries(np.array([1.0, 4.5]), np.array([[1.0], [2.0]]),
    ...                    known=np.array([True]), static=np.array([np.nan]))
    >>> w = series_windows([t], [v], [np.array([3.0])], context_length=3, horizon=2,
    ...                    inputs=[dose])
    >>> w.tokens["times"].tolist(), w.tokens["channels"].tolist()  # the dose ahead at +1.5
    ([[-2.0, -1.0, 0.0, -2.0, 1.5]], [[0, 0, 0, 1, 1]])
    >>> w.tokens["query_channels"].tolist()  # only y's channel is asked for
    [[0, 0]]
    """

    times: np.ndarray
    values: np.ndarray
    known: np.ndarray
    static: np.ndarray
    in_target_units: bool = False


def _input_tokens(
    inputs: InputSeries,
    end: float,
    cutoff: float,
    length: float,
    ahead: float,
    max_tokens: int | None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Tokens ``(time − cutoff, input channel, value)`` of a window's inputs, at most
    ``max_tokens`` in all: each observed cell of a known-ahead channel in ``(end, cutoff +
    ahead]`` (the earliest first), then, with what these leave, each observed cell of a
    time-varying channel in ``(end − length, end]`` (the latest first). A past-only
    channel is never read after ``end``: what a forecast from the cutoff could not have
    seen. One budget for all inputs, nearest the forecast's span first: a window of many
    columns would otherwise hold up to twice ``max_tokens`` input tokens beside ``y``'s,
    whose few tokens the attention then has to find among them, at a quadratic cost."""
    varying = np.isnan(inputs.static)
    planned = np.where(varying & inputs.known, inputs.values, np.nan)
    lo = np.searchsorted(inputs.times, end, side="right")
    hi = np.searchsorted(inputs.times, cutoff + ahead, side="right")
    rows, chans = np.nonzero(np.isfinite(planned[lo:hi]))
    later = (inputs.times[lo:hi][rows] - cutoff, chans, planned[lo:hi][rows, chans])
    if max_tokens is not None and rows.size > max_tokens:
        keep = np.argsort(later[0], kind="stable")[:max_tokens]
        later = tuple(x[keep] for x in later)
    left = None if max_tokens is None else max_tokens - later[0].size
    past = _context(
        inputs.times, np.where(varying, inputs.values, np.nan), end, cutoff, length, left
    )
    return tuple(np.concatenate([p, q]) for p, q in zip(past, later, strict=True))


def _with_inputs(
    event: tuple[np.ndarray, np.ndarray, np.ndarray],
    inputs: InputSeries,
    where: tuple[float, float, float],
    spans: tuple[float, float, int | None],
    scale: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A window's normalised ``event`` (times relative to its origin) followed by the tokens
    of its inputs (:func:`_input_tokens`; ``where``: the context's end, the cutoff and the
    origin's shift after it; ``spans``: look-back, how far ahead, token cap) and one token
    per static trait at the origin, the input channels numbered after the forecast ones
    (one ``scale`` each, the window's): inputs keep their standardised values (no instance
    normalisation), so a dose or a trait means the same in every window; with
    ``inputs.in_target_units`` the time-varying ones are divided by the window's scale of
    its forecast channel."""
    end, cutoff, shift = where
    first = scale.size
    tokens = _input_tokens(inputs, end, cutoff, *spans)
    if inputs.in_target_units:
        if scale.size != 1:
            raise ValueError(
                f"Inputs in the target's units need a single forecast channel, not "
                f"{scale.size}: cut windows of one column at a time, or set in_target_units=False."
            )
        tokens = (tokens[0], tokens[1], tokens[2] / scale[0])
    static = np.flatnonzero(np.isfinite(inputs.static))
    times = np.concatenate([event[0], tokens[0] - shift, np.zeros(static.size)])
    chans = np.concatenate([event[1], tokens[1] + first, static + first]).astype(event[1].dtype)
    values = np.concatenate([event[2], tokens[2], inputs.static[static]])
    return times, chans, values


# series_windows' floor of a window's scale (relative), WindowPlan's too.
_MIN_SCALE = 0.05


def series_windows(
    times: Sequence[np.ndarray],
    values: Sequence[np.ndarray],
    cutoffs: Sequence[np.ndarray],
    *,
    context_length: float,
    horizon: float | None = None,
    query_times: Sequence[np.ndarray] | None = None,
    target_end: Sequence[float] | None = None,
    normalization: str = "mean",
    max_tokens: int | None = None,
    max_queries: int | None = None,
    min_scale: float = _MIN_SCALE,
    origin_queries: Sequence[float] = (),
    context_gaps: Sequence[np.ndarray] | None = None,
    gap_keeps_last: Sequence[np.ndarray] | None = None,
    seasonal_period: float | None = None,
    absent_levels: Sequence[np.ndarray] | None = None,
    inputs: Sequence[InputSeries] | None = None,
    input_horizon: float | Sequence[np.ndarray] | None = None,
    echoes: Sequence[float] = (),
) -> SeriesWindows:
    """Cut continuous-time windows from series and turn them into tokens and queries.

    For every series ``i`` and every cutoff ``c`` in ``cutoffs[i]``, the context is every
    observed cell with time in ``(c − context_length, c]`` (one token per non-NaN cell,
    channel = column; a NaN is no token), plus the last observed cell of each channel that
    has none there: a channel silent for longer than the look-back keeps its last value in
    the context, so it is anchored there and its horizon counts from it, instead of
    dropping out of the window. Times are made relative to the window's origin,
    its last context observation (``c`` itself when the context is empty), so a gap between
    the last observation and the cutoff lengthens the horizon of every query. The queries are
    either the observed rows in ``(c, c + horizon]`` (training: targets are their values,
    ``NaN`` for unobserved channels) or the given relative ``query_times`` (prediction:
    targets ``NaN``), each asked for every channel. Both context and targets are normalised
    per channel (instance normalisation, as in RevIN/PatchTST): ``"mean"`` subtracts the
    context mean, ``"trend"`` subtracts the context's least-squares line instead (so a trend
    extrapolates; ``< 3`` context tokens fall back to the mean), ``"last"`` subtracts the
    channel's last context observation (so targets are changes from it, the residuals of a
    last-value forecast), and all divide by a scale: the larger of the window's residual
    spread around the mean or line (with the fit's degrees of freedom removed)
    and the scale of the series' whole history up to the cutoff (the root mean square of its
    steps between consecutive observations). The window's spread alone would shrink σ exactly
    when the window is sparse; the history floor keeps it from doing so, and the window's
    spread follows an amplitude that has grown beyond the history's. ``"none"`` leaves
    values alone. With a ``seasonal_period``, a seasonal pattern (Fourier terms fitted with
    the trend to the context, see :func:`infer_seasonal_period`) is removed as well, so the
    targets are what the context's season and level leave unexplained (a context spanning
    fewer than two periods keeps its season). With ``context_gaps``, a training window's
    context ends ``gap`` before its cutoff while its targets stay after the cutoff: the
    window a forecast across a gap sees; with ``gap_keeps_last`` as well, such a window keeps
    its last observation before the cutoff, so the gap is a hole before it (a sensor that
    was silent, then reported once). With ``echoes`` (whole seasonal cycles ``s``), the
    context also holds, beyond the look-back, the observations of the forecast span shifted
    back by each ``s``, ``(c − s − 1, c + horizon − s + 1]`` (ending at the context's end):
    the same time a day or a week earlier, as tokens at their true times.

    Parameters
    ----------
    times : sequence of ndarray of shape (T_i,)
        Increasing time of each row of each series, in time units.
    values : sequence of ndarray of shape (T_i, C)
        Values (``NaN`` = unobserved); every series has the same ``C`` channels.
    cutoffs : sequence of ndarray
        Absolute cutoff times of the windows to cut from each series.
    context_length : float
        Look-back span in time units.
    horizon : float, optional
        Target span for training windows; give either this or ``query_times``.
    query_times : sequence of ndarray, optional
        Times to predict at, relative to the cutoff, one array per series (shared by its
        windows).
    target_end : sequence of float, optional
        Per series, targets later than this absolute time are hidden (``NaN``): used to keep
        a calibration period out of training.
    normalization : {"mean", "trend", "last", "none"}, default="mean"
        Instance normalisation of each window.
    max_tokens : int, optional
        Keep at most this many context tokens per window, the latest, and as many input
        tokens (known-ahead ones first, the earliest; then past ones, the latest).
    max_queries : int, optional
        Keep at most this many target rows per training window (evenly spaced).
    min_scale : float, default=0.05
        Added in quadrature to each history scale.
    context_gaps : sequence of ndarray, optional
        Per series, one gap length (time units, ``≥ 0``) per cutoff: the context of that
        window ends at ``cutoff − gap``.
    gap_keeps_last : sequence of ndarray of bool, optional
        Per series, one flag per cutoff: that window's context keeps the last observed row
        at or before its cutoff even when it falls in the gap.
    origin_queries : sequence of float, default=()
        Extra queries appended to every window, at these times after its origin (e.g. the
        training horizon, as a reference); their targets are ``NaN``.
    seasonal_period : float, optional
        Period (time units) of a seasonal pattern to remove per window, as the level is.
    absent_levels : sequence of ndarray of shape (C,), optional
        Per series, where a window anchors a channel its context holds no observation of
        while holding others': the population's level, in the series' units, which is what
        a new series' own standardisation gives a channel it has not observed. ``None``
        (and in an empty context): 0, the series' own mean, which, fitted on the whole
        series, holds the very values after the cutoff (a sparse channel's targets would
        then sit at its anchor in pretraining and in held-out calibration, but not for a
        new series).
    inputs : sequence of InputSeries, optional
        Per series, its input channels (covariates): tokens of channels ``C, C + 1, …``
        in every window's context (each observed cell in the look-back, known-ahead ones
        also up to ``input_horizon`` after the cutoff, static traits once at the origin),
        never queried. Their values are not instance-normalised.
    input_horizon : float or sequence of ndarray, optional
        How far after the cutoff known-ahead inputs are read: one span for every window,
        or per series one per cutoff (as ``context_gaps``); default ``horizon``.
    echoes : sequence of float, default=()
        Whole seasonal cycles (time units) whose earlier observations the context holds
        beyond the look-back (see above); they take at most half of ``max_tokens``, the
        nearest cycles first, and the look-back the rest.

    Returns
    -------
    SeriesWindows

    Examples
    --------
    >>> import numpy as np
    >>> from levy_sklearn.windows import series_windows
    >>> t = np.arange(6.0)
    >>> v = np.array([[1.0], [2.0], [np.nan], [4.0], [5.0], [6.0]])
    >>> w = series_windows([t], [v], [np.array([3.0])], context_length=3, horizon=2)
    >>> w.tokens["times"].tolist(), w.tokens["mask"].tolist()
    ([[-2.0, 0.0]], [[True, True]])
    >>> w.tokens["query_times"].tolist()
    [[1.0, 2.0]]
    >>> np.round(w.targets * w.query_scale + w.query_loc, 6).tolist()  # back to values
    [[5.0, 6.0]]
    >>> g = series_windows([t], [v], [np.array([2.0])], context_length=3, horizon=2)
    >>> g.origins.tolist(), g.tokens["times"].tolist()  # t = 2 is missing: origin at t = 1
    ([1.0], [[-1.0, 0.0]])
    >>> g.tokens["query_times"].tolist()
    [[2.0, 3.0]]
    >>> p = series_windows([t], [v], [np.array([5.0])], context_length=4,
    ...                    query_times=[np.array([0.5, 10.0])], normalization="trend")
    >>> p.tokens["query_times"].tolist(), np.round(p.query_loc, 6).tolist()  # the trend line
    ([[0.5, 10.0]], [[6.5, 16.0]])
    """
    if normalization not in NORMALIZATIONS:
        raise ValueError(f"normalization={normalization!r} must be one of {NORMALIZATIONS}.")
    if (horizon is None) == (query_times is None):
        raise ValueError("Give exactly one of horizon (training) and query_times (prediction).")
    return _stack(
        _window_list(
            times,
            values,
            cutoffs,
            context_length=context_length,
            horizon=horizon,
            query_times=query_times,
            target_end=target_end,
            normalization=normalization,
            max_tokens=max_tokens,
            max_queries=max_queries,
            min_scale=min_scale,
            origin_queries=origin_queries,
            context_gaps=context_gaps,
            gap_keeps_last=gap_keeps_last,
            seasonal_period=seasonal_period,
            absent_levels=absent_levels,
            inputs=inputs,
            input_horizon=input_horizon,
            echoes=echoes,
        )
    )


def _window_list(
    times: Sequence[np.ndarray],
    values: Sequence[np.ndarray],
    cutoffs: Sequence[np.ndarray],
    *,
    context_length: float,
    horizon: float | None,
    query_times: Sequence[np.ndarray] | None,
    target_end: Sequence[float] | None,
    normalization: str,
    max_tokens: int | None,
    max_queries: int | None,
    min_scale: float,
    origin_queries: Sequence[float],
    context_gaps: Sequence[np.ndarray] | None,
    gap_keeps_last: Sequence[np.ndarray] | None,
    seasonal_period: float | None,
    absent_levels: Sequence[np.ndarray] | None,
    inputs: Sequence[InputSeries] | None,
    input_horizon: float | Sequence[np.ndarray] | None,
    echoes: Sequence[float],
) -> list[_Window]:
    """:func:`series_windows`' windows (same arguments, checked there) before padding."""
    n_channels = int(np.shape(values[0])[1]) if len(values) else 1
    if input_horizon is None or np.isscalar(input_horizon):
        ahead_of = [horizon if input_horizon is None else input_horizon] * len(times)
    else:
        ahead_of = input_horizon
    windows = []
    for i, (t_i, v_i) in enumerate(zip(times, values, strict=True)):
        t_i = np.asarray(t_i, dtype=np.float64)
        v_i = np.asarray(v_i, dtype=np.float64).reshape(len(t_i), n_channels)
        end = np.inf if target_end is None else float(target_end[i])
        # Without normalisation no window is scaled, so no history scale is needed.
        history_scale = None if normalization == "none" else HistoryScale(t_i, v_i, min_scale)
        last_cells = _LastCells(t_i, v_i)
        cuts = np.asarray(cutoffs[i], dtype=np.float64)
        gaps = np.zeros(cuts.size) if context_gaps is None else np.asarray(context_gaps[i], float)
        keeps = np.zeros(cuts.size, bool) if gap_keeps_last is None else gap_keeps_last[i]
        plans = np.broadcast_to(np.asarray(ahead_of[i], dtype=np.float64), cuts.shape)
        ahead = horizon if query_times is None else _latest(query_times[i])  # echoes' span
        for c, gap, keep, plan in zip(cuts, gaps, keeps, plans, strict=True):
            cycles = _spans(echoes, c, ahead)
            echo, (tt, chans, vv) = _contexts(t_i, v_i, c, gap, context_length, max_tokens, cycles)
            if keep and gap > 0:
                tt, chans, vv = _with_last_row(t_i, v_i, c - gap, c, (tt, chans, vv))
            tt, chans, vv = last_cells(c - gap, c, (tt, chans, vv))
            # Time origin: the last observation (the cutoff if there is none), so a gap before
            # the cutoff lengthens every horizon instead of going unseen.
            shift = tt.max() if tt.size else 0.0
            tt = tt - shift
            season = seasonal_coefficients(tt, chans, vv, n_channels, seasonal_period)
            level, slope, spread2 = window_location(
                tt,
                chans,
                vv - seasonal_term(season, tt, chans, seasonal_period),
                n_channels,
                normalization,
            )
            if absent_levels is not None and normalization != "none" and chans.size:
                absent = np.bincount(chans, minlength=n_channels) == 0
                level = np.where(absent, absent_levels[i], level)
            scale = history_scale(c - gap, spread2) if history_scale else np.ones(n_channels)
            if horizon is not None:
                rel, tgt = _observed_targets(t_i, v_i, c, horizon, end, max_queries)
            else:
                rel = np.asarray(query_times[i], dtype=np.float64)
                tgt = np.full((rel.size, n_channels), np.nan)
            tt, chans, vv = _joined(echo, shift, (tt, chans, vv))
            extra = np.asarray(origin_queries, dtype=np.float64)
            rel = np.concatenate([rel - shift, extra])
            tgt = np.concatenate([tgt, np.full((extra.size, n_channels), np.nan)])
            event, *queries = normalised_window(
                tt, chans, vv, rel, tgt, (level, slope, scale), season, seasonal_period
            )
            if inputs is not None:
                spans = (context_length, plan, max_tokens)  # look-back, how far ahead, cap
                event = _with_inputs(event, inputs[i], (c - gap, c, shift), spans, scale)
            windows.append(_Window(event, *queries, series=i, cutoff=c, origin=c + shift))
    return windows


class _Window(NamedTuple):
    """One window before padding: its context ``event`` ``(times, channels, values)`` and its
    queries, flat over (time, channel)."""

    event: tuple[np.ndarray, np.ndarray, np.ndarray]
    query_times: np.ndarray
    query_channels: np.ndarray
    targets: np.ndarray
    loc: np.ndarray
    scale: np.ndarray
    series: int
    cutoff: float
    origin: float


def _latest(query_times: np.ndarray) -> float:
    """The latest of a window's relative query times (0 without any)."""
    query_times = np.asarray(query_times, dtype=np.float64)
    return float(query_times.max()) if query_times.size else 0.0


def _contexts(
    t: np.ndarray,
    v: np.ndarray,
    cutoff: float,
    gap: float,
    length: float,
    max_tokens: int | None,
    spans: list[tuple[float, float]],
) -> tuple[tuple[np.ndarray, ...], tuple[np.ndarray, ...]]:
    """A window's echo tokens (:func:`_echo_event`, at most half of ``max_tokens``) and its
    look-back (:func:`_context`, the rest), which ends ``gap`` before ``cutoff``. The
    look-back alone sets the window's level, trend, season and spread; its earlier cycles
    are measured from them."""
    end = cutoff - gap
    spans = [(lo, min(hi, end - length)) for lo, hi in spans if min(hi, end - length) > lo]
    echo = _echo_event(t, v, end, cutoff, spans, max_tokens)
    dense = None if max_tokens is None else max_tokens - echo[0].size
    return echo, _context(t, v, end, cutoff, length, dense)


def _spans(echoes: Sequence[float], cutoff: float, ahead: float) -> list[tuple[float, float]]:
    """The spans ``(lo, hi]`` the echoes of a window's forecast span ``(cutoff, cutoff +
    ahead]`` cover, nearest cycle first: each shifted back by a cycle, one unit wider on
    both sides (the autoregression reads an echo within a unit of it)."""
    return [(cutoff - s - 1.0, cutoff + ahead - s + 1.0) for s in sorted(echoes)]


def _context(
    t: np.ndarray, v: np.ndarray, end: float, cutoff: float, length: float, max_tokens: int | None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Tokens ``(time − cutoff, channel, value)`` of the observed cells in ``(end − length,
    end]``, the latest ``max_tokens`` of them."""
    lo = np.searchsorted(t, end - length, side="right")
    last = np.searchsorted(t, end, side="right")
    ctx = v[lo:last]
    rows, chans = np.nonzero(np.isfinite(ctx))
    tt = t[lo:last][rows] - cutoff
    vv = ctx[rows, chans]
    if max_tokens is not None and tt.size > max_tokens:
        keep = np.argsort(tt, kind="stable")[tt.size - max_tokens :]
        tt, chans, vv = tt[keep], chans[keep], vv[keep]
    return tt, chans, vv


def _joined(
    echo: tuple[np.ndarray, np.ndarray, np.ndarray],
    shift: float,
    event: tuple[np.ndarray, np.ndarray, np.ndarray],
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A window's ``event`` (times from its origin) with its ``echo`` tokens (times from its
    cutoff, ``shift`` before the origin) before it."""
    if not echo[0].size:
        return event
    return (
        np.concatenate([echo[0] - shift, event[0]]),
        np.concatenate([echo[1], event[1]]).astype(event[1].dtype),
        np.concatenate([echo[2], event[2]]),
    )


def _echo_event(
    t: np.ndarray,
    v: np.ndarray,
    end: float,
    cutoff: float,
    spans: Sequence[tuple[float, float]],
    max_tokens: int | None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Tokens ``(time − cutoff, channel, value)`` of the observed cells in the ``spans``
    ``(lo, hi]`` (before the look-back, see :func:`_spans`) at or before ``end``, the
    nearest spans first, at most half of ``max_tokens`` cells; each cell once."""
    most = None if max_tokens is None else max_tokens // 2
    picked, held = [], 0
    for lo, hi in spans:
        a = np.searchsorted(t, lo, side="right")
        b = np.searchsorted(t, min(hi, end), side="right")
        cells = int(np.isfinite(v[a:b]).sum()) if b > a else 0
        if not cells:
            continue
        if most is not None and held + cells > most:
            break
        picked.append(np.arange(a, b))
        held += cells
    rows = np.unique(np.concatenate(picked)) if picked else np.zeros(0, dtype=np.int64)
    r, chans = np.nonzero(np.isfinite(v[rows]))
    return t[rows][r] - cutoff, chans, v[rows][r, chans]


def _with_last_row(
    t: np.ndarray,
    v: np.ndarray,
    gap_start: float,
    cutoff: float,
    event: tuple[np.ndarray, np.ndarray, np.ndarray],
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``event`` (tokens of a context ending at ``gap_start``) plus the cells of the last
    observed row in ``(gap_start, cutoff]``, if there is one."""
    gap = _context(t, v, cutoff, cutoff, cutoff - gap_start, None)
    if not gap[0].size:
        return event
    last = gap[0] == gap[0].max()
    return tuple(np.concatenate([e, g[last]]) for e, g in zip(event, gap, strict=True))


def _observed_targets(
    t: np.ndarray,
    v: np.ndarray,
    cutoff: float,
    horizon: float,
    end: float,
    max_queries: int | None,
) -> tuple[np.ndarray, np.ndarray]:
    """Times relative to ``cutoff`` and values of the rows in ``(cutoff, cutoff + horizon]``;
    values after ``end`` hidden (NaN), at most ``max_queries`` rows (evenly spaced)."""
    hi = np.searchsorted(t, cutoff, side="right")
    t_hi = np.searchsorted(t, cutoff + horizon, side="right")
    rel = t[hi:t_hi] - cutoff
    tgt = v[hi:t_hi].copy()
    tgt[t[hi:t_hi] > end] = np.nan
    if max_queries is not None and rel.size > max_queries:
        pick = np.unique(np.linspace(0, rel.size - 1, max_queries).round().astype(int))
        rel, tgt = rel[pick], tgt[pick]
    return rel, tgt


def _stack(windows: list[_Window]) -> SeriesWindows:
    """Pad the windows' queries to one width and their events into tokens."""
    width = max([1, *(w.query_times.size for w in windows)])

    def pad(field: str, fill: float, dtype: type) -> np.ndarray:
        out = np.full((len(windows), width), fill, dtype=dtype)
        for row, window in enumerate(windows):
            part = getattr(window, field)
            out[row, : part.size] = part
        return out

    sizes = np.array([w.query_times.size for w in windows], dtype=np.int64)
    valid = np.arange(width) < sizes[:, None]
    tokens = tokens_from_events(
        [w.event for w in windows],
        pad("query_times", 0.0, np.float64),
        pad("query_channels", 0, np.int64),
    )
    loc, scale = pad("loc", 0.0, np.float64), pad("scale", 1.0, np.float64)
    # Each query's window location and scale, for a network that reads the level (see
    # LevyNet's level_gain); one that does not ignores them.
    tokens |= {"query_loc": loc.astype(np.float32), "query_scale": scale.astype(np.float32)}
    return SeriesWindows(
        tokens=tokens,
        targets=pad("targets", np.nan, np.float64),
        query_loc=loc,
        query_scale=scale,
        query_valid=valid,
        series=np.array([w.series for w in windows], dtype=np.int64),
        cutoffs=np.array([w.cutoff for w in windows], dtype=np.float64),
        origins=np.array([w.origin for w in windows], dtype=np.float64),
        n_context=np.array([w.event[0].size for w in windows], dtype=np.int64),
    )


def calibration_start(t: np.ndarray, fraction: float) -> float:
    """Time at which the last ``fraction`` of a series' time span (held out for calibration)
    begins."""
    return t[0] + (1 - fraction) * (t[-1] - t[0])


class WindowIndex(NamedTuple):
    """Where a plan's windows are cut, one entry per window (see :meth:`WindowPlan.index`):
    a few numbers each, where a window's tokens take several per observation.

    Attributes
    ----------
    series : ndarray of shape (n,), int32
        The series each window is cut from.
    cutoffs : ndarray of shape (n,)
        Its cutoff.
    gaps : ndarray of shape (n,)
        How long before the cutoff its context ends (see :func:`series_windows`).
    keeps : ndarray of shape (n,)
        Whether it keeps its last observation in the gap.
    ends : ndarray of shape (n,)
        Its targets after this time are hidden (the calibration period).
    plans : ndarray of shape (n,), float32
        How far after its cutoff its known-ahead inputs are read (see
        :data:`PLAN_CUT_SHARE`).
    """

    series: np.ndarray
    cutoffs: np.ndarray
    gaps: np.ndarray
    keeps: np.ndarray
    ends: np.ndarray
    plans: np.ndarray

    def take(self, rows: Sequence[int] | np.ndarray) -> WindowIndex:
        """The index of these ``rows``, in their order."""
        rows = np.asarray(rows, dtype=np.int64)
        return WindowIndex(*(field[rows] for field in self))


class WindowSource(NamedTuple):
    """A plan's windows of some series, cut on demand (see :meth:`WindowPlan.source`).

    Attributes
    ----------
    plan : WindowPlan
    times, values : list of ndarray
        The series (see :meth:`WindowPlan.windows`).
    index : WindowIndex
        Where the windows are cut.
    levels, inputs : sequence, optional
        As for :meth:`WindowPlan.windows`.

    Examples
    --------
    >>> import numpy as np
    >>> from levy_sklearn.windows import WindowPlan
    >>> plan = WindowPlan(8.0, 2.0, None, "last", 64, None, 100, 0.0, 0.0)
    >>> t, v = np.arange(20.0), np.arange(20.0)[:, None]
    >>> source = plan.source([t], [v], "train", seed=0)
    >>> source.n_windows, [w.cutoffs.size for w in source.chunks(8)]
    (19, [8, 8, 3])
    >>> tokens, targets = source.batch([3, 0])  # what a training step reads
    >>> targets.shape, targets.dtype
    ((2, 2), dtype('float32'))
    """

    plan: WindowPlan
    times: list[np.ndarray]
    values: list[np.ndarray]
    index: WindowIndex
    levels: Sequence[np.ndarray] | None = None
    inputs: Sequence[InputSeries] | None = None

    @property
    def n_windows(self) -> int:
        """How many windows the source holds."""
        return int(self.index.series.size)

    def cut(self, rows: Sequence[int] | np.ndarray | None = None) -> SeriesWindows:
        """The windows of ``rows`` (all by default), in their order (see
        :meth:`WindowPlan.cut`)."""
        index = self.index if rows is None else self.index.take(rows)
        return self.plan.cut(self.times, self.values, index, self.levels, self.inputs)

    def batch(self, rows: Sequence[int] | np.ndarray) -> tuple[dict[str, np.ndarray], np.ndarray]:
        """The token arrays and float32 targets of the windows of ``rows``: a training
        batch, padded to its longest window."""
        windows = self.cut(rows)
        return windows.tokens, windows.targets.astype(np.float32)

    def cached(self, max_bytes: int) -> CachedWindows:
        """These windows' training batches, each window cut once and kept while the kept
        ones take at most ``max_bytes`` (see :class:`CachedWindows`)."""
        return CachedWindows(self, max_bytes)

    def chunks(self, size: int) -> Iterator[SeriesWindows]:
        """Every window, ``size`` at a time, in order."""
        for start in range(0, self.n_windows, size):
            yield self.cut(np.arange(start, min(start + size, self.n_windows)))

    def thinned(self, most: int, seed: int) -> WindowSource:
        """At most ``most`` of these windows, every ``n_windows / most``-th in the index's
        order from a start drawn from ``seed`` (systematic sampling): the index lists each
        series' windows together (calibration windows by cutoff), so each series keeps its
        share of them, spread over its span (its early cutoffs in proportion); all of them
        when they are no more than ``most``.

        Examples
        --------
        >>> import numpy as np
        >>> from levy_sklearn.windows import WindowPlan
        >>> plan = WindowPlan(8.0, 2.0, None, "last", 64, None, 100, 0.0, 0.0)
        >>> t, v = np.arange(20.0), np.arange(20.0)[:, None]
        >>> source = plan.source([t, t], [v, v], "held_out", seed=0)
        >>> some = source.thinned(8, seed=0)
        >>> source.n_windows, some.n_windows, np.bincount(some.index.series).tolist()
        (38, 8, [4, 4])
        """
        if self.n_windows <= most:
            return self
        stride = self.n_windows / most
        start = np.random.default_rng(seed).uniform(0.0, stride)
        rows = np.floor(start + stride * np.arange(most)).astype(np.int64)
        return self._replace(index=self.index.take(rows))


class CachedWindows:
    """A :class:`WindowSource`'s training batches, each window cut once and kept for the
    epochs after while the kept windows take at most ``max_bytes``; beyond that, windows are
    cut again each time they are drawn. Cutting a window (its context's location, season and
    scale by least squares) costs about as much CPU as the network's step on it, and every epoch
    draws the same windows again; a window's cut depends on its index entry only, so a kept
    window is the one cutting it again would give.

    Parameters
    ----------
    source : WindowSource
    max_bytes : int
        Most bytes of unpadded windows kept.

    Examples
    --------
    >>> import numpy as np
    >>> from levy_sklearn.windows import WindowPlan
    >>> plan = WindowPlan(8.0, 2.0, None, "last", 64, None, 100, 0.0, 0.0)
    >>> t, v = np.arange(20.0), np.arange(20.0)[:, None]
    >>> source = plan.source([t], [v], "train", seed=0)
    >>> cached = source.cached(max_bytes=10**6)
    >>> tokens, targets = cached.batch([3, 0])
    >>> fresh, fresh_targets = source.batch([3, 0])
    >>> all(np.array_equal(tokens[k], fresh[k]) for k in fresh), cached.kept
    (True, 2)
    >>> none_kept = source.cached(max_bytes=0)
    >>> none_kept.batch([3, 0])[1].shape, none_kept.kept  # cut, not kept
    ((2, 2), 0)
    """

    def __init__(self, source: WindowSource, max_bytes: int) -> None:
        self.source = source
        self.max_bytes = int(max_bytes)
        self._kept: dict[int, _Window] = {}
        self._bytes = 0

    @property
    def n_windows(self) -> int:
        """How many windows the source holds."""
        return self.source.n_windows

    @property
    def kept(self) -> int:
        """How many windows are kept."""
        return len(self._kept)

    def batch(self, rows: Sequence[int] | np.ndarray) -> tuple[dict[str, np.ndarray], np.ndarray]:
        """As :meth:`WindowSource.batch`, the windows not kept cut (and kept while they fit)."""
        rows = [int(row) for row in np.asarray(rows, dtype=np.int64)]
        missing = [row for row in dict.fromkeys(rows) if row not in self._kept]
        fresh: dict[int, _Window] = {}
        if missing:
            s = self.source
            cut = s.plan.window_list(s.times, s.values, s.index.take(missing), s.levels, s.inputs)
            fresh = dict(zip(missing, cut, strict=True))
            for row, window in fresh.items():
                size = _window_bytes(window)
                if self._bytes + size <= self.max_bytes:
                    self._kept[row] = window
                    self._bytes += size
        windows = [fresh[row] if row in fresh else self._kept[row] for row in rows]
        stacked = self.source.plan.stacked(windows)
        return stacked.tokens, stacked.targets.astype(np.float32)


def _window_bytes(window: _Window) -> int:
    """Memory an unpadded window holds: its arrays' data and a Python object's header each."""
    queries = (window.query_times, window.query_channels, window.targets, window.loc, window.scale)
    arrays = [*window.event, *queries]
    return sum(np.asarray(a).nbytes + _ARRAY_HEADER_BYTES for a in arrays)


# What a small numpy array takes beyond its data (sys.getsizeof of an empty array).
_ARRAY_HEADER_BYTES = 112


@dataclass(frozen=True)
class WindowPlan:
    """Which windows a forecaster cuts from its series: for training, for calibration and
    for prediction, with their cutoffs, gaps and holes and the calibration split.

    Parameters
    ----------
    context_span, horizon_span : float
        Look-back span and training horizon in time units.
    seasonal_period : float or None
        Seasonal period (time units) removed per window.
    normalization : str
        Instance normalisation (see :func:`series_windows`).
    max_tokens : int
        Context tokens per window, the latest.
    max_targets : int or None
        Target times per training window (evenly spaced); ``None``: every one.
    windows_per_series : int
        Training windows per series (evenly spaced cutoffs).
    observation_dropout : float
        Share of training windows repeated with a gap (see the forecaster's parameter).
    calibration_fraction : float
        The last share of each series' span whose windows calibrate and do not train.
    echoes : tuple of float, default=()
        Whole seasonal cycles whose earlier observations every context holds (see
        :func:`series_windows`).
    calendar : tuple of (float, float), default=()
        Calendar periods (time units) and the phase of time 0 in each (cycles, see
        :meth:`~levy_sklearn._time_axis.TimeAxis.calendar`): every window's tokens then
        carry the phase of its origin in each, as ``tokens["calendar"]`` ``(n, P)``.

    Examples
    --------
    >>> import numpy as np
    >>> from levy_sklearn.windows import WindowPlan
    >>> plan = WindowPlan(8.0, 2.0, None, "last", 64, None, 100, 0.0, 0.0)
    >>> t, v = np.arange(20.0), np.arange(20.0)[:, None]
    >>> plan.cutoffs(t, v, -np.inf, np.inf)[[0, -1]]  # a context before, a target after
    array([ 0., 18.])
    >>> plan.windows([t], [v], "train", seed=0).targets.shape  # 19 windows, 2 targets each
    (19, 2)
    """

    context_span: float
    horizon_span: float
    seasonal_period: float | None
    normalization: str
    max_tokens: int
    max_targets: int | None
    windows_per_series: int
    observation_dropout: float
    calibration_fraction: float
    echoes: tuple[float, ...] = ()
    calendar: tuple[tuple[float, float], ...] = ()

    def with_calendar(self, windows: SeriesWindows) -> SeriesWindows:
        """``windows`` whose tokens carry the phase of each window's origin in every
        calendar period (unchanged without one)."""
        if not self.calendar:
            return windows
        phases = np.stack(
            [np.mod(phase + windows.origins / period, 1.0) for period, phase in self.calendar],
            axis=1,
        )
        return windows._replace(tokens=windows.tokens | {"calendar": phases.astype(np.float32)})

    def cutoffs(
        self, times: np.ndarray, values: np.ndarray, start: float, stop: float
    ) -> np.ndarray:
        """Cutoffs in ``[start, stop)`` with a non-empty context and at least one target, at
        most ``windows_per_series`` of them (evenly spaced, the latest kept)."""
        observed = np.isfinite(values).any(axis=1)
        count = np.concatenate([[0], np.cumsum(observed)])
        n_context = (
            count[np.searchsorted(times, times, side="right")]
            - count[np.searchsorted(times, times - self.context_span, side="right")]
        )
        n_target = (
            count[np.searchsorted(times, times + self.horizon_span, side="right")]
            - count[np.searchsorted(times, times, side="right")]
        )
        cut = times[(n_context > 0) & (n_target > 0) & (times >= start) & (times < stop)]
        if cut.size > self.windows_per_series:
            pick = np.linspace(0, cut.size - 1, self.windows_per_series).round().astype(int)
            cut = cut[np.unique(pick)]
        return cut

    def windows(
        self,
        times: list[np.ndarray],
        values: list[np.ndarray],
        part: str,
        seed: int,
        levels: Sequence[np.ndarray] | None = None,
        inputs: Sequence[InputSeries] | None = None,
    ) -> SeriesWindows:
        """Training (``part="train"``), calibration (``"calibrate"``), all (``"all"``) or
        held-out (``"held_out"``) windows; the split is in time, the last
        ``calibration_fraction`` of each series. Training windows (``"train"``, ``"all"``)
        include the gap windows of ``observation_dropout``; calibration windows
        (``"calibrate"``, ``"held_out"``: every cutoff, evenly spaced where a series has
        more than ``windows_per_series``, and every cutoff of a held-out series' first
        context span) are the forecasts a user makes.
        ``levels``: each series' population level (see :func:`series_windows`'
        ``absent_levels``); ``inputs``: each series' covariates (its ``inputs``)."""
        return self.source(times, values, part, seed, levels, inputs).cut()

    def source(
        self,
        times: list[np.ndarray],
        values: list[np.ndarray],
        part: str,
        seed: int,
        levels: Sequence[np.ndarray] | None = None,
        inputs: Sequence[InputSeries] | None = None,
    ) -> WindowSource:
        """The windows of :meth:`windows` (same arguments), not cut yet: a fit trains on
        them and scores them a batch at a time, so its memory holds the series and a few
        batches, however many windows they make."""
        index = self.index(times, values, part, seed)
        return WindowSource(self, times, values, index, levels, inputs)

    def index(
        self, times: list[np.ndarray], values: list[np.ndarray], part: str, seed: int
    ) -> WindowIndex:
        """Where the windows of :meth:`windows` are cut (same arguments), a few numbers per
        window and no token: :meth:`cut` cuts any of them, so a fit holds this index and
        cuts each batch's windows when it trains on them.

        Examples
        --------
        >>> import numpy as np
        >>> from levy_sklearn.windows import WindowPlan
        >>> plan = WindowPlan(8.0, 2.0, None, "last", 64, None, 100, 0.5, 0.0)
        >>> t, v = np.arange(20.0), np.arange(20.0)[:, None]
        >>> index = plan.index([t], [v], "train", seed=0)
        >>> index.series.size, int((index.gaps > 0).sum())  # 19 windows and 10 repeated with a gap
        (29, 10)
        """
        # Per series only its cutoffs and its gap windows' draws are kept until the index is
        # assembled: arrays of every window's gap, keep and end, one per series, took as
        # much memory again as the index (3 million windows of 10,000 subjects).
        cutoffs, splits, gapped_at, gaps_drawn, holes_drawn = [], [], [], [], []
        # Gap windows (see observation_dropout) are drawn from the seed, reproducibly.
        rng = np.random.default_rng(seed)
        for t, v in zip(times, values, strict=True):
            split = -np.inf if part == "held_out" else np.inf
            if part in ("train", "calibrate") and self.calibration_fraction > 0 and t.size:
                split = calibration_start(t, self.calibration_fraction)
            if part in ("calibrate", "held_out"):
                cut = self.cutoffs(t, v, split, np.inf)
                if part == "held_out" and t.size:
                    # Every cutoff of a held-out subject's first context span too: a new
                    # subject is forecast from its first observations, and the evenly
                    # spaced cutoffs of a long series hold almost none of them, too few
                    # for the calibration's history groups to form.
                    early = self.cutoffs(t, v, -np.inf, t[0] + self.context_span)
                    cut = np.union1d(cut, early)
            else:
                cut = self.cutoffs(t, v, -np.inf, split)
                n_gap = int(np.ceil(self.observation_dropout * cut.size))
                if n_gap:
                    gapped = rng.choice(cut, size=n_gap, replace=False)
                    gaps_drawn.append(rng.uniform(0, self.horizon_span, n_gap))
                    # Some gaps are holes before a last observation (a sensor that was
                    # silent, then reported once), the others end the context.
                    holes_drawn.append(rng.random(n_gap) < HOLE_SHARE)
                    gapped_at.append((len(cutoffs), cut.size))
                    cut = np.concatenate([cut, gapped])
            cutoffs.append(cut)
            splits.append(split if part == "train" else np.inf)
        sizes = np.array([c.size for c in cutoffs], dtype=np.int64)
        starts = np.cumsum(sizes) - sizes
        gaps = np.zeros(int(sizes.sum()))
        keeps = np.zeros(gaps.size, bool)
        for (i, n_plain), gap, hole in zip(gapped_at, gaps_drawn, holes_drawn, strict=True):
            gaps[starts[i] + n_plain : starts[i] + sizes[i]] = gap
            keeps[starts[i] + n_plain : starts[i] + sizes[i]] = hole
        plans = np.full(gaps.size, self.horizon_span, dtype=np.float32)
        if part not in ("calibrate", "held_out"):
            # A generator of its own, so that the gap windows' draws (and every forecast
            # without X) stay those of the seed alone.
            plan_rng = np.random.default_rng([seed, 1])
            cut_short = plan_rng.random(plans.size, dtype=np.float32) < PLAN_CUT_SHARE
            short = plan_rng.random(int(cut_short.sum()), dtype=np.float32)
            plans[cut_short] = self.horizon_span * short
        return WindowIndex(
            np.repeat(np.arange(len(cutoffs), dtype=np.int32), sizes),
            np.concatenate([np.zeros(0), *cutoffs]).astype(float, copy=False),
            gaps,
            keeps,
            np.repeat(np.array(splits, dtype=float), sizes),
            plans,
        )

    def cut(
        self,
        times: list[np.ndarray],
        values: list[np.ndarray],
        index: WindowIndex,
        levels: Sequence[np.ndarray] | None = None,
        inputs: Sequence[InputSeries] | None = None,
    ) -> SeriesWindows:
        """The windows of ``index`` (from :meth:`index`, or some of its rows), in its order,
        padded to the longest of them; ``series`` numbers the series of ``times``.
        ``levels`` and ``inputs`` as for :meth:`windows`.

        Examples
        --------
        >>> import numpy as np
        >>> from levy_sklearn.windows import WindowPlan
        >>> plan = WindowPlan(8.0, 2.0, None, "last", 64, None, 100, 0.0, 0.0)
        >>> t, v = np.arange(20.0), np.arange(20.0)[:, None]
        >>> index = plan.index([t, t], [v, 2 * v], "train", seed=0)
        >>> some = plan.cut([t, t], [v, 2 * v], index.take([30, 2]))
        >>> some.series.tolist(), some.cutoffs.tolist()
        ([1, 0], [11.0, 2.0])
        """
        return self.stacked(self.window_list(times, values, index, levels, inputs))

    def window_list(
        self,
        times: list[np.ndarray],
        values: list[np.ndarray],
        index: WindowIndex,
        levels: Sequence[np.ndarray] | None = None,
        inputs: Sequence[InputSeries] | None = None,
    ) -> list[_Window]:
        """:meth:`cut`'s windows before padding, in the index's order (``series`` numbering
        the series of ``times``): what :class:`CachedWindows` keeps."""
        # series_windows cuts series by series: the rows grouped by series (stably), cut,
        # then put back in the index's order.
        order = np.argsort(index.series, kind="stable")
        series, starts = np.unique(index.series[order], return_index=True)
        groups = np.split(order, starts[1:]) if order.size else []  # no window: no group

        def each(seq: Sequence | None) -> list | None:
            return None if seq is None else [seq[i] for i in series]

        grouped = _window_list(
            each(times) or [],
            each(values) or [],
            [index.cutoffs[g] for g in groups],
            context_length=self.context_span,
            horizon=self.horizon_span,
            query_times=None,
            target_end=[float(index.ends[g[0]]) for g in groups],
            normalization=self.normalization,
            max_tokens=self.max_tokens,
            max_queries=self.max_targets,
            min_scale=_MIN_SCALE,
            origin_queries=(),
            context_gaps=[index.gaps[g] for g in groups],
            gap_keeps_last=[index.keeps[g] for g in groups],
            seasonal_period=self.seasonal_period,
            absent_levels=each(levels),
            inputs=each(inputs),
            input_horizon=[index.plans[g] for g in groups],
            echoes=self.echoes,
        )
        windows: list[_Window] = [None] * len(grouped)  # type: ignore[list-item]
        for row, window in zip(order, grouped, strict=True):
            windows[row] = window._replace(series=int(series[window.series]))
        return windows

    def stacked(self, windows: list[_Window]) -> SeriesWindows:
        """``windows`` (from :meth:`window_list`) padded into one batch, with the calendar."""
        return self.with_calendar(_stack(windows))

    def forecast_windows(
        self,
        times: list[np.ndarray],
        values: list[np.ndarray],
        at: list[np.ndarray],
        levels: Sequence[np.ndarray] | None = None,
        inputs: Sequence[InputSeries] | None = None,
    ) -> tuple[SeriesWindows, list[tuple[int, np.ndarray]]]:
        """Prediction windows for the forecast times ``at`` of every series, and for each
        window the series and the positions in ``at`` it answers.

        A time after a series' last time point is forecast from its whole context; an
        earlier one (in-sample) from what was seen strictly before it (standardised as the
        series was fitted, on all its history): one window per (series, effective cutoff). Each
        window gets one extra query at ``horizon_span`` after its origin, whose variance
        floors the variance beyond it (see :func:`~levy_sklearn.calibration.horizon_floor`).
        ``levels`` and ``inputs`` as for :meth:`windows`; known-ahead inputs are read up
        to ``horizon_span`` after each cutoff, as in training.
        """
        rows, cutoffs, queries, where = [], [], [], []
        for i, (t, t_abs) in enumerate(zip(times, at, strict=True)):
            before = np.searchsorted(t, t_abs, side="left") - 1
            cut = np.where(t_abs > t[-1], t[-1], np.where(before >= 0, t[before], t_abs - 1.0))
            for c in np.unique(cut):
                (k,) = np.nonzero(cut == c)
                rows.append(i)
                cutoffs.append([c])
                queries.append(t_abs[k] - c)
                where.append((i, k))
        windows = series_windows(
            [times[i] for i in rows],
            [values[i] for i in rows],
            cutoffs,
            context_length=self.context_span,
            query_times=queries,
            normalization=self.normalization,
            seasonal_period=self.seasonal_period,
            max_tokens=self.max_tokens,
            origin_queries=[self.horizon_span],
            absent_levels=None if levels is None else [levels[i] for i in rows],
            inputs=None if inputs is None else [inputs[i] for i in rows],
            input_horizon=self.horizon_span,
            echoes=self.echoes,
        )
        return self.with_calendar(windows), where
