"""LevyForecaster: the sktime shell of the Lévy-attention forecaster.

Tags, parameters (their validation, ``set_params`` and ``clone`` keeping a pretraining) and
sktime's private methods, which hold the fitted state and hand the modules below it plain
values, specs and arrays, never the forecaster. The work lives below it (every module in
:doc:`/where_things_live`): the time axis in ``_time_axis``, the windows in
:mod:`levy_sklearn.windows`, training in ``_series_training``, forecasts in
``_series_forecasts``, the predictive distribution in :mod:`levy_sklearn.calibration`, the
public outputs beyond sktime's in ``_forecast_outputs``.
"""

from __future__ import annotations

import warnings
from functools import partial
from numbers import Integral, Real
from typing import ClassVar

import numpy as np
import pandas as pd
from sklearn.utils._param_validation import StrOptions
from sktime.forecasting.base import BaseForecaster

from ._covariates import (
    CovariateSpec,
    check_columns,
    check_known_ahead,
    split_covariates,
    with_plan,
)
from ._forecast_outputs import ForecastOutputs
from ._hyperparameters import LevyHyperparameters, NumberInterval, int_at_least, shared_docs
from ._normalisation import NORMALIZATIONS
from ._panel import in_key_order, in_order, instances, sktime_ready, warn_unobserved
from ._series_forecasts import FittedSeries, SeriesForecasts, series_forecasts
from ._series_training import (
    N_FOLDS,
    Panel,
    SeriesSpec,
    calendar_harmonics,
    calibrated_on,
    calibration_share,
    check_update,
    continue_network,
    extend_series,
    pretrain_calibrated,
    series_panel,
    train_network,
    training_batch_size,
    warn_far_from_population,
)
from ._time_axis import index_kind
from .calibration import at_least
from .cohorts import Cohort, read_series
from .training import LevyNeuralNet

__all__ = ["PRETRAINING_PARAMS", "RETUNABLE_PARAMS", "LevyForecaster"]

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
    "pretrained_covariates_",
]

#: Hyperparameters the pretrained state is built from: the network's shape, the tokens it
#: reads (context, horizon, normalisation, season, token cap, autoregression), the objective
#: its σ was trained on and the device its weights live on. Setting one resets the
#: forecaster, pretraining included, as sktime's ``set_params`` resets every estimator.
PRETRAINING_PARAMS = frozenset(
    {
        "context_length",
        "max_horizon",
        "normalization",
        "seasonal_period",
        "max_tokens",
        "ar_order",
        "level_gain",
        "known_ahead",
        "input_scaling",
        "d_model",
        "n_heads",
        "n_windowed_heads",
        "n_layers",
        "attention",
        "dropout",
        "loss",
        "device",
    }
)
#: Hyperparameters that steer a later training run (a further ``pretrain``, a fit without
#: pretraining), the zero-shot fit's own calibration, or the logs: setting them after
#: ``pretrain`` (or after loading a pretrained file) keeps the pretraining. Every
#: hyperparameter is in exactly one of the two sets.
RETUNABLE_PARAMS = frozenset(
    {
        "windows_per_series",
        "max_targets",
        "calibration_fraction",
        "calibration_folds",
        "observation_dropout",
        "refit_on_update",
        "lr",
        "max_epochs",
        "max_steps",
        "batch_size",
        "validation_fraction",
        "patience",
        "weight_decay",
        "random_state",
        "verbose",
    }
)


def _up_to_ends(frames: dict, series: list) -> list[pd.DataFrame]:
    """Each series' ``X`` frame up to the series' last time point: what its standardisation
    and roles are fitted on, so that no value after the cutoff changes them."""
    ends = {key: frame.index[-1] for key, frame in series}
    return [frame[frame.index <= ends[key]] for key, frame in frames.items()]


@shared_docs
class LevyForecaster(LevyHyperparameters, ForecastOutputs, BaseForecaster):
    r"""Probabilistic forecaster for irregular, multivariate series and panels (Lévy attention).

    Each observed cell of ``y`` is a token ``(time, channel, value)`` (``NaN``: not observed,
    never imputed); one forward pass gives the mean and the closed-form Lévy variance of
    every forecast, calibrated per channel and lead (``calibration_``). A panel trains one
    global model; ``pretrain(panel)`` then ``fit(series)`` forecasts a series never seen.
    Launched on several processes (``torchrun --nproc_per_node 2 script.py``), ``pretrain``
    trains data-parallel, each process on its own share of the panel's series (see
    :ref:`data-parallel-pretraining`).
    ``fh`` may hold absolute times, Timedeltas, or integer steps on a regular index.
    Exogenous ``X`` (covariates: doses, meals, weather, traits) are observations of channels
    of their own, never forecast; ``predict(fh, X=plan)`` forecasts under a plan (see
    :doc:`/user_guide/covariates`). The whole account,
    every parameter and attribute in full, is in the user guide:
    :doc:`/user_guide/how_the_forecaster_works` (:ref:`forecaster-parameters`).
    ``pretrain`` also reads a panel on disk or in Dask, partition by partition:
    ``pretrain(Cohort(...))`` (see :mod:`levy_sklearn.cohorts`).

    Parameters
    ----------
    context_length : "auto", float, int, str or pd.Timedelta, default="auto"
        Look-back of every window in time units (median spacings) or a span (``"3D"``);
        ``"auto"``: 36, or two seasonal periods and a step where ``max_tokens`` holds them.
    max_horizon : float, int, str or pd.Timedelta, default=12
        Span after each training cutoff whose observations are training targets; beyond it
        the variance is floored, growing as the held-out errors grew (a random walk's at most).
    normalization : {"last", "trend", "mean", "none"}, default="last"
        Per-window instance normalisation: remove each channel's last context observation,
        the context's line or its mean; ``"none"``: per-channel standardisation only.
    seasonal_period : "auto", float, int, str, pd.Timedelta, list or None, default="auto"
        Season removed per window (units or a span, ≥ 2 units; ``"auto"``: the index's, a
        day and a week below daily steps, see the guide; a list: several, the longest the
        context holds removed, longer ones reached as earlier cycles; ``None`` or 1: none);
        one no window can see warns with what to set.
    max_tokens : int, default=256
        At most this many context tokens of ``y`` per window (the latest), and as many of
        ``X`` (the known-ahead ones first, see the covariates guide).
    windows_per_series : int, default=512
        At most this many training windows per series (evenly spaced cutoffs, latest kept).
    max_targets : int or "auto", default="auto"
        At most this many target times per training window; ``"auto"``: 16 on irregularly
        spaced series, no cap on regular ones.
    calibration_fraction : float or "auto", default="auto"
        Share of each series' span held out to calibrate σ (split conformal, every level);
        ``"auto"``: a tenth where all series' tenths hold ≥ 1,000 values, else none. After
        ``pretrain``, any share > 0 calibrates on the whole (unseen) series, only widening σ.
    calibration_folds : int in [1, 5] or "auto", default="auto"
        ``pretrain`` calibrates σ on this many of five seeded folds of whole series, each
        forecast by a network trained without it; with more than one, a last network learns
        from every series. ``"auto"``: all 5 and the last network (six trainings). Where the
        fold networks' windows outgrow ``max_steps`` (their batch grows), the fold network
        with the most windows is the pretrained one and every fold network takes as many
        steps as it (five trainings, σ calibrated on networks trained alike); a larger panel
        never pretrains faster.
    observation_dropout : float, default=0.3
        Share of training windows thinned at random, and as many extra windows cut with a
        gap or hole, so that sparse histories get the larger σ they deserve.
    ar_order : int or "auto", default="auto"
        Order of a linear autoregression added to the mean (σ stays the Lévy layer's); "auto":
        13 on regular series, 0 else; capped (warning) at one lag per time unit of context.
        Lag 0 is the last observation, 0 under ``normalization="last"``: order 1 adds nothing.
        It reads ``y``'s channels only, never ``X``'s.
    level_gain : bool, default=False
        Multiply the output layer's mean and spread (in each window's units) by a gain
        read off the window's level and scale, per horizon (see
        :class:`~levy_sklearn.network.LevelGain`): windows are changes from their level over
        the history's step size, which cannot tell a level near 0 from one far from it;
        where noise and dynamics follow the level (a concentration), the gain lets σ
        shrink near 0 and grow far from it. The Lévy variance stays exact.
    known_ahead : None, "all" or list of column names, default=None
        Columns of ``X`` known ahead (plans, calendars, weather forecasts): their values
        after the cutoff (``predict``'s ``X``, else fit's or update's) are tokens of the
        forecast too, up to ``max_horizon``; a plan need only reach the last forecast time
        (training reads some windows' plans to an earlier end, see the covariates guide).
        The others count only up to the cutoff; a column constant within every series is a
        static trait (one token per window).
    input_scaling : {"standard", "target"}, default="standard"
        How ``X``'s time-varying columns enter each window. ``"standard"``: standardised
        over the fit's (or pretraining's) series, the same values in every window.
        ``"target"``: divided by their standard deviation only (0 stays 0) and, in each
        window, by the window's scale of ``y``, so that an input reads in the units of the
        change of ``y`` it causes (an infusion rate against the concentration it moves,
        whatever the subject's spread): needs a single ``y`` column. Static traits are
        standardised either way.
    refit_on_update : bool, default=False
        ``update(..., update_params=True)`` retrains on everything seen (recalibrates a
        pretrained network); otherwise ``update`` only extends the context.
    batch_size : int or "auto", default="auto"
        Windows per gradient step (8 times as many on data too large for ``max_steps``, see
        there); ``"auto"``: 16 where the time encoding carries the calendar (sub-daily
        series with a daily profile, whose windows would otherwise make few steps), 32
        otherwise. Prediction feeds the network larger batches, sized by memory.
    n_windowed_heads : int, default=2
        Output-layer heads with a learned soft look-back window ending at the forecast time
        (Lévy attention only: no effect with ``attention="softmax"``).
    <shared hyperparameters>

    Attributes
    ----------
    net_ : LevyNeuralNet
        The trained (or pretrained) skorch net.
    time_unit_, time_origin_ : pd.Timedelta or float, int or float
        The time unit (median spacing) of the windows, and the time zero they are measured
        from (nanoseconds for datetimes and timedeltas, an ordinal for periods).
    time_kind_ : str
        ``"datetime"``, ``"timedelta"``, ``"period[<freq>]"`` or ``"numeric"``.
    context_span_, horizon_span_ : float
        ``context_length`` and ``max_horizon`` in time units.
    seasonal_period_ : float or None
        The seasonal period in time units (``"auto"`` resolved).
    spec_ : SeriesSpec
        What fit resolved from the hyperparameters and the series, once: the time axis (the
        attributes above read it), ``max_targets_``, the autoregression's lags and the
        window hyperparameters.
    channel_mean_, channel_scale_ : ndarray of shape (n_channels,)
        The population's per-channel standardisation (the pretraining panel's after
        ``pretrain``, then also for channels with under 10 observations of their own).
    series_mean_, series_scale_ : ndarray of shape (n_series, n_channels)
        Each series' own standardisation (rows in the order first seen).
    n_channels_ : int
        Number of columns of ``y``.
    ar_order_ : int
        Lags of the network's autoregression (0: none).
    covariates_ : CovariateSpec
        ``X``'s columns, which are known ahead, which are static, and their standardisation
        (only when fitted with ``X``; the pretraining's after ``pretrain`` with ``X``).
    max_targets_ : int or None
        ``max_targets`` resolved for the last fit's series (``None``: no cap).
    calibration_fraction_ : float
        ``calibration_fraction`` resolved (0: no calibration).
    calibration_ : LeadCalibration
        The calibration every probabilistic output reads.
    pretrained_net_, pretrained_time_unit_, pretrained_time_kind_, pretrained_n_channels_
        Written by ``pretrain`` and kept by later ``fit`` calls.
    pretrained_calibration_ : LeadCalibration
        The calibration on series held out of pretraining.
    pretrained_covariates_ : CovariateSpec
        The pretraining panel's ``X`` columns, roles and standardisation (``pretrain`` with
        ``X`` only), which every later ``fit`` reads.
    pretrained_channel_mean_, pretrained_channel_scale_ : ndarray of shape (n_channels,)
        The pretraining panel's per-channel standardisation.
    pretrained_columns_ : list
        The pretraining panel's columns, which later ``fit`` and ``update`` match by name (in
        any order); columns sharing no name are taken by position, with a warning.

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
        "capability:exogenous": True,
        # X may sit on its own time points (doses at any time): checked by _covariates.
        "X-y-must-have-same-index": False,
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
    # sktime's future default, adopted now (silencing its FutureWarning): the history lives
    # in ``_series`` and ``_update`` is our own, so sktime's copy in ``_y``/``_X`` is unused.
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
        "calibration_fraction": [NumberInterval(Real, 0, 1, closed="left"), StrOptions({"auto"})],
        "calibration_folds": [
            NumberInterval(Integral, 1, N_FOLDS, closed="both"),
            StrOptions({"auto"}),
        ],
        "refit_on_update": ["boolean"],
        "ar_order": [*int_at_least(0), StrOptions({"auto"})],
        "batch_size": [*int_at_least(), StrOptions({"auto"})],
        "level_gain": ["boolean"],
        # Checked against X's columns at fit (known_columns).
        "known_ahead": [None, StrOptions({"all"}), list, tuple],
        "input_scaling": [StrOptions({"standard", "target"})],
    }

    def __init__(
        self,
        *,
        context_length: float | str | pd.Timedelta = "auto",
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
        level_gain: bool = False,
        known_ahead: str | list | None = None,
        input_scaling: str = "standard",
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
        batch_size: int | str = "auto",
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
        self.level_gain = level_gain
        self.known_ahead = known_ahead
        self.input_scaling = input_scaling
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

    # ------------------------------------------------------------------ parameters

    def set_params(self, **params):
        """Set the parameters; those that do not shape the network keep the pretraining.

        sktime's ``set_params`` resets the estimator to its post-``__init__`` state. Where
        every parameter set is retunable (%s), the pretrained network, its
        standardisation and calibration survive the reset (the forecaster is
        ``"pretrained"``, as a clone of it is); a parameter the pretrained state is built
        from (%s) discards them, with a warning, and a later ``fit`` trains on its series
        alone.

        Parameters
        ----------
        **params
            Parameter names and values, as ``get_params`` lists them.

        Returns
        -------
        self

        Examples
        --------
        >>> import warnings
        >>> from levy_sklearn.datasets import make_irregular_vitals
        >>> from levy_sklearn.forecaster import LevyForecaster
        >>> panel = make_irregular_vitals(6, random_state=0)
        >>> with warnings.catch_warnings():
        ...     warnings.simplefilter("ignore")
        ...     forecaster = LevyForecaster(max_epochs=1, d_model=8, n_heads=2).pretrain(panel)
        >>> forecaster.set_params(calibration_fraction=0.2, verbose=0).state
        'pretrained'
        >>> with warnings.catch_warnings(record=True) as caught:
        ...     warnings.simplefilter("always")
        ...     _ = forecaster.set_params(context_length=24)
        >>> str(caught[-1].message)[:32], forecaster.state
        ('set_params reset this forecaster', 'new')
        """
        pretrained = getattr(self, "pretrained_net_", None) is not None
        kept = None
        if pretrained and not set(params) - RETUNABLE_PARAMS:
            names = getattr(self, "_pretrained_attrs", None) or self.get_tag(
                "pretrain:fitted_params"
            )
            kept = {name: getattr(self, name) for name in names if hasattr(self, name)}
        super().set_params(**params)
        if kept is not None:
            # What sktime's clone keeps of a pretrained forecaster (its _PretrainedCloner).
            self.__dict__.update(kept)
            self._pretrained_attrs = list(kept)
            self._state = "pretrained"
        elif pretrained:
            warnings.warn(
                "set_params reset this forecaster (sktime resets every estimator): its "
                "pretrained network and calibration are gone, and fit will train on the "
                "series it is given alone. Set the parameters before pretrain, or call "
                "pretrain again; only those in levy_sklearn.forecaster."
                "RETUNABLE_PARAMS keep the pretraining.",
                UserWarning,
                stacklevel=2,
            )
        return self

    set_params.__doc__ %= tuple(
        ", ".join(f"``{name}``" for name in sorted(names))
        for names in (RETUNABLE_PARAMS, PRETRAINING_PARAMS)
    )

    def __sklearn_clone__(self):
        """``sklearn.base.clone(forecaster)``: sktime's ``clone()``, which keeps a
        pretrained network and its calibration (scikit-learn's rebuilds the forecaster from
        ``get_params`` alone).

        sktime's wrappers that clone with scikit-learn (``ConformalIntervals``,
        ``ResidualBoostingForecaster``) then keep the pretrained network: a clone built from
        ``get_params`` alone would fit from scratch on one series, and ``ConformalIntervals``
        would centre the zero-shot model's residual spread on that other forecast.

        Returns
        -------
        LevyForecaster
            Unfitted, with this one's parameters (and pretraining, if any).
        """
        return self.clone()

    # ------------------------------------------------------------------ resolved at fit

    # spec_ holds what fit resolved; the public attributes below read it.

    @property
    def time_kind_(self) -> str:
        """The fitted index kind (``spec_.axis.kind``; see the class docstring)."""
        return self.spec_.axis.kind

    @property
    def time_unit_(self) -> pd.Timedelta | float:
        """The fitted time unit (``spec_.axis.unit``)."""
        return self.spec_.axis.unit

    @property
    def time_origin_(self) -> int | float:
        """The fitted time zero (``spec_.axis.origin``)."""
        return self.spec_.axis.origin

    @property
    def context_span_(self) -> float:
        """``context_length`` in time units (``spec_.axis.context_span``)."""
        return self.spec_.axis.context_span

    @property
    def horizon_span_(self) -> float:
        """``max_horizon`` in time units (``spec_.axis.horizon_span``)."""
        return self.spec_.axis.horizon_span

    @property
    def seasonal_period_(self) -> float | None:
        """The seasonal period in time units (``spec_.axis.seasonal_period``)."""
        return self.spec_.axis.seasonal_period

    @property
    def max_targets_(self) -> int | None:
        """``max_targets`` resolved (``spec_.max_targets``)."""
        return self.spec_.max_targets

    def _resolve(self, series: list[tuple]) -> SeriesSpec:
        """The spec of ``series`` (the pretraining unit after ``pretrain``)."""
        fitted = getattr(self, "pretrained_net_", None) is not None
        pretrained = (self.pretrained_time_kind_, self.pretrained_time_unit_) if fitted else None
        return SeriesSpec.resolve(
            series,
            pretrained,
            context_length=self.context_length,
            max_horizon=self.max_horizon,
            seasonal_period=self.seasonal_period,
            max_tokens=self.max_tokens,
            max_targets=self.max_targets,
            ar_order=self.ar_order,
            normalization=self.normalization,
            windows_per_series=self.windows_per_series,
            observation_dropout=self.observation_dropout,
        )

    def _trainer(self, panel: Panel, n_channels: int, seed: int, n_inputs: int = 0):
        """``windows -> network`` trained afresh under these hyperparameters on windows of
        ``panel`` (see :func:`~levy_sklearn._series_training.train_network`; its series
        choose the calendar's harmonics): ``n_channels`` forecast channels (``y``'s) and
        ``n_inputs`` input channels after them (``X``'s); and ``n_windows -> budget``, the
        budget of such a training (see :meth:`_budget`)."""
        network_spec = partial(
            self._network_spec,
            n_channels + n_inputs,
            n_channels,
            n_inputs=n_inputs,
            level_gain=self.level_gain,
        )
        harmonics = calendar_harmonics(panel.spec.axis, panel.times, panel.values)
        batch_size = training_batch_size(self.batch_size, harmonics)
        training_spec = partial(self._training_spec, seed, batch_size=batch_size)
        train = partial(
            train_network,
            panel.spec,
            seed=seed,
            network_spec=network_spec,
            training_spec=training_spec,
            harmonics=harmonics,
        )
        return train, partial(self._budget, batch_size=batch_size)

    def _pretrained_scaling(self) -> tuple[np.ndarray, np.ndarray] | None:
        """The pretraining panel's channel standardisation after ``pretrain``, else ``None``."""
        if getattr(self, "pretrained_net_", None) is None:
            return None
        return self.pretrained_channel_mean_, self.pretrained_channel_scale_

    # ------------------------------------------------------------------ sktime private API

    def _pretraining_panel(
        self, y: pd.DataFrame, X: pd.DataFrame | None
    ) -> tuple[Panel, CovariateSpec | None, list]:
        """A pretraining panel on its axis and scaling (the pretrained ones when again),
        with its covariates, their spec (fitted on the panel on a first pretrain), and its
        columns. ``y`` is a panel in memory or a :class:`~levy_sklearn.cohorts.Cohort`,
        read partition by partition into the same series."""
        if isinstance(y, Cohort):
            order = getattr(self, "pretrained_columns_", None)
            series, columns = read_series(y, "the pretraining panel", order)
        else:
            series, columns = in_key_order(instances(y)), list(y.columns)
            warn_unobserved(y, "the pretraining panel")
        spec = self._resolve(series)
        panel = series_panel(spec, series, self._pretrained_scaling(), alike=True)
        covariates = self._check_X_role(X, "pretrain", "pretrained_covariates_")
        if X is None:
            return panel, None, columns
        frames = self._split_X(X, series, covariates, "pretrain's X")
        if covariates is None:
            covariates = self._fit_covariates(frames, series, columns)
        inputs = covariates.inputs(spec.axis, [frames.get(key) for key, _ in series])
        return panel._replace(inputs=inputs), covariates, columns

    # ------------------------------------------------------------------ covariates

    def _fit_covariates(self, frames: dict, series: list, columns: list) -> CovariateSpec:
        """The spec of ``X``'s ``frames`` (by series key) of a first fit or pretrain of
        ``series`` (``y``'s ``columns``), under ``known_ahead`` and ``input_scaling``."""
        target_units = self.input_scaling == "target"
        if target_units and len(columns) != 1:
            raise ValueError(
                f"input_scaling='target' reads X in the units of y's one column, but y has "
                f"{len(columns)} columns; forecast one column at a time, or pass "
                "input_scaling='standard'."
            )
        return CovariateSpec.fit(_up_to_ends(frames, series), self.known_ahead, target_units)

    def _check_X_role(self, X, what: str, attribute: str) -> CovariateSpec | None:
        """The covariates the fitted (or pretrained) network reads (its ``attribute``),
        refusing ``X`` where the network reads none, and no ``X`` where it reads some;
        ``None`` on a first fit or pretrain."""
        first = getattr(self, "pretrained_net_", None) is None
        if attribute == "pretrained_covariates_" and first:
            if X is None and isinstance(self.known_ahead, list | tuple) and self.known_ahead:
                raise ValueError(
                    f"known_ahead={self.known_ahead!r} names columns of X, but {what} got no "
                    "X; pass X, or set known_ahead=None."
                )
            return None
        covariates = getattr(self, attribute, None)
        if X is not None and covariates is None:
            raise ValueError(
                f"{what} got X, but the forecaster's network was trained without X; "
                "fit (or pretrain) with X to use covariates, or leave X out."
            )
        if X is None and covariates is not None and what in ("fit", "pretrain"):
            raise ValueError(
                f"{what} got no X, but the pretrained network reads X's columns "
                f"{covariates.columns}; pass X with them."
            )
        return covariates

    def _split_X(
        self, X: pd.DataFrame, series: list, covariates: CovariateSpec | None, what: str
    ) -> dict:
        """``X``'s frames by series key (columns in ``covariates``' order when known)."""
        if covariates is not None:
            X = check_columns(X, covariates.columns, what)
        frame = series[0][1]
        kind, tz = index_kind(frame.index), getattr(frame.index, "tz", None)
        return split_covariates(X, [key for key, _ in series], kind, tz, what)

    def _update_covariates(self, X, y) -> dict:
        """update's ``X`` split by series (``y``'s new series included), checked; ``{}``
        without ``X``."""
        covariates = self._check_X_role(X, "update", "covariates_")
        if X is None:
            return {}
        series = list(self._series.items())
        if y is not None:
            series += [item for item in instances(y) if item[0] not in self._series]
        return self._split_X(X, series, covariates, "update's X")

    def _inputs(self, keys: list, plans: dict | None = None) -> list | None:
        """The windows' inputs of the fitted series ``keys`` (``None`` without ``X``), each
        with its plan after its last time point where ``plans`` (predict's ``X``) has one."""
        covariates = getattr(self, "covariates_", None)
        if covariates is None:
            return None
        frames = [self._covariates.get(key) for key in keys]
        if plans is not None:
            frames = [
                with_plan(frame, plans.get(key), self._series[key].index[-1])
                for key, frame in zip(keys, frames, strict=True)
            ]
        return covariates.inputs(self.spec_.axis, frames)

    def _forecast_inputs(self, fh, X) -> list | None:
        """The inputs of every fitted series for a forecast at ``fh`` under predict's ``X``,
        a known-ahead column without a value over the horizon refused."""
        covariates = self._check_X_role(X, "predict", "covariates_")
        if covariates is None:
            return None
        keys = list(self._series)
        plans = (
            None
            if X is None
            else self._split_X(X, list(self._series.items()), covariates, "predict's X")
        )
        inputs = self._inputs(keys, plans)
        axis, frames = self.spec_.axis, list(self._series.values())
        ends = [frame.index[-1] for frame in frames]
        tz = getattr(frames[0].index, "tz", None)
        indexes = axis.forecast_indexes(fh, ends, self.cutoff, self._step, tz)
        firsts = [next(iter(ix[ix > end]), None) for ix, end in zip(indexes, ends, strict=True)]
        check_known_ahead(
            covariates,
            inputs,
            keys,
            [axis.times(frame.index[-1:])[0] for frame in frames],
            firsts,
            axis.horizon_span,
        )
        return inputs

    def _pretrain(self, y, X=None, fh=None):
        """Train one global network on the series of the panel ``y`` and calibrate σ on
        series held out of training (see ``calibration_folds``).

        Launched on several processes (``torchrun --nproc_per_node 2 script.py``,
        ``accelerate launch --num_processes 2 script.py``, or a torch process group the
        script started), each given the whole panel, the network trains data-parallel: each
        process on its own share of the series, gradients averaged every step, σ calibrated
        on every process's held-out forecasts; every process ends with the same pretrained
        forecaster (see :mod:`levy_sklearn.training.distributed`).

        Writes ``pretrained_net_``, ``pretrained_time_unit_``, ``pretrained_time_kind_``,
        ``pretrained_n_channels_``, ``pretrained_columns_``, ``pretrained_channel_mean_``,
        ``pretrained_channel_scale_``, ``pretrained_calibration_`` and, with ``X``,
        ``pretrained_covariates_``.
        """
        self._check_params()
        for name in _PRETRAINED:  # pretrain after fit starts afresh
            self.__dict__.pop(name, None)
        seed = self._seed()
        panel, covariates, columns = self._pretraining_panel(y, X)
        n_inputs = 0 if covariates is None else len(covariates.columns)
        net, calibration = pretrain_calibrated(
            panel,
            self.calibration_folds,
            seed,
            *self._trainer(panel, len(columns), seed, n_inputs),
        )
        # Written together once training succeeded: an interrupted pretrain leaves none.
        self.pretrained_time_unit_ = panel.spec.axis.unit
        self.pretrained_time_kind_ = panel.spec.axis.kind
        self.pretrained_n_channels_ = len(columns)
        self.pretrained_columns_ = columns
        self.pretrained_channel_mean_ = panel.mean
        self.pretrained_channel_scale_ = panel.scale
        self.pretrained_calibration_ = calibration
        if covariates is not None:
            self.pretrained_covariates_ = covariates
        self.pretrained_net_ = net
        return self

    def _pretrain_update(self, y, X=None, fh=None):
        """Continue training the pretrained network on a further panel (``max_epochs``),
        holding out series of it as ``pretrain`` does, and recalibrate σ on them.

        Writes ``pretrained_net_`` and ``pretrained_calibration_``."""
        if getattr(self, "pretrained_net_", None) is None:
            return self._pretrain(y, X, fh)
        if not isinstance(y, Cohort):  # a cohort's partitions are matched as they are read
            y = in_order(y, self.pretrained_columns_, "The pretraining panel")
        self._check_params()
        seed = self._seed()
        # The batch of the pretraining's own "auto": its network carries the calendar's
        # harmonics where it chose any.
        batch_size = training_batch_size(
            self.batch_size, len(self.pretrained_net_.module_.calendar_periods)
        )
        budget = partial(self._budget, batch_size=batch_size)
        net, self.pretrained_calibration_ = pretrain_calibrated(
            self._pretraining_panel(y, X)[0],
            self.calibration_folds,
            seed,
            partial(
                continue_network,
                self.pretrained_net_,
                seed=seed,
                budget=budget,
                verbose=self.verbose,
            ),
            budget,
        )
        self.pretrained_net_ = net
        return self

    def _check_X_y(self, X=None, y=None, **kwargs):
        if isinstance(y, Cohort):
            return self._check_cohort(X, y, **kwargs)
        if y is not None and self.is_fitted:  # an update: what sktime records, to restore
            self._y_before = self._y_metadata, self._y_mtype_last_seen
        # Every y passes here before sktime's checks, whose messages name no fix (sktime_ready)
        return super()._check_X_y(X=X, y=sktime_ready(y), **kwargs)

    def _check_cohort(self, X, y: Cohort, **kwargs):
        """A cohort passes sktime's input checks untouched, to ``_pretrain``, which reads it
        partition by partition (sktime's checks take panels in memory only). sktime's
        ``pretrain`` alone asks for inner mtypes here (``y_inner_mtype``); ``fit`` and
        ``update`` take series in memory."""
        if "y_inner_mtype" not in kwargs:
            raise TypeError(
                "A Cohort is read by pretrain only; fit, update and predict take series in "
                "memory: pass a subject's frame, e.g. frame.set_index([subject, time])."
            )
        if X is not None:
            raise TypeError(
                "pretrain reads a Cohort without X; pretrain on a panel in memory to use "
                "covariates."
            )
        return None, y

    def _update_y_X(self, y, X=None, **kwargs):
        # sktime's update records y and moves the cutoff here, before _update: refuse what
        # _update cannot take first (a refused update leaves the forecaster as it was).
        latest = self._cutoff if self.is_fitted else None
        before = self.__dict__.pop("_y_before", None)  # taken by _check_X_y for this update
        if self.is_fitted and (y is not None or X is not None):
            try:
                if y is not None:
                    check_update(y, self._series, self.time_kind_)
                self._update_covariates(X, y)
            except (TypeError, ValueError):
                self._y_metadata, self._y_mtype_last_seen = before
                raise
        super()._update_y_X(y, X, **kwargs)
        if latest is not None and len(latest) and self._cutoff[0] < latest[0]:
            self._set_cutoff(latest)  # a row filed late is merged: the cutoff stays the latest

    def _fit(self, y, X=None, fh=None):
        """Fit to ``y`` (a series, or a panel: one global model); see the class docstring.

        Writes ``net_``, ``spec_`` (which ``time_unit_``, ``time_origin_``, ``time_kind_``,
        ``context_span_``, ``horizon_span_``, ``seasonal_period_`` and ``max_targets_``
        read), ``channel_mean_``, ``channel_scale_``, ``series_mean_``, ``series_scale_``,
        ``n_channels_``, ``ar_order_``, ``calibration_fraction_``, ``calibration_``, with ``X``
        ``covariates_``, and the context (and covariates) kept for prediction.
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
        covariates = self._check_X_role(X, "fit", "pretrained_covariates_")
        self.n_channels_ = y.shape[1]
        self.spec_ = self._resolve(series)
        self._index_names = list(y.index.names)
        for name in ("covariates_", "_covariates"):  # a refit without X reads none
            self.__dict__.pop(name, None)
        if X is not None:
            self._covariates = self._split_X(X, series, covariates, "X")
            self.covariates_ = covariates or self._fit_covariates(
                self._covariates, series, list(y.columns)
            )
        self._fit_core(series, pretrained)
        return self

    def _fit_core(self, series, pretrained: LevyNeuralNet | None) -> None:
        seed, spec = self._seed(), self.spec_
        panel = series_panel(spec, series, self._pretrained_scaling(), pretrained is not None)
        panel = panel._replace(inputs=self._inputs([key for key, _ in series]))
        covariates = getattr(self, "covariates_", None)
        n_inputs = 0 if covariates is None else len(covariates.columns)
        self.channel_mean_, self.channel_scale_ = panel.mean, panel.scale
        self.series_mean_, self.series_scale_ = panel.means, panel.scales
        self.calibration_fraction_ = calibration_share(
            self.calibration_fraction, panel.times, panel.values, pretrained is not None
        )
        plan = spec.plan(self.calibration_fraction_)
        ranked = panel.in_key_order([key for key, _ in series])  # trained in the keys' order
        if pretrained is None:
            windows = plan.source(ranked.times, ranked.values, "train", seed, inputs=ranked.inputs)
            self.net_ = self._trainer(ranked, self.n_channels_, seed, n_inputs)[0](windows)
            self.calibration_ = calibrated_on(self.net_, plan, ranked, "calibrate", seed)
        else:
            # Zero-shot: pretrain's calibration across subjects; a series' own only widens it.
            self.net_, self.calibration_ = pretrained, self.pretrained_calibration_
            warn_far_from_population(panel, self.pretrained_columns_)
            if self.calibration_fraction_ > 0:
                own = calibrated_on(self.net_, plan, ranked, "held_out", seed, anchored=True)
                self.calibration_ = at_least(self.calibration_, own)
        lags = self.net_.module_.lags
        self.ar_order_ = 0 if lags is None else int(lags.weight.shape[-1])
        self._series = dict(series)
        self._step = spec.axis.common_step([f.index for f in self._series.values()])

    def _update(self, y, X=None, update_params=True):
        """Extend every series' context with the new observations (no retraining); with
        ``refit_on_update=True`` and ``update_params=True``, retrain on everything seen so far (a
        pretrained network is kept, only recalibrated). Writes the context kept for prediction (a
        new series' row of ``series_mean_``, ``series_scale_``), or what ``fit`` writes."""
        self._feature_names = self._y_metadata["feature_names"]
        self.series_mean_, self.series_scale_ = extend_series(
            self._series,
            y,
            (self.series_mean_, self.series_scale_),
            (self.channel_mean_, self.channel_scale_),
            getattr(self, "pretrained_net_", None) is not None,
        )
        if X is not None:
            for key, frame in self._update_covariates(X, y).items():
                old = self._covariates.get(key)
                if old is not None:
                    frame = pd.concat([old, frame])
                    frame = frame[~frame.index.duplicated(keep="last")].sort_index()
                self._covariates[key] = frame
        if update_params and self.refit_on_update:
            self._fit_core(list(self._series.items()), getattr(self, "pretrained_net_", None))
        else:
            self._step = self.spec_.axis.common_step([f.index for f in self._series.values()])
        return self

    def _update_predict_single(self, y, fh, X=None, update_params=True):
        """Update with ``y``, then predict at ``fh``: sktime's default calls the public
        ``update`` with the inner DataFrame, which makes every later forecast of a Series a
        DataFrame; the private steps keep the output type (the cutoff has already moved)."""
        self._update(y, X, update_params=update_params)
        return self._predict(fh, X)

    def _predict(self, fh, X=None):
        """Predictive means at ``fh`` (absolute timestamps, Timedeltas or integer steps)."""
        rows, mean, *_ = self._moments(fh, X=X)
        return pd.DataFrame(mean, index=rows, columns=self._get_columns("predict"))

    def _predict_var(self, fh, X=None, cov=False):
        """Predictive variances: the model's times the calibrated (``calibration_``) factor."""
        if cov:
            raise NotImplementedError(
                "LevyForecaster returns marginal variances only; call predict_var(cov=False)."
            )
        rows, _, var, *_ = self._moments(fh, X=X)
        return pd.DataFrame(var, index=rows, columns=self._get_columns("predict_var"))

    def _moments(self, fh, diagnostics: dict | None = None, X=None) -> SeriesForecasts:
        """Every forecast at ``fh`` in fit's column order, calibrated (``series_forecasts``),
        under the plan of ``X`` (see :meth:`_forecast_inputs`)."""
        inputs = self._forecast_inputs(fh, X)
        fitted = FittedSeries(
            self._series,
            self.channel_mean_,
            self.series_mean_,
            self.series_scale_,
            self._step,
            self._index_names,
            list(self._get_columns("predict")),
            anchored=getattr(self, "pretrained_net_", None) is not None,
            inputs=inputs,
        )
        return series_forecasts(
            self.spec_, fitted, self.net_, self.calibration_, fh, self.cutoff, diagnostics
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
        rows, mean, var, *_ = self._moments(fh, X=X)
        columns = self._get_columns("predict")
        return Normal(mu=mean, sigma=np.sqrt(var), index=rows, columns=columns)

    def _predict_interval(self, fh, X, coverage):
        """Central intervals ``mean ± q(coverage)·σ`` with ``q`` the calibrated quantile of
        the σ-normalised error for the forecast's channel and lead (the Normal's without
        calibration)."""
        levels = [(c, side) for c in coverage for side in (-1, 1)]  # (variable, coverage, side)
        rows, values = self._calibrated_quantiles(fh, levels, X)
        columns = self._get_columns("predict_interval", coverage=coverage)
        return pd.DataFrame(values, index=rows, columns=columns)

    def _predict_quantiles(self, fh, X, alpha):
        """Quantiles ``mean ± q(|2α − 1|)·σ`` of the calibrated distribution (symmetric about
        the mean; see :meth:`_predict_interval`)."""
        rows, values = self._calibrated_quantiles(
            fh, [(abs(2 * a - 1), np.sign(a - 0.5)) for a in alpha], X
        )
        columns = self._get_columns("predict_quantiles", alpha=alpha)
        return pd.DataFrame(values, index=rows, columns=columns)

    def _calibrated_quantiles(self, fh, levels: list[tuple[float, float]], X=None):
        """Rows and ``mean + side·q(coverage)·σ`` for every ``(coverage, side)`` of
        ``levels``, as ``(n_rows, n_channels · len(levels))`` (channel-major, like sktime's
        interval and quantile columns)."""
        rows, mean, _, sd, lead, group, unseen = self._moments(fh, X=X)
        q = self.calibration_.quantile
        values = [mean + side * sd * q(c, group, lead, unseen) for c, side in levels]
        return rows, np.stack(values, axis=2).reshape(len(rows), -1)

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
                # sktime's scenarios with X forecast under their X: every column known ahead.
                "known_ahead": "all",
            },
        ]
