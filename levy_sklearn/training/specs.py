"""What a front-end resolves, once per fit, for the net: the network and how it trains."""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["RECIPES", "NetworkSpec", "TrainingSpec"]

#: Training recipes (``recipe`` of :class:`TrainingSpec`), each tuned for its inputs.
#: ``"rows"`` (tables, :class:`~levy_sklearn.regressor.LevyAttentionRegressor`): the output
#: heads start at rates spread over three decades, and the log-scale scalars of the Lévy
#: layers train at 10 times ``lr``. ``"windows"`` (series windows,
#: :class:`~levy_sklearn.forecaster.LevyForecaster`): every head starts at rate 1, one
#: learning rate for all parameters. In both, an autoregression (``n_lags > 0``) learns at
#: ``lags_lr`` times ``lr``.
RECIPES = ("rows", "windows")


@dataclass(frozen=True)
class NetworkSpec:
    """The :class:`~levy_sklearn.network.LevyNet` a fit builds, resolved once by the
    front-end (its hyperparameters with every ``"auto"`` decided for the data).

    Parameters
    ----------
    n_channels, n_targets : int
        Observation channels and query channels.
    d_model, n_heads, n_windowed_heads, n_layers : int
        Size of the network.
    attention : {"levy", "softmax"}
        Lévy attention or the softmax twin.
    dropout : float
        Dropout in the residual branches.
    bandwidth, lookback : float, default=1.0, 4.0
        Initial mollifier bandwidth and look-back of the Lévy heads.
    positional_keys : bool, default=False
    token_dropout : float, default=0.0
        Share of training rows whose observed tokens are thinned at random (the front-ends'
        ``observation_dropout``).
    noise_head : bool, default=False
    value_embedding : {"linear", "periodic"}, default="linear"
    n_lags, n_lag_horizons : int, default=0, 1
        Order and horizons of the linear autoregression added to the mean (``0`` lags:
        none). See :class:`~levy_sklearn.network.LevyNet` for each.
    seasonal_lags, calendar_periods : list of float, default=[]
        Seasonal cycles the autoregression reads, and calendar periods in the time
        encoding (see :class:`~levy_sklearn.network.LevyNet`).
    calendar_harmonics : int, default=1
        Harmonics of each calendar phase in the time encoding.
    n_inputs : int, default=0
        The last ``n_inputs`` channels are inputs (covariates), which the autoregression
        does not read (see :class:`~levy_sklearn.network.LevyNet`).
    level_gain : bool, default=False
        A :class:`~levy_sklearn.network.LevelGain` of the output layer read off each
        window's level (see :class:`~levy_sklearn.network.LevyNet`).

    Examples
    --------
    >>> from levy_sklearn.training import NetworkSpec
    >>> spec = NetworkSpec(n_channels=3, n_targets=1, d_model=8, n_heads=2,
    ...                    n_windowed_heads=0, n_layers=0, attention="levy", dropout=0.0)
    >>> spec.token_dropout, spec.n_lags  # the defaults: no thinning, no autoregression
    (0.0, 0)
    """

    n_channels: int
    n_targets: int
    d_model: int
    n_heads: int
    n_windowed_heads: int
    n_layers: int
    attention: str
    dropout: float
    bandwidth: float = 1.0
    lookback: float = 4.0
    positional_keys: bool = False
    token_dropout: float = 0.0
    noise_head: bool = False
    value_embedding: str = "linear"
    n_lags: int = 0
    n_lag_horizons: int = 1
    # Lists, as a model file's JSON holds them (a spec is saved as its fields).
    seasonal_lags: list[float] = field(default_factory=list)
    calendar_periods: list[float] = field(default_factory=list)
    calendar_harmonics: int = 1
    n_inputs: int = 0
    level_gain: bool = False


@dataclass(frozen=True)
class TrainingSpec:
    """How a fit trains its network, resolved once by the front-end.

    Parameters
    ----------
    loss : {"crps", "nll", "beta_nll", "mse"}
        Training objective (see :class:`GaussianScore`).
    lr, weight_decay : float
        AdamW learning rate (cosine-annealed over the epochs) and weight decay.
    epochs : int
        Passes over the data (``max_epochs`` within ``max_steps``, see
        :func:`training_budget`).
    batch_size : int
        Rows per step.
    validation_fraction : float
        Share held out (seeded) for early stopping; ``0`` trains on every row.
    patience : int or None
        Epochs without improvement before stopping; ``None`` never stops early.
    device : str
        Torch device.
    seed : int or None
        Seeds the validation split (the rest is seeded by :func:`fit_levy_net`).
    verbose : int
        ``0``: silent. ``> 0``: a progress bar over the whole fit with the time left on
        ``stderr`` (see :class:`FitProgressBar`; plain lines where ``stderr`` is not a
        terminal) and skorch's per-epoch table on ``stdout``.
    recipe : {"rows", "windows"}, default="windows"
        The training recipe (see :data:`RECIPES`).
    lags_lr : float, default=1.0
        The autoregression's weights learn at this multiple of ``lr``.
    rows : int or None, default=None
        Rows each epoch draws (see :func:`epoch_loader`); ``None``: every row.

    Examples
    --------
    >>> from levy_sklearn.training import TrainingSpec
    >>> spec = TrainingSpec(loss="crps", lr=1e-2, weight_decay=0.0, epochs=20, batch_size=64,
    ...                     validation_fraction=0.1, patience=3, device="cpu", seed=0,
    ...                     verbose=0)
    >>> spec.recipe, spec.lags_lr
    ('windows', 1.0)
    """

    loss: str
    lr: float
    weight_decay: float
    epochs: int
    batch_size: int
    validation_fraction: float
    patience: int | None
    device: str
    seed: int | None
    verbose: int
    recipe: str = "windows"
    lags_lr: float = 1.0
    rows: int | None = None
