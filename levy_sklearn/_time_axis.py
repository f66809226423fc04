"""The time axis of a forecaster's series: the kind of index, the time unit, the spans.

Every series index (datetime, timedelta, period or numeric) becomes float times in a time
unit fitted once (the median spacing); :class:`TimeAxis` holds that unit with the kind of
index and the hyperparameters' spans in units, and turns any forecasting horizon into the
absolute forecast times of each series.
"""

from __future__ import annotations

import numbers
import warnings
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd
from sktime.forecasting.base import ForecastingHorizon

from ._normalisation import MIN_SEASONS

_TIMEDELTA_KINDS = ("datetime", "timedelta")
# How to pass fh in each kind of time (see index_kind), for error messages.
_KIND_HINTS = {
    "datetime": "timestamps, e.g. fh=pd.DatetimeIndex([...])",
    "timedelta": "time spans, e.g. fh=pd.to_timedelta([1, 2], unit='h')",
    "period": "periods of y's frequency, e.g. fh=pd.period_range(..., freq=y.index.freq)",
    "numeric": "index values, e.g. fh=pd.Index([101, 102])",
}
# A series is regularly spaced when every step is within this share of the time unit (month
# ends: 28–31 days).
_REGULAR_TOLERANCE = 0.25
# Regularly spaced series fitted after pretrain at this many times the pretraining unit (or
# its inverse) get a warning: their windows hold far more or fewer observations than the
# network learned from (hourly pretraining, daily data: one observation per context). An
# irregular subject's median spacing is no sampling rate: clinical visits of one patient
# can be weeks apart where the panel's median is days, within what pretraining saw.
_SPACING_MISMATCH = 10.0


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
    >>> from levy_sklearn._time_axis import index_kind
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


@contextmanager
def _within_nanoseconds() -> Iterator[None]:
    """Name pandas' overflow of times beyond its nanosecond range (a far ``fh``), raised
    from inside pandas: by ``as_unit``, or on older pandas by sktime's ``to_absolute``."""
    try:
        yield
    except (pd.errors.OutOfBoundsDatetime, pd.errors.OutOfBoundsTimedelta) as error:
        raise ValueError(
            "fh reaches beyond the nanosecond range pandas holds times in (years 1677 to "
            f"2262, spans of 292 years; {error}): forecast nearer times (a shorter fh)."
        ) from error


def _raw_values(index: pd.Index) -> np.ndarray:
    """Integer time of every point in the index's native resolution: nanoseconds for
    datetime (UTC) and timedelta, ordinals for periods, the values of a numeric index."""
    if isinstance(index, pd.DatetimeIndex | pd.TimedeltaIndex):
        with _within_nanoseconds():
            return index.as_unit("ns").asi8
    if isinstance(index, pd.PeriodIndex):
        return index.asi8
    return np.asarray(index)


def time_origin(indexes: Sequence[pd.Index]) -> int | float:
    """The earliest time point of ``indexes`` in their native resolution (see
    :func:`index_to_time`): times measured from it keep their differences exact to float64
    rounding, which times measured from 1970 do not (in 2024 a float second holds 0.24 µs,
    a quarter of a 1 kHz sensor's spacing).

    Parameters
    ----------
    indexes : sequence of pd.Index
        Every series' index (see :func:`median_spacing`).

    Returns
    -------
    int or float
        Nanoseconds for datetime (UTC) and timedelta indexes, an ordinal for periods.

    Examples
    --------
    >>> import pandas as pd
    >>> from levy_sklearn._time_axis import time_origin
    >>> time_origin([pd.RangeIndex(5, 9), pd.RangeIndex(3, 6)])
    3
    """
    firsts = [_raw_values(ix)[0] for ix in indexes if len(ix)]
    return min(firsts).item() if firsts else 0


def _raw_step(unit: pd.Timedelta | float) -> float:
    """A time unit (see :func:`median_spacing`) in the native resolution of
    :func:`_raw_values`: nanoseconds for a ``pd.Timedelta``."""
    return unit.value if isinstance(unit, pd.Timedelta) else float(unit)


def _steps_within(indexes: Sequence[pd.Index], unit: pd.Timedelta | float) -> bool:
    """Whether every step of every series is within ``_REGULAR_TOLERANCE`` of ``unit``."""
    step = _raw_step(unit)
    return all(
        np.all(np.abs(np.diff(_raw_values(ix)) / step - 1) <= _REGULAR_TOLERANCE) for ix in indexes
    )


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
    >>> from levy_sklearn._time_axis import median_spacing
    >>> idx = pd.DatetimeIndex(["2020-01-01 00:00", "2020-01-01 01:00", "2020-01-01 03:00",
    ...                         "2020-01-01 04:00"])
    >>> median_spacing([idx])
    Timedelta('0 days 01:00:00')
    >>> median_spacing([pd.Index([0, 2, 4, 5])])
    2.0
    """
    # In the index's own resolution (nanoseconds for times): exact differences.
    gaps = [np.diff(np.sort(_raw_values(ix))) for ix in indexes if len(ix) > 1]
    gaps = np.concatenate(gaps) if gaps else np.array([])
    gaps = gaps[gaps > 0]
    kinds = {index_kind(ix) for ix in indexes}
    if kinds & {"datetime", "timedelta"}:
        # In the finest resolution of the indexes (forecast times keep their dtype).
        finest = max((ix.unit for ix in indexes), key=["s", "ms", "us", "ns"].index)
        spacing = round(float(np.median(gaps))) if gaps.size else 10**9
        return pd.Timedelta(spacing, unit="ns").as_unit(finest)
    return float(np.median(gaps)) if gaps.size else 1.0


def index_to_time(
    index: pd.Index, unit: pd.Timedelta | float, origin: int | float = 0
) -> np.ndarray:
    """Float times of ``index`` since ``origin`` in multiples of ``unit`` (see
    :func:`median_spacing`).

    Only differences of these times carry meaning; windows subtract their cutoff. The
    ``origin`` (:func:`time_origin`: nanoseconds for datetimes and timedeltas, an ordinal
    for periods, an index value otherwise) keeps them exact; ``0`` is the Unix epoch.

    Parameters
    ----------
    index : pd.Index
        A datetime, timedelta, period or numeric index.
    unit : pd.Timedelta or float
        The time unit: a ``pd.Timedelta`` for datetime and timedelta indexes, a number of
        periods or index units otherwise.
    origin : int or float, default=0
        The time zero, in the index's native resolution (see :func:`time_origin`).

    Returns
    -------
    ndarray of shape (len(index),)
        Float times.

    Examples
    --------
    >>> import pandas as pd
    >>> from levy_sklearn._time_axis import index_to_time
    >>> idx = pd.DatetimeIndex(["2020-01-01 00:00", "2020-01-01 06:00", "2020-01-02 00:00"])
    >>> t = index_to_time(idx, pd.Timedelta(hours=6))
    >>> (t - t[0]).tolist()
    [0.0, 1.0, 4.0]
    """
    since = np.asarray(_raw_values(index) - origin, dtype=np.float64)
    # Nanoseconds over nanoseconds: one rounding, so a whole number of units is exact.
    return since / _raw_step(unit)


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
    >>> from levy_sklearn._time_axis import span_in_units
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
        raise ValueError(f"{name}={span!r} must be positive and finite.")
    return float(value)


# Seasonal periods implied by an index frequency (its base, without multiple or anchor): in
# periods for a period index, as a time span for a datetime index (whose unit, the median
# spacing, is not a calendar month or quarter). A fixed step is read by its length instead
# (see _tick_seasons).
# (pandas < 2.2 spells month end "M" and quarter end "Q").
_PERIODS_PER_SEASON = {"M": 12, "Q": 4, "D": 7, "B": 5}
_YEAR = pd.Timedelta(days=365.2425)
_DAY = pd.Timedelta(days=1)
_WEEK = pd.Timedelta(days=7)
_SEASON_SPAN = {
    "M": _YEAR,
    "MS": _YEAR,
    "ME": _YEAR,
    "Q": _YEAR,
    "QS": _YEAR,
    "QE": _YEAR,
    # pandas >= 3's day is a calendar day, not a fixed step.
    "D": _WEEK,
    "B": _WEEK,
}
#: ``context_length="auto"``: this many time units (chosen on the six regular series of
#: :doc:`/user_guide/defaults`), lengthened to hold two periods of the season where
#: ``max_tokens`` allows (see :func:`season_reach`).
AUTO_CONTEXT = 36.0


def _tick_seasons(step: pd.Timedelta) -> tuple[pd.Timedelta, ...]:
    """Seasons of a fixed step, longest first: a day repeats weekly; a step that divides a
    day (hourly, half-hourly, five-minute, ...) weekly and daily."""
    if step == _DAY:
        return (_WEEK,)
    if pd.Timedelta(0) < step < _DAY and _DAY % step == pd.Timedelta(0):
        return (_WEEK, _DAY)
    return ()


def seasonal_periods(index: pd.Index) -> tuple[float | pd.Timedelta, ...]:
    """Every seasonal period a regular index's frequency implies, longest first.

    Monthly and quarterly data repeat yearly, daily and business-daily data weekly, data
    whose fixed step divides a day (hourly, half-hourly, every five minutes, ...) weekly and
    daily. So does an irregular datetime index whose typical step (its median spacing)
    divides a day: readings every five minutes with gaps at night and at weekends, a
    monitor that skips some; its tokens lie at their true times, so the gaps do not shift
    the clock. A period index gets numbers of its periods, a datetime index time spans (its
    time unit is the median spacing, not a calendar month). Yearly, weekly, other irregular
    indexes and steps that do not divide a day get none.

    Parameters
    ----------
    index : pd.Index
        The time index of a series.

    Returns
    -------
    tuple of float or pd.Timedelta
        The seasonal periods, longest first (empty: none).

    Examples
    --------
    >>> import pandas as pd
    >>> from levy_sklearn.windows import seasonal_periods
    >>> seasonal_periods(pd.date_range("2020", periods=5, freq="30min"))
    (Timedelta('7 days 00:00:00'), Timedelta('1 days 00:00:00'))
    >>> seasonal_periods(pd.period_range("2020-01-01", periods=3, freq="h"))
    (168.0, 24.0)
    >>> seasonal_periods(pd.period_range("2020", periods=3, freq="Y"))
    ()
    >>> seasonal_periods(pd.DatetimeIndex(["2020-01-06 20:50", "2020-01-06 20:55",
    ...                                    "2020-01-07 07:00", "2020-01-07 07:05"]))
    (Timedelta('7 days 00:00:00'), Timedelta('1 days 00:00:00'))
    """
    if isinstance(index, pd.PeriodIndex):
        offset = index.freq
        if isinstance(offset, pd.offsets.Tick):  # hours, minutes, ...: in periods
            step = pd.Timedelta(offset)
            return tuple(float(season / step) for season in _tick_seasons(step))
        code, table = index.freqstr, _PERIODS_PER_SEASON
    elif isinstance(index, pd.DatetimeIndex):
        code = None if index.freq is None else index.freq.freqstr
        if code is None and len(index) >= 3:
            code = pd.infer_freq(index)
        table = _SEASON_SPAN
        if code is not None:
            # A fixed step is read by its length: pandas names a daily step "24h" or
            # "1440min" as readily as "D" (one series shifted by 12 h in a panel does it).
            offset = pd.tseries.frequencies.to_offset(code)
            if isinstance(offset, pd.offsets.Tick):
                return _tick_seasons(pd.Timedelta(offset))
        elif len(index) >= 2:
            # No frequency: the clock's cycles where the typical step divides a day; a
            # typical step of a day or more (daily data with days missing) implies none.
            step = median_spacing([index])
            return _tick_seasons(step) if step < _DAY else ()
    else:
        return ()
    # Multiples ("2M") and other frequencies are not in the tables.
    period = None if code is None else table.get(code.split("-")[0])
    if period is None:
        return ()
    return (float(period) if isinstance(period, int) else period,)


def infer_seasonal_period(index: pd.Index) -> float | pd.Timedelta | None:
    """The shortest seasonal period an index's frequency implies, or ``None``.

    Monthly and quarterly data repeat yearly, daily and business-daily data weekly, data
    whose fixed step divides a day (hourly, half-hourly, every five minutes, ...; for an
    irregular datetime index its median spacing) daily (and weekly: see
    :func:`~levy_sklearn.windows.seasonal_periods`, which ``seasonal_period="auto"``
    chooses from). A period index gets a number of its periods (12, 4, 7, 5, 24), a
    datetime index a time span (a year, a week, a day), since its time unit is the median
    spacing, not a calendar month. Yearly, weekly, other irregular indexes and steps that
    do not divide a day get ``None``.

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
    >>> infer_seasonal_period(pd.date_range("2020", periods=5, freq="5min"))
    Timedelta('1 days 00:00:00')
    >>> print(infer_seasonal_period(pd.period_range("2020", periods=3, freq="Y")))
    None
    """
    periods = seasonal_periods(index)
    return periods[-1] if periods else None


def panel_seasonal_periods(indexes: Sequence[pd.Index]) -> tuple[float | pd.Timedelta, ...]:
    """The seasonal periods most of the series' indexes imply (:func:`seasonal_periods`;
    the first such series' on a tie), none when none implies any: one series with a
    missing day does not switch the season off for a whole panel."""
    periods = [p for p in map(seasonal_periods, indexes) if p]
    return max(periods, key=periods.count) if periods else ()


def season_reach(period: float) -> float:
    """The context (time units) that removes a season of ``period`` units: windows fit a
    season to a context whose observations span ``MIN_SEASONS`` periods, and a context of
    ``L`` units, ``(cutoff − L, cutoff]``, holds observations one unit apart spanning
    ``L − 1``.

    Examples
    --------
    >>> season_reach(24.0)  # hourly data, a daily season: 49 hours
    49.0
    """
    return MIN_SEASONS * period + 1.0


def is_positive_span(unit: object) -> bool:
    """Whether a time unit is a positive ``Timedelta`` or number (not NaT, NaN or text)."""
    try:
        return bool(unit > (pd.Timedelta(0) if isinstance(unit, pd.Timedelta) else 0))
    except TypeError:
        return False


def compatible_kinds(a: str, b: str) -> bool:
    """Whether series of index kinds ``a`` and ``b`` share a time unit (datetime and timedelta
    indexes do)."""
    return a == b or (a in _TIMEDELTA_KINDS and b in _TIMEDELTA_KINDS)


@dataclass(frozen=True)
class TimeAxis:
    """The time axis a forecaster fitted: index kind, time unit and spans in time units.

    Parameters
    ----------
    kind : str
        Kind of the series' time index (see :func:`index_kind`).
    unit : pd.Timedelta or float
        The time unit (see :func:`median_spacing`).
    context_span, horizon_span : float
        ``context_length`` and ``max_horizon`` in time units.
    seasonal_period : float or None
        The seasonal period in time units that windows remove.
    origin : int or float, default=0
        The time zero of :meth:`times` (see :func:`time_origin`).
    seasons : tuple of float, default=()
        Every season in time units, longest first (``seasonal_period`` among them): the
        windows' contexts reach back to their earlier cycles (see :meth:`echoes`).

    Examples
    --------
    >>> import pandas as pd
    >>> from levy_sklearn._time_axis import TimeAxis
    >>> index = pd.date_range("2024-01-01", periods=48, freq="h")
    >>> axis = TimeAxis.fit([index], context_length="1D", max_horizon=6, seasonal_period=None)
    >>> axis.kind, axis.unit, axis.context_span
    ('datetime', Timedelta('0 days 01:00:00'), 24.0)
    """

    kind: str
    unit: pd.Timedelta | float
    context_span: float
    horizon_span: float
    seasonal_period: float | None
    origin: int | float = 0
    seasons: tuple[float, ...] = ()

    @classmethod
    def fit(
        cls,
        indexes: Sequence[pd.Index],
        *,
        context_length: float | str | pd.Timedelta,
        max_horizon: float | str | pd.Timedelta,
        seasonal_period: float | str | pd.Timedelta | None,
        pretrained: tuple[str, pd.Timedelta | float] | None = None,
        max_tokens: int | None = None,
        tokens_per_step: float = 1.0,
    ) -> TimeAxis:
        """The time axis of series with these indexes: the median spacing as unit, or the
        unit of a pretraining panel of kind and unit ``pretrained``; times measured from
        their earliest point. ``"auto"`` spans are resolved here (see
        :func:`resolve_season`), given ``max_tokens`` context tokens per window and
        ``tokens_per_step`` observed cells per time step."""
        kinds = {index_kind(ix) for ix in indexes}
        if len(kinds) > 1 and not kinds <= set(_TIMEDELTA_KINDS):
            raise TypeError(f"All series must share one kind of time index, got {kinds}.")
        kind = kinds.pop()
        if pretrained is None:
            unit = median_spacing(indexes)
        else:
            pretrained_kind, unit = pretrained
            if not compatible_kinds(pretrained_kind, kind):
                raise ValueError(
                    f"The forecaster was pretrained on a {pretrained_kind} time index but fit "
                    f"got a {kind} one; its network measures time in the pretraining unit, so "
                    "fit it on a series indexed like the pretraining panel."
                )
            own = median_spacing(indexes)
            stepped = [ix for ix in indexes if len(ix) > 2]  # two steps at least
            if (
                stepped
                and _steps_within(stepped, own)
                and not 1 / _SPACING_MISMATCH <= own / unit <= _SPACING_MISMATCH
            ):
                warnings.warn(
                    f"y is spaced {own} apart (median) but the network was pretrained on "
                    f"series spaced {unit} apart, so its windows hold {unit / own:.3g} times "
                    "the observations it learned from: forecasts may be poor and intervals "
                    "off. Pretrain on series sampled like y.",
                    UserWarning,
                    stacklevel=6,  # the user's fit, through sktime's fit and _fit
                )
        # The span (time units) that the latest max_tokens observations of a window cover.
        token_reach = np.inf if max_tokens is None else max_tokens / max(tokens_per_step, 1e-12)
        auto_context = _is_auto(context_length)
        context = np.inf if auto_context else span_in_units(context_length, unit, "context_length")
        period = resolve_season(seasonal_period, indexes, unit, min(token_reach, context))
        if auto_context:
            context = _auto_context(period, token_reach)
        # An "auto" season that max_tokens keeps the "auto" context from reaching is no
        # season: it warns with what to set, and windows carry none.
        unreachable = _is_auto(seasonal_period) and auto_context and period is not None
        unreachable = unreachable and season_reach(period) > token_reach
        axis = cls(
            kind,
            unit,
            context,
            span_in_units(max_horizon, unit, "max_horizon"),
            period,
            time_origin(indexes),
            resolve_seasons(seasonal_period, indexes, unit),
        )
        if _is_auto(seasonal_period):
            axis = _seen_seasons(axis, indexes)
        if unreachable:
            _warn_about_spans(axis, seasonal_period, context_length, (max_tokens, token_reach))
            return replace(axis, seasonal_period=None)
        # A season the windows cannot see is named with what to set: one given, and the
        # "auto" one where the "auto" context cannot reach it (max_tokens too few). An "auto"
        # season beyond a context given shorter stays idle without a word: monthly data
        # with context_length=8, the season no one asked for.
        given = not _is_auto(seasonal_period)
        # A given season longer than the data is named as such: no setting makes it work.
        short = given and _warn_about_short_data(axis, seasonal_period, indexes)
        _warn_about_spans(
            axis,
            seasonal_period,
            context_length,
            (max_tokens, token_reach),
            season=not short and (given or auto_context),
        )
        return axis

    def calendar(self) -> tuple[tuple[float, float], ...]:
        """The calendar periods every token's time encoding carries, as ``(period in time
        units, phase at time 0 in cycles)``: a day and a week (from Monday 00:00) on a
        datetime axis spaced less than a day apart that has a season (``"auto"``'s of an
        index whose step divides a day, or one given), none otherwise (on a coarser axis
        the day is no cycle, and a week is the season the windows already see; a series
        without a season has no cycle known to be there).

        The phase is that of the wall clock of the index (a time-zone-aware index: UTC).

        Examples
        --------
        >>> import pandas as pd
        >>> from levy_sklearn._time_axis import TimeAxis
        >>> index = pd.date_range("2024-01-03 06:00", periods=72, freq="h")  # a Wednesday
        >>> axis = TimeAxis.fit([index], context_length=24, max_horizon=6,
        ...                     seasonal_period="auto")
        >>> [(period, round(phase, 4)) for period, phase in axis.calendar()]
        [(24.0, 0.25), (168.0, 0.3214)]
        """
        if self.kind != "datetime" or not self.unit < _DAY or not self.seasons:
            return ()
        monday = pd.Timestamp("1970-01-05").value  # nanoseconds since the epoch
        origin = int(self.origin)
        return tuple(
            (span / self.unit, ((origin - monday) % span.value) / span.value)
            for span in (_DAY, _WEEK)
        )

    def removes_season(self) -> bool:
        """Whether windows remove a season: a seasonal period that the context's
        observations span at least twice (see :func:`season_reach` and
        :func:`~levy_sklearn.windows.series_windows`)."""
        period = self.seasonal_period
        return period is not None and self.context_span >= season_reach(period)

    def times(self, index: pd.Index) -> np.ndarray:
        """Float times of ``index`` in time units, since ``origin``."""
        return index_to_time(index, self.unit, self.origin)

    def is_regular(self, indexes: Sequence[pd.Index]) -> bool:
        """Whether every step of every series is within 25 % of the time unit."""
        return _steps_within(indexes, self.unit)

    def common_step(self, indexes: Sequence[pd.Index]) -> float | None:
        """The spacing every series shares exactly (to float rounding), in time units, or
        ``None``: an integer ``fh`` counts in it on an index without a ``freq``."""
        gaps = np.concatenate([np.diff(self.times(ix)) for ix in indexes])
        regular = gaps.size and np.allclose(gaps, gaps[0], rtol=1e-9, atol=0)
        return gaps[0] if regular else None

    def forecast_indexes(
        self,
        fh: ForecastingHorizon,
        ends: list,
        cutoff: pd.Index,
        step: float | None,
        tz: object = None,
    ) -> list[pd.Index]:
        """Absolute forecast times of every series, given each series' last time point
        ``ends``: a relative ``fh`` counts from each series' own end (the convention of
        sktime's vectorised forecasters, e.g. ``NaiveForecaster`` on a panel whose series
        end at different times); an absolute ``fh`` is the same for all. ``cutoff`` is
        sktime's (the latest end), ``step`` the :meth:`common_step`, ``tz`` the series'
        time zone."""
        if not fh.is_relative or len(ends) == 1:
            return [self._absolute(fh, cutoff, step, tz)] * len(ends)
        values = fh.to_pandas()
        if self.kind == "datetime" and pd.api.types.is_timedelta64_dtype(values.dtype):
            # Time spans after each series' end, added directly: sktime's conversion costs
            # about 2 ms a call (half of predict_var on 2,000 irregular series).
            return [pd.DatetimeIndex(end + values) for end in ends]
        # Otherwise once per distinct end (series of a panel mostly end together).
        by_end: dict[object, pd.Index] = {}
        for end in ends:
            if end not in by_end:
                by_end[end] = self._absolute(fh, _like(cutoff, end), step, tz)
        return [by_end[end] for end in ends]

    def _absolute(
        self, fh: ForecastingHorizon, cutoff: pd.Index, step: float | None, tz: object
    ) -> pd.Index:
        values = fh.to_pandas()
        if self.kind.startswith("period") and pd.api.types.is_timedelta64_dtype(values.dtype):
            raise ValueError(
                f"fh holds time spans (Timedelta) but y has a PeriodIndex (freq "
                f"{cutoff.freqstr}); pass steps, e.g. fh=[1, 2, 3], or periods, e.g. "
                f"fh=pd.period_range(..., freq={cutoff.freqstr!r})."
            )
        if (
            fh.is_relative
            and self.kind in _TIMEDELTA_KINDS
            and pd.api.types.is_integer_dtype(values.dtype)
            and fh.freq is None
        ):
            if step is None:
                absolute = (
                    "absolute timestamps (e.g. fh=pd.DatetimeIndex([...])) or "
                    if self.kind == "datetime"
                    else ""
                )
                raise ValueError(
                    "Integer steps in fh are ambiguous on an irregularly spaced index without "
                    f"a freq. Pass {absolute}relative time spans (e.g. "
                    "fh=pd.to_timedelta([1, 2], unit='h')); to backtest with sktime's "
                    "evaluate, wrap its splitter in levy_sklearn.model_selection."
                    "ObservedTimesSplitter, which forecasts each fold at its observed times."
                )
            return pd.Index(cutoff[0] + np.asarray(values) * pd.Timedelta(step * self.unit))
        if self.kind == "numeric" and pd.api.types.is_timedelta64_dtype(values.dtype):
            raise ValueError(
                "fh holds time spans (Timedelta) but y has an integer index, which has no "
                "time unit; pass steps, e.g. fh=[1, 2, 3], or absolute index values."
            )
        if self.kind == "timedelta" and pd.api.types.is_timedelta64_dtype(values.dtype):
            # sktime cannot hold absolute times of a TimedeltaIndex in a ForecastingHorizon
            # (to_absolute_index raises), so add the spans to the cutoff here.
            _warn_if_meant_absolute(values, cutoff[0], self.horizon_span * self.unit)
            return pd.TimedeltaIndex(cutoff[0] + values)
        with _within_nanoseconds():
            absolute = fh.to_absolute_index(cutoff)
        return _in_zone(self._same_kind(absolute), tz)

    def _same_kind(self, index: pd.Index) -> pd.Index:
        """``index`` if it holds times of the series' kind; absolute times of another kind
        (periods of another frequency, timestamps on an integer index, ...) are refused:
        their raw values mean another time on this axis (a quarter's ordinal read as a
        month's), so the forecast would be for a time nobody asked about."""
        try:
            kind = index_kind(index)
        except TypeError:
            kind = f"{type(index).__name__} ({index.dtype})"
        if kind == self.kind:
            return index
        raise ValueError(
            f"fh holds {describe_kind(kind)} but y has {describe_kind(self.kind)}; pass "
            f"{_KIND_HINTS[self.kind.split('[')[0]]}, or relative steps, e.g. fh=[1, 2, 3]."
        )


def _is_auto(value: object) -> bool:
    return isinstance(value, str) and value == "auto"


def _season_list(
    seasonal_period: object, indexes: Sequence[pd.Index], unit: pd.Timedelta | float
) -> list[float]:
    """Every season of ``seasonal_period`` in time units, longest first: ``"auto"``'s
    those the indexes' frequency implies that the spacing can show (two units at least),
    a list's each (refused below two units), one's itself (none for ``None`` or 1)."""
    if _is_auto(seasonal_period):
        implied = [span_in_units(p, unit) for p in panel_seasonal_periods(indexes)]
        return [p for p in implied if p >= 2.0]  # a season the spacing can show
    if seasonal_period is None:
        return []
    given = (
        list(seasonal_period) if isinstance(seasonal_period, list | tuple) else [seasonal_period]
    )
    if not given:
        raise ValueError(
            "seasonal_period=[] names no season; pass seasonal_period=None for none, or the "
            "periods, e.g. seasonal_period=['1D', '7D']."
        )
    periods = []
    for one in given:
        period = span_in_units(one, unit, "seasonal_period")
        if period == 1.0:  # sktime's sp=1: no season
            continue
        if period < 2.0:
            raise ValueError(
                f"seasonal_period={one!r} is {period:.3g} time units"
                f"{f' of {unit}' if isinstance(unit, pd.Timedelta) else ''}, shorter than "
                "two: series sampled about once per unit cannot show it. Pass "
                "seasonal_period=None (or 1) for no season, or a period of at least 2 units."
            )
        periods.append(period)
    return sorted(set(periods), reverse=True)


def resolve_season(
    seasonal_period: float | str | pd.Timedelta | Sequence | None,
    indexes: Sequence[pd.Index],
    unit: pd.Timedelta | float,
    reach: float = np.inf,
) -> float | None:
    """The season (time units) windows remove from ``seasonal_period``'s (``None``: no
    season; see :func:`resolve_seasons` for all of them).

    Of several seasons (``"auto"``'s: those the indexes' frequency implies, see
    :func:`panel_seasonal_periods`; or a list) the longest whose two periods a context can
    hold within ``reach`` time units (see :func:`season_reach`; ``max_tokens`` and a given
    ``context_length`` bound it), else the shortest: half-hourly data get a week where
    ``max_tokens`` holds two weeks of observations, else a day (which :meth:`TimeAxis.fit`
    drops, with a warning, where ``max_tokens`` cannot hold two days either). The longer
    seasons still reach the windows: as earlier cycles in their context (see
    :meth:`TimeAxis.echoes`).

    Examples
    --------
    >>> import pandas as pd
    >>> index = pd.date_range("2024-01-01", periods=500, freq="h")
    >>> resolve_season("auto", [index], pd.Timedelta("1h"), reach=256)
    24.0
    >>> resolve_season("auto", [index], pd.Timedelta("1h"), reach=400)
    168.0
    >>> resolve_season(["1D", "7D"], [index], pd.Timedelta("1h"), reach=256)
    24.0
    """
    candidates = _season_list(seasonal_period, indexes, unit)
    fitting = [p for p in candidates if season_reach(p) <= reach]
    return (fitting or candidates[-1:] or [None])[0]


def resolve_seasons(
    seasonal_period: float | str | pd.Timedelta | Sequence | None,
    indexes: Sequence[pd.Index],
    unit: pd.Timedelta | float,
) -> tuple[float, ...]:
    """Every season of ``seasonal_period`` in time units, longest first (see
    :func:`resolve_season`).

    Examples
    --------
    >>> import pandas as pd
    >>> index = pd.date_range("2024-01-01", periods=500, freq="30min")
    >>> resolve_seasons("auto", [index], pd.Timedelta("30min"))
    (336.0, 48.0)
    >>> resolve_seasons(["1D", 12], [index], pd.Timedelta("30min"))
    (48.0, 12.0)
    """
    return tuple(_season_list(seasonal_period, indexes, unit))


def _seen_seasons(axis: TimeAxis, indexes: Sequence[pd.Index]) -> TimeAxis:
    """``axis`` without the seasons that no series spans twice: ``"auto"`` implied them,
    but no window sees an earlier cycle of them, and no one asked for them."""
    longest = max((np.ptp(axis.times(ix)) for ix in indexes if len(ix)), default=0.0)
    return replace(axis, seasons=tuple(p for p in axis.seasons if longest >= MIN_SEASONS * p))


def _auto_context(period: float | None, token_reach: float) -> float:
    """``context_length="auto"`` in time units: :data:`AUTO_CONTEXT`, or the
    :func:`season_reach` of the season where that is longer and the latest ``max_tokens``
    observations (``token_reach`` units) hold it."""
    if period is None or not AUTO_CONTEXT < season_reach(period) <= token_reach:
        return AUTO_CONTEXT
    return season_reach(period)


def _in_units(span: float, unit: pd.Timedelta | float) -> str:
    """``span`` time units in words, for warnings."""
    if isinstance(unit, pd.Timedelta):
        return f"{span:.4g} time units of {unit} ({pd.Timedelta(span * unit)})"
    return f"{span:.4g} time units"


def _warn_about_spans(
    axis: TimeAxis,
    seasonal_period: object,
    context_length: object,
    tokens: tuple[int | None, float],
    season: bool = True,
) -> None:
    """Warn about a season the windows cannot remove (a context, or the latest
    ``max_tokens`` observations ``tokens = (max_tokens, span they cover)``, too short for
    two periods), naming what to set; and about a context or horizon shorter than one time
    unit (the median spacing)."""
    period = axis.seasonal_period
    max_tokens, token_reach = tokens
    need = None if period is None else season_reach(period)
    if season and need is not None and min(axis.context_span, token_reach) < need:
        auto = _is_auto(seasonal_period)
        name = (
            "seasonal_period='auto' (the season the index's frequency implies)"
            if auto
            else f"seasonal_period={seasonal_period!r}"
        )
        span = (
            f"'{pd.Timedelta(period * axis.unit)}'"
            if isinstance(axis.unit, pd.Timedelta)
            else f"{period:.4g}"
        )
        hint = f" (with seasonal_period={span})" if auto else ""
        fixes = []
        if axis.context_span < need:
            fixes.append(f"context_length={int(np.ceil(need))}")
        if token_reach < need:
            fixes.append(f"max_tokens={int(np.ceil(need * max_tokens / token_reach))}")
        held = (
            f"context_length={context_length!r} spans {axis.context_span:.4g} time units"
            if axis.context_span < need
            else ""
        )
        if token_reach < need:
            held += (" and " if held else "") + (
                f"max_tokens={max_tokens} keeps the latest observations of "
                f"{token_reach:.4g} time units"
            )
        warnings.warn(
            f"{name} is a season of {_in_units(period, axis.unit)}, but {held}, fewer than "
            f"{MIN_SEASONS} seasonal periods of {period:.4g} and a step ({need:.4g} time "
            "units), which windows need to see it: no season is removed. Pass "
            f"{' and '.join(fixes)} to remove it{hint}, or seasonal_period=None.",
            UserWarning,
            stacklevel=7,  # the user's fit, through sktime's fit, _fit and TimeAxis.fit
        )
    for name, span, short in (
        ("context_length", axis.context_span, "contexts hold one observation at most"),
        ("max_horizon", axis.horizon_span, "the next observation lies beyond it"),
    ):
        if span < 1.0:  # otherwise such a fit would run without a word
            warnings.warn(
                f"{name} spans {span:.3g} time units, less than the series' median "
                f"spacing (the unit, {axis.unit}): {short}. Pass a longer {name}.",
                UserWarning,
                stacklevel=7,
            )


def _warn_about_short_data(
    axis: TimeAxis, seasonal_period: object, indexes: Sequence[pd.Index]
) -> bool:
    """Warn about each given season longer than half of every series (no window can see two
    periods of it, nor the removed season); whether the removed one was among them."""
    spans = [np.ptp(axis.times(ix)) for ix in indexes if len(ix)]
    longest = max(spans, default=0.0)
    several = len(axis.seasons) > 1
    short = False
    for period in axis.seasons or ((axis.seasonal_period,) if axis.seasonal_period else ()):
        if longest >= MIN_SEASONS * period:
            continue
        short = short or period == axis.seasonal_period
        name = (
            f"seasonal_period={seasonal_period!r} holds a season"
            if several
            else f"seasonal_period={seasonal_period!r} is a season"
        )
        warnings.warn(
            f"{name} of {_in_units(period, axis.unit)}, but the longest series of y spans "
            f"{_in_units(longest, axis.unit)}, fewer than {MIN_SEASONS} seasonal periods of "
            f"{period:.4g}: no window can see the season, so none is removed. Fit a longer y, "
            "or pass a shorter seasonal_period (or None).",
            UserWarning,
            stacklevel=7,  # the user's fit, through sktime's fit, _fit and TimeAxis.fit
        )
    return short


def describe_kind(kind: str) -> str:
    """A kind of time (see :func:`index_kind`) in words, for error messages."""
    if kind.startswith("period["):
        return f"periods of frequency {kind[7:-1]!r}"
    names = {"datetime": "timestamps", "timedelta": "time spans", "numeric": "integer times"}
    return names.get(kind, kind)


def _like(cutoff: pd.Index, last: object) -> pd.Index:
    """A series' last time point as a one-element index shaped like sktime's ``cutoff``."""
    if isinstance(cutoff, pd.DatetimeIndex):
        return pd.DatetimeIndex([last], freq=cutoff.freq)
    if isinstance(cutoff, pd.PeriodIndex):
        return pd.PeriodIndex([last], freq=cutoff.freq)
    return pd.Index([last], dtype=cutoff.dtype)


def _warn_if_meant_absolute(
    spans: pd.TimedeltaIndex, cutoff: pd.Timedelta, horizon: pd.Timedelta
) -> None:
    """Warn when a Timedelta ``fh`` on a Timedelta-indexed series looks like the series' own
    times: sktime reads it as spans after the cutoff, so ``fh=y.index[-3:]``-style times of
    the next samples (every one later than the cutoff) would be forecast a whole cutoff
    later, silently. Spans beyond ``max_horizon`` that are all later than the cutoff are the
    telltale; they are kept as spans (sktime's convention), with the fix in the warning."""
    if spans.min() > cutoff and spans.max() > horizon:
        warnings.warn(
            f"fh holds time spans all later than the cutoff {cutoff} and up to "
            f"{spans.max()}, beyond max_horizon ({horizon}): a Timedelta fh counts from the "
            f"cutoff (sktime's convention), so these forecast {cutoff + spans.min()} to "
            f"{cutoff + spans.max()}. If you meant times of y's index, pass them less the "
            "cutoff, e.g. fh=times - y.index[-1].",
            UserWarning,
            stacklevel=8,  # the user's predict call, through sktime's public method
        )


def _in_zone(index: pd.Index, tz: object) -> pd.Index:
    """Absolute forecast times in the series' time zone ``tz``; a naive time on an aware
    series (or the reverse) is refused: reading it as UTC would forecast another instant."""
    if not isinstance(index, pd.DatetimeIndex):
        return index
    if (index.tz is None) == (tz is None):
        return index if tz is None else index.tz_convert(tz)
    if tz is not None:
        raise ValueError(
            f"fh holds tz-naive timestamps but y is in time zone {tz}; a naive time is "
            f"ambiguous, so localise fh first, e.g. fh=pd.DatetimeIndex([...]).tz_localize"
            f"({str(tz)!r}), or pass relative steps or Timedeltas."
        )
    raise ValueError(
        f"fh holds timestamps in time zone {index.tz} but y is tz-naive; pass naive "
        "timestamps like y's index (e.g. fh.tz_localize(None)), or localise y in fit."
    )
