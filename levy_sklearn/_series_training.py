"""Training the forecaster's network on series windows.

What one fit resolves from the hyperparameters and its series, once (:class:`SeriesSpec`:
the time axis, the window plan, the autoregression's lags), the network built for it
(:func:`train_network`), and pretraining with σ calibrated on subjects held out of training
(:func:`pretrain_calibrated`). :class:`~levy_sklearn.forecaster.LevyForecaster` calls these
from its sktime methods with its hyperparameters' values and keeps the fitted state; none of
them takes the forecaster.
"""

from __future__ import annotations

import numbers
import warnings
from collections.abc import Callable, Hashable
from dataclasses import dataclass, fields
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from ._normalisation import NORMALIZATIONS
from ._panel import in_order, instances, key_order
from ._time_axis import TimeAxis, describe_kind, index_kind, is_positive_span
from .calibration import LeadCalibration, population_spread, with_unseen
from .calibration.held_out import calibrate, calibrate_across_series, held_out_forecasts
from .training import (
    BatchDataset,
    Budget,
    LevyNeuralNet,
    NetworkSpec,
    TrainingSpec,
    continue_levy_net,
    fit_levy_net,
    make_levy_net,
    progress_label,
)
from .training.distributed import (
    active,
    current_launch,
    data_parallel,
    gather,
    own_share,
    rows_per_process,
    total,
)
from .validation import own_scaling, target_scaling
from .windows import WindowPlan, WindowSource, calibration_start

# pretrain splits a panel of at least MIN_PANEL_TO_HOLD_OUT series into N_FOLDS folds of
# whole series and calibrates σ on forecasts of held-out folds, subjects the scoring network
# never saw; with more than one fold scored, the pretrained network learns from all of them,
# until the fold networks' windows outgrow max_steps (their batch grows: training.
# training_budget). From there the largest fold network is the pretrained one and every fold
# network steps as long as it: five trainings, not six, σ calibrated on networks trained
# alike, and a cost that never falls as the panel grows (a grown network steps through its
# windows for more than 6/5 of a capped one's CPU wherever a grown batch is less than
# max_epochs · 5/12 times faster per window; about 2.3 here, benchmarks/results/
# scale_notes.md), where scoring fewer folds would halve it a series further. On the
# competitions' panels a network from four fifths of the series scored as well as one from
# all of them on series neither had seen, and better on the series they trained on
# (benchmarks/results/competitions_notes.md).
N_FOLDS = 5
MIN_PANEL_TO_HOLD_OUT = 5
# calibration_fraction="auto": hold out this share of each series' span when it holds at least
# this many observations: on long irregular series the held-out tenth costs no CRPS and brings
# the coverage to nominal, on series of a few hundred points it costs about 9 % CRPS
# (benchmarks/results/forecaster_ablation_notes.md, "long irregular series are calibrated on
# their last tenth").
AUTO_CALIBRATION_FRACTION = 0.1
_AUTO_CALIBRATION_MIN_OBSERVATIONS = 1000
# ar_order="auto" on regularly spaced series: the order chosen on held-out series among 5, 9,
# 13, 19 and 37 (benchmarks/results/forecaster_ablation_notes.md, "a linear autoregression
# beside the attention").
_AUTO_AR_ORDER = 13
# The autoregression's weights learn at this multiple of lr where the windows' season is
# removed, at lr otherwise: on the held-out series the faster rate lowered the CRPS of the
# seasonal ones (0.915, 0.915, 0.964 over three seed pairs) and raised it on the others
# (1.07, 1.06, 1.03) (benchmarks/results/forecaster_ablation_notes.md, "how fast the
# autoregression learns").
_SEASONAL_LAGS_LR = 5.0
# Earlier cycles of each season longer than the autoregression reaches: the same time
# 1..ECHO_CYCLES cycles back; with them the autoregression learns at lr (one cycle at lr
# beat two cycles, and 5 × lr, on taylor's ablation split:
# benchmarks/results/high_frequency_notes.md).
ECHO_CYCLES = 1
# Bytes of cut windows a training over several epochs keeps (window_dataset): cutting a window
# costs about as much CPU as the network's step on it, and each epoch draws the windows again
# (a global fit on Tourism quarterly, three epochs: 104 CPU s cutting every epoch, 74 s with
# the windows kept, the same forecasts). A window takes about 1.9 KiB (Tourism quarterly's
# 45,659: 82 MiB; M3 monthly's 165,840: 301 MiB); a cohort beyond the bound cuts the rest per
# batch, so memory stays bounded however large the data.
WINDOW_CACHE_BYTES = 512 * 2**20
# Harmonics of each calendar phase (time of day, of week) the time encoding may carry (0:
# no calendar): a fit keeps as many as predict its own series' held-out days (see
# calendar_harmonics). 24 beat 1, 4, 8, 16, 48 and 168 on taylor's ablation split (CRPS 341
# -> 244), a sharp daily profile, but cost CRPS where the daily cycle is weak (the weather
# split: 2.81 -> 2.88; CGM glucose 0-15 min ahead: ~20 %, and ~9 % with 2-4 harmonics)
# (benchmarks/results/high_frequency_notes.md, "harmonics of the calendar" and "how many
# harmonics a series shows").
CALENDAR_HARMONICS = (0, 1, 2, 4, 8, 16, 24)
# calendar_harmonics reads at most this many observations per channel (evenly spaced).
_CALENDAR_ROWS = 100_000
# batch_size="auto": windows a step where the time encoding carries the calendar, else
# DEFAULT_BATCH_SIZE. A long sub-daily series gives windows_per_series windows (16 steps
# an epoch at 32, 160 steps in ten epochs); at 16 a step, taylor's ablation split forecast
# with 10 % less MAE and 8 % less CRPS over three seeds at the same CPU, bank_calls'
# day-ahead split with 16-20 % less MAE and 18-22 % less CRPS over two, its hour-ahead and
# the weather split within 0.5 %; 8 (seven whole epochs, 448 steps) did worse than 32
# (benchmarks/results/high_frequency_notes.md, "batches of 16 where the calendar is
# learned").
CALENDAR_BATCH_SIZE = 16
DEFAULT_BATCH_SIZE = 32
# max_targets="auto" on irregularly spaced series: the cap on target times per training
# window chosen on a held-out vitals draw among all, 32, 16 and 8
# (benchmarks/results/pretrain_budget_notes.md, "at most 16 target times per training window").
_AUTO_MAX_TARGETS = 16
# A series fitted after pretrain whose mean of a channel lies this many of the pretraining
# panel's pooled standard deviations from its mean (beyond 99.7 % of a Normal's values) gets
# a warning naming the channel.
_FAR_FROM_POPULATION = 3.0
# Held-out windows are cut and forecast this many at a time when calibrating: memory holds
# one chunk's tokens, not every window's.
_CALIBRATION_CHUNK = 4096
# pretrain scores at most this many held-out windows, over all its scored folds (an equal
# share each), drawn evenly across each fold's subjects and their cutoffs (see
# WindowSource.thinned): scoring them and fitting the calibration on their forecasts then
# cost the same on any larger panel, while the calibration's quantiles, fitted per channel,
# lead bin and group from about 400,000 forecasts at the cap on the vitals (8 a window),
# stay as precise as a conformal quantile needs. Above every panel of the zero-shot
# report (the glucose panel's 140 training subjects make the most, about 37,000 over five
# folds), so none of them is thinned.
_MAX_HELD_OUT_WINDOWS = 50_000


@dataclass(frozen=True)
class SeriesSpec:
    """What a fit resolves from the hyperparameters and its series, once: the time axis,
    ``max_targets`` and the autoregression's lags (``"auto"`` read off the series'
    spacing), and the window hyperparameters.

    Parameters
    ----------
    axis : TimeAxis
        The series' time axis.
    max_targets : int or None
        Target times per training window (``None``: all).
    lags : int
        The autoregression's order (``ar_order`` resolved and capped by the context).
    normalization : str
    max_tokens : int
    windows_per_series : int
    observation_dropout : float
        As the forecaster's hyperparameters.
    """

    axis: TimeAxis
    max_targets: int | None
    lags: int
    normalization: str
    max_tokens: int
    windows_per_series: int
    observation_dropout: float

    def to_state(self) -> dict[str, Any]:
        """The spec's fields for a model file, the time axis's among them by name.

        Examples
        --------
        >>> from levy_sklearn._series_training import SeriesSpec
        >>> from levy_sklearn._time_axis import TimeAxis
        >>> spec = SeriesSpec(TimeAxis("numeric", 1.0, 36.0, 12.0, None), None, 13, "last",
        ...                   256, 512, 0.3)
        >>> state = spec.to_state()
        >>> state["unit"], state["lags"]
        (1.0, 13)
        >>> SeriesSpec.from_state(state) == spec
        True
        """
        axis = {f.name: getattr(self.axis, f.name) for f in fields(TimeAxis)}
        return axis | {f.name: getattr(self, f.name) for f in fields(self) if f.name != "axis"}

    @classmethod
    def from_state(cls, state: dict[str, Any]) -> SeriesSpec:
        """The spec of :meth:`to_state`'s fields, checked: a ``ValueError`` names a field
        that a fit cannot have written.

        Parameters
        ----------
        state : dict
        """
        # Files written before several seasons held one season at most: none beyond it.
        state = {"seasons": ()} | dict(state)
        axis_names = {f.name for f in fields(TimeAxis)}
        names = axis_names | {f.name for f in fields(cls)} - {"axis"}
        if set(state) != names:
            raise ValueError(f"a series spec holds {sorted(names)}, not {sorted(state)}.")
        problem = _spec_problem(state)
        if problem:
            raise ValueError(f"the series spec's {problem}, which no fit writes.")
        axis = TimeAxis(**{name: state[name] for name in axis_names})
        return cls(axis, **{name: state[name] for name in names - axis_names})

    @classmethod
    def resolve(
        cls,
        series: list[tuple[Hashable, pd.DataFrame]],
        pretrained: tuple[str, pd.Timedelta | float] | None = None,
        *,
        context_length: float | str | pd.Timedelta,
        max_horizon: float | str | pd.Timedelta,
        seasonal_period: float | str | pd.Timedelta | None,
        max_tokens: int,
        max_targets: int | str,
        ar_order: int | str,
        normalization: str,
        windows_per_series: int,
        observation_dropout: float,
    ) -> SeriesSpec:
        """The spec of ``series`` under these hyperparameters (the forecaster's, ``"auto"``
        unresolved), times in the unit of a pretraining panel of kind and unit
        ``pretrained``."""
        indexes = [frame.index for _, frame in series]
        # Observed cells per row: how many time steps max_tokens context tokens cover.
        rows = sum(len(frame) for _, frame in series)
        cells = sum(int(frame.notna().to_numpy().sum()) for _, frame in series)
        axis = TimeAxis.fit(
            indexes,
            context_length=context_length,
            max_horizon=max_horizon,
            seasonal_period=seasonal_period,
            pretrained=pretrained,
            max_tokens=max_tokens,
            tokens_per_step=cells / rows if cells else 1.0,
        )
        regular = axis.is_regular(indexes)
        targets = max_targets
        if isinstance(targets, str):  # "auto": cap irregular series only
            targets = None if regular else _AUTO_MAX_TARGETS
        order = ar_order
        # At most one lag per time unit of the context (lag 0 included): no lag reaches
        # further back than a window does.
        most = int(np.floor(axis.context_span) + 1)
        if isinstance(order, str):  # "auto": on regularly spaced series only
            order = _AUTO_AR_ORDER if regular else 0
        elif order > most:
            warnings.warn(
                f"ar_order={order} reaches further back than the context of "
                f"{axis.context_span:.3g} time units; using {most} lags. Pass a longer "
                "context_length to use more.",
                UserWarning,
                stacklevel=5,  # the user's fit, through sktime's fit and _fit
            )
        spec = cls(
            axis,
            targets,
            min(order, most),
            normalization,
            max_tokens,
            windows_per_series,
            float(observation_dropout),
        )
        _warn_about_echo_tokens(spec, cells / rows if cells else 1.0)
        return spec

    def echoes(self) -> tuple[float, ...]:
        """The whole cycles ``k·P`` (``k = 1 … ECHO_CYCLES``) of every season ``P`` longer
        than the autoregression's lags reach (and than its default order, 13), increasing:
        contexts hold the forecast span shifted back by each (a day, a week ago) and the
        autoregression reads them (see :class:`~levy_sklearn.network.LinearLags`). The
        seasons of monthly, quarterly and daily data (12, 4, 7 steps) need none: the
        default lags and context hold them.

        Examples
        --------
        >>> from levy_sklearn._series_training import SeriesSpec
        >>> from levy_sklearn._time_axis import TimeAxis
        >>> axis = TimeAxis("datetime", 1.0, 97.0, 48.0, 48.0, 0, (336.0, 48.0))
        >>> SeriesSpec(axis, None, 13, "last", 256, 512, 0.3).echoes()
        (48.0, 336.0)
        """
        return tuple(
            sorted(
                {
                    k * p
                    for p in self.axis.seasons
                    if p > max(self.lags, _AUTO_AR_ORDER)
                    for k in range(1, ECHO_CYCLES + 1)
                }
            )
        )

    def plan(self, calibration_fraction: float = 0.0) -> WindowPlan:
        """The windows of these series, the last ``calibration_fraction`` of each held out."""
        return WindowPlan(
            self.axis.context_span,
            self.axis.horizon_span,
            self.axis.seasonal_period,
            self.normalization,
            self.max_tokens,
            self.max_targets,
            self.windows_per_series,
            self.observation_dropout,
            calibration_fraction,
            self.echoes(),
            self.axis.calendar(),
        )


def _warn_about_echo_tokens(spec: SeriesSpec, tokens_per_step: float) -> None:
    """Warn when half of ``max_tokens`` cannot hold the nearest echo of the forecast span
    (``max_horizon`` and a unit on each side, at ``tokens_per_step`` observed cells per
    step): windows would then carry no earlier cycle, silently."""
    echoes = spec.echoes()
    if not echoes:
        return
    need = (spec.axis.horizon_span + 2.0) * tokens_per_step
    if need > spec.max_tokens // 2:
        warnings.warn(
            f"max_tokens={spec.max_tokens} leaves {spec.max_tokens // 2} tokens for the "
            f"earlier cycles of the season(s) {list(spec.axis.seasons)} (time units), but "
            f"one cycle of the forecast span (max_horizon={spec.axis.horizon_span:.4g} time "
            f"units) holds about {need:.0f} observations: windows see no earlier cycle. "
            f"Pass max_tokens={int(np.ceil(2 * need))} or more, or a shorter max_horizon.",
            UserWarning,
            stacklevel=5,  # the user's fit, through sktime's fit and _fit
        )


def _spec_problem(state: dict[str, Any]) -> str | None:
    """The first field of a spec's ``state`` (read from a file) that no fit writes."""

    def count(value: object, low: int) -> bool:
        return isinstance(value, numbers.Integral) and not isinstance(value, bool) and value >= low

    def span(value: object) -> bool:
        return isinstance(value, numbers.Real) and bool(np.isfinite(value)) and value > 0

    checks = {
        "kind": isinstance(state["kind"], str),
        "unit": is_positive_span(state["unit"]),
        "origin": isinstance(state["origin"], numbers.Real) and bool(np.isfinite(state["origin"])),
        "context_span": span(state["context_span"]),
        "horizon_span": span(state["horizon_span"]),
        "seasonal_period": state["seasonal_period"] is None or span(state["seasonal_period"]),
        "seasons": isinstance(state["seasons"], tuple) and all(map(span, state["seasons"])),
        "max_targets": state["max_targets"] is None or count(state["max_targets"], 1),
        "lags": count(state["lags"], 0),
        "normalization": state["normalization"] in NORMALIZATIONS,
        "max_tokens": count(state["max_tokens"], 1),
        "windows_per_series": count(state["windows_per_series"], 1),
        "observation_dropout": isinstance(state["observation_dropout"], float)
        and 0 <= state["observation_dropout"] <= 1,
    }
    bad = next((name for name, ok in checks.items() if not ok), None)
    return None if bad is None else f"{bad} is {state[bad]!r}"


class Panel(NamedTuple):
    """Series ready for training: their spec, the population's per-channel standardisation,
    each series' own (``means``, ``scales``: ``(n_series, n_channels)``), each series' times
    (time units) and standardised values, the population's mean in each series'
    standardised units, ``(n_series, n_channels)``, and each series' covariates
    (:class:`~levy_sklearn.windows.InputSeries`; ``None``: no ``X``)."""

    spec: SeriesSpec
    mean: np.ndarray
    scale: np.ndarray
    means: np.ndarray
    scales: np.ndarray
    times: list[np.ndarray]
    values: list[np.ndarray]
    population: np.ndarray
    inputs: list | None = None

    def in_key_order(self, keys: list) -> Panel:
        """These series in the order of their ``keys`` (:func:`~levy_sklearn._panel.key_order`):
        what is trained and calibrated on them then does not depend on the order of the
        panel's rows, while the fitted state keeps the order they came in (sktime's)."""
        order = key_order(keys)
        return self._replace(
            means=self.means[order],
            scales=self.scales[order],
            times=[self.times[i] for i in order],
            values=[self.values[i] for i in order],
            population=self.population[order],
            inputs=None if self.inputs is None else [self.inputs[i] for i in order],
        )


def series_panel(
    spec: SeriesSpec,
    series: list[tuple[Hashable, pd.DataFrame]],
    population: tuple[np.ndarray, np.ndarray] | None = None,
    alike: bool = True,
) -> Panel:
    """``series`` standardised for training: each series by its own per-channel mean and
    scale, the ``population``'s ``(mean, scale)`` where it has too little data and is
    ``alike`` (a pretraining population, see :func:`~levy_sklearn.validation.own_scaling`);
    ``None``: the population is every series given."""
    raw = [frame.to_numpy(dtype=np.float64) for _, frame in series]
    mean, scale = target_scaling(np.concatenate(raw)) if population is None else population
    rows = [own_scaling(v, mean, scale, alike) for v in raw]
    means = np.array([m for m, _ in rows]).reshape(len(rows), -1)
    scales = np.array([s for _, s in rows]).reshape(len(rows), -1)
    times, values = standardised(spec.axis, series, means, scales)
    population_level = population_in_series_units(mean, means, scales)
    return Panel(spec, mean, scale, means, scales, times, values, population_level)


def warn_far_from_population(panel: Panel, columns: list) -> None:
    """Warn when a series fitted after ``pretrain`` sits far outside the pretraining panel,
    naming every channel whose mean lies more than ``_FAR_FROM_POPULATION`` of the panel's
    pooled standard deviations from the panel's: zero-shot forecasts are pulled towards that
    panel's level where this forecast held-out subjects better, which holds for subjects
    drawn like them only.

    Every observed channel is judged, however few its observations: for a subject drawn
    like the panel's, the mean of its ``n`` observations of a channel spreads about the
    panel's mean by ``√(between² + within²/n)``, never more than the pooled standard
    deviation ``√(between² + within²)``: whatever the count, such a subject is flagged at
    most as often as a single observation beyond three standard deviations (0.3 % of a
    Normal's), and a single observation is judged exactly."""
    counts = np.array([np.isfinite(v).sum(axis=0) for v in panel.values])
    z = np.where(counts > 0, np.abs(panel.means - panel.mean) / panel.scale, 0.0)
    far = [
        (columns[ch], z[i, ch], counts[i, ch])
        for i, ch in zip(*np.nonzero(z > _FAR_FROM_POPULATION), strict=True)
    ]
    if far:
        named = ", ".join(f"{c!r} by {d:.1f} (from {n} observations)" for c, d, n in far[:5])
        warnings.warn(
            f"y's level lies far from the pretraining panel's, in standard deviations of the "
            f"pretraining panel: {named}. Zero-shot forecasts assume a series drawn like "
            "the pretraining ones (they are pulled towards its level, and their intervals "
            "are calibrated on its subjects). Pretrain on series like y, or fit y without "
            "pretrain.",
            UserWarning,
            stacklevel=5,  # the user's fit, through sktime's fit, _fit and _fit_core
        )


def check_update(y: pd.DataFrame, series: dict[Hashable, pd.DataFrame], kind: str) -> None:
    """Refuse an update ``y`` that :func:`extend_series` cannot join to ``series`` (fitted
    on times of ``kind``, see :func:`~levy_sklearn._time_axis.index_kind`): columns other
    than the known ones (see :func:`~levy_sklearn._panel.in_order`), or times of another
    kind or time zone, which pandas cannot order among the known ones."""
    known = next(iter(series.values()))
    in_order(y, list(known.columns), "update's y")
    zone = getattr(known.index, "tz", None)
    layout = {_layout(key) for key in series}
    for key, frame in instances(y):
        if _layout(key) not in layout:  # joined, it broke every later predict
            raise ValueError(
                f"update's y is {_layout(key)} but fit's y was {layout.pop()}; pass the new "
                "observations with fit's index levels."
            )
        given = index_kind(frame.index)
        if given != kind:
            raise ValueError(
                f"update's y has {describe_kind(given)} but the forecaster was fitted on "
                f"{describe_kind(kind)}; index the new observations like fit's y."
            )
        if str(getattr(frame.index, "tz", None)) != str(zone):
            raise ValueError(
                f"update's y is in time zone {frame.index.tz} but fit's y "
                f"{'is tz-naive' if zone is None else f'is in {zone}'}; convert the new "
                "observations' index to fit's time zone first."
            )


def _layout(key: Hashable) -> str:
    """A series key's layout in words: a single series (``None``) or a panel's levels."""
    return "a single series" if key is None else f"a panel with {len(key)} instance level(s)"


def extend_series(
    series: dict[Hashable, pd.DataFrame],
    y: pd.DataFrame,
    own: tuple[np.ndarray, np.ndarray],
    population: tuple[np.ndarray, np.ndarray],
    alike: bool,
) -> tuple[np.ndarray, np.ndarray]:
    """Add the observations of update's ``y`` (see :func:`check_update`; its columns matched
    by name) to ``series`` (in place; a repeated time point takes the new value) and return
    the series' per-channel means and scales ``own`` with a row for every series first seen
    here, standardised by its own history (the ``population``'s ``(mean, scale)`` where it
    has too little data and is ``alike``, see :func:`series_panel`)."""
    means, scales = own
    y = in_order(y, list(next(iter(series.values())).columns), "update's y")
    for key, frame in instances(y):
        old = series.get(key)
        if old is not None:
            frame = pd.concat([old, frame])
            frame = frame[~frame.index.duplicated(keep="last")].sort_index()
        else:
            mean, scale = own_scaling(frame.to_numpy(dtype=np.float64), *population, alike)
            means, scales = np.vstack([means, mean]), np.vstack([scales, scale])
        series[key] = frame
    return means, scales


def population_in_series_units(
    mean: np.ndarray, means: np.ndarray, scales: np.ndarray
) -> np.ndarray:
    """The population's per-channel ``mean`` in each series' standardised units,
    ``(n_series, n_channels)``: the level a pretrained forecast is pulled towards (see
    :func:`~levy_sklearn.calibration.features.population_levels`), the same when
    calibrating and when predicting."""
    return (mean - means) / scales


def standardised(
    axis: TimeAxis,
    series: list[tuple[Hashable, pd.DataFrame]],
    means: np.ndarray,
    scales: np.ndarray,
) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Times in units and standardised values of every series (each by its row of
    ``means``/``scales``, in the order of ``series``)."""
    times = [axis.times(frame.index) for _, frame in series]
    values = [
        (frame.to_numpy(dtype=np.float64) - mean) / scale
        for (_, frame), mean, scale in zip(series, means, scales, strict=True)
    ]
    return times, values


def calibration_share(
    calibration_fraction: float | str,
    times: list[np.ndarray],
    values: list[np.ndarray],
    pretrained: bool,
) -> float:
    """``calibration_fraction`` with ``"auto"`` resolved: a tenth when that tenth holds
    enough observations and the network is trained here, otherwise 0 (no calibration).

    A pretrained network is not calibrated by ``"auto"``: each series given to ``fit`` would
    rescale σ by its own errors, so a thinned history could get a smaller σ than the full
    one (``tests/test_forecaster.py``), against the rule that less information never lowers
    σ."""
    if calibration_fraction != "auto":
        return float(calibration_fraction)
    if pretrained:
        return 0.0
    share = AUTO_CALIBRATION_FRACTION
    held_out = 0
    for t, v in zip(times, values, strict=True):
        if t.size:
            held_out += int(np.isfinite(v[t > calibration_start(t, share)]).sum())
    return share if held_out >= _AUTO_CALIBRATION_MIN_OBSERVATIONS else 0.0


def calendar_harmonics(axis: TimeAxis, times: list[np.ndarray], values: list[np.ndarray]) -> int:
    """How many harmonics of each calendar phase (:meth:`TimeAxis.calendar`) the time
    encoding carries: of :data:`CALENDAR_HARMONICS`, the number whose calendar profile
    best predicts the series' held-out days (0: no calendar, where no profile does).

    Each channel's values (standardised, pooled over the series), less their mean over each
    calendar week (so a drifting level is no profile), are regressed on ``sin, cos(2πk φ)``,
    ``k = 1 … K``, of the time of day and of week ``φ`` (at most ``⌊P/2⌋`` of a period of
    ``P`` units, as :class:`~levy_sklearn.network.LevyNet` caps them), fitted on the even
    days and scored on the odd ones and vice versa (a week has an odd number of days, so
    each half holds every weekday). A sharp profile (call volumes, electricity demand)
    keeps many harmonics, a weak one (dew point) few, and one that does not recur from day
    to day (glucose, driven by meals) none: harmonics the held-out days do not confirm are
    detail the network would fit to noise.

    Examples
    --------
    >>> import numpy as np
    >>> import pandas as pd
    >>> from levy_sklearn._series_training import calendar_harmonics
    >>> from levy_sklearn._time_axis import TimeAxis
    >>> index = pd.date_range("2024-01-01", periods=48 * 28, freq="30min")
    >>> axis = TimeAxis.fit([index], context_length=48, max_horizon=48,
    ...                     seasonal_period="auto")
    >>> t = axis.times(index)
    >>> hour = index.hour.to_numpy() + index.minute.to_numpy() / 60
    >>> noise = np.random.default_rng(0).normal(size=(t.size, 1))
    >>> sharp = ((hour >= 9) & (hour < 17)).astype(float)[:, None]  # open 9 to 5
    >>> calendar_harmonics(axis, [t], [sharp + 0.1 * noise])
    24
    >>> smooth = np.sin(2 * np.pi * hour / 24)[:, None]
    >>> calendar_harmonics(axis, [t], [smooth + 0.5 * noise])
    1
    """
    calendar = axis.calendar()
    if not calendar:
        return 0
    (day, day_phase), (week, week_phase) = calendar
    n_channels = values[0].shape[1] if values else 1
    candidates = sorted(CALENDAR_HARMONICS)
    errors = np.zeros(len(candidates))
    for c in range(n_channels):
        seen = [np.isfinite(vi[:, c]) for vi in values]
        t = np.concatenate([ti[ok] for ti, ok in zip(times, seen, strict=True)])
        v = np.concatenate([vi[ok, c] for vi, ok in zip(values, seen, strict=True)])
        if t.size > _CALENDAR_ROWS:  # evenly spaced rows: the cost stays bounded
            keep = np.linspace(0, t.size - 1, _CALENDAR_ROWS).round().astype(int)
            t, v = t[keep], v[keep]
        weeks = np.floor(week_phase + t / week)
        _, group = np.unique(weeks, return_inverse=True)
        v = v - (np.bincount(group, v) / np.bincount(group))[group]
        odd = np.floor(day_phase + t / day) % 2 == 1
        columns, terms = [], []  # harmonics of each period, in order of k
        for period, phase in calendar:
            angle = 2 * np.pi * (phase + t / period)
            for k in range(1, min(max(candidates), max(int(period // 2), 1)) + 1):
                columns += [np.sin(k * angle), np.cos(k * angle)]
                terms += [k, k]
        design = np.column_stack(columns)
        terms = np.asarray(terms)
        for j, harmonics in enumerate(candidates):
            x = design[:, terms <= harmonics]
            for fit, score in ((odd, ~odd), (~odd, odd)):
                if not fit.any() or not score.any():
                    continue
                if not x.shape[1]:  # no calendar: the week's mean alone
                    errors[j] += float(np.sum(v[score] ** 2))
                    continue
                coef = np.linalg.lstsq(x[fit], v[fit], rcond=None)[0]
                errors[j] += float(np.sum((v[score] - x[score] @ coef) ** 2))
    return candidates[int(np.argmin(errors))]


def training_batch_size(batch_size: int | str, harmonics: int) -> int:
    """``batch_size`` resolved for a network whose time encoding carries ``harmonics``
    harmonics of each calendar phase (see :func:`calendar_harmonics`): ``"auto"`` is
    :data:`CALENDAR_BATCH_SIZE` where it carries any (a long sub-daily series, whose windows
    per series would otherwise make few steps), :data:`DEFAULT_BATCH_SIZE` otherwise; an
    int is itself.

    Examples
    --------
    >>> from levy_sklearn._series_training import training_batch_size
    >>> [training_batch_size(size, harmonics) for size, harmonics in [("auto", 24), ("auto", 0)]]
    [16, 32]
    >>> training_batch_size(64, 24)  # one given is kept
    64
    """
    if isinstance(batch_size, str):
        return CALENDAR_BATCH_SIZE if harmonics else DEFAULT_BATCH_SIZE
    return int(batch_size)


def train_network(
    spec: SeriesSpec,
    windows: WindowSource,
    seed: int,
    network_spec: Callable[..., NetworkSpec],
    training_spec: Callable[..., TrainingSpec],
    harmonics: int = 0,
    steps_of: int | None = None,
) -> LevyNeuralNet:
    """Build the network for ``spec`` and train it on ``windows`` (cut batch by batch as
    training draws them, see :func:`window_dataset`): windowed heads start with
    half the context as look-back, the autoregression has ``spec.lags`` lags and a weight
    per time unit of the horizon, and learns faster where the windows' season is removed;
    the time encoding carries ``harmonics`` harmonics of each calendar phase (see
    :func:`calendar_harmonics`; 0: no calendar); with ``steps_of``, as long as a training
    on so many windows (see :func:`~levy_sklearn.training.training_budget`).

    ``network_spec(**resolved)`` and ``training_spec(n_rows, **resolved)`` complete the
    front-end's hyperparameters with what the series resolved (``n_rows``: the windows, or
    in a data-parallel pretraining the windows one process steps through an epoch; see
    :class:`~levy_sklearn.training.NetworkSpec` and
    :class:`~levy_sklearn.training.TrainingSpec`)."""
    # Over the processes of a data-parallel pretraining, which all train alike.
    index = windows.index
    if not total([np.any(index.cutoffs < index.ends)])[0]:  # no window, or every target hidden
        raise ValueError(
            "No training window could be cut from y: every window needs at least one "
            "observation in its context and one in the max_horizon after its cutoff. "
            "Pass a longer series (or a larger max_horizon / context_length)."
        )
    axis = spec.axis
    net = make_levy_net(
        network_spec(
            bandwidth=1.0,
            lookback=max(axis.context_span / 2, 1.0),
            n_lags=spec.lags,
            n_lag_horizons=max(int(np.ceil(axis.horizon_span)), 1),
            seasonal_lags=list(spec.echoes()),
            calendar_periods=[period for period, _ in axis.calendar()] if harmonics else [],
            calendar_harmonics=max(harmonics, 1),
        ),
        training_spec(
            rows_per_process(windows.n_windows),
            steps_of=steps_of,
            recipe="windows",
            lags_lr=_SEASONAL_LAGS_LR if axis.removes_season() and not spec.echoes() else 1.0,
        ),
    )
    return fit_levy_net(net, window_dataset(windows, net.max_epochs), None, seed)


def window_dataset(windows: WindowSource, epochs: int) -> BatchDataset:
    """The training rows of ``windows`` for ``epochs`` epochs, each batch's windows cut when
    it is drawn: memory holds the series and a few batches however many windows they make.
    Over several epochs, each window is cut once and kept while the kept ones take at most
    :data:`WINDOW_CACHE_BYTES` (:class:`~levy_sklearn.windows.CachedWindows`). A batch is
    padded to its longest window: a width fixed for the whole fit would take a pass over
    every window (the cost this avoids) or a bound as wide as ``max_tokens`` and every input
    token, far wider than most windows, which every step would then pay for."""
    source = windows.cached(WINDOW_CACHE_BYTES) if epochs > 1 else windows
    return BatchDataset(source.n_windows, source.batch)


def held_out_parts(
    net: LevyNeuralNet, windows: WindowSource, n_channels: int, population: np.ndarray | None
) -> list[tuple[np.ndarray, ...]]:
    """:func:`~levy_sklearn.calibration.held_out.held_out_forecasts` of ``windows``, cut and
    forecast :data:`_CALIBRATION_CHUNK` windows at a time (one part each, as
    :func:`~levy_sklearn.calibration.held_out.calibrate` pools them)."""
    parts = [
        held_out_forecasts(net, chunk, n_channels, population)
        for chunk in windows.chunks(_CALIBRATION_CHUNK)
    ]
    return parts or [held_out_forecasts(net, windows.cut(), n_channels, population)]


def calibrated_on(
    net: LevyNeuralNet,
    plan: WindowPlan,
    panel: Panel,
    part: str,
    seed: int,
    anchored: bool = False,
) -> LeadCalibration:
    """The lead-aware calibration of σ on ``net``'s forecasts of the windows of ``part`` of
    the ``panel`` (the Normal's when ``plan`` holds nothing out), without a pull towards the
    population's level (pretraining's calibration has one, see
    :func:`~levy_sklearn.calibration.features.population_levels`), channels without context
    observations anchored at that level only if ``anchored`` (a pretraining population, see
    :func:`~levy_sklearn.windows.series_windows`' ``absent_levels``)."""
    n_channels = panel.mean.size
    if plan.calibration_fraction <= 0:
        return LeadCalibration.identity(n_channels)
    levels = panel.population if anchored else None
    windows = plan.source(panel.times, panel.values, part, seed, levels, panel.inputs)
    return calibrate(held_out_parts(net, windows, n_channels, None), n_channels)


def continue_network(
    net: LevyNeuralNet,
    windows: WindowSource,
    seed: int,
    budget: Callable[..., Budget],
    verbose: int,
    steps_of: int | None = None,
) -> LevyNeuralNet:
    """A copy of ``net`` trained further on ``windows`` for the epochs and at the batch size
    that ``budget(n_windows)`` gives (the front-end's ``max_epochs`` within its
    ``max_steps``; the learning rate stays ``net``'s; ``n_windows``: one process's share in
    a data-parallel pretraining; ``steps_of``: as long as on so many, see
    :func:`~levy_sklearn.training.training_budget`): an interrupted update leaves ``net`` as
    it was."""
    steps = budget(rows_per_process(windows.n_windows), steps_of=steps_of)
    return continue_levy_net(
        net,
        window_dataset(windows, steps.epochs),
        None,
        seed,
        steps.epochs,
        verbose=verbose,
        batch_size=steps.batch_size,
        rows=steps.rows,
    )


def pretrain_calibrated(
    panel: Panel,
    calibration_folds: int | str,
    seed: int,
    train: Callable[..., LevyNeuralNet],
    budget: Callable[[int], Budget],
) -> tuple[LevyNeuralNet, LeadCalibration]:
    """The pretrained network and its calibration across subjects (``calibration_folds``,
    ``"auto"``: all :data:`N_FOLDS`, see
    :func:`~levy_sklearn.calibration.held_out.calibrate_across_series`; ``train(windows,
    steps_of=...)`` makes a network from windows and ``budget`` gives its training's budget
    on so many of them), with the population's spread
    for channels a new subject has never shown
    (:func:`~levy_sklearn.calibration.population_spread`). A panel too small to hold series
    out is calibrated on the last tenth of each series' span, with a warning
    (time points within a subject are not exchangeable with a new subject).

    Launched on several processes (see :mod:`~levy_sklearn.training.distributed`), each
    given the whole panel, every training runs data-parallel, each process on its own share
    of the series (:func:`~levy_sklearn.training.distributed.own_share`), and σ is
    calibrated on the held-out forecasts of every process: all of them return the same
    network and calibration."""
    with progress_label("pretrain"), data_parallel(current_launch()):
        _check_same_panel(panel)
        net, calibration = _pretrain_calibrated(panel, calibration_folds, seed, train, budget)
    spread = population_spread(panel.values, panel.population, panel.scales / panel.scale)
    return net, with_unseen(calibration, *spread)


def _check_same_panel(panel: Panel) -> None:
    """Refuse a data-parallel pretraining whose processes were given different panels: each
    takes its share of one panel, so every process must be given the whole of it."""
    sizes = gather((len(panel.times), sum(len(t) for t in panel.times)))
    if len(set(sizes)) > 1:
        described = ", ".join(f"{n} series of {rows} time points" for n, rows in sizes)
        raise ValueError(
            f"The processes of a data-parallel pretrain were given different panels ({described}, "
            "by rank). Give every process the whole panel: each trains on its own share of "
            "the series."
        )


def _cross_fitting_budget(
    training: dict[int | None, WindowSource], scored: list[int], budget: Callable[[int], Budget]
) -> tuple[int | None, int | None]:
    """The fold whose network is the pretrained one (``None``: a last network on every
    series) and the windows every network steps as long as a fit on (``None``: its own),
    from the ``training`` windows of each scored fold's network and of every series'
    (``None``, dropped where no last network trains)."""
    rows = {f: rows_per_process(training[f].n_windows) for f in training}
    largest = max(scored, key=rows.__getitem__)
    # Every network steps as long as the largest fold's where the last one would grow...
    steps_of = rows[largest] if budget(rows[None]).grown else None
    if not budget(rows[largest]).grown:
        return None, steps_of
    del training[None]  # ...and where that one grew too, it is the pretrained one
    return largest, steps_of


def _pretrain_calibrated(
    panel: Panel,
    calibration_folds: int | str,
    seed: int,
    train: Callable[..., LevyNeuralNet],
    budget: Callable[[int], Budget],
) -> tuple[LevyNeuralNet, LeadCalibration]:
    n, n_channels = len(panel.times), panel.mean.size
    times, values = panel.times, panel.values
    launch = active()
    n_processes = 1 if launch is None else launch.world_size

    def windows(picked: np.ndarray, part: str) -> WindowSource:
        return plan.source(
            [times[i] for i in picked],
            [values[i] for i in picked],
            part,
            seed,
            panel.population[picked],
            None if panel.inputs is None else [panel.inputs[i] for i in picked],
        )

    def forecasts(
        net: LevyNeuralNet, series: np.ndarray, part: str, most: int | None = None
    ) -> list[tuple[np.ndarray, ...]]:
        """``net``'s forecasts of the ``part`` windows of ``series``, at most ``most`` of
        them (a seeded share of each process's, see :meth:`WindowSource.thinned`): every
        process's parts."""
        picked = own_share(np.flatnonzero(series), n, training=False)
        mine = []  # a process may hold none of a held-out fold's series
        if picked.size:
            source = windows(picked, part)
            if most is not None:
                source = source.thinned(-(-most // n_processes), seed)
            mine = held_out_parts(net, source, n_channels, panel.population[picked])
        return [chunk for chunks in gather(mine) for chunk in chunks]

    every = np.ones(n, bool)
    if n < MIN_PANEL_TO_HOLD_OUT:
        warnings.warn(
            f"pretrain got {n} series, too few to hold any out for calibrating σ (at least "
            f"{MIN_PANEL_TO_HOLD_OUT}); σ is calibrated on the last "
            f"{AUTO_CALIBRATION_FRACTION:.0%} of each series' span instead, which cannot "
            "see how a new subject differs. Pretrain on more series for intervals "
            "calibrated across subjects.",
            stacklevel=5,  # the user's pretrain, through sktime's public method
        )
        plan = panel.spec.plan(AUTO_CALIBRATION_FRACTION)
        net = train(windows(own_share(np.arange(n), n), "train"))
        return net, calibrate(forecasts(net, every, "calibrate"), n_channels)
    plan = panel.spec.plan()
    folds = np.random.default_rng(seed).permutation(n) % N_FOLDS
    training: dict[int | None, WindowSource] = {}  # indexed once where counted, then trained

    def training_windows(fold: int | None) -> WindowSource:
        """The training windows of the network that holds ``fold`` out (``None``: none),
        of this process's share of the series; given once."""
        if fold in training:
            return training.pop(fold)
        series = every if fold is None else folds != fold
        return windows(own_share(np.flatnonzero(series), n), "all")

    scored = list(range(N_FOLDS if calibration_folds == "auto" else calibration_folds))
    returned, steps_of = scored[0] if len(scored) == 1 else None, None
    if len(scored) > 1:
        training.update((f, training_windows(f)) for f in [*scored, None])
        returned, steps_of = _cross_fitting_budget(training, scored, budget)
    most = -(-_MAX_HELD_OUT_WINDOWS // len(scored))
    return calibrate_across_series(
        N_FOLDS,
        scored,
        returned,
        lambda fold: train(training_windows(fold), steps_of=steps_of),
        lambda net, fold: forecasts(net, folds == fold, "held_out", most),
        n_channels,
    )
