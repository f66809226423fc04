"""The data-adapter layer: observation tokens from tabular rows and from series windows.

Both front-ends speak to :class:`~levy_sklearn.network.LevyNet` through one format, a dict of
padded arrays (``n`` samples, ``L`` token slots, ``Q`` queries)::

    times           (n, L) float32   token times, in scaled time units
    channels        (n, L) int64     token channel ids
    values          (n, L) float32   token values (standardised by the front-end)
    mask            (n, L) bool      True = observed token, False = padding
    query_times     (n, Q) float32   times at which to predict
    query_channels  (n, Q) int64     which target / channel to predict

A missing value is an absent token (``mask`` False), never an imputed one.
"""

from __future__ import annotations

import numbers
import warnings
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np
import pandas as pd

__all__ = [
    "TOKEN_KEYS",
    "check_magnitude",
    "column_scaling",
    "tokens_from_rows",
    "tokens_from_events",
    "take_tokens",
]

#: Keys of a token dict (each an array with one row per sample): observation ``times``,
#: ``channels``, ``values`` and padding ``mask``, then the ``query_times`` and
#: ``query_channels`` of the predictions asked for.
TOKEN_KEYS = ("times", "channels", "values", "mask", "query_times", "query_channels")


# Token values are float32. A standardised value beyond its range (an outlier some 1e38
# standard deviations out, where the network has long saturated) is clipped to the range
# instead of overflowing to inf, which would turn the prediction into NaN.
_FLOAT32_MAX = float(np.finfo(np.float32).max)
# Largest target magnitude accepted (see check_magnitude).
_MAX_MAGNITUDE = 1e150


def _float32_values(values: np.ndarray) -> np.ndarray:
    return np.clip(values, -_FLOAT32_MAX, _FLOAT32_MAX).astype(np.float32)


def column_scaling(
    values: np.ndarray, weights: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """NaN-aware mean and standard deviation of every column, to standardise by.

    A column with no finite value gets mean 0, a constant one scale 1. Moments are taken of
    the values divided by the column's largest magnitude, so that columns anywhere in
    float64's range do not overflow (``np.nanstd`` alone squares values beyond 1e154).

    Parameters
    ----------
    values : ndarray of shape (n_rows, n_columns)
        Values; ``NaN`` marks an unobserved cell.
    weights : ndarray of shape (n_rows,), optional
        Positive row weights: the moments of the weighted empirical distribution (a row of
        weight 2 counts as two rows). ``None`` weighs rows equally.

    Returns
    -------
    mean, scale : ndarray of shape (n_columns,)

    Examples
    --------
    >>> import numpy as np
    >>> from levy_sklearn.adapters import column_scaling
    >>> column_scaling(np.array([[1.0, np.nan, 2.0], [3.0, np.nan, 2.0]]))
    (array([2., 0., 2.]), array([1., 1., 1.]))
    >>> column_scaling(np.array([[1e200], [3e200]]))
    (array([2.e+200]), array([1.e+200]))
    >>> column_scaling(np.empty((0, 2)))
    (array([0., 0.]), array([1., 1.]))
    >>> column_scaling(np.array([[1.0], [3.0]]), weights=np.array([3.0, 1.0]))
    (array([1.5]), array([0.8660254]))
    """
    values = np.asarray(values, dtype=np.float64)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN columns: handled below
        size = np.nanmax(np.abs(values), axis=0, initial=0.0)
        size = np.where(np.isfinite(size) & (size > 0), size, 1.0)
        if weights is None:
            mean = np.nanmean(values / size, axis=0) * size
            scale = np.nanstd(values / size, axis=0) * size
        else:
            unit = values / size
            w = np.where(np.isnan(unit), 0.0, np.asarray(weights, dtype=np.float64)[:, None])
            unit = np.nan_to_num(unit)
            total = w.sum(axis=0)
            mean_unit = (w * unit).sum(axis=0) / total
            var_unit = (w * (unit - mean_unit) ** 2).sum(axis=0) / total
            mean, scale = mean_unit * size, np.sqrt(var_unit) * size
    return (
        np.where(np.isfinite(mean), mean, 0.0),
        np.where(np.isfinite(scale) & (scale > 0), scale, 1.0),
    )


def check_magnitude(values: np.ndarray, name: str = "y") -> None:
    """Refuse targets so large that their predictive variance would overflow float64.

    A variance is in squared units of ``values``: beyond ``1e150`` it can exceed float64's
    1.8e308 and become ``inf``.

    Parameters
    ----------
    values : ndarray
        Target values (``NaN`` allowed).
    name : str, default="y"
        How the error message names them.

    Raises
    ------
    ValueError
        Naming the problem and the fix (rescale).

    Examples
    --------
    >>> import numpy as np
    >>> from levy_sklearn.adapters import check_magnitude
    >>> check_magnitude(np.array([1e12, -3.0, np.nan]))
    >>> check_magnitude(np.array([1e38], dtype=np.float32))  # no overflow warning
    >>> check_magnitude(np.array([2e150]))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: y has values beyond ±1e+150, whose predictive variance would overflow ...
    """
    # In float64: a float32 array would cast the bound to float32, where it overflows.
    if np.nanmax(np.abs(np.asarray(values, dtype=np.float64)), initial=0.0) > _MAX_MAGNITUDE:
        raise ValueError(
            f"{name} has values beyond ±{_MAX_MAGNITUDE:g}, whose predictive variance would "
            f"overflow float64; rescale {name} (e.g. divide it by a power of 10)."
        )


def _queries(n: int, query_times: np.ndarray | None, n_targets: int) -> dict[str, np.ndarray]:
    if query_times is None:
        query_times = np.zeros((n, n_targets))
    return {
        "query_times": np.asarray(query_times, dtype=np.float32),
        "query_channels": np.broadcast_to(np.arange(n_targets), (n, n_targets)).copy(),
    }


def tokens_from_rows(
    X: np.ndarray,
    n_targets: int = 1,
    feature_times: np.ndarray | None = None,
    query_times: np.ndarray | None = None,
) -> dict[str, np.ndarray]:
    """One token per observed (non-NaN) cell of a table; channel = column.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
        Feature table; ``NaN`` marks a feature that was not observed in that row.
    n_targets : int, default=1
        Number of queries per row (one per target, all at ``query_times``).
    feature_times : ndarray of shape (n_features,), optional
        Time of each column (e.g. ``-lag`` for a row of lags), so a row becomes a
        continuous-time window; all zeros by default.
    query_times : ndarray of shape (n_samples, n_targets), optional
        Time of each query; zeros by default.

    Returns
    -------
    dict of ndarray
        The token arrays described in the module docstring, ``L = n_features``.

    Examples
    --------
    >>> import numpy as np
    >>> from levy_sklearn.adapters import tokens_from_rows
    >>> tok = tokens_from_rows(np.array([[1.0, np.nan], [3.0, 4.0]]))
    >>> tok["mask"]
    array([[ True, False],
           [ True,  True]])
    >>> tok["channels"].tolist(), tok["query_channels"].tolist()
    ([[0, 1], [0, 1]], [[0], [0]])
    """
    X = np.asarray(X, dtype=np.float64)
    n, p = X.shape
    times = np.zeros(p) if feature_times is None else np.asarray(feature_times, dtype=float)
    mask = ~np.isnan(X)
    return {
        "times": np.broadcast_to(times, (n, p)).astype(np.float32),
        "channels": np.broadcast_to(np.arange(p), (n, p)).copy(),
        "values": _float32_values(np.where(mask, X, 0.0)),
        "mask": mask,
        **_queries(n, query_times, n_targets),
    }


def tokens_from_events(
    events: Sequence[tuple[np.ndarray, np.ndarray, np.ndarray]],
    query_times: np.ndarray,
    query_channels: np.ndarray,
    max_tokens: int | None = None,
) -> dict[str, np.ndarray]:
    """Pad variable-length event lists ``(times, channels, values)`` into token arrays.

    Parameters
    ----------
    events : sequence of (times, channels, values)
        One triple of equally long 1-d arrays per sample: the observations in its window.
        Non-finite values are dropped (missing = no token).
    query_times : ndarray of shape (n_samples, Q)
        Times to predict at, per sample.
    query_channels : ndarray of shape (n_samples, Q)
        Channel to predict, per query.
    max_tokens : int, optional
        Keep at most this many tokens per sample, the latest in time.

    Returns
    -------
    dict of ndarray
        The token arrays described in the module docstring, ``L`` = the longest window
        (at least 1, so a sample with no observation is all padding).

    Examples
    --------
    >>> import numpy as np
    >>> from levy_sklearn.adapters import tokens_from_events
    >>> ev = [(np.array([-2.0, -1.0]), np.array([0, 1]), np.array([0.5, np.nan])),
    ...       (np.array([]), np.array([], dtype=int), np.array([]))]
    >>> tok = tokens_from_events(ev, np.ones((2, 1)), np.zeros((2, 1), dtype=int))
    >>> tok["mask"].tolist(), tok["times"][0].tolist()
    ([[True], [False]], [-2.0])
    """
    kept = []
    for t, c, v in events:
        t, c, v = np.asarray(t, float), np.asarray(c, np.int64), np.asarray(v, float)
        ok = np.isfinite(v) & np.isfinite(t)
        t, c, v = t[ok], c[ok], v[ok]
        if max_tokens is not None and t.size > max_tokens:
            latest = np.argsort(t, kind="stable")[-max_tokens:]
            t, c, v = t[latest], c[latest], v[latest]
        kept.append((t, c, v))
    n = len(kept)
    width = max([1, *(t.size for t, _, _ in kept)])
    out = {
        "times": np.zeros((n, width), np.float32),
        "channels": np.zeros((n, width), np.int64),
        "values": np.zeros((n, width), np.float32),
        "mask": np.zeros((n, width), bool),
    }
    for i, (t, c, v) in enumerate(kept):
        out["times"][i, : t.size] = t
        out["channels"][i, : t.size] = c
        out["values"][i, : t.size] = _float32_values(v)
        out["mask"][i, : t.size] = True
    out["query_times"] = np.asarray(query_times, dtype=np.float32)
    out["query_channels"] = np.asarray(query_channels, dtype=np.int64)
    return out


def take_tokens(tokens: dict[str, np.ndarray], index: np.ndarray) -> dict[str, np.ndarray]:
    """Rows ``index`` of every token array.

    Parameters
    ----------
    tokens : dict of ndarray
        Token arrays with one row per sample (keys :data:`TOKEN_KEYS`).
    index : ndarray
        Row indices or a boolean row mask.

    Returns
    -------
    dict of ndarray
        The same keys, the selected rows.

    Examples
    --------
    >>> import numpy as np
    >>> from levy_sklearn.adapters import take_tokens, tokens_from_rows
    >>> take_tokens(tokens_from_rows(np.ones((3, 2))), np.array([0, 2]))["values"].shape
    (2, 2)
    """
    return {key: value[index] for key, value in tokens.items()}


# ---------------------------------------------------------------------------------------------
# Series windows: continuous-time windowing of (irregular) series into observation tokens.
#
# A series is a pandas index (datetime, timedelta, period or integer) and a (T, C) value array
# whose NaN cells are unobserved. Time becomes a float in "time units" (a characteristic
# spacing fitted once, e.g. the median spacing), and every window is expressed relative to its
# own cutoff (cutoff = 0, history negative, targets positive), so time encodings generalise
# across windows and series. Values are instance-normalised: level (and trend) from the
# window's own context, scale never below that of the series' whole history up to the cutoff.
# ---------------------------------------------------------------------------------------------

__all__ += [
    "NORMALIZATIONS",
    "SeriesWindows",
    "index_kind",
    "index_to_time",
    "median_spacing",
    "series_windows",
    "span_in_units",
]

#: Instance normalisations a window accepts (``normalization`` of :func:`series_windows`
#: and of the forecaster): subtract the context mean, subtract its least-squares line, or
#: leave values alone.
NORMALIZATIONS = ("mean", "trend", "none")
# Contexts thinner than this fall back to the mean (a slope from two tokens is noise); a
# history with fewer steps than _MIN_STEPS_SCALE per channel keeps the unit scale.
_MIN_TOKENS_TREND = 3
_MIN_STEPS_SCALE = 2


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
    >>> from levy_sklearn.adapters import index_kind
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
    >>> from levy_sklearn.adapters import median_spacing
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
    >>> from levy_sklearn.adapters import index_to_time
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
    >>> from levy_sklearn.adapters import span_in_units
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
    >>> from levy_sklearn.adapters import series_windows
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
    """Per-channel ``(level, slope, spread²)`` of one context: ``loc(τ) = level + slope·τ``.

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
        if mode == "trend" and n >= _MIN_TOKENS_TREND and np.ptp(tc) > 0:
            # Least-squares line through the context, anchored at the cutoff (τ = 0).
            tm = tc.mean()
            slope[ch] = np.sum((tc - tm) * (vc - vc.mean())) / np.sum((tc - tm) ** 2)
            level[ch] = vc.mean() - slope[ch] * tm
            dof = n - 2
        else:
            level[ch] = vc.mean()
            dof = n - 1
        if dof >= _MIN_STEPS_SCALE:
            spread2[ch] = np.sum((vc - level[ch] - slope[ch] * tc) ** 2) / dof
    return level, slope, spread2


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
            if n >= _MIN_STEPS_SCALE:
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
) -> SeriesWindows:
    """Cut continuous-time windows from series and turn them into tokens and queries.

    For every series ``i`` and every cutoff ``c`` in ``cutoffs[i]``, the context is every
    observed cell with time in ``(c − context_length, c]`` (one token per non-NaN cell,
    channel = column; a NaN is no token). Times are made relative to the window's origin,
    its last context observation (``c`` itself when the context is empty), so a gap between
    the last observation and the cutoff lengthens the horizon of every query. The queries are
    either the observed rows in ``(c, c + horizon]`` (training: targets are their values,
    ``NaN`` for unobserved channels) or the given relative ``query_times`` (prediction:
    targets ``NaN``), each asked for every channel. Both context and targets are normalised
    per channel (instance normalisation, as in RevIN/PatchTST): ``"mean"`` subtracts the
    context mean, ``"trend"`` subtracts the context's least-squares line instead (so a trend
    extrapolates; ``< 3`` context tokens fall back to the mean), and both divide by a scale:
    the larger of the window's residual spread (with the fit's degrees of freedom removed)
    and the scale of the series' whole history up to the cutoff (the root mean square of its
    steps between consecutive observations). The window's spread alone would shrink σ exactly
    when the window is sparse; the history floor keeps it from doing so, and the window's
    spread follows an amplitude that has grown beyond the history's. ``"none"`` leaves
    values alone. With ``context_gaps``, a training window's context ends ``gap`` before its
    cutoff while its targets stay after the cutoff: the window a forecast across a gap sees.

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
    normalization : {"mean", "trend", "none"}, default="mean"
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
    origin_queries : sequence of float, default=()
        Extra queries appended to every window, at these times after its origin (e.g. the
        training horizon, as a reference); their targets are ``NaN``.

    Returns
    -------
    SeriesWindows

    Examples
    --------
    >>> import numpy as np
    >>> from levy_sklearn.adapters import series_windows
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
    events, q_rel, q_chan, q_target, q_loc, q_scale = [], [], [], [], [], []
    series_id, window_cut, n_context, origin = [], [], [], []
    for i, (t_i, v_i) in enumerate(zip(times, values, strict=True)):
        t_i = np.asarray(t_i, dtype=np.float64)
        v_i = np.asarray(v_i, dtype=np.float64).reshape(len(t_i), n_channels)
        end = np.inf if target_end is None else float(target_end[i])
        history_scale = _HistoryScale(t_i, v_i, min_scale)
        cuts = np.asarray(cutoffs[i], dtype=np.float64)
        gaps = np.zeros(cuts.size) if context_gaps is None else np.asarray(context_gaps[i], float)
        for c, gap in zip(cuts, gaps, strict=True):
            lo = np.searchsorted(t_i, c - gap - context_length, side="right")
            last = np.searchsorted(t_i, c - gap, side="right")
            hi = np.searchsorted(t_i, c, side="right")
            ctx = v_i[lo:last]
            rows, chans = np.nonzero(np.isfinite(ctx))
            tt = t_i[lo:last][rows] - c
            vv = ctx[rows, chans]
            if max_tokens is not None and tt.size > max_tokens:
                keep = np.argsort(tt, kind="stable")[-max_tokens:]
                tt, chans, vv = tt[keep], chans[keep], vv[keep]
            # Time origin: the last observation (the cutoff if there is none), so a gap before
            # the cutoff lengthens every horizon instead of going unseen.
            shift = tt.max() if tt.size else 0.0
            tt = tt - shift
            level, slope, spread2 = _window_location(tt, chans, vv, n_channels, normalization)
            scale = (
                np.ones(n_channels)
                if normalization == "none"
                else history_scale(c - gap, spread2)
            )
            vv = (vv - level[chans] - slope[chans] * tt) / scale[chans]
            if horizon is not None:
                t_hi = np.searchsorted(t_i, c + horizon, side="right")
                rel = t_i[hi:t_hi] - c
                tgt = v_i[hi:t_hi].copy()
                tgt[t_i[hi:t_hi] > end] = np.nan
                if max_queries is not None and rel.size > max_queries:
                    pick = np.unique(np.linspace(0, rel.size - 1, max_queries).round().astype(int))
                    rel, tgt = rel[pick], tgt[pick]
            else:
                rel = np.asarray(query_times[i], dtype=np.float64)
                tgt = np.full((rel.size, n_channels), np.nan)
            extra = np.asarray(origin_queries, dtype=np.float64)
            rel = np.concatenate([rel - shift, extra])
            tgt = np.concatenate([tgt, np.full((extra.size, n_channels), np.nan)])
            rel_q = np.repeat(rel, n_channels)
            chan_q = np.tile(np.arange(n_channels), rel.size)
            loc_q = level[chan_q] + slope[chan_q] * rel_q
            scale_q = scale[chan_q]
            events.append((tt, chans, vv))
            q_rel.append(rel_q)
            q_chan.append(chan_q)
            q_target.append((tgt.ravel() - loc_q) / scale_q)
            q_loc.append(loc_q)
            q_scale.append(scale_q)
            series_id.append(i)
            window_cut.append(c)
            origin.append(c + shift)
            n_context.append(tt.size)
    n = len(events)
    width = max([1, *(q.size for q in q_rel)])

    def pad(parts: list[np.ndarray], fill: float, dtype: type) -> np.ndarray:
        out = np.full((n, width), fill, dtype=dtype)
        for row, part in enumerate(parts):
            out[row, : part.size] = part
        return out

    valid = pad([np.ones(q.size, bool) for q in q_rel], False, bool)
    tokens = tokens_from_events(events, pad(q_rel, 0.0, np.float64), pad(q_chan, 0, np.int64))
    return SeriesWindows(
        tokens=tokens,
        targets=pad(q_target, np.nan, np.float64),
        query_loc=pad(q_loc, 0.0, np.float64),
        query_scale=pad(q_scale, 1.0, np.float64),
        query_valid=valid,
        series=np.asarray(series_id, dtype=np.int64),
        cutoffs=np.asarray(window_cut, dtype=np.float64),
        origins=np.asarray(origin, dtype=np.float64),
        n_context=np.asarray(n_context, dtype=np.int64),
    )
