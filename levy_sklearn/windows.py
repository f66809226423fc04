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

import numbers
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np
import pandas as pd

from .tokens import tokens_from_events

# What a user calls to cut windows for a front-end of one's own; the time-axis helpers are the
# forecaster's plumbing, importable but not promised.
__all__ = ["SeriesWindows", "infer_seasonal_period", "series_windows"]

#: Instance normalisations a window accepts (``normalization`` of :func:`series_windows`
#: and of the forecaster): subtract the context's last observation, its least-squares line
#: or its mean, or leave values alone.
NORMALIZATIONS = ("last", "trend", "mean", "none")
# Contexts thinner than this fall back to the mean (a slope from two tokens is noise).
_MIN_TOKENS_TREND = 3
# A seasonal pattern is fitted only to a context that spans at least this many periods (one
# period cannot tell a season from a trend), with at least this many tokens per coefficient.
MIN_SEASONS = 2
_TOKENS_PER_COEFFICIENT = 2
# A spread from fewer terms than this (residual degrees of freedom of a window, steps of a
# history) is noise: it does not count towards a scale.
_MIN_SCALE_TERMS = 2


def index_kind(index: pd.Index) -> str:
    """Which kind of time a series index carries: ``"datetime"``, ``"timedelta"``,
    ``"period[<freq>]"`` or ``"numeric"``.

    Datetime and timedelta indexes share a time unit (a ``pd.Timedelta``); a period index is
    measured in periods of its frequency; a numeric index in its own units.

    Parameters
    ----------
    index : pd.Index
        The time index of a series.

    Returns
    -------
    str
        The kind of time.

    Raises
    ------
    TypeError
        For an index that carries no time (strings, booleans, ...).

    Examples
    --------
    >>> import pandas as pd
    >>> from levy_sklearn.windows import index_kind
    >>> index_kind(pd.date_range("2020", periods=3)), index_kind(pd.RangeIndex(3))
    ('datetime', 'numeric')
    >>> index_kind(pd.period_range("2020-01", periods=3, freq="M"))
    'period[M]'
    """
    if isinstance(index, pd.DatetimeIndex):
        return "datetime"
    if isinstance(index, pd.TimedeltaIndex):
        return "timedelta"
    if isinstance(index, pd.PeriodIndex):
        return f"period[{index.freqstr}]"
    if pd.api.types.is_numeric_dtype(index.dtype) and not pd.api.types.is_bool_dtype(index):
        return "numeric"
    raise TypeError(
        f"Cannot read time from an index of type {type(index).__name__} ({index.dtype}); use a "
        "DatetimeIndex, TimedeltaIndex, PeriodIndex or an integer index."
    )


def _raw_time(index: pd.Index) -> np.ndarray:
    """Float time in the index's native unit: seconds for datetime/timedelta, periods for a
    period index (their ordinals), the values themselves for a numeric index."""
    if isinstance(index, pd.DatetimeIndex):
        if index.tz is not None:
            index = index.tz_convert("UTC").tz_localize(None)
        return np.asarray((index - pd.Timestamp(0)) / pd.Timedelta(1, "s"), dtype=np.float64)
    if isinstance(index, pd.TimedeltaIndex):
        return np.asarray(index / pd.Timedelta(1, "s"), dtype=np.float64)
    if isinstance(index, pd.PeriodIndex):
        return index.asi8.astype(np.float64)
    return np.asarray(index, dtype=np.float64)


def _unit_seconds_or_value(unit: pd.Timedelta | float) -> float:
    return unit / pd.Timedelta(1, "s") if isinstance(unit, pd.Timedelta) else float(unit)


def median_spacing(indexes: Sequence[pd.Index]) -> pd.Timedelta | float:
    """Median positive spacing between consecutive time points, pooled over series.

    The characteristic time unit of a collection of series: a ``pd.Timedelta`` for datetime
    and timedelta indexes, a float otherwise (periods for a period index). ``1`` (one second,
    one period, one index unit) when no series has two distinct time points.

    Parameters
    ----------
    indexes : sequence of pd.Index
        The time indexes of the series, all of one kind (see :func:`index_kind`).

    Returns
    -------
    pd.Timedelta or float
        The time unit.

    Examples
    --------
    >>> import pandas as pd
    >>> from levy_sklearn.windows import median_spacing
    >>> idx = pd.DatetimeIndex(["2020-01-01 00:00", "2020-01-01 01:00", "2020-01-01 03:00",
    ...                         "2020-01-01 04:00"])
    >>> median_spacing([idx])
    Timedelta('0 days 01:00:00')
    >>> median_spacing([pd.Index([0, 2, 4, 5])])
    2.0
    """
    gaps = [np.diff(np.sort(_raw_time(ix))) for ix in indexes if len(ix) > 1]
    gaps = np.concatenate(gaps) if gaps else np.array([])
    gaps = gaps[gaps > 0]
    spacing = float(np.median(gaps)) if gaps.size else 1.0
    kinds = {index_kind(ix) for ix in indexes}
    if kinds & {"datetime", "timedelta"}:
        return pd.Timedelta(seconds=spacing)
    return spacing


def index_to_time(index: pd.Index, unit: pd.Timedelta | float) -> np.ndarray:
    """Float times of ``index`` in multiples of ``unit`` (see :func:`median_spacing`).

    Only differences of these times carry meaning (the origin is the Unix epoch for datetimes,
    zero otherwise); windows subtract their cutoff.

    Parameters
    ----------
    index : pd.Index
        A datetime, timedelta, period or numeric index.
    unit : pd.Timedelta or float
        The time unit: a ``pd.Timedelta`` for datetime and timedelta indexes, a number of
        periods or index units otherwise.

    Returns
    -------
    ndarray of shape (len(index),)
        Float times.

    Examples
    --------
    >>> import pandas as pd
    >>> from levy_sklearn.windows import index_to_time
    >>> idx = pd.DatetimeIndex(["2020-01-01 00:00", "2020-01-01 06:00", "2020-01-02 00:00"])
    >>> t = index_to_time(idx, pd.Timedelta(hours=6))
    >>> (t - t[0]).tolist()
    [0.0, 1.0, 4.0]
    """
    return _raw_time(index) / _unit_seconds_or_value(unit)


def span_in_units(
    span: float | str | pd.Timedelta, unit: pd.Timedelta | float, name: str = "span"
) -> float:
    """A time span in time units: a number is already a count of units; a ``pd.Timedelta``
    (or a string pandas reads as one, e.g. ``"36h"``) is divided by a ``pd.Timedelta`` unit.

    Parameters
    ----------
    span : float, str or pd.Timedelta
        A positive number of time units, or a time span.
    unit : pd.Timedelta or float
        The time unit (see :func:`median_spacing`).
    name : str, default="span"
        The hyperparameter's name, for error messages.

    Returns
    -------
    float
        The span in time units.

    Raises
    ------
    ValueError, TypeError
        For a span that is not positive, not readable, or a time span on an index without
        a time unit; the message says what to pass instead.

    Examples
    --------
    >>> import pandas as pd
    >>> from levy_sklearn.windows import span_in_units
    >>> span_in_units(24, pd.Timedelta(hours=1)), span_in_units("2D", pd.Timedelta(hours=1))
    (24.0, 48.0)
    """
    if isinstance(span, str | pd.Timedelta | np.timedelta64):
        try:
            delta = pd.Timedelta(span)
        except ValueError as err:
            raise ValueError(f"{name}={span!r} is not a time span pandas can read.") from err
        if not isinstance(unit, pd.Timedelta):
            raise ValueError(
                f"{name}={span!r} is a time span, but the series' index has no time unit (it "
                "is a period or integer index); give it as a number of time steps instead."
            )
        value = delta / unit
    elif isinstance(span, numbers.Real) and not isinstance(span, bool):
        value = float(span)
    else:
        raise TypeError(
            f"{name}={span!r} must be a positive number of time steps or a time span such as "
            "pd.Timedelta('2D') or '36h'."
        )
    if not np.isfinite(value) or value <= 0:
        raise ValueError(f"{name}={span!r} must be positive.")
    return float(value)


# Seasonal periods implied by an index frequency (its base, without multiple or anchor): in
# periods for a period index, as a time span for a datetime index (whose unit, the median
# spacing, is not a calendar month or quarter).
# (pandas < 2.2 spells hourly "H", month end "M" and quarter end "Q").
_PERIODS_PER_SEASON = {"M": 12, "Q": 4, "D": 7, "B": 5, "h": 24, "H": 24}
_YEAR = pd.Timedelta(days=365.2425)
_SEASON_SPAN = {
    "M": _YEAR,
    "MS": _YEAR,
    "ME": _YEAR,
    "Q": _YEAR,
    "QS": _YEAR,
    "QE": _YEAR,
    "D": pd.Timedelta(days=7),
    "B": pd.Timedelta(days=7),
    "h": pd.Timedelta(days=1),
    "H": pd.Timedelta(days=1),
}


def infer_seasonal_period(index: pd.Index) -> float | pd.Timedelta | None:
    """The seasonal period a regular index's frequency implies, or ``None``.

    Monthly and quarterly data repeat yearly, daily and business-daily data weekly, hourly
    data daily. A period index gets a number of its periods (12, 4, 7, 5, 24), a datetime
    index a time span (a year, a week, a day), since its time unit is the median spacing, not
    a calendar month. Yearly, weekly, sub-hourly, multiple-step (``"2h"``) and irregular
    indexes get ``None``.

    Parameters
    ----------
    index : pd.Index
        The time index of a series.

    Returns
    -------
    float, pd.Timedelta or None
        The seasonal period.

    Examples
    --------
    >>> import pandas as pd
    >>> from levy_sklearn.windows import infer_seasonal_period
    >>> infer_seasonal_period(pd.period_range("2020-01", periods=3, freq="M"))
    12.0
    >>> infer_seasonal_period(pd.date_range("2020", periods=5, freq="h"))
    Timedelta('1 days 00:00:00')
    >>> print(infer_seasonal_period(pd.period_range("2020", periods=3, freq="Y")))
    None
    """
    if isinstance(index, pd.PeriodIndex):
        code, table = index.freqstr, _PERIODS_PER_SEASON
    elif isinstance(index, pd.DatetimeIndex):
        code = None if index.freq is None else index.freq.freqstr
        if code is None and len(index) >= 3:
            code = pd.infer_freq(index)
        table = _SEASON_SPAN
    else:
        return None
    # Multiples ("2h") and other frequencies are not in the tables.
    period = None if code is None else table.get(code.split("-")[0])
    return float(period) if isinstance(period, int) else period


def _seasonal_coefficients(
    t: np.ndarray, c: np.ndarray, v: np.ndarray, n_channels: int, period: float | None
) -> np.ndarray | None:
    """Per-channel Fourier coefficients ``(n_channels, K, 2)`` of one context's seasonal
    pattern of ``period`` (time units), ``None`` without a period.

    Least squares of ``level + slope·τ + Σ_k a_k cos(2πkτ/P) + b_k sin(2πkτ/P)``, so a trend
    is not read as season; ``K = ⌊P/2⌋`` harmonics (every shape a regular season of ``P``
    steps can take; one that vanishes on the grid, ``sin(πτ)`` for an even ``P``, gets the
    minimum-norm coefficient 0), fewer where the channel has few tokens, none where its
    context spans less than two periods. The coefficients are shrunk towards no season by
    the positive-part James–Stein factor ``max(0, 1 − (p − 2) σ̂² / (RSS₀ − RSS₁))`` (``p``
    seasonal coefficients, ``RSS₁`` and ``RSS₀`` the residual sums of squares with and
    without them, ``σ̂² = RSS₁ / (n − p − 2)``): a few periods of context estimate up to
    ``P − 1`` coefficients, and where the season is weak against the noise the least-squares
    pattern is mostly noise that a forecast would repeat (a single spike of an intermittent
    series, read as a yearly one). A clear season keeps a factor near 1.
    """
    if period is None:
        return None
    n_harmonics = int(period // 2)
    coef = np.zeros((n_channels, n_harmonics, 2))
    for ch in range(n_channels):
        sel = c == ch
        tc, vc = t[sel], v[sel]
        k = min(n_harmonics, (tc.size // _TOKENS_PER_COEFFICIENT - 2) // 2)
        if k < 1 or np.ptp(tc) < MIN_SEASONS * period:
            continue
        angle = 2 * np.pi * np.outer(tc, np.arange(1, k + 1)) / period
        design = np.column_stack([np.ones_like(tc), tc, np.cos(angle), np.sin(angle)])
        beta, _, rank, _ = np.linalg.lstsq(design, vc, rcond=None)
        beta = beta * _james_stein(design, vc, beta, rank)
        coef[ch, :k, 0], coef[ch, :k, 1] = beta[2 : 2 + k], beta[2 + k :]
    return coef


def _james_stein(design: np.ndarray, v: np.ndarray, beta: np.ndarray, rank: int) -> float:
    """The positive-part James–Stein factor of the coefficients beyond the first two columns
    of ``design`` (the line), given their least-squares fit ``beta`` of rank ``rank``; ``1``
    (no shrinkage) where there are too few coefficients (``p ≤ 2``) or residual degrees of
    freedom."""
    n_season, dof = rank - 2, v.size - rank
    if n_season <= 2 or dof <= 0:
        return 1.0
    rss = np.sum((v - design @ beta) ** 2)
    line = np.linalg.lstsq(design[:, :2], v, rcond=None)[0]
    explained = np.sum((v - design[:, :2] @ line) ** 2) - rss
    if explained <= 0:  # the season explains nothing
        return 0.0
    return max(0.0, 1.0 - (n_season - 2) * (rss / dof) / explained)


def _seasonal_term(
    coef: np.ndarray | None, t: np.ndarray, c: np.ndarray, period: float | None
) -> np.ndarray | float:
    """The seasonal pattern of :func:`_seasonal_coefficients` at times ``t`` of channels
    ``c`` (``0`` without one)."""
    if coef is None:
        return 0.0
    angle = 2 * np.pi * np.outer(t, np.arange(1, coef.shape[1] + 1)) / period
    return np.sum(coef[c, :, 0] * np.cos(angle) + coef[c, :, 1] * np.sin(angle), axis=1)


class SeriesWindows(NamedTuple):
    """Windows cut from series, ready for :class:`~levy_sklearn.network.LevyNet`.

    ``n`` windows, ``Q`` queries per window (padded). Values are in the window's normalised
    units: ``value = query_loc + query_scale · normalised`` maps predictions back (variances by
    the square of ``query_scale``).

    Attributes
    ----------
    tokens : dict of ndarray
        Token arrays (see the module docstring); times relative to each window's cutoff.
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
    >>> w.targets.shape, sorted(w.tokens)
    ((3, 2), ['channels', 'mask', 'query_channels', 'query_times', 'times', 'values'])
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


def _window_location(
    t: np.ndarray, c: np.ndarray, v: np.ndarray, n_channels: int, mode: str
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per-channel ``(level, slope, spread²)`` of one context: ``loc(τ) = level + slope·τ``
    (``"last"``: the channel's last value, slope 0; ``"trend"``: the least-squares line;
    ``"mean"``: the mean, slope 0).

    ``spread²`` is the residual variance around it with the degrees of freedom of the fit
    removed (unbiased, so a thin context does not read as a calm one); ``0`` where fewer than
    two residual degrees of freedom are left.
    """
    level = np.zeros(n_channels)
    slope = np.zeros(n_channels)
    spread2 = np.zeros(n_channels)
    if mode == "none":
        return level, slope, spread2
    for ch in range(n_channels):
        sel = c == ch
        n = int(sel.sum())
        if n == 0:
            continue
        tc, vc = t[sel], v[sel]
        if mode != "mean" and n >= _MIN_TOKENS_TREND and np.ptp(tc) > 0:
            # Least-squares line through the context, anchored at the origin (τ = 0); with
            # "last" only its residual spread is kept (the scale of a trending context).
            tm = tc.mean()
            slope[ch] = np.sum((tc - tm) * (vc - vc.mean())) / np.sum((tc - tm) ** 2)
            level[ch] = vc.mean() - slope[ch] * tm
            dof = n - 2
        else:
            level[ch] = vc.mean()
            dof = n - 1
        if dof >= _MIN_SCALE_TERMS:
            spread2[ch] = np.sum((vc - level[ch] - slope[ch] * tc) ** 2) / dof
        if mode == "last":
            # Forecast the change from the last observation, held flat: the trend stays in
            # the normalised context, where the network sees it.
            level[ch], slope[ch] = vc[np.argmax(tc)], 0.0
    return level, slope, spread2


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


class _HistoryScale:
    """Per-channel scale floor of a series from its whole observed history up to a cutoff.

    The root mean square of the steps between consecutive observations of a channel (the
    error a last-value forecast makes, the scale MASE uses), over every step that ends at or
    before the cutoff, with ``min_scale`` added in quadrature. A scale taken from the few
    points inside one window alone shrinks exactly when the window is sparse or gappy, and
    every σ shrinks with it; this floor does not: thinning a history lengthens its steps
    (a larger floor), and a gap before the cutoff leaves the earlier history as it was.
    """

    def __init__(self, t: np.ndarray, v: np.ndarray, min_scale: float) -> None:
        self.min_scale = min_scale
        self.step_times, self.cum_squares = [], []
        for ch in range(v.shape[1]):
            ok = np.isfinite(v[:, ch])
            steps = np.diff(v[ok, ch])
            self.step_times.append(t[ok][1:])
            self.cum_squares.append(np.cumsum(steps**2))

    def __call__(self, cutoff: float, local_spread2: np.ndarray) -> np.ndarray:
        """Scale per channel at ``cutoff``: the larger of the history's step RMS and the
        window's own (unbiased) residual spread, so a window whose amplitude has grown beyond
        its history's is not under-scaled, and a thin one is never scaled below its history."""
        scale2 = np.asarray(local_spread2, dtype=np.float64).copy()
        for ch, (times, cum) in enumerate(zip(self.step_times, self.cum_squares, strict=True)):
            n = int(np.searchsorted(times, cutoff, side="right"))
            if n >= _MIN_SCALE_TERMS:
                scale2[ch] = max(scale2[ch], cum[n - 1] / n)
            elif scale2[ch] == 0:
                scale2[ch] = 1.0  # no history, no spread: the channel's global unit
        return np.sqrt(scale2 + self.min_scale**2)


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
    min_scale: float = 0.05,
    origin_queries: Sequence[float] = (),
    context_gaps: Sequence[np.ndarray] | None = None,
    gap_keeps_last: Sequence[np.ndarray] | None = None,
    seasonal_period: float | None = None,
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
    was silent, then reported once).

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
        Keep at most this many context tokens per window, the latest.
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
    n_channels = int(np.shape(values[0])[1]) if len(values) else 1
    windows = []
    for i, (t_i, v_i) in enumerate(zip(times, values, strict=True)):
        t_i = np.asarray(t_i, dtype=np.float64)
        v_i = np.asarray(v_i, dtype=np.float64).reshape(len(t_i), n_channels)
        end = np.inf if target_end is None else float(target_end[i])
        # Without normalisation no window is scaled, so no history scale is needed.
        history_scale = None if normalization == "none" else _HistoryScale(t_i, v_i, min_scale)
        last_cells = _LastCells(t_i, v_i)
        cuts = np.asarray(cutoffs[i], dtype=np.float64)
        gaps = np.zeros(cuts.size) if context_gaps is None else np.asarray(context_gaps[i], float)
        keeps = np.zeros(cuts.size, bool) if gap_keeps_last is None else gap_keeps_last[i]
        for c, gap, keep in zip(cuts, gaps, keeps, strict=True):
            tt, chans, vv = _context(t_i, v_i, c - gap, c, context_length, max_tokens)
            if keep and gap > 0:
                tt, chans, vv = _with_last_row(t_i, v_i, c - gap, c, (tt, chans, vv))
            tt, chans, vv = last_cells(c - gap, c, (tt, chans, vv))
            # Time origin: the last observation (the cutoff if there is none), so a gap before
            # the cutoff lengthens every horizon instead of going unseen.
            shift = tt.max() if tt.size else 0.0
            tt = tt - shift
            season = _seasonal_coefficients(tt, chans, vv, n_channels, seasonal_period)
            level, slope, spread2 = _window_location(
                tt,
                chans,
                vv - _seasonal_term(season, tt, chans, seasonal_period),
                n_channels,
                normalization,
            )
            scale = (
                np.ones(n_channels) if history_scale is None else history_scale(c - gap, spread2)
            )
            if horizon is not None:
                rel, tgt = _observed_targets(t_i, v_i, c, horizon, end, max_queries)
            else:
                rel = np.asarray(query_times[i], dtype=np.float64)
                tgt = np.full((rel.size, n_channels), np.nan)
            extra = np.asarray(origin_queries, dtype=np.float64)
            rel = np.concatenate([rel - shift, extra])
            tgt = np.concatenate([tgt, np.full((extra.size, n_channels), np.nan)])
            windows.append(
                _Window(
                    *_normalised_window(
                        tt, chans, vv, rel, tgt, (level, slope, scale), season, seasonal_period
                    ),
                    series=i,
                    cutoff=c,
                    origin=c + shift,
                )
            )
    return _stack(windows)


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
        keep = np.argsort(tt, kind="stable")[-max_tokens:]
        tt, chans, vv = tt[keep], chans[keep], vv[keep]
    return tt, chans, vv


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


def _normalised_window(
    tt: np.ndarray,
    chans: np.ndarray,
    vv: np.ndarray,
    rel: np.ndarray,
    tgt: np.ndarray,
    location: tuple[np.ndarray, np.ndarray, np.ndarray],
    season: np.ndarray | None,
    period: float | None,
) -> tuple[tuple[np.ndarray, np.ndarray, np.ndarray], ...]:
    """One window's context event, its queries (every channel at every relative time) and
    their targets, normalised by ``loc(τ) = level + slope·τ + s(τ)`` and ``scale`` per
    channel (``location = (level, slope, scale)``, ``s`` the seasonal pattern, if any)."""
    level, slope, scale = location
    n_channels = level.size
    loc = level[chans] + slope[chans] * tt + _seasonal_term(season, tt, chans, period)
    vv = (vv - loc) / scale[chans]
    rel_q = np.repeat(rel, n_channels)
    chan_q = np.tile(np.arange(n_channels), rel.size)
    loc_q = level[chan_q] + slope[chan_q] * rel_q + _seasonal_term(season, rel_q, chan_q, period)
    scale_q = scale[chan_q]
    return (tt, chans, vv), rel_q, chan_q, (tgt.ravel() - loc_q) / scale_q, loc_q, scale_q


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
    return SeriesWindows(
        tokens=tokens,
        targets=pad("targets", np.nan, np.float64),
        query_loc=pad("loc", 0.0, np.float64),
        query_scale=pad("scale", 1.0, np.float64),
        query_valid=valid,
        series=np.array([w.series for w in windows], dtype=np.int64),
        cutoffs=np.array([w.cutoff for w in windows], dtype=np.float64),
        origins=np.array([w.origin for w in windows], dtype=np.float64),
        n_context=np.array([w.event[0].size for w in windows], dtype=np.int64),
    )
