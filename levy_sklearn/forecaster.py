"""LevyForecaster: an sktime probabilistic forecaster built on Lévy attention.

Every observation of a (possibly irregular, multivariate, gappy) series is a token
``(time, channel, value)``; a training window is the context in a look-back span before a cutoff
and the observations in a horizon span after it. Time is measured in a characteristic unit
(the median spacing) relative to the window's cutoff, values are standardised per channel and
then normalised by the window's own context (RevIN style), and one deterministic forward pass
of :class:`~levy_sklearn.network.LevyNet` returns the predictive mean and the closed-form
variance of every query (see the user guide, :doc:`/user_guide/levy_attention` and
:doc:`/user_guide/irregular_time`). The windowing lives in :mod:`levy_sklearn.windows`, the
training loop in :mod:`levy_sklearn.training`, conformal calibration in
:mod:`levy_sklearn.conformal`.
"""

from __future__ import annotations

import copy
import numbers
import warnings
from collections.abc import Callable, Hashable
from numbers import Integral, Real
from typing import ClassVar

import numpy as np
import pandas as pd
from sklearn.utils import Bunch
from sklearn.utils._param_validation import Interval, StrOptions
from sktime.forecasting.base import BaseForecaster, ForecastingHorizon

from ._hyperparameters import LevyHyperparameters, int_at_least, shared_docs
from .training import (
    NET_PARAMS,
    LevyNeuralNet,
    continue_levy_net,
    fit_levy_net,
    make_levy_net,
)
from .uncertainty import LeadCalibration, horizon_floor, to_data_units
from .validation import check_magnitude, column_scaling
from .windows import (
    MIN_SEASONS,
    NORMALIZATIONS,
    SeriesWindows,
    index_kind,
    index_to_time,
    infer_seasonal_period,
    median_spacing,
    series_windows,
    span_in_units,
)

__all__ = ["LevyForecaster"]

_INNER_MTYPES = ["pd.DataFrame", "pd-multiindex", "pd_multiindex_hier"]
_TIMEDELTA_KINDS = ("datetime", "timedelta")
# pretrain splits a panel of at least _MIN_PANEL_TO_HOLD_OUT series into _N_FOLDS folds of
# whole series and calibrates σ on forecasts of held-out folds, subjects the scoring network
# never saw. calibration_folds="auto" scores every fold (cross-fitting) on panels of fewer
# series than _AUTO_CROSS_FIT_BELOW, where one fold holds too few subjects and scores to
# calibrate by lead, and where the extra trainings are cheap; one fold on larger panels.
_N_FOLDS = 5
_MIN_PANEL_TO_HOLD_OUT = 5
_AUTO_CROSS_FIT_BELOW = 100
# Share of the gap windows of observation_dropout that are holes before a last observation
# (chosen on held-out series: benchmarks/results/forecaster_ablation.md, run 9).
_HOLE_SHARE = 0.5
# calibration_fraction="auto": hold out this share of each series' span when it holds at least
# this many observations (chosen on held-out data, benchmarks/results/forecaster_ablation.md,
# run 12: long glucose prefixes lose nothing and gain coverage; on series of a few hundred
# points the lost tenth costs about 9 % CRPS).
_AUTO_CALIBRATION_FRACTION = 0.1
_AUTO_CALIBRATION_MIN_OBSERVATIONS = 1000
# ar_order="auto" on regularly spaced series: the order chosen on held-out series
# (benchmarks/results/forecaster_ablation.md, run 22; 5, 9, 13, 19 and 37 were tried).
_AUTO_AR_ORDER = 13
# The autoregression's weights learn at this multiple of lr where the windows' season is
# removed, at lr otherwise: on the held-out series the faster rate lowered the CRPS of the
# seasonal ones (0.915, 0.915, 0.964 over three seed pairs) and raised it on the others
# (1.07, 1.06, 1.03) (benchmarks/results/forecaster_ablation.md, run 24).
_SEASONAL_LAGS_LR = 5.0
# A series is regularly spaced when every step is within this share of the time unit (month
# ends: 28–31 days).
_REGULAR_TOLERANCE = 0.25
# max_targets="auto" on irregularly spaced series: the cap on target times per training
# window chosen on a held-out vitals draw (benchmarks/results/pretrain_budget.md, run 4;
# all, 32, 16 and 8 were tried).
_AUTO_MAX_TARGETS = 16
# A channel of a series is standardised by its own spread from this many observations on,
# by the population's below (see LevyForecaster._fit_scaling): the standard deviation of n
# draws is off by about 1/sqrt(2n), a fifth at 10.
_MIN_OWN_SCALE = 10
# Names of the attributes pretrain writes (the sktime "pretrain:fitted_params" contract).
_PRETRAINED = [
    "pretrained_net_",
    "pretrained_time_unit_",
    "pretrained_time_kind_",
    "pretrained_n_channels_",
    "pretrained_columns_",
    "pretrained_channel_mean_",
    "pretrained_channel_scale_",
    "pretrained_calibration_",
]


def _instances(y: pd.DataFrame) -> list[tuple[tuple | None, pd.DataFrame]]:
    """Split a Series/Panel/Hierarchical frame into ``(instance key, time-indexed frame)``,
    refusing what sktime's checks let through but would corrupt a forecast.

    The key is ``None`` for a single series and otherwise always a tuple with one value per
    instance level, whatever the pandas version: ``groupby(level=[0])`` yields scalar keys on
    pandas 2.x (with a FutureWarning) and 1-tuples on pandas 3, and ``(*key, t)`` unpacked a
    scalar string key letter by letter. Here one instance level is grouped by a scalar level
    (scalar keys on every version) and wrapped, several by a list (tuple keys on every
    version); the output index, ``update`` and error messages all use these keys.
    """
    if not isinstance(y.index, pd.MultiIndex):
        series = [(None, y.sort_index())]
    else:
        levels = list(range(y.index.nlevels - 1))
        if len(levels) == 1:
            groups = (((key,), frame) for key, frame in y.groupby(level=0, sort=False))
        else:
            groups = ((tuple(key), frame) for key, frame in y.groupby(level=levels, sort=False))
        series = [(key, frame.droplevel(levels).sort_index()) for key, frame in groups]
    for key, frame in series:
        where = "y" if key is None else f"series {key!r} of y"
        if frame.index.has_duplicates:
            first = frame.index[frame.index.duplicated()][0]
            raise ValueError(
                f"{where} has more than one row at time {first}. Combine rows that share a "
                "time point first, e.g. y.groupby(level=-1).mean() for a single series."
            )
        values = frame.to_numpy(dtype=np.float64)
        if np.isinf(values).any():
            raise ValueError(
                f"{where} contains ±inf. Replace it by NaN (LevyForecaster reads NaN as 'not "
                "observed') or by a finite value, e.g. y.replace([np.inf, -np.inf], np.nan)."
            )
        check_magnitude(values, where)
    return series


def _warn_unobserved(y: pd.DataFrame, what: str, pretrained: bool = False) -> None:
    """Warn, naming them, about columns with no observed value: the network answers them
    from its prior alone, which is a number, not a forecast from data."""
    empty = [c for c in y.columns if not np.isfinite(y[c].to_numpy(dtype=np.float64)).any()]
    if not empty:
        return
    if pretrained:  # the pretrained channels must all be there: dropping is no option
        advice = "with the prior's σ, until they are observed (update)."
    else:
        advice = (
            f"not from data. Drop them, e.g. y.drop(columns={empty!r}), unless they are "
            "observed later (update)."
        )
    warnings.warn(
        f"Column(s) {empty} of {what} have no observed value (all NaN): they are forecast "
        f"from the network's prior alone, {advice}",
        UserWarning,
        stacklevel=4,
    )


def _sktime_ready(y: object) -> object:
    """``y`` with object or text columns of numbers as floats, or a brief error for what sktime's
    input checks (they run before ``_fit``) would answer obscurely: an object column of
    numbers gets "categorical features", a time index out of order a dump of the whole
    index."""
    if not isinstance(y, (pd.Series, pd.DataFrame)):
        return y
    frame = y.to_frame() if isinstance(y, pd.Series) else y
    # Scalar cells only: sktime's nested panels hold a series per cell (object dtype too).
    objects = [
        c
        for c in frame.columns
        if (frame[c].dtype == object or pd.api.types.is_string_dtype(frame[c].dtype))
        and frame[c].map(np.isscalar).all()
    ]
    if objects:
        frame = frame.copy()
        for c in objects:
            try:
                frame[c] = pd.to_numeric(frame[c]).astype(np.float64)
            except (ValueError, TypeError) as err:
                raise TypeError(
                    f"Column {c!r} of y holds values that are not numbers ({err}): "
                    "categorical or text series cannot be forecast; LevyForecaster "
                    "forecasts numeric series, so convert or drop the column."
                ) from None
        y = frame.iloc[:, 0].rename(y.name) if isinstance(y, pd.Series) else frame
    index = y.index
    times = index.get_level_values(-1) if isinstance(index, pd.MultiIndex) else index
    if isinstance(index, pd.MultiIndex):
        keys = pd.Series(range(len(index)), index=index).groupby(
            level=list(range(index.nlevels - 1)), sort=False
        )
        ordered = all(times[g.to_numpy()].is_monotonic_increasing for _, g in keys)
    else:
        ordered = times.is_monotonic_increasing
    if not ordered:
        raise ValueError("y's time index is not sorted; sort it first: y = y.sort_index().")
    return y


def _as_floats(levels: object) -> object:
    """Integers in a coverage/alpha argument as floats: sktime's check accepts floats only and
    fails on an int with ``TypeError: 'int' object is not iterable``, where ``coverage=1``
    deserves its clear "must lie in the open interval (0, 1)" error."""

    def as_float(a: object) -> object:
        return float(a) if isinstance(a, numbers.Real) and not isinstance(a, bool) else a

    return [as_float(a) for a in levels] if isinstance(levels, list) else as_float(levels)


def _compatible_kinds(a: str, b: str) -> bool:
    return a == b or (a in _TIMEDELTA_KINDS and b in _TIMEDELTA_KINDS)


def _in_order(
    y: pd.DataFrame, columns: list, what: str, by_position_if_renamed: bool = False
) -> pd.DataFrame:
    """``y`` with its columns in the order of ``columns``, matched by name.

    Channels are the network's inputs by position, so a series whose columns come in
    another order must be reordered by name, never read by position (its forecasts would
    land under the wrong names); a missing or unknown name is refused. A single column is
    taken whatever its name (there is nothing to mix up). With ``by_position_if_renamed``,
    columns sharing no name with ``columns`` (e.g. a panel pretrained with names, a subject
    with pandas' default 0, 1, …) are taken by position, with a warning naming the pairing:
    there is no name to match, and sktime's pretrain contract fits such data."""
    given = list(y.columns)
    if given == columns or (len(given) == 1 and len(columns) == 1):
        return y
    missing = [c for c in columns if c not in given]
    unknown = [c for c in given if c not in columns]
    duplicated = len(set(given)) != len(given)
    renamed = len(given) == len(columns) == len(missing) and not duplicated
    if by_position_if_renamed and renamed:
        pairs = ", ".join(f"{g!r} as {c!r}" for g, c in zip(given, columns, strict=True))
        warnings.warn(
            f"{what} shares no column name with the channels the forecaster knows "
            f"{columns}; its columns are taken by position ({pairs}). Name the columns "
            "like those to have them matched by name.",
            UserWarning,
            stacklevel=4,
        )
        return y
    if missing or unknown or duplicated:
        raise ValueError(
            f"{what} has columns {given} but the forecaster knows {columns} (missing: "
            f"{missing}, unknown: {unknown}); channels are matched by name, so pass a frame "
            f"with exactly these columns, e.g. y[{columns!r}] after renaming."
        )
    return y[columns]


def _calibration_start(t: np.ndarray, fraction: float) -> float:
    """Time at which the last ``fraction`` of a series' time span (held out for calibration)
    begins."""
    return t[0] + (1 - fraction) * (t[-1] - t[0])


def _channel_ages(tokens: dict[str, np.ndarray], n_channels: int) -> np.ndarray:
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


@shared_docs
class LevyForecaster(LevyHyperparameters, BaseForecaster):
    r"""Probabilistic forecaster for irregular, multivariate series and panels (Lévy attention).

    Each observed cell of ``y`` is a token ``(time, channel, value)``; ``NaN`` means "not
    observed" (no token, never imputed). Windows are cut in continuous time around cutoffs
    (``context_length`` of context, ``max_horizon`` of targets), normalised per window, and
    one forward pass gives the mean and the closed-form Lévy variance of every forecast;
    horizons count from each channel's last observation, so σ grows across gaps, with the
    horizon and as evidence runs out, and beyond ``max_horizon`` the variance grows like a
    random walk's. A panel trains one global model; ``pretrain(panel)`` then ``fit(series)``
    forecasts a series never seen (zero-shot). ``fh`` may hold absolute times anywhere after
    the cutoff, relative Timedeltas, or integer steps on a regular index. Every probabilistic
    output is calibrated per channel and lead (:mod:`levy_sklearn.uncertainty`,
    ``calibration_``). Exogenous ``X`` is ignored; pass related series as extra columns of
    ``y``. Bad input (``±inf``, values beyond ``±1e150``, repeated time points, integer
    steps on an irregular index, tz-naive ``fh`` on a tz-aware series) is refused with a
    ``ValueError`` that says what to do. The whole account, every rule spelled out, is in
    the user guide: :doc:`/user_guide/how_the_forecaster_works`.

    Parameters
    ----------
    context_length : float, int, str or pd.Timedelta, default=36
        Look-back span of every window: a number of time units (median spacings, so a count
        of steps on regular data) or a time span such as ``"3D"`` (datetime/timedelta
        indexes only).
    max_horizon : float, int, str or pd.Timedelta, default=12
        Span after each training cutoff whose observations are training targets; the
        forecaster is trained for forecasts up to this far ahead (beyond it the variance is
        floored by random-walk growth).
    normalization : {"last", "trend", "mean", "none"}, default="last"
        Per-window instance normalisation of context and targets: remove each channel's last
        context observation (``"last"``: the network forecasts changes from a last-value
        forecast and sees the context's trend in its tokens), the context's least-squares
        line (``"trend"``: the line is extrapolated) or its mean (``"mean"``), and divide by
        the larger of the spread around the context's line (or mean) and the series' history
        scale (the root mean square of its steps up to the cutoff); ``"none"`` uses the
        global per-channel standardisation only. The default was chosen on held-out series
        (``benchmarks/forecaster_ablation.py``).
    seasonal_period : "auto", float, int, str, pd.Timedelta or None, default="auto"
        Period of a seasonal pattern removed per window with the level and trend (least
        squares of ``⌊P/2⌋`` Fourier harmonics jointly with the context's line, shrunk
        towards no season by their James–Stein factor where the season is weak), so the
        network forecasts what the context's season leaves unexplained: a number of time
        units or a time span like ``context_length``; ``"auto"`` reads it from a regular
        index's frequency (monthly and quarterly: a year, daily: a week, hourly: a day; see
        :func:`~levy_sklearn.windows.infer_seasonal_period`; none for other indexes);
        ``None`` removes no season. A window whose context spans fewer than two periods
        keeps its season, so give a ``context_length`` of at least two (better three)
        periods.
    max_tokens : int, default=256
        At most this many context tokens per window (the latest).
    windows_per_series : int, default=512
        At most this many training windows per series (evenly spaced cutoffs, latest kept).
    max_targets : int or "auto", default="auto"
        At most this many target times per training window, evenly spaced over its
        ``max_horizon`` (every channel is a target at each); forecasts are still made at
        every requested time. ``"auto"``: 16 on irregularly spaced series, no cap on
        regularly spaced ones (every step within 25 % of the time unit, as for
        ``ar_order``), whose windows hold one target time per unit of ``max_horizon``, as
        many as the user asked for. A window of a dense irregular panel can hold dozens,
        and the cost of a training step grows with them while what the step learns barely
        does: on a held-out draw of ``make_irregular_vitals``, whose 4-hour windows hold 24
        in the median, 16 pretrains in 0.56× the CPU time of all of them at 1 % higher CRPS.
    calibration_fraction : float or "auto", default="auto"
        If positive, the last fraction of each training series' time span is held out: the
        network trains on windows whose targets precede it, and the windows whose cutoffs
        fall in it calibrate σ by split conformal prediction on the score ``|y − ŷ| / σ``,
        per channel and lead bin, at every coverage level
        (:class:`~levy_sklearn.uncertainty.LeadCalibration`, stored as ``calibration_``).
        With too few calibration forecasts (fewer than 30 per channel) a warning says so
        and intervals stay the model's Normal ones. ``"auto"`` holds out a tenth when that
        tenth holds at least 1,000 observations, and calibrates nothing otherwise: on long
        series (a glucose monitor's months of readings) the tenth costs the network nothing
        and the Gaussian's interval of heavy-tailed errors is otherwise too narrow at longer
        horizons; on a series of a few hundred points the tenth is worth more as training
        data. ``calibration_fraction_`` says what a fit used. ``pretrain`` calibrates
        across subjects instead (see ``calibration_folds``), and every later ``fit`` uses
        that calibration. There ``"auto"`` adds nothing, and a positive
        ``calibration_fraction`` calibrates on every window of the new series as well and
        keeps the wider of the two at each level, so a new series never narrows the
        pretrained intervals.
    calibration_folds : int in [1, 5] or "auto", default="auto"
        How ``pretrain`` (and ``pretrain`` again, an update) calibrates σ across subjects.
        It splits the panel's series into five folds (seeded by ``random_state``) and
        calibrates on the forecasts of ``calibration_folds`` of them, each fold's made by a
        network trained without it. With 1 the network trained on the other four fifths is
        the pretrained one (one training). With 2–5 (cross-fitting) each scored fold gets a
        network of its own, used for scoring only, and the pretrained network learns from
        every series: ``calibration_folds + 1`` trainings, for up to five times the
        held-out subjects behind the calibration and none withheld from the network.
        ``"auto"``: 5 on panels of fewer than 100 series, 1 on larger ones (where a fifth
        already holds 20 subjects or more and a training costs more). A panel of fewer than
        five series gets a warning and is calibrated on the last tenth of each series' span
        instead.
    observation_dropout : float, default=0.3
        Teaches the network what missing information costs. In every epoch this share of
        training windows has its context thinned at random (each keeps every observation
        with a probability drawn uniformly from ``[0, 1)``), and as many extra training
        windows see a gap: their context ends a random span (up to ``max_horizon``) before
        their cutoff, or (half of them) has a hole of that span before its last observation.
        Sparse and gappy histories then get the larger σ they deserve. ``0`` trains on the
        windows as cut.
    ar_order : int or "auto", default="auto"
        Order of a linear autoregression added to the network's mean (see
        :class:`~levy_sklearn.network.LinearLags`): each channel's context, read on a grid
        of ``ar_order`` lags one time unit apart ending at the last observation, maps
        linearly to a shift of the forecast at every horizon, learned with the network
        from zero. It gives the network the linear dependence on the recent past (cycles,
        partial mean reversion) that classical forecasters are built on; the shift depends
        only on the observations, so σ is the Lévy layer's as before. At most one lag per
        time unit of ``context_length``. ``"auto"``: 13 on regularly spaced series (every
        step within 25 % of the time unit), 0 (none) on irregular ones, where it forecast
        held-out glucose records worse (``benchmarks/results/forecaster_ablation.md``,
        run 22). Where a season is removed (``seasonal_period``) its weights learn at five
        times ``lr`` (run 24).
        ``0`` turns it off.
    refit_on_update : bool, default=False
        If ``True``, ``update(..., update_params=True)`` retrains on everything seen (or
        recalibrates a pretrained network); otherwise ``update`` only extends the context,
        which is cheap.
    n_windowed_heads : int, default=2
        Heads of the output layer with a learned soft look-back window ending at the
        forecast time; the others see the whole context.
    <shared hyperparameters>

    Attributes
    ----------
    net_ : LevyNeuralNet
        The trained (or pretrained) skorch net.
    time_unit_ : pd.Timedelta or float
        The time unit (median spacing) of the windows.
    time_kind_ : str
        Kind of the time index (see :func:`~levy_sklearn.windows.index_kind`).
    context_span_, horizon_span_ : float
        ``context_length`` and ``max_horizon`` in time units.
    seasonal_period_ : float or None
        The seasonal period in time units (see ``seasonal_period``).
    channel_mean_, channel_scale_ : ndarray of shape (n_channels,)
        The population's per-channel mean and standard deviation: over every series given
        to ``fit``, or the pretraining panel's after ``pretrain``. A series' channel with
        fewer than 10 observations is scaled by them (its own spread would be noise).
    series_mean_, series_scale_ : ndarray of shape (n_series, n_channels)
        Per-series, per-channel standardisation (rows in the order the series were first
        seen): every series is forecast in its own units, whatever the panel's mix of
        levels and spreads.
    n_channels_ : int
        Number of columns of ``y``.
    ar_order_ : int
        Lags of the network's autoregression (``ar_order`` resolved and capped by the
        context; that of the pretrained network after ``pretrain``; 0: none).
    max_targets_ : int or None
        The cap on target times per window of the last ``fit`` (``max_targets`` with
        ``"auto"`` resolved for its series; ``None``: no cap).
    calibration_fraction_ : float
        The share of each series held out for calibration (``calibration_fraction`` with
        ``"auto"`` resolved; 0 means no calibration).
    calibration_ : LeadCalibration
        The calibration every probabilistic output reads (see ``calibration_fraction``;
        the Normal's quantiles when nothing was calibrated).
    pretrained_net_, pretrained_time_unit_, pretrained_time_kind_, pretrained_n_channels_
        Written by ``pretrain`` and kept by later ``fit`` calls.
    pretrained_calibration_ : LeadCalibration
        The calibration on the series held out of pretraining.
    pretrained_channel_mean_, pretrained_channel_scale_ : ndarray of shape (n_channels,)
        The pretraining panel's per-channel standardisation: the population scale of a
        new series' channels with too few observations to give their own.
    pretrained_columns_ : list
        The pretraining panel's column names. After ``pretrain``, ``fit`` and ``update``
        match the columns of ``y`` to them by name (any order; a missing or unknown name is
        refused), so a new subject's channels reach the network's inputs they were
        pretrained on. A single column is taken whatever its name; columns sharing no name
        with these (e.g. pandas' default 0, 1, …) are taken by position, with a warning.

    Notes
    -----
    The network defaults (``lr=1e-2``, batches of 32 windows, ``dropout=0.1``,
    ``weight_decay=0.05``) were chosen on the load_airline backtest in
    ``benchmarks/forecaster_airline.py``. ``seasonal_period="auto"``,
    ``normalization="last"``, the hole windows of ``observation_dropout``, ``ar_order`` and
    ``max_epochs=10`` were chosen on twelve series the reported benchmarks do not use
    (``benchmarks/results/forecaster_ablation.md``): the season lowered the CRPS on the
    seasonal ones, the last-value anchor by 22 %, the holes by 5 % and the autoregression
    by 9.5 % (4–9 % more on the seasonal series with its faster learning rate; geometric
    means over seeds), and 10 epochs were the cheapest setting within 5 % of the best
    geometric mean CRPS of 10–40 epochs, with better coverage (small series overfit over
    many epochs, which shows as over-confident folds) at a quarter of the time.
    ``max_steps=500`` binds on none of those series; it bounds the training on a large panel
    or a long series, where each epoch already takes tens to hundreds of steps: pretraining
    on a held-out draw of irregular vitals forecast as well after 500 steps as after 5,000
    (zero-shot CRPS 1.005 times, ``benchmarks/results/pretrain_budget.md``) at a tenth of
    the time.

    Examples
    --------
    >>> from sktime.datasets import load_airline
    >>> from levy_sklearn.forecaster import LevyForecaster
    >>> y = load_airline()
    >>> forecaster = LevyForecaster(max_epochs=5, random_state=0)
    >>> forecaster.fit(y)
    LevyForecaster(max_epochs=5, random_state=0)
    >>> y_pred = forecaster.predict(fh=[1, 2, 3])
    >>> intervals = forecaster.predict_interval(fh=[1, 2, 3], coverage=0.9)
    >>> y_pred.shape, intervals.shape
    ((3,), (3, 2))
    >>> bool((intervals.iloc[:, 0] < y_pred).all() and (y_pred < intervals.iloc[:, 1]).all())
    True
    """

    _tags = {
        "authors": ["levy-sklearn developers"],
        "maintainers": ["levy-sklearn developers"],
        "y_inner_mtype": _INNER_MTYPES,
        "X_inner_mtype": _INNER_MTYPES,
        "capability:exogenous": False,
        "capability:multivariate": True,
        "capability:missing_values": True,
        "capability:insample": True,
        "capability:pred_int": True,
        "capability:pred_int:insample": True,
        "capability:update": True,
        "capability:pretrain": True,
        "pretrain:fitted_params": _PRETRAINED,
        "capability:unequal_length": True,
        "capability:categorical_in_X": False,
        "capability:random_state": True,
        "property:randomness": "derandomized",
        "requires-fh-in-fit": False,
        "fit_is_empty": False,
    }
    # sktime's future default, adopted now (which also silences its FutureWarning about the
    # change): the history lives in ``_series`` and ``_update`` is our own, so sktime's copy
    # of the data in ``_y``/``_X`` would be unused.
    _config = {"remember_data": False}
    # sktime's own data slots, empty until sktime stores data in them (only ever when
    # remember_data is switched on). sktime 1.2's BaseForecaster.__init__ creates them only
    # when remember_data is on at construction, yet its check test__y_remember_data switches
    # it on afterwards with set_config and reads ``_y`` before fitting.
    _y = None
    _X = None

    _parameter_constraints: ClassVar[dict[str, list]] = {
        **LevyHyperparameters._parameter_constraints,
        # Read (and refused with the fix) by span_in_units, which needs the fitted time unit.
        "context_length": ["no_validation"],
        "max_horizon": ["no_validation"],
        "seasonal_period": ["no_validation"],
        "normalization": [StrOptions(set(NORMALIZATIONS))],
        "max_tokens": int_at_least(1),
        "windows_per_series": int_at_least(1),
        "max_targets": [*int_at_least(1), StrOptions({"auto"})],
        "calibration_fraction": [Interval(Real, 0, 1, closed="left"), StrOptions({"auto"})],
        "calibration_folds": [
            Interval(Integral, 1, _N_FOLDS, closed="both"),
            StrOptions({"auto"}),
        ],
        "refit_on_update": ["boolean"],
        "ar_order": [*int_at_least(0), StrOptions({"auto"})],
    }

    def __init__(
        self,
        *,
        context_length: float | str | pd.Timedelta = 36,
        max_horizon: float | str | pd.Timedelta = 12,
        normalization: str = "last",
        seasonal_period: float | str | pd.Timedelta | None = "auto",
        max_tokens: int = 256,
        windows_per_series: int = 512,
        max_targets: int | str = "auto",
        calibration_fraction: float | str = "auto",
        calibration_folds: int | str = "auto",
        observation_dropout: float = 0.3,
        refit_on_update: bool = False,
        ar_order: int | str = "auto",
        d_model: int = 32,
        n_heads: int = 4,
        n_windowed_heads: int = 2,
        n_layers: int = 1,
        attention: str = "levy",
        dropout: float = 0.1,
        loss: str = "crps",
        lr: float = 1e-2,
        max_epochs: int = 10,
        max_steps: int | None = 500,
        batch_size: int = 32,
        validation_fraction: float = 0.0,
        patience: int | None = None,
        weight_decay: float = 0.05,
        device: str = "cpu",
        random_state: int | np.random.RandomState | None = None,
        verbose: int = 0,
    ) -> None:
        self.context_length = context_length
        self.max_horizon = max_horizon
        self.normalization = normalization
        self.seasonal_period = seasonal_period
        self.max_tokens = max_tokens
        self.windows_per_series = windows_per_series
        self.max_targets = max_targets
        self.calibration_fraction = calibration_fraction
        self.calibration_folds = calibration_folds
        self.observation_dropout = observation_dropout
        self.refit_on_update = refit_on_update
        self.ar_order = ar_order
        self.d_model = d_model
        self.n_heads = n_heads
        self.n_windowed_heads = n_windowed_heads
        self.n_layers = n_layers
        self.attention = attention
        self.dropout = dropout
        self.loss = loss
        self.lr = lr
        self.max_epochs = max_epochs
        self.max_steps = max_steps
        self.batch_size = batch_size
        self.validation_fraction = validation_fraction
        self.patience = patience
        self.weight_decay = weight_decay
        self.device = device
        self.random_state = random_state
        self.verbose = verbose
        super().__init__()

    def _set_time_axis(self, indexes: list[pd.Index]) -> None:
        """Write ``time_kind_``, ``time_unit_`` and the spans in time units."""
        kinds = {index_kind(ix) for ix in indexes}
        if len(kinds) > 1 and not kinds <= set(_TIMEDELTA_KINDS):
            raise TypeError(f"All series must share one kind of time index, got {kinds}.")
        kind = kinds.pop()
        pretrained_kind = getattr(self, "pretrained_time_kind_", None)
        if pretrained_kind is not None:
            if not _compatible_kinds(pretrained_kind, kind):
                raise ValueError(
                    f"The forecaster was pretrained on a {pretrained_kind} time index but fit "
                    f"got a {kind} one; its network measures time in the pretraining unit, so "
                    "fit it on a series indexed like the pretraining panel."
                )
            self.time_unit_ = self.pretrained_time_unit_
        else:
            self.time_unit_ = median_spacing(indexes)
        self.time_kind_ = kind
        self.context_span_ = span_in_units(self.context_length, self.time_unit_, "context_length")
        self.horizon_span_ = span_in_units(self.max_horizon, self.time_unit_, "max_horizon")
        period = self.seasonal_period
        if isinstance(period, str) and period == "auto":
            period = infer_seasonal_period(indexes[0])
        self.seasonal_period_ = (
            None if period is None else span_in_units(period, self.time_unit_, "seasonal_period")
        )
        steps = [np.diff(index_to_time(ix, self.time_unit_)) for ix in indexes]
        regular = all(np.all(np.abs(d - 1) <= _REGULAR_TOLERANCE) for d in steps)
        targets = self.max_targets
        if isinstance(targets, str):  # "auto": cap irregular series only
            targets = None if regular else _AUTO_MAX_TARGETS
        self.max_targets_ = targets
        order = self.ar_order
        if isinstance(order, str):  # "auto": on regularly spaced series only
            order = _AUTO_AR_ORDER if regular else 0
        # At most one lag per time unit of the context (lag 0 included): no lag reaches
        # further back than a window does.
        self._ar_lags = int(min(order, np.floor(self.context_span_) + 1))

    def _fit_scaling(self, series: list[tuple[Hashable, pd.DataFrame]]) -> None:
        """Write the population's standardisation (``channel_mean_``, ``channel_scale_``: the
        pretraining panel's after ``pretrain``, else that of every series given) and each
        series' own (``series_mean_``, ``series_scale_``).

        Each series is standardised by its own mean and spread, so a panel that mixes
        levels and spreads (a series near 1,000 beside one near 1.0) is forecast in each
        series' own units: one panel-wide scale would make a small series' windows look
        flat against the window scale's floor and hide its errors from the loss. A spread
        read off a few observations is noise, and σ would follow it (two observations of a
        new subject one small step apart gave a third of the σ of one observation), so a
        channel with fewer than ``_MIN_OWN_SCALE`` observations takes the population's
        scale (and, never observed, its mean)."""
        values = [frame.to_numpy(dtype=np.float64) for _, frame in series]
        if getattr(self, "pretrained_net_", None) is not None:
            self.channel_mean_ = self.pretrained_channel_mean_
            self.channel_scale_ = self.pretrained_channel_scale_
        else:
            self.channel_mean_, self.channel_scale_ = column_scaling(np.concatenate(values))
        rows = [self._own_scaling(v) for v in values]
        self.series_mean_ = np.array([m for m, _ in rows]).reshape(len(rows), -1)
        self.series_scale_ = np.array([s for _, s in rows]).reshape(len(rows), -1)

    def _own_scaling(self, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """A series' per-channel mean and scale, the population's where it has too little
        data (see :meth:`_fit_scaling`)."""
        mean, scale = column_scaling(values)
        n_observed = np.isfinite(values).sum(axis=0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN channels: not observed
            spread = np.nanmax(values, axis=0, initial=-np.inf) > np.nanmin(
                values, axis=0, initial=np.inf
            )
        return (
            np.where(n_observed > 0, mean, self.channel_mean_),
            np.where((n_observed >= _MIN_OWN_SCALE) & spread, scale, self.channel_scale_),
        )

    def _arrays(
        self, series: list[tuple[Hashable, pd.DataFrame]]
    ) -> tuple[list[np.ndarray], list[np.ndarray]]:
        """Times in units and standardised values of every series (each by its own
        ``series_mean_``/``series_scale_`` row, in the order of ``series``)."""
        times = [index_to_time(frame.index, self.time_unit_) for _, frame in series]
        values = [
            (frame.to_numpy(dtype=np.float64) - mean) / scale
            for (_, frame), mean, scale in zip(
                series, self.series_mean_, self.series_scale_, strict=True
            )
        ]
        return times, values

    # ------------------------------------------------------------------ windows and training

    def _cutoffs(
        self, times: np.ndarray, values: np.ndarray, start: float, stop: float
    ) -> np.ndarray:
        """Cutoffs in ``[start, stop)`` with a non-empty context and at least one target."""
        observed = np.isfinite(values).any(axis=1)
        count = np.concatenate([[0], np.cumsum(observed)])
        n_context = (
            count[np.searchsorted(times, times, side="right")]
            - count[np.searchsorted(times, times - self.context_span_, side="right")]
        )
        n_target = (
            count[np.searchsorted(times, times + self.horizon_span_, side="right")]
            - count[np.searchsorted(times, times, side="right")]
        )
        cut = times[(n_context > 0) & (n_target > 0) & (times >= start) & (times < stop)]
        if cut.size > self.windows_per_series:
            pick = np.linspace(0, cut.size - 1, self.windows_per_series).round().astype(int)
            cut = cut[np.unique(pick)]
        return cut

    def _windows(
        self,
        times: list[np.ndarray],
        values: list[np.ndarray],
        part: str,
        seed: int,
    ) -> SeriesWindows:
        """Training (``part="train"``), calibration (``"calibrate"``), all (``"all"``) or
        held-out (``"held_out"``) windows; the split is in time, the last
        ``calibration_fraction`` of each series. Training windows (``"train"``, ``"all"``)
        include the gap windows of ``observation_dropout``; calibration windows
        (``"calibrate"``, ``"held_out"``: every cutoff) are the forecasts a user makes."""
        cutoffs, ends, gaps, keeps = [], [], [], []
        # Gap windows (see observation_dropout) are drawn from random_state, reproducibly.
        rng = np.random.default_rng(seed)
        for t, v in zip(times, values, strict=True):
            split = -np.inf if part == "held_out" else np.inf
            if part in ("train", "calibrate") and self.calibration_fraction_ > 0 and t.size:
                split = _calibration_start(t, self.calibration_fraction_)
            if part in ("calibrate", "held_out"):
                cut = self._cutoffs(t, v, split, np.inf)
                gap = np.zeros(cut.size)
                keep = np.zeros(cut.size, bool)
            else:
                cut = self._cutoffs(t, v, -np.inf, split)
                n_gap = int(np.ceil(self.observation_dropout * cut.size))
                gapped = rng.choice(cut, size=n_gap, replace=False) if cut.size else cut[:0]
                gap = np.concatenate(
                    [np.zeros(cut.size), rng.uniform(0, self.horizon_span_, n_gap)]
                )
                # Some gaps are holes before a last observation (a sensor that was silent,
                # then reported once), the others end the context.
                holes = rng.random(n_gap) < _HOLE_SHARE
                keep = np.concatenate([np.zeros(cut.size, bool), holes])
                cut = np.concatenate([cut, gapped])
            cutoffs.append(cut)
            gaps.append(gap)
            keeps.append(keep)
            ends.append(split if part == "train" else np.inf)
        return series_windows(
            times,
            values,
            cutoffs,
            context_length=self.context_span_,
            horizon=self.horizon_span_,
            target_end=ends,
            normalization=self.normalization,
            seasonal_period=self.seasonal_period_,
            max_tokens=self.max_tokens,
            max_queries=self.max_targets_,
            context_gaps=gaps,
            gap_keeps_last=keeps,
        )

    def _seed(self) -> int:
        """The seed of one fit, pretrain or update: an int ``random_state`` is the seed itself
        (so that fixed-seed forecasts stay as they were); ``None`` or a ``RandomState`` draws
        one through ``check_random_state``, as the regressor does."""
        if isinstance(self.random_state, Integral):
            return int(self.random_state)
        return self._draw_seed()

    def _train(
        self, times: list[np.ndarray], values: list[np.ndarray], part: str, seed: int
    ) -> LevyNeuralNet:
        windows = self._windows(times, values, part, seed)
        return self._train_on(windows, values[0].shape[1], self, seed)

    def _train_on(
        self, windows: SeriesWindows, n_channels: int, axis: LevyForecaster, seed: int
    ) -> LevyNeuralNet:
        """Build the net for the time axis of ``axis`` (``self``, or the pretraining panel's
        scratch copy): windowed heads start with half the context as look-back, the
        autoregression has ``axis._ar_lags`` lags and a weight per time unit of the horizon,
        and learns faster where the windows' season is removed. Train it."""
        if not np.isfinite(windows.targets).any():
            raise ValueError(
                "No training window could be cut from y: every window needs at least one "
                "observation in its context and one in the max_horizon after its cutoff. "
                "Pass a longer series (or a larger max_horizon / context_length)."
            )
        net = make_levy_net(
            n_channels=n_channels,
            n_targets=n_channels,
            **{name: getattr(self, name) for name in NET_PARAMS if name != "random_state"},
            random_state=seed,
            bandwidth=1.0,
            lookback=max(axis.context_span_ / 2, 1.0),
            n_lags=axis._ar_lags,
            n_lag_horizons=max(int(np.ceil(axis.horizon_span_)), 1),
            lags_lr=_SEASONAL_LAGS_LR if axis._removes_season() else 1.0,
            token_dropout=float(self.observation_dropout),
            recipe="windows",
            n_rows=len(windows.targets),
        )
        targets = windows.targets.astype(np.float32)
        return fit_levy_net(net, windows.tokens, targets, seed)

    def _removes_season(self) -> bool:
        """Whether the windows remove a season: a seasonal period that the context spans at
        least twice (see :func:`~levy_sklearn.windows.series_windows`)."""
        period = self.seasonal_period_
        return period is not None and self.context_span_ >= MIN_SEASONS * period

    def _calibration_share(
        self, times: list[np.ndarray], values: list[np.ndarray], pretrained: bool
    ) -> float:
        """``calibration_fraction`` with ``"auto"`` resolved: a tenth when that tenth holds
        enough observations and the network is trained here, otherwise 0 (no calibration).

        A pretrained network is not calibrated by ``"auto"``: each series given to ``fit``
        would rescale σ by its own errors, so a thinned history could get a smaller σ than
        the full one (``tests/test_forecaster.py``), against the rule that less information
        never lowers σ."""
        if self.calibration_fraction != "auto":
            return float(self.calibration_fraction)
        if pretrained:
            return 0.0
        share = _AUTO_CALIBRATION_FRACTION
        held_out = 0
        for t, v in zip(times, values, strict=True):
            if t.size:
                held_out += int(np.isfinite(v[t > _calibration_start(t, share)]).sum())
        return share if held_out >= _AUTO_CALIBRATION_MIN_OBSERVATIONS else 0.0

    def _calibrate(
        self, times: list[np.ndarray], values: list[np.ndarray], part: str, seed: int
    ) -> LeadCalibration:
        """The lead-aware calibration of σ from the windows of ``part`` (see
        :class:`~levy_sklearn.uncertainty.LeadCalibration`): the Normal's without
        calibration, and with a warning when too few windows could be held out."""
        if self.calibration_fraction_ <= 0:
            return LeadCalibration.identity(self.n_channels_)
        return self._calibration_from([self._held_out(self._windows(times, values, part, seed))])

    def _held_out(self, windows: SeriesWindows) -> tuple[np.ndarray, ...]:
        """``net_``'s forecasts of held-out windows: targets, means and σ in the windows'
        normalised units (measured from each window's level, the anchor), channels and
        leads (the time from the channel's last context observation to the target)."""
        if not windows.series.size:
            return np.empty(0), np.empty(0), np.empty(0), np.empty(0, int), np.empty(0)
        out = self.net_.predict_moments(windows.tokens)
        chans = windows.tokens["query_channels"]
        ages = np.take_along_axis(_channel_ages(windows.tokens, self.n_channels_), chans, axis=1)
        held = windows.query_valid & np.isfinite(windows.targets)
        lead = windows.tokens["query_times"] + ages
        # The window and series scales cancel in the scores: the same in data units.
        return (
            windows.targets[held],
            out.mean[held],
            np.sqrt(out.variance[held]),
            chans[held],
            lead[held],
        )

    def _calibration_from(self, parts: list[tuple[np.ndarray, ...]]) -> LeadCalibration:
        """Split-conformal calibration of σ, by channel and lead, on held-out forecasts
        (pooled over ``parts``, each from :meth:`_held_out`), the mean shrunk towards the
        window's level where that forecast the held-out data better
        (:meth:`~levy_sklearn.uncertainty.LeadCalibration.fit_forecasts`)."""
        pooled = [np.concatenate(p) for p in zip(*parts, strict=True)]
        reason = "no calibration window could be cut"
        if pooled[0].size:
            try:
                return LeadCalibration.fit_forecasts(*pooled, self.n_channels_)
            except ValueError as err:  # too few held-out forecasts for a channel
                reason = str(err)
        warnings.warn(
            f"σ could not be calibrated ({reason}); intervals are the model's Normal ones. "
            "Hold out more data: a larger calibration_fraction, longer series, or more series "
            "in the pretraining panel.",
            stacklevel=4,
        )
        return LeadCalibration.identity(self.n_channels_)

    def _set_step(self) -> None:
        """The common spacing when every series is regularly spaced (for integer fh)."""
        gaps = np.concatenate(
            [np.diff(index_to_time(f.index, self.time_unit_)) for f in self._series.values()]
        )
        regular = gaps.size and np.allclose(gaps, gaps[0], rtol=1e-9, atol=0)
        self._step = gaps[0] if regular else None

    # ------------------------------------------------------------------ sktime private API

    def _pretraining_axis(self, y) -> tuple[LevyForecaster, list[np.ndarray], list[np.ndarray]]:
        """The copy of the forecaster that holds a pretraining panel's time axis (context
        span, time unit and kind) and scaling, and the panel's times and values, obtained
        without touching the fitted state."""
        # Written on a shallow copy: the fitted forecaster keeps its own time axis and
        # scaling, and the pretrained attributes are read as they are.
        scratch = copy.copy(self)
        series = _instances(y)
        _warn_unobserved(y, "the pretraining panel")
        scratch._set_time_axis([frame.index for _, frame in series])
        scratch._fit_scaling(series)
        scratch.n_channels_ = y.shape[1]
        times, values = scratch._arrays(series)
        return scratch, times, values

    def _pretrain_calibrated(
        self,
        axis: LevyForecaster,
        times: list[np.ndarray],
        values: list[np.ndarray],
        seed: int,
        train: Callable[[SeriesWindows], LevyNeuralNet],
    ) -> tuple[LevyNeuralNet, LeadCalibration]:
        """The pretrained network and its calibration across subjects (``calibration_folds``):
        the panel's series in five seeded folds, scored fold by fold by a network ``train``
        made without the fold; with one scored fold that network is the pretrained one,
        with more a last one learns from every series. A panel too small to hold series
        out is calibrated on the last tenth of each series' span, with a warning (time
        points within a subject are not exchangeable with a new subject)."""
        n = len(times)
        if n < _MIN_PANEL_TO_HOLD_OUT:
            warnings.warn(
                f"pretrain got {n} series, too few to hold any out for calibrating σ (at least "
                f"{_MIN_PANEL_TO_HOLD_OUT}); σ is calibrated on the last "
                f"{_AUTO_CALIBRATION_FRACTION:.0%} of each series' span instead, which cannot "
                "see how a new subject differs. Pretrain on more series for intervals "
                "calibrated across subjects.",
                stacklevel=4,
            )
            axis.calibration_fraction_ = _AUTO_CALIBRATION_FRACTION
            axis.net_ = train(axis._windows(times, values, "train", seed))
            held_out = axis._windows(times, values, "calibrate", seed)
            return axis.net_, axis._calibration_from([axis._held_out(held_out)])

        def windows(series: np.ndarray, part: str = "all") -> SeriesWindows:
            picked = np.flatnonzero(series)
            return axis._windows(
                [times[i] for i in picked], [values[i] for i in picked], part, seed
            )

        axis.calibration_fraction_ = 0.0
        folds = np.random.default_rng(seed).permutation(n) % _N_FOLDS
        n_scored = self.calibration_folds
        if n_scored == "auto":
            n_scored = _N_FOLDS if n < _AUTO_CROSS_FIT_BELOW else 1
        parts = []
        for fold in range(n_scored):
            axis.net_ = train(windows(folds != fold))
            parts.append(axis._held_out(windows(folds == fold, "held_out")))
        if n_scored > 1:
            axis.net_ = train(windows(np.ones(n, bool)))
        return axis.net_, axis._calibration_from(parts)

    def _pretrain(self, y, X=None, fh=None):
        """Train one global network on the series of the panel ``y`` and calibrate σ on
        series held out of training (see ``calibration_folds``).

        Writes ``pretrained_net_``, ``pretrained_time_unit_``, ``pretrained_time_kind_``,
        ``pretrained_n_channels_``, ``pretrained_columns_``, ``pretrained_channel_mean_``,
        ``pretrained_channel_scale_`` and ``pretrained_calibration_``.
        """
        self._check_params()
        for name in _PRETRAINED:  # pretrain after fit starts afresh
            self.__dict__.pop(name, None)
        seed = self._seed()
        axis, times, values = self._pretraining_axis(y)
        net, calibration = self._pretrain_calibrated(
            axis, times, values, seed, lambda w: self._train_on(w, y.shape[1], axis, seed)
        )
        # Written together once training succeeded: an interrupted pretrain leaves none.
        self.pretrained_time_unit_ = axis.time_unit_
        self.pretrained_time_kind_ = axis.time_kind_
        self.pretrained_n_channels_ = y.shape[1]
        self.pretrained_columns_ = list(y.columns)
        self.pretrained_channel_mean_ = axis.channel_mean_
        self.pretrained_channel_scale_ = axis.channel_scale_
        self.pretrained_calibration_ = calibration
        self.pretrained_net_ = net
        return self

    def _pretrain_update(self, y, X=None, fh=None):
        """Continue training the pretrained network on a further panel (``max_epochs``),
        holding out series of it as ``pretrain`` does, and recalibrate σ on them."""
        if getattr(self, "pretrained_net_", None) is None:
            return self._pretrain(y, X, fh)
        y = _in_order(y, self.pretrained_columns_, "The pretraining panel")
        self._check_params()
        seed = self._seed()
        axis, times, values = self._pretraining_axis(y)

        def train(windows: SeriesWindows) -> LevyNeuralNet:
            # A trained copy: an interrupted update leaves the pretrained network as it was.
            return continue_levy_net(
                self.pretrained_net_,
                windows.tokens,
                windows.targets.astype(np.float32),
                seed,
                self._epochs_for(len(windows.targets)),
                verbose=self.verbose,
            )

        net, self.pretrained_calibration_ = self._pretrain_calibrated(
            axis, times, values, seed, train
        )
        self.pretrained_net_ = net
        return self

    def _check_X_y(self, X=None, y=None, **kwargs):
        # Every y of fit, update and pretrain passes here before sktime checks it (its
        # messages for these inputs name neither the column nor the fix; see _sktime_ready).
        return super()._check_X_y(X=X, y=_sktime_ready(y), **kwargs)

    def _fit(self, y, X=None, fh=None):
        """Fit to ``y`` (a series, or a panel: one global model); see the class docstring.

        Writes ``net_``, ``time_unit_``, ``time_kind_``, ``context_span_``, ``horizon_span_``,
        ``channel_mean_``, ``channel_scale_``, ``series_mean_``, ``series_scale_``,
        ``n_channels_``, ``ar_order_``,
        ``max_targets_``, ``calibration_fraction_``, ``calibration_`` and
        the context kept for prediction. After ``pretrain``, the pretrained network is kept.
        """
        self._check_params()
        self._feature_names = list(y.columns)
        pretrained = getattr(self, "pretrained_net_", None)
        if pretrained is not None:
            y = _in_order(
                y, self.pretrained_columns_, "y (after pretrain)", by_position_if_renamed=True
            )
        series = _instances(y)
        _warn_unobserved(y, "y", pretrained=pretrained is not None)
        self.n_channels_ = y.shape[1]
        self._set_time_axis([frame.index for _, frame in series])
        self._index_names = list(y.index.names)
        self._fit_core(series, pretrained)
        return self

    def _fit_core(self, series, pretrained: LevyNeuralNet | None) -> None:
        seed = self._seed()
        self._fit_scaling(series)
        times, values = self._arrays(series)
        self.calibration_fraction_ = self._calibration_share(times, values, pretrained is not None)
        if pretrained is None:
            self.net_ = self._train(times, values, "train", seed)
            self.calibration_ = self._calibrate(times, values, "calibrate", seed)
        else:
            # Zero-shot: the calibration across subjects made by pretrain; a series
            # calibrated on its own (calibration_fraction > 0) only ever widens it.
            self.net_ = pretrained
            self.calibration_ = self.pretrained_calibration_
            if self.calibration_fraction_ > 0:
                own = self._calibrate(times, values, "held_out", seed)
                self.calibration_ = self.calibration_.at_least(own)
        lags = self.net_.module_.lags
        self.ar_order_ = 0 if lags is None else int(lags.weight.shape[-1])
        self._series = dict(series)
        self._set_step()

    def _update(self, y, X=None, update_params=True):
        """Extend every series' context with the new observations (no retraining).

        With ``refit_on_update=True`` and ``update_params=True`` the forecaster retrains on
        everything seen so far (a pretrained network is kept and only recalibrated).
        """
        names = self._y_metadata["feature_names"]
        try:
            y = _in_order(y, list(next(iter(self._series.values())).columns), "update's y")
        except ValueError:
            # sktime's update has already recorded this y's column names as the forecaster's
            # (its outputs' names): put back the known ones, so that a refused update leaves
            # the forecaster as it was.
            self._y_metadata["feature_names"] = self._feature_names
            raise
        self._feature_names = names
        for key, frame in _instances(y):
            old = self._series.get(key)
            if old is not None:
                frame = pd.concat([old, frame])
                frame = frame[~frame.index.duplicated(keep="last")].sort_index()
            else:  # a series first seen here is standardised by its own history
                mean, scale = self._own_scaling(frame.to_numpy(dtype=np.float64))
                self.series_mean_ = np.vstack([self.series_mean_, mean])
                self.series_scale_ = np.vstack([self.series_scale_, scale])
            self._series[key] = frame
        if update_params and self.refit_on_update:
            self._fit_core(list(self._series.items()), getattr(self, "pretrained_net_", None))
        else:
            self._set_step()
        return self

    def _series_indexes(self, fh: ForecastingHorizon) -> list[pd.Index]:
        """Absolute forecast times of every series: a relative ``fh`` counts from each
        series' own last time point (the convention of sktime's vectorised forecasters, e.g.
        ``NaiveForecaster`` on a panel whose series end at different times); an absolute
        ``fh`` is the same for all."""
        if not fh.is_relative or len(self._series) == 1:
            return [self._absolute_index(fh, self.cutoff)] * len(self._series)
        values = fh.to_pandas()
        if self.time_kind_ == "datetime" and pd.api.types.is_timedelta64_dtype(values.dtype):
            # Time spans after each series' end, added directly: sktime's conversion costs
            # about 2 ms a call (half of predict_var on 2,000 irregular series).
            return [pd.DatetimeIndex(f.index[-1] + values) for f in self._series.values()]
        # Otherwise once per distinct last time point (series of a panel mostly end together).
        by_end: dict[object, pd.Index] = {}
        for f in self._series.values():
            if f.index[-1] not in by_end:
                by_end[f.index[-1]] = self._absolute_index(fh, self._own_cutoff(f))
        return [by_end[f.index[-1]] for f in self._series.values()]

    def _own_cutoff(self, frame: pd.DataFrame) -> pd.Index:
        """A series' last time point, as a one-element index shaped like ``self.cutoff``."""
        last, cutoff = frame.index[-1], self.cutoff
        if isinstance(cutoff, pd.DatetimeIndex):
            return pd.DatetimeIndex([last], freq=cutoff.freq)
        if isinstance(cutoff, pd.PeriodIndex):
            return pd.PeriodIndex([last], freq=cutoff.freq)
        return pd.Index([last], dtype=cutoff.dtype)

    def _absolute_index(self, fh: ForecastingHorizon, cutoff: pd.Index) -> pd.Index:
        values = fh.to_pandas()
        if self.time_kind_.startswith("period") and pd.api.types.is_timedelta64_dtype(
            values.dtype
        ):
            raise ValueError(
                f"fh holds time spans (Timedelta) but y has a PeriodIndex (freq "
                f"{cutoff.freqstr}); pass steps, e.g. fh=[1, 2, 3], or periods, e.g. "
                f"fh=pd.period_range(..., freq={cutoff.freqstr!r})."
            )
        if (
            fh.is_relative
            and self.time_kind_ in _TIMEDELTA_KINDS
            and pd.api.types.is_integer_dtype(values.dtype)
            and fh.freq is None
        ):
            if self._step is None:
                raise ValueError(
                    "Integer steps in fh are ambiguous on an irregularly spaced index without "
                    "a freq. Pass absolute timestamps (e.g. fh=pd.DatetimeIndex([...])) or "
                    "relative time spans (e.g. fh=pd.to_timedelta([1, 2], unit='h'))."
                )
            step = pd.Timedelta(self._step * self.time_unit_)
            return pd.Index(cutoff[0] + np.asarray(values) * step)
        if self.time_kind_ == "timedelta" and pd.api.types.is_timedelta64_dtype(values.dtype):
            # sktime cannot hold absolute times of a TimedeltaIndex in a ForecastingHorizon
            # (to_absolute_index raises), so add the spans to the cutoff here.
            return pd.TimedeltaIndex(cutoff[0] + values)
        return self._check_tz(fh.to_absolute_index(cutoff))

    def _check_tz(self, index: pd.Index) -> pd.Index:
        """Absolute forecast times in the series' time zone; a naive time on an aware series
        (or the reverse) is refused: reading it as UTC would forecast another instant."""
        if not isinstance(index, pd.DatetimeIndex):
            return index
        tz = next(iter(self._series.values())).index.tz
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

    def _forecast_moments(
        self, fh: ForecastingHorizon, diagnostics: dict | None = None
    ) -> tuple[pd.Index, np.ndarray, np.ndarray, np.ndarray]:
        """Row index, mean, model variance and lead ``(n_rows, n_channels)`` of the
        forecasts at ``fh``, channels in the network's order (steps 1–3 of
        :mod:`levy_sklearn.uncertainty`).

        A forecast time after a series' last time point is predicted from its whole context;
        an earlier one (in-sample) from what was seen strictly before it, so it is the
        forecast one would have made then. A ``diagnostics`` dict gets the per-head
        ``evidence`` and ``disagreement`` (data units²), ``(n_rows, n_channels, n_heads)``.
        """
        indexes = self._series_indexes(fh)
        keys = list(self._series)
        all_times, all_values = self._arrays(list(self._series.items()))
        span = self.horizon_span_
        # One window per (series, effective cutoff); each gets one extra query at the
        # training horizon after its origin, whose variance floors the variance beyond it.
        times, values, cutoffs, queries, where = [], [], [], [], []
        t_all = [index_to_time(index, self.time_unit_) for index in indexes]
        early = [keys[i] for i, (t, t_abs) in enumerate(zip(all_times, t_all, strict=True))
                 if (t_abs < t[0]).any()]  # fmt: skip
        if early:
            where_ = "y" if early == [None] else f"series {early[:3]} of y"
            warnings.warn(
                f"fh holds times before the first observation of {where_}: there is no "
                "context then, so those forecasts are the network's prior alone.",
                UserWarning,
                stacklevel=4,
            )
        for i, (t, v, t_abs) in enumerate(zip(all_times, all_values, t_all, strict=True)):
            before = np.searchsorted(t, t_abs, side="left") - 1
            cut = np.where(t_abs > t[-1], t[-1], np.where(before >= 0, t[before], t_abs - 1.0))
            for c in np.unique(cut):
                (k,) = np.nonzero(cut == c)
                times.append(t)
                values.append(v)
                cutoffs.append([c])
                queries.append(t_abs[k] - c)
                where.append((i, k))
        windows = series_windows(
            times,
            values,
            cutoffs,
            context_length=self.context_span_,
            query_times=queries,
            normalization=self.normalization,
            seasonal_period=self.seasonal_period_,
            max_tokens=self.max_tokens,
            origin_queries=[span],
        )
        out = self.net_.predict_moments(windows.tokens)
        loc, scale = windows.query_loc, windows.query_scale
        n_ch = self.n_channels_
        n_fh = len(indexes[0])
        mean = np.empty((len(keys), n_fh, n_ch))
        var = np.empty_like(mean)
        n_heads = out.evidence.shape[-1]
        noise = np.empty_like(mean)
        lead = np.empty_like(mean)
        evidence = np.empty((*mean.shape, n_heads))
        disagreement = np.empty_like(evidence)
        age = _channel_ages(windows.tokens, n_ch)
        for w, (i, k) in enumerate(where):
            # Horizons count from each channel's last observation, so a gap before the
            # cutoff, or a channel silent for longer than the others, counts as horizon too.
            rel = (t_all[i][k] - windows.origins[w])[:, None] + age[w]
            q = (k.size + 1) * n_ch
            # The network's forecast, weighed against the window's level by lead (the
            # calibration's mean weight; the horizon query only lends its variance).
            weight = np.ones((k.size + 1, n_ch))
            weight[:-1] = self.calibration_.mean_weight_at(
                np.broadcast_to(np.arange(n_ch), rel.shape), rel
            )
            m, s2 = to_data_units(
                weight.ravel() * out.mean[w, :q], out.variance[w, :q], loc[w, :q], scale[w, :q]
            )
            m, s2 = m.reshape(k.size + 1, n_ch), s2.reshape(k.size + 1, n_ch)
            scale2 = scale[w, :q] ** 2  # variances and their parts scale alike
            mean[i, k] = m[:-1]
            var[i, k] = horizon_floor(s2[:-1], s2[-1], rel, span)
            lead[i, k] = rel
            noise[i, k] = (scale2 * out.noise[w, :q]).reshape(k.size + 1, n_ch)[:-1]
            evidence[i, k] = out.evidence[w, :q].reshape(k.size + 1, n_ch, n_heads)[:-1]
            d = scale2[:, None] * out.disagreement[w, :q]
            disagreement[i, k] = d.reshape(k.size + 1, n_ch, n_heads)[:-1]
        # Back to data units, each series by its own standardisation.
        scale, loc = self.series_scale_[:, None], self.series_mean_[:, None]
        mean, var = to_data_units(mean, var, loc, scale)
        if keys == [None]:
            rows = indexes[0]
        else:
            rows = pd.MultiIndex.from_tuples(
                [(*key, t) for key, index in zip(keys, indexes, strict=True) for t in index],
                names=self._index_names,
            )
        n_rows = len(keys) * n_fh
        if diagnostics is not None:
            diagnostics["evidence"] = evidence.reshape(n_rows, n_ch, n_heads)
            disagreement = disagreement * scale[..., None] ** 2
            diagnostics["disagreement"] = disagreement.reshape(n_rows, n_ch, n_heads)
            diagnostics["noise"] = (noise * scale**2).reshape(n_rows, n_ch)
        shape = (n_rows, n_ch)
        return rows, mean.reshape(shape), var.reshape(shape), lead.reshape(shape)

    def _update_predict_single(self, y, fh, X=None, update_params=True):
        """Update with ``y``, then predict at ``fh``.

        sktime's default calls the public ``update`` with the inner DataFrame, which makes
        every later forecast of a Series a DataFrame; the private steps keep the output type
        (``update_predict_single`` has already moved the cutoff).
        """
        self._update(y, X, update_params=update_params)
        return self._predict(fh, X)

    def _predict(self, fh, X=None):
        """Predictive means at ``fh`` (absolute timestamps, Timedeltas or integer steps)."""
        rows, mean, *_ = self._moments(fh)
        return pd.DataFrame(mean, index=rows, columns=self._get_columns("predict"))

    def _predict_var(self, fh, X=None, cov=False):
        """Predictive variances: the model's times the calibrated second moment of the
        σ-normalised error (see ``calibration_``)."""
        if cov:
            raise NotImplementedError(
                "LevyForecaster returns marginal variances only; call predict_var(cov=False)."
            )
        rows, _, var, *_ = self._moments(fh)
        return pd.DataFrame(var, index=rows, columns=self._get_columns("predict_var"))

    def _moments(
        self, fh, diagnostics: dict | None = None
    ) -> tuple[pd.Index, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Rows, mean, calibrated variance, model σ, lead and channel of every forecast, in
        the column order of fit's ``y`` (after ``pretrain``, the network's channels are the
        pretraining panel's, matched by name); ``diagnostics`` calibrated like the variance.
        """
        rows, mean, var, lead = self._forecast_moments(fh, diagnostics)
        internal = list(next(iter(self._series.values())).columns)
        names = list(self._get_columns("predict"))
        order = [0] if len(names) == 1 else [internal.index(n) for n in names]
        mean, var, lead = mean[:, order], var[:, order], lead[:, order]
        channels = np.broadcast_to(np.asarray(order), mean.shape)
        factor = self.calibration_.variance_factor(channels, lead)
        if diagnostics is not None:
            diagnostics["evidence"] = diagnostics["evidence"][:, order]
            diagnostics["disagreement"] = diagnostics["disagreement"][:, order] * factor[..., None]
            diagnostics["noise"] = diagnostics["noise"][:, order] * factor
        return rows, mean, var * factor, np.sqrt(var), lead, channels

    @property
    def index_names_(self) -> list:
        """Names of the index levels of the fitted ``y`` (instance levels, then time).

        Returns
        -------
        list
            One name per level (``None`` for an unnamed one).

        Examples
        --------
        >>> import numpy as np, pandas as pd
        >>> from levy_sklearn.forecaster import LevyForecaster
        >>> y = pd.Series(np.arange(30.0), index=pd.RangeIndex(30, name="t"))
        >>> LevyForecaster(max_epochs=1, d_model=8, n_heads=2).fit(y).index_names_
        ['t']
        """
        self.check_is_fitted()
        return list(self._index_names)

    def predict_uncertainty(self, fh=None, X=None) -> Bunch:
        """Per-forecast uncertainty breakdown: why is a forecast uncertain?

        The forecaster's twin of
        :meth:`LevyAttentionRegressor.predict_uncertainty
        <levy_sklearn.regressor.LevyAttentionRegressor.predict_uncertainty>`, per channel and
        forecast time.

        Parameters
        ----------
        fh : int, list, pd.Index or ForecastingHorizon, optional
            Forecast times (see the class docstring); the ``fh`` of ``fit`` when omitted.
        X : ignored
            Exogenous data is not used.

        Returns
        -------
        Bunch
            DataFrames indexed like :meth:`predict_var` (one row per forecast time, and per
            series of a panel), one column per channel:
            ``mean`` and ``std``: as ``predict`` and ``sqrt(predict_var)`` (calibrated, and
            floored beyond ``max_horizon``).
            ``evidence``: expected number of Poisson points supporting the forecast, summed
            over the output layer's heads; low where little was observed near the forecast
            time. ``disagreement``: spread of the attended values through the readout,
            summed over heads, in squared data units (calibrated like the variance); high
            where the context conflicts. Neither is floored beyond
            ``max_horizon``. ``evidence_per_head``, ``disagreement_per_head``: the same per
            head, columns ``(channel, head)``. For ``attention="softmax"`` evidence and
            disagreement are 0. ``noise_variance``: the learned noise variance inside
            ``std²`` in squared data units (rescaled like it): 0 for the Lévy forecaster,
            whose σ comes from the Lévy layer alone; the variance head, all of ``std²``, for
            the softmax twin.

        Examples
        --------
        >>> from sktime.datasets import load_airline
        >>> from levy_sklearn.forecaster import LevyForecaster
        >>> forecaster = LevyForecaster(max_epochs=2, random_state=0).fit(load_airline())
        >>> u = forecaster.predict_uncertainty(fh=[1, 2, 3])
        >>> sorted(u)  # doctest: +NORMALIZE_WHITESPACE
        ['disagreement', 'disagreement_per_head', 'evidence', 'evidence_per_head', 'mean',
         'noise_variance', 'std']
        >>> u.std.shape, u.evidence_per_head.shape  # (fh, channels), (fh, channels x heads)
        ((3, 1), (3, 4))
        >>> bool((u.std.to_numpy() > 0).all())
        True
        """
        self.check_is_fitted()
        fh = self._check_fh(fh)
        parts: dict = {}
        rows, mean, var, *_ = self._moments(fh, parts)
        columns = self._get_columns("predict_var")
        heads = pd.MultiIndex.from_product(
            [columns, range(parts["evidence"].shape[-1])], names=[None, "head"]
        )

        def frame(a, cols=columns):
            return pd.DataFrame(a.reshape(len(rows), -1), index=rows, columns=cols)

        return Bunch(
            mean=frame(mean),
            std=frame(np.sqrt(var)),
            evidence=frame(parts["evidence"].sum(-1)),
            disagreement=frame(parts["disagreement"].sum(-1)),
            evidence_per_head=frame(parts["evidence"], heads),
            disagreement_per_head=frame(parts["disagreement"], heads),
            noise_variance=frame(parts["noise"]),
        )

    def _predict_proba(self, fh, X=None, marginal=True):
        """Normal(mean, σ²) per forecast: skpro's ``Normal`` of ``predict``/``predict_var``
        (σ² the calibrated variance); intervals and quantiles read the calibrated quantiles
        of each level instead (see ``calibration_``)."""
        from skpro.distributions import Normal

        if not marginal:
            raise NotImplementedError(
                "LevyForecaster returns marginal distributions only; call "
                "predict_proba(marginal=True)."
            )
        rows, mean, var, *_ = self._moments(fh)
        columns = self._get_columns("predict")
        return Normal(mu=mean, sigma=np.sqrt(var), index=rows, columns=columns)

    def _predict_interval(self, fh, X, coverage):
        """Central intervals ``mean ± q(coverage)·σ`` with ``q`` the calibrated quantile of
        the σ-normalised error for the forecast's channel and lead (the Normal's without
        calibration)."""
        levels = [(c, side) for c in coverage for side in (-1, 1)]  # (variable, coverage, side)
        rows, values = self._calibrated_quantiles(fh, levels)
        columns = self._get_columns("predict_interval", coverage=coverage)
        return pd.DataFrame(values, index=rows, columns=columns)

    def _predict_quantiles(self, fh, X, alpha):
        """Quantiles ``mean ± q(|2α − 1|)·σ`` of the calibrated distribution (symmetric about
        the mean; see :meth:`_predict_interval`)."""
        rows, values = self._calibrated_quantiles(
            fh, [(abs(2 * a - 1), np.sign(a - 0.5)) for a in alpha]
        )
        columns = self._get_columns("predict_quantiles", alpha=alpha)
        return pd.DataFrame(values, index=rows, columns=columns)

    def _calibrated_quantiles(self, fh, levels: list[tuple[float, float]]):
        """Rows and ``mean + side·q(coverage)·σ`` for every ``(coverage, side)`` of
        ``levels``, as ``(n_rows, n_channels · len(levels))`` (channel-major, like sktime's
        interval and quantile columns)."""
        rows, mean, _, sd, lead, channels = self._moments(fh)
        values = [
            mean + side * sd * self.calibration_.quantile(c, channels, lead) for c, side in levels
        ]
        return rows, np.stack(values, axis=2).reshape(len(rows), -1)

    def predict_interval(self, fh=None, X=None, coverage=0.90):
        """Central prediction intervals, calibrated at each coverage level.

        ``mean ± q(coverage)·σ`` with ``q`` the split-conformal quantile of the σ-normalised
        error for the forecast's channel and lead (see ``calibration_``; the Normal's
        quantile when nothing was calibrated). This override reads integer coverages as
        floats, which sktime's check refuses with a ``TypeError``.

        Parameters
        ----------
        fh : int, list, pd.Index or ForecastingHorizon, optional
            Forecast times (see the class docstring); the ``fh`` of ``fit`` when omitted.
        X : ignored
            Exogenous data is not used.
        coverage : float or list of float, default=0.90
            Nominal coverage(s), each strictly between 0 and 1 (ints are read as floats).

        Returns
        -------
        pd.DataFrame
            sktime's interval format: columns ``(variable, coverage, "lower"/"upper")``.

        Examples
        --------
        >>> from sktime.datasets import load_airline
        >>> from levy_sklearn.forecaster import LevyForecaster
        >>> forecaster = LevyForecaster(max_epochs=2, random_state=0).fit(load_airline())
        >>> intervals = forecaster.predict_interval(fh=[1, 2], coverage=[0.5, 0.9])
        >>> intervals.shape  # columns (variable, coverage, "lower"/"upper")
        (2, 4)
        >>> lower, upper = intervals.xs(0.9, axis=1, level=1).to_numpy().T
        >>> bool((lower < upper).all())
        True
        """
        return super().predict_interval(fh=fh, X=X, coverage=_as_floats(coverage))

    def predict_quantiles(self, fh=None, X=None, alpha=None):
        """Quantile forecasts of the calibrated distribution (see :meth:`predict_interval`).

        This override reads integer levels as floats, which sktime's check refuses with a
        ``TypeError``.

        Parameters
        ----------
        fh : int, list, pd.Index or ForecastingHorizon, optional
            Forecast times (see the class docstring); the ``fh`` of ``fit`` when omitted.
        X : ignored
            Exogenous data is not used.
        alpha : float or list of float, optional
            Quantile levels, each strictly between 0 and 1 (ints are read as floats);
            sktime's default ``[0.05, 0.95]`` when omitted.

        Returns
        -------
        pd.DataFrame
            sktime's quantile format: columns ``(variable, alpha)``.

        Examples
        --------
        >>> from sktime.datasets import load_airline
        >>> from levy_sklearn.forecaster import LevyForecaster
        >>> forecaster = LevyForecaster(max_epochs=2, random_state=0).fit(load_airline())
        >>> q = forecaster.predict_quantiles(fh=[1, 2], alpha=[0.1, 0.5, 0.9])
        >>> q.shape, bool((q.iloc[:, 0] < q.iloc[:, 2]).all())
        ((2, 3), True)
        """
        return super().predict_quantiles(fh=fh, X=X, alpha=_as_floats(alpha))

    @classmethod
    def get_test_params(cls, parameter_set: str = "default") -> list[dict]:
        """Fast parameter sets for sktime's estimator checks (each fit takes ~0.03 s).

        Parameters
        ----------
        parameter_set : str, default="default"
            Name of the set of test parameters (only the default exists).

        Returns
        -------
        list of dict

        Examples
        --------
        >>> from sktime.datasets import load_airline
        >>> from levy_sklearn.forecaster import LevyForecaster
        >>> params = LevyForecaster.get_test_params()
        >>> forecaster = LevyForecaster(**params[0]).fit(load_airline())
        >>> forecaster.predict(fh=[1, 2]).shape
        (2,)
        """
        tiny = {"d_model": 8, "n_heads": 2, "max_epochs": 2, "batch_size": 64}
        return [
            {
                **tiny,
                "n_windowed_heads": 1,
                "n_layers": 0,
                "context_length": 8,
                "max_horizon": 4,
                "windows_per_series": 24,
            },
            {
                **tiny,
                "n_windowed_heads": 0,
                "n_layers": 1,
                "max_epochs": 1,
                "context_length": 6,
                "max_horizon": 3,
                "normalization": "mean",
                "calibration_fraction": 0.3,
                "windows_per_series": 16,
                "refit_on_update": True,
                "ar_order": 0,
            },
        ]
