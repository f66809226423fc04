"""LevyForecaster: an sktime probabilistic forecaster built on Lévy attention.

Every observation of a (possibly irregular, multivariate, gappy) series is a token
``(time, channel, value)``; a training window is the context in a look-back span before a cutoff
and the observations in a horizon span after it. Time is measured in a characteristic unit
(the median spacing) relative to the window's cutoff, values are standardised per channel and
then normalised by the window's own context (RevIN style), and one deterministic forward pass
of :class:`~levy_sklearn.network.LevyNet` returns the predictive mean and the closed-form
variance of every query (see the user guide, :doc:`/user_guide/levy_attention` and
:doc:`/user_guide/irregular_time`). This module is the sktime shell: the windows live in
:mod:`levy_sklearn.windows`, the training in :mod:`levy_sklearn.training`, the predictive
distribution and its calibration in :mod:`levy_sklearn.uncertainty`
(:doc:`/where_things_live` lists every module).
"""

from __future__ import annotations

from numbers import Integral, Real
from typing import ClassVar

import numpy as np
import pandas as pd
from sklearn.utils import Bunch
from sklearn.utils._param_validation import Interval, StrOptions
from sktime.forecasting.base import BaseForecaster, ForecastingHorizon

from ._hyperparameters import LevyHyperparameters, int_at_least, shared_docs
from ._normalisation import NORMALIZATIONS
from ._panel import as_floats, in_order, instances, sktime_ready, warn_unobserved
from ._series_forecasts import series_forecasts
from ._series_training import (
    N_FOLDS,
    Panel,
    SeriesSpec,
    calibration_share,
    population_in_series_units,
    pretrain_calibrated,
    series_scaling,
    standardised,
    train_network,
)
from ._time_axis import TimeAxis
from .training import (
    LevyNeuralNet,
    continue_levy_net,
)
from .uncertainty import LeadCalibration, calibrate, held_out_forecasts
from .validation import column_scaling, own_scaling
from .windows import SeriesWindows, WindowPlan

__all__ = ["LevyForecaster"]

_INNER_MTYPES = ["pd.DataFrame", "pd-multiindex", "pd_multiindex_hier"]
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
        Per-window instance normalisation: remove each channel's last context observation
        (the network forecasts the change from it), the context's least-squares line, or
        its mean, and divide by a scale never below the series' history scale; ``"none"``
        keeps the per-channel standardisation only (see
        :ref:`forecaster-parameters`).
    seasonal_period : "auto", float, int, str, pd.Timedelta or None, default="auto"
        Period of a season removed per window with the level and trend (a number of time
        units or a span); ``"auto"`` reads it from a regular index's frequency (see
        :func:`~levy_sklearn.windows.infer_seasonal_period`), ``None`` removes none. Give a
        ``context_length`` of at least two periods (see :ref:`forecaster-parameters`).
    max_tokens : int, default=256
        At most this many context tokens per window (the latest).
    windows_per_series : int, default=512
        At most this many training windows per series (evenly spaced cutoffs, latest kept).
    max_targets : int or "auto", default="auto"
        At most this many target times per training window, evenly spaced over its
        ``max_horizon``; forecasts are still made at every requested time. ``"auto"``: 16
        on irregularly spaced series, no cap on regular ones.
    calibration_fraction : float or "auto", default="auto"
        Share of each series' span held out of training to calibrate σ by split conformal
        prediction, per channel and lead, at every coverage level (``calibration_``).
        ``"auto"``: a tenth on series whose tenth holds at least 1,000 observations, none
        otherwise. After ``pretrain`` a positive share also calibrates on the new series
        and keeps the wider calibration (see :ref:`forecaster-parameters`).
    calibration_folds : int in [1, 5] or "auto", default="auto"
        ``pretrain`` deals the panel's series into five seeded folds and calibrates σ on
        ``calibration_folds`` of them, each forecast by a network trained without it (with
        2–5 the pretrained network then learns from every series). ``"auto"``: 5 below 100
        series, 1 above (see :ref:`forecaster-parameters`).
    observation_dropout : float, default=0.3
        Share of training windows whose context is thinned at random, and as many extra
        windows cut with a gap or a hole before their cutoff, so that sparse and gappy
        histories get the larger σ they deserve. ``0``: the windows as cut.
    ar_order : int or "auto", default="auto"
        Order of a linear autoregression added to the network's mean (see
        :class:`~levy_sklearn.network.LinearLags`), lags one time unit apart; σ stays the
        Lévy layer's. ``"auto"``: 13 on regularly spaced series, 0 (none) on irregular
        ones.
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
        Kind of the time index: ``"datetime"``, ``"timedelta"``, ``"period[<freq>]"`` or
        ``"numeric"``.
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
    Every default was chosen on data and splits that the reported benchmarks do not use;
    :doc:`/user_guide/defaults` names the table behind each and what to change first.

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
            Interval(Integral, 1, N_FOLDS, closed="both"),
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

    # ------------------------------------------------------------------ resolved at fit

    @property
    def _spec(self) -> SeriesSpec:
        """The fitted series' spec (see :class:`~levy_sklearn._series_training.SeriesSpec`),
        from the fitted attributes."""
        axis = TimeAxis(
            self.time_kind_,
            self.time_unit_,
            self.context_span_,
            self.horizon_span_,
            self.seasonal_period_,
        )
        return SeriesSpec(
            axis,
            self.max_targets_,
            self._ar_lags,
            self.normalization,
            self.max_tokens,
            self.windows_per_series,
            float(self.observation_dropout),
        )

    def _resolve(self, indexes: list[pd.Index]) -> SeriesSpec:
        """The spec of series with these indexes (in the pretraining unit after
        ``pretrain``)."""
        pretrained = None
        if getattr(self, "pretrained_net_", None) is not None:
            pretrained = (self.pretrained_time_kind_, self.pretrained_time_unit_)
        return SeriesSpec.resolve(self, indexes, pretrained)

    def _population(self, values: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
        """The population's per-channel standardisation: the pretraining panel's after
        ``pretrain``, else that of every series given."""
        if getattr(self, "pretrained_net_", None) is not None:
            return self.pretrained_channel_mean_, self.pretrained_channel_scale_
        return column_scaling(np.concatenate(values))

    def _calibrate(
        self,
        plan: WindowPlan,
        times: list[np.ndarray],
        values: list[np.ndarray],
        part: str,
        seed: int,
    ) -> LeadCalibration:
        """The lead-aware calibration of σ on ``net_``'s forecasts of the windows of
        ``part`` (the Normal's when ``plan`` holds nothing out)."""
        if plan.calibration_fraction <= 0:
            return LeadCalibration.identity(self.n_channels_)
        held_out = held_out_forecasts(
            self.net_, plan.windows(times, values, part, seed), self.n_channels_
        )
        return calibrate([held_out], self.n_channels_)

    # ------------------------------------------------------------------ sktime private API

    def _pretraining_panel(self, y: pd.DataFrame) -> Panel:
        """A pretraining panel on its own time axis and scaling (the pretrained ones when
        pretraining again), without touching the fitted state."""
        series = instances(y)
        warn_unobserved(y, "the pretraining panel")
        spec = self._resolve([frame.index for _, frame in series])
        raw = [frame.to_numpy(dtype=np.float64) for _, frame in series]
        mean, scale = self._population(raw)
        means, scales = series_scaling(raw, mean, scale)
        times, values = standardised(spec.axis, series, means, scales)
        return Panel(
            spec, mean, scale, times, values, population_in_series_units(mean, means, scales)
        )

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
        panel = self._pretraining_panel(y)
        net, calibration = pretrain_calibrated(
            panel,
            self.calibration_folds,
            seed,
            lambda w: train_network(self, panel.spec, w, y.shape[1], seed),
        )
        # Written together once training succeeded: an interrupted pretrain leaves none.
        self.pretrained_time_unit_ = panel.spec.axis.unit
        self.pretrained_time_kind_ = panel.spec.axis.kind
        self.pretrained_n_channels_ = y.shape[1]
        self.pretrained_columns_ = list(y.columns)
        self.pretrained_channel_mean_ = panel.mean
        self.pretrained_channel_scale_ = panel.scale
        self.pretrained_calibration_ = calibration
        self.pretrained_net_ = net
        return self

    def _pretrain_update(self, y, X=None, fh=None):
        """Continue training the pretrained network on a further panel (``max_epochs``),
        holding out series of it as ``pretrain`` does, and recalibrate σ on them.

        Writes ``pretrained_net_`` and ``pretrained_calibration_``."""
        if getattr(self, "pretrained_net_", None) is None:
            return self._pretrain(y, X, fh)
        y = in_order(y, self.pretrained_columns_, "The pretraining panel")
        self._check_params()
        seed = self._seed()

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

        net, self.pretrained_calibration_ = pretrain_calibrated(
            self._pretraining_panel(y), self.calibration_folds, seed, train
        )
        self.pretrained_net_ = net
        return self

    def _check_X_y(self, X=None, y=None, **kwargs):
        # Every y of fit, update and pretrain passes here before sktime checks it (its
        # messages for these inputs name neither the column nor the fix; see sktime_ready).
        return super()._check_X_y(X=X, y=sktime_ready(y), **kwargs)

    def _fit(self, y, X=None, fh=None):
        """Fit to ``y`` (a series, or a panel: one global model); see the class docstring.

        Writes ``net_``, ``time_unit_``, ``time_kind_``, ``context_span_``, ``horizon_span_``,
        ``seasonal_period_``, ``channel_mean_``, ``channel_scale_``, ``series_mean_``,
        ``series_scale_``, ``n_channels_``, ``ar_order_``, ``max_targets_``,
        ``calibration_fraction_``, ``calibration_`` and the context kept for prediction.
        After ``pretrain``, the pretrained network is kept.
        """
        self._check_params()
        self._feature_names = list(y.columns)
        pretrained = getattr(self, "pretrained_net_", None)
        if pretrained is not None:
            y = in_order(
                y, self.pretrained_columns_, "y (after pretrain)", by_position_if_renamed=True
            )
        series = instances(y)
        warn_unobserved(y, "y", pretrained=pretrained is not None)
        self.n_channels_ = y.shape[1]
        spec = self._resolve([frame.index for _, frame in series])
        self.time_kind_, self.time_unit_ = spec.axis.kind, spec.axis.unit
        self.context_span_, self.horizon_span_ = spec.axis.context_span, spec.axis.horizon_span
        self.seasonal_period_ = spec.axis.seasonal_period
        self.max_targets_, self._ar_lags = spec.max_targets, spec.lags
        self._index_names = list(y.index.names)
        self._fit_core(series, pretrained)
        return self

    def _fit_core(self, series, pretrained: LevyNeuralNet | None) -> None:
        seed, spec = self._seed(), self._spec
        raw = [frame.to_numpy(dtype=np.float64) for _, frame in series]
        self.channel_mean_, self.channel_scale_ = self._population(raw)
        self.series_mean_, self.series_scale_ = series_scaling(
            raw, self.channel_mean_, self.channel_scale_
        )
        times, values = standardised(spec.axis, series, self.series_mean_, self.series_scale_)
        self.calibration_fraction_ = calibration_share(
            self.calibration_fraction, times, values, pretrained is not None
        )
        plan = spec.plan(self.calibration_fraction_)
        if pretrained is None:
            windows = plan.windows(times, values, "train", seed)
            self.net_ = train_network(self, spec, windows, self.n_channels_, seed)
            self.calibration_ = self._calibrate(plan, times, values, "calibrate", seed)
        else:
            # Zero-shot: the calibration across subjects made by pretrain; a series
            # calibrated on its own (calibration_fraction > 0) only ever widens it.
            self.net_ = pretrained
            self.calibration_ = self.pretrained_calibration_
            if self.calibration_fraction_ > 0:
                own = self._calibrate(plan, times, values, "held_out", seed)
                self.calibration_ = self.calibration_.at_least(own)
        lags = self.net_.module_.lags
        self.ar_order_ = 0 if lags is None else int(lags.weight.shape[-1])
        self._series = dict(series)
        self._step = spec.axis.common_step([f.index for f in self._series.values()])

    def _update(self, y, X=None, update_params=True):
        """Extend every series' context with the new observations (no retraining).

        With ``refit_on_update=True`` and ``update_params=True`` the forecaster retrains on
        everything seen so far (a pretrained network is kept and only recalibrated).
        Writes the context kept for prediction (and a new series' row of ``series_mean_``
        and ``series_scale_``), or what ``fit`` writes when it retrains.
        """
        names = self._y_metadata["feature_names"]
        try:
            y = in_order(y, list(next(iter(self._series.values())).columns), "update's y")
        except ValueError:
            # sktime's update has already recorded this y's column names as the forecaster's
            # (its outputs' names): put back the known ones, so that a refused update leaves
            # the forecaster as it was.
            self._y_metadata["feature_names"] = self._feature_names
            raise
        self._feature_names = names
        for key, frame in instances(y):
            old = self._series.get(key)
            if old is not None:
                frame = pd.concat([old, frame])
                frame = frame[~frame.index.duplicated(keep="last")].sort_index()
            else:  # a series first seen here is standardised by its own history
                mean, scale = own_scaling(
                    frame.to_numpy(dtype=np.float64), self.channel_mean_, self.channel_scale_
                )
                self.series_mean_ = np.vstack([self.series_mean_, mean])
                self.series_scale_ = np.vstack([self.series_scale_, scale])
            self._series[key] = frame
        if update_params and self.refit_on_update:
            self._fit_core(list(self._series.items()), getattr(self, "pretrained_net_", None))
        else:
            self._step = self._spec.axis.common_step([f.index for f in self._series.values()])
        return self

    def _forecast_moments(
        self, fh: ForecastingHorizon, diagnostics: dict | None = None
    ) -> tuple[pd.Index, np.ndarray, np.ndarray, np.ndarray]:
        """Row index, mean, model variance and lead of the forecasts at ``fh``, channels in
        the network's order (see :func:`~levy_sklearn._series_forecasts.series_forecasts`)."""
        frames = list(self._series.values())
        indexes = self._spec.axis.forecast_indexes(
            fh,
            [f.index[-1] for f in frames],
            self.cutoff,
            self._step,
            getattr(frames[0].index, "tz", None),
        )
        return series_forecasts(
            self._spec,
            self._series,
            self.series_mean_,
            self.series_scale_,
            self.net_,
            self.calibration_,
            indexes,
            self._index_names,
            population_in_series_units(self.channel_mean_, self.series_mean_, self.series_scale_),
            diagnostics,
        )

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
        return super().predict_interval(fh=fh, X=X, coverage=as_floats(coverage))

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
        return super().predict_quantiles(fh=fh, X=X, alpha=as_floats(alpha))

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
