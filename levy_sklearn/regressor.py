"""LevyAttentionRegressor: a scikit-learn probabilistic regressor built on Lévy attention.

Each row of ``X`` becomes a set of observation tokens, one per observed (non-``NaN``) feature
(channel = column, optional per-column times), and :class:`~levy_sklearn.network.LevyNet`
predicts a Gaussian mean and standard deviation for every target in one deterministic forward
pass. The skorch layer in :mod:`levy_sklearn.training` trains it.
"""

from __future__ import annotations

import math
import numbers
import warnings
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any, ClassVar

import numpy as np
from numpy.typing import ArrayLike, NDArray
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.utils import Bunch, assert_all_finite
from sklearn.utils._param_validation import StrOptions
from sklearn.utils.validation import (
    _check_sample_weight,
    check_array,
    check_is_fitted,
    validate_data,
)

from ._hyperparameters import LevyHyperparameters, int_at_least, shared_docs, torch_seed
from .conformal import ConformalIntervals, GaussianIntervals, Intervals
from .network import VALUE_EMBEDDINGS
from .tokens import tokens_from_rows
from .training import (
    SAMPLE_WEIGHT,
    LevyNeuralNet,
    continue_levy_net,
    fit_levy_net,
    make_levy_net,
    predict_in_chunks,
)
from .validation import (
    check_magnitude,
    column_scaling,
    refuse_dates,
    refuse_repeated_columns,
    target_scaling,
)

__all__ = ["LevyAttentionRegressor"]

# Below this many validation rows, early stopping would chase noise (and tiny data sets,
# such as those of sklearn's estimator checks, cannot be split at all): train on every row.
_MIN_VALIDATION_ROWS = 5
# n_layers="auto" and value_embedding="auto" give tables of at least this many training rows
# an encoder block and periodic value embeddings (chosen on held-out tables: 11 % lower CRPS
# on the large ones; small ones gain little and lose coverage;
# benchmarks/results/regressor_budget_notes.md, "periodic value embeddings and an encoder
# block from 2,000 rows").
_LARGE_TABLE_ROWS = 2000
# Integer sample weights up to this many times the row count are applied by repeating rows.
_MAX_REPEAT = 10
# Largest ratio of positive sample weights: beyond it a few rows are the whole fit.
_MAX_WEIGHT_RATIO = 1e12
# Rows tokenised and predicted at a time (see _moments).
_PREDICT_CHUNK = 16_384


_NA_HINT = (
    "pd.NA in a column of dtype object or string: give it a numeric dtype first, e.g. "
    "X.astype('Float64') or pd.to_numeric, where NA in X reads as 'not observed' (every "
    "target must be observed: drop the rows whose y is NA)."
)
# What to do about the input errors scikit-learn's validation raises (matched on its message).
_INPUT_HINTS = {
    "Input X contains infinity": "±inf is not a measurement: replace it by NaN, which "
    "LevyAttentionRegressor reads as 'not observed', or by a finite value.",
    "Input y contains NaN": "Every target must be observed: drop the rows whose y is NaN or None "
    "(NaN is allowed in X only, where it means 'not observed').",
    "Input y contains infinity": "Targets must be finite: drop or clip the rows whose y is ±inf.",
    "could not convert": "X and y must be numeric: encode text or categorical columns first, "
    "e.g. with OneHotEncoder or OrdinalEncoder in a Pipeline.",
    "Complex data not supported": "Pass real and imaginary parts as separate real columns.",
    # pandas' NA in an object or string column (numeric nullable dtypes convert it to NaN).
    "NAType": _NA_HINT,
    "boolean value of NA is ambiguous": _NA_HINT,
    "setting an array element with a sequence": "Every cell must hold one number; expand "
    "list- or array-valued columns into one column each.",
}


@contextmanager
def _explain_bad_input() -> Iterator[None]:
    """Add the fix to scikit-learn's input-validation errors (first line only: the complex
    data error would otherwise print the whole array)."""
    try:
        yield
    except (ValueError, TypeError) as err:
        hint = next((h for key, h in _INPUT_HINTS.items() if key in str(err)), None)
        if hint is None:
            raise
        raise type(err)(f"{str(err).splitlines()[0]} {hint}") from err


def _is_int(value: Any) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


@shared_docs
class LevyAttentionRegressor(LevyHyperparameters, RegressorMixin, BaseEstimator):
    """Probabilistic regressor with single-pass predictive uncertainty from Lévy attention.

    Every row of ``X`` is read as a *set of observations*: one token per observed feature
    (channel = column, value = standardised feature, time = ``feature_times`` of the column, 0
    by default). ``NaN`` means "not observed" and removes the token; nothing is imputed. The
    network's output layer is a Lévy cross-attention (a Poisson random measure over the
    tokens) followed by an affine readout, so one deterministic forward pass gives the mean
    and the exact variance of that layer given the (expected) encoder below it (plus, with
    ``noise_head``, a learned noise variance), and two
    diagnostics explaining it: the *evidence* (expected number of supporting points; low when
    too little was observed) and the *disagreement* (spread of the attended values; high when
    the observations conflict).

    Parameters
    ----------
    n_layers : int or "auto", default="auto"
        Encoder blocks (self-attention between the tokens) before the output layer.
        ``"auto"``: 1 on tables of at least 2,000 training rows, 0 below (see Notes).
    value_embedding : {"auto", "linear", "periodic"}, default="auto"
        How a feature's value enters its token: a linear map, or learned periodic features
        of the value (:class:`~levy_sklearn.network.PeriodicValueEmbedding`), which fit sharp
        and non-monotone effects. ``"auto"``: periodic on tables of at least 2,000 training
        rows, linear below (see Notes).
    n_windowed_heads : int, default=0
        Of those, heads with a learned soft look-back window over ``feature_times`` (useful for
        rows of lags); the others see every token.
    feature_times : array-like of shape (n_features,), default=None
        Time of each column relative to the target, which is at time 0 (e.g. ``-lag`` for a
        row of lags), turning a row into a continuous-time window. Times are divided by their
        median spacing in ``fit``. ``None`` puts every feature at time 0.
    positional_keys : bool, default=True
        Key the output attention on each feature's identity (and time), plus a per-feature
        linear term in its value that starts at zero, rather than on the encoded token: the
        attention weights and the evidence then depend mainly on *which* features were
        observed, the values on *what* they say. On small tabular data this generalises much
        better (see :class:`~levy_sklearn.network.LevyNet`); ``False`` keys on the encoded
        tokens.
    observation_dropout : float, default=0.5
        Share of training rows (redrawn every epoch) whose observed features are thinned at
        random: each such row keeps every observed feature with a probability drawn uniformly
        from ``[0, 1)``, so some keep almost everything and some nothing. It teaches the
        network what missing information costs: the evidence ``Λ`` falls with every hidden
        feature and the output layer's learned prior (the answer when nothing is observed)
        learns the spread of ``y`` itself, so σ grows as features go missing. ``0`` trains
        on the rows as given.
    noise_head : bool, default=True
        Add a learned, input-dependent noise variance to the Lévy output layer's variance
        (σ² = Lévy variance + noise variance): a variance head, as in the softmax twin, on
        the Lévy layer's expected output. The Lévy variance says how much was observed and
        how far the observations disagree; the head models the noise around the target,
        which it does not, and which is what ranks errors on dense rows. The head never
        enters the evidence. ``False``: σ is the Lévy layer's alone. No effect with
        ``attention="softmax"``, whose variance always is such a head.
    warm_start : bool, default=False
        If ``True`` and the estimator is fitted, ``fit`` continues training the fitted
        network on the rows it is given (e.g. new rows) for ``max_epochs`` more epochs,
        from its weights and optimiser state, with a new cosine learning-rate cycle. The
        standardisation, ``feature_times``, network shape and training settings of the
        first fit are kept: of the hyperparameters only ``max_epochs`` (bounded by
        ``max_steps``) and ``verbose`` act on a continued fit (``lr``, ``batch_size``,
        ``loss``, ``weight_decay``, dropouts, ``validation_fraction``, ``device`` and the
        network's shape take effect at the next fit from scratch). ``X`` must have the
        same columns and ``y`` the same targets; ``conformal_`` is removed. ``False``:
        every ``fit`` starts afresh.
    <shared hyperparameters>

    Attributes
    ----------
    net_ : LevyNeuralNet
        The trained skorch net (its ``module_`` is the :class:`~levy_sklearn.network.LevyNet`).
    n_layers_ : int
        Encoder blocks of the fitted network (``n_layers`` with ``"auto"`` resolved).
    value_embedding_ : str
        Value embedding of the fitted network (``value_embedding`` with ``"auto"``
        resolved).
    n_features_in_ : int
        Number of features seen in ``fit``.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Column names, when ``X`` was a DataFrame with string column names.
    n_targets_ : int
        Number of targets (columns of ``y``).
    x_mean_, x_scale_ : ndarray of shape (`n_features_in_`,)
        Per-column mean and standard deviation of ``X``, ignoring ``NaN`` (0 and 1 for a
        column that was never observed or is constant).
    y_mean_, y_scale_ : ndarray of shape (`n_targets_`,)
        Per-target mean and standard deviation of ``y``.
    feature_times_ : ndarray of shape (`n_features_in_`,)
        Scaled token time of each column.
    time_scale_ : float
        Divisor applied to ``feature_times``.
    conformal_ : ConformalIntervals
        Set by :meth:`conformalize` only; removed by a new :meth:`fit`.

    See Also
    --------
    levy_sklearn.conformal.SigmaNormalisedScore : MAPIE score ``|y − μ| / σ``.

    Notes
    -----
    ``fit`` standardises every column of ``X`` (ignoring ``NaN``) and every target, trains
    on the standardised scale and maps predictions back: means by the target scale and mean,
    standard deviations by the target scale, variances and disagreements by its square.
    Inference runs in float64, so predictions do not depend on how rows are batched. A row
    with no observed feature has evidence ``Λ = 0`` and is answered by the output layer's
    learned prior, whose spread training pulls toward that of ``y`` itself (with
    ``observation_dropout > 0``): a finite mean near the mean of ``y`` and a σ near its
    standard deviation. ``±inf`` in ``X``, a missing or infinite target, ``|y| > 1e150`` (its
    variance would overflow) and text or complex data are rejected with a ``ValueError``
    that says what to do. Prediction runs in chunks of rows, so it adds memory for its
    outputs only (``benchmarks/memory.py``).

    The defaults (32-dimensional embeddings, on small tables no encoder block and linear
    value embeddings, positional keys, CRPS, AdamW
    at ``lr=5e-3`` for 40 epochs of 64 rows, no validation split) were chosen on
    scikit-learn's diabetes data (R² level with ``RidgeCV`` over 20 random splits) and on
    synthetic data whose noise grows with a feature or whose features are hidden at random
    (σ ranks the errors); 4 heads (value width 8), ``observation_dropout=0.5`` and
    ``noise_head=True`` by the ablation in ``benchmarks/results/ablation_sigma.md`` (claims
    cells, seeds other than the reported ones: σ ranked errors best and stayed calibrated as
    features went missing); a
    fit of a few hundred rows takes about two seconds on one CPU core. Early stopping on a
    held-out share of such small data cost more accuracy than it saved, so it is off by
    default: set ``validation_fraction`` (and ``patience``) for larger data. From 2,000
    training rows on, ``n_layers="auto"`` and ``value_embedding="auto"`` add an encoder block
    and periodic value embeddings, which lowered the CRPS on held-out tables of thousands of
    rows by up to 26 % (``benchmarks/results/regressor_budget_notes.md``); on small tables
    they cost coverage. Beyond about 2,400 rows, 40 epochs would take more than
    ``max_steps=1500`` optimizer steps, and the fit trains for the epochs that fit within
    them instead, so its cost stops growing with the number of rows
    (``benchmarks/results/speed.md``): the larger network needs half the steps of the
    smaller one (1.5 % more CRPS than with 3,000 steps at about half the time; still 23 %
    less than the smaller network's on diamonds).

    With ``random_state=None`` every fit is seeded afresh from NumPy's global generator;
    scikit-learn's ``check_estimator`` sets an int where it compares fits.

    Examples
    --------
    >>> import numpy as np
    >>> from levy_sklearn.regressor import LevyAttentionRegressor
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(200, 3))
    >>> y = X[:, 0] + 0.1 * rng.normal(size=200)
    >>> reg = LevyAttentionRegressor(max_epochs=5, random_state=0).fit(X, y)
    >>> mean, std = reg.predict(X[:4], return_std=True)
    >>> mean.shape, bool((std > 0).all())
    ((4,), True)
    >>> reg.predict_interval(X[:4], coverage=[0.5, 0.9]).shape  # (n, lower/upper, levels)
    (4, 2, 2)
    >>> X_missing = X[:2].copy()
    >>> X_missing[0, 1] = np.nan  # not observed: the token is left out
    >>> reg.predict(X_missing).shape
    (2,)
    """

    _grows_on_large_data: ClassVar[bool] = False  # tables keep capped epochs (not ablated)

    # The fitted state a model file holds (levy_sklearn.serialization saves exactly these):
    # name -> (type family, required of every fitted regressor, shape: its dimensions, an
    # int's value, as the network's channels n and targets q; checked at load).
    _saved_attributes: ClassVar[dict[str, tuple]] = {
        "net_": ("net", True, None),
        "conformal_": ("conformal", False, None),
        "n_features_in_": ("int", True, "n"),
        "feature_names_in_": ("names", False, None),
        "n_targets_": ("int", True, "q"),
        "x_mean_": ("floats", True, ("n",)),
        "x_scale_": ("scales", True, ("n",)),
        "y_mean_": ("floats", True, ("q",)),
        "y_scale_": ("scales", True, ("q",)),
        "feature_times_": ("floats", True, ("n",)),
        "time_scale_": ("number", True, None),
        "n_layers_": ("int", False, None),
        "value_embedding_": ("text", False, None),
        "_y_1d": ("bool", True, None),
    }

    _parameter_constraints: ClassVar[dict[str, list]] = {
        **LevyHyperparameters._parameter_constraints,
        "n_layers": [*int_at_least(0), StrOptions({"auto"})],
        "value_embedding": [StrOptions({"auto", *VALUE_EMBEDDINGS})],
        "feature_times": ["array-like", None],
        "positional_keys": ["boolean"],
        "noise_head": ["boolean"],
        "warm_start": ["boolean"],
    }

    def __init__(
        self,
        *,
        d_model: int = 32,
        n_heads: int = 4,
        n_windowed_heads: int = 0,
        n_layers: int | str = "auto",
        attention: str = "levy",
        dropout: float = 0.0,
        loss: str = "crps",
        lr: float = 5e-3,
        max_epochs: int = 40,
        max_steps: int | None = 1500,
        batch_size: int = 64,
        validation_fraction: float = 0.0,
        patience: int | None = 20,
        weight_decay: float = 1e-4,
        feature_times: ArrayLike | None = None,
        positional_keys: bool = True,
        observation_dropout: float = 0.5,
        noise_head: bool = True,
        value_embedding: str = "auto",
        device: str = "cpu",
        random_state: int | np.random.RandomState | None = None,
        verbose: int = 0,
        warm_start: bool = False,
    ) -> None:
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
        self.feature_times = feature_times
        self.positional_keys = positional_keys
        self.observation_dropout = observation_dropout
        self.noise_head = noise_head
        self.value_embedding = value_embedding
        self.device = device
        self.random_state = random_state
        self.verbose = verbose
        self.warm_start = warm_start

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        tags.target_tags.multi_output = True
        return tags

    def __sklearn_is_fitted__(self) -> bool:
        # net_ is written last in fit, so a fit that failed or was interrupted leaves the
        # estimator unfitted rather than half-updated.
        return hasattr(self, "net_")

    # ------------------------------------------------------------------ validation
    def _check_feature_times(self, n_features: int) -> tuple[NDArray, float]:
        """Scaled per-column token times and the scale, from ``feature_times``."""
        if self.feature_times is None:
            return np.zeros(n_features), 1.0
        try:
            times = np.asarray(self.feature_times, dtype=np.float64)
        except (TypeError, ValueError) as err:  # numpy's message names no parameter
            raise ValueError(
                f"feature_times must be numbers, one time per column of X (e.g. hours before "
                f"the prediction); got {self.feature_times!r} ({err})."
            ) from None
        if times.ndim != 1 or times.shape[0] != n_features:
            raise ValueError(
                f"feature_times has shape {times.shape} but X has {n_features} features; "
                f"pass one time per column, shape ({n_features},), or None."
            )
        if not np.isfinite(times).all():
            raise ValueError("feature_times must be finite (one time per column).")
        gaps = np.diff(np.unique(times))
        # The median spacing becomes one time unit, the scale the network's mollifier
        # bandwidth and Fourier periods are initialised for.
        scale = float(np.median(gaps)) if gaps.size else 1.0
        return times / scale, scale

    # ------------------------------------------------------------------ fit
    def fit(
        self, X: ArrayLike, y: ArrayLike, sample_weight: ArrayLike | None = None
    ) -> LevyAttentionRegressor:
        """Standardise, tokenise and train.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Features; ``NaN`` marks a feature not observed in that row.
        y : array-like of shape (n_samples,) or (n_samples, n_targets)
            Targets (finite).
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative row weights: each row's loss (and its share of the standardisation
            of ``X`` and ``y``) counts in proportion to its weight. Rows of weight 0 are
            left out entirely; equal weights are the same as none. ``None`` weighs rows
            equally. Integer weights (summing to at most 10 times the number of rows) repeat
            rows, so a weight of ``k`` is exactly ``k`` copies of the row (and ``2 * w`` is
            twice the rows, not the same fit); other weights weigh each row's loss after
            division by their mean (only their ratios matter), which mini-batch training
            matches only on average. See the FAQ.

        Returns
        -------
        self : LevyAttentionRegressor
            Fitted: writes ``net_``, ``n_features_in_`` (and ``feature_names_in_`` for
            DataFrames), ``n_targets_``, ``x_mean_``, ``x_scale_``, ``y_mean_``, ``y_scale_``,
            ``feature_times_``, ``time_scale_``; deletes ``conformal_``. If fit raises or
            is interrupted (``KeyboardInterrupt``), the estimator is left unfitted (with
            ``warm_start=True``, as it was before the call).

        Examples
        --------
        >>> import numpy as np
        >>> from levy_sklearn.regressor import LevyAttentionRegressor
        >>> X = np.random.default_rng(0).normal(size=(50, 2))
        >>> X[0, 1] = np.nan  # not observed: allowed in fit as in predict
        >>> reg = LevyAttentionRegressor(max_epochs=2, random_state=0).fit(X, X[:, 0] ** 2)
        >>> reg.n_features_in_, reg.n_targets_
        (2, 1)
        >>> w = np.r_[np.ones(25), 3 * np.ones(25)]  # the second half counts three times
        >>> reg = LevyAttentionRegressor(max_epochs=2, random_state=0)
        >>> reg.fit(X, X[:, 0] ** 2, sample_weight=w).predict(X[:2]).shape
        (2,)
        >>> reg.set_params(warm_start=True).fit(X[:10], X[:10, 0] ** 2).n_features_in_  # more
        2
        """
        warm = (
            isinstance(self.warm_start, bool | np.bool_)
            and bool(self.warm_start)
            and self.__sklearn_is_fitted__()
        )
        if not warm:
            for name in [k for k in vars(self) if k.endswith("_") and not k.startswith("__")]:
                delattr(self, name)  # the previous fit, so that no mix of two fits survives
        self._check_params()
        X, Y, weights = self._check_fit_data(X, y, sample_weight, reset=not warm)
        if not warm:
            self.n_targets_ = Y.shape[1]
            self.feature_times_, self.time_scale_ = self._check_feature_times(X.shape[1])
            self.x_mean_, self.x_scale_ = column_scaling(X, weights)
            self.y_mean_, self.y_scale_ = target_scaling(Y, weights)

        seed = self._seed()
        target = ((Y - self.y_mean_) / self.y_scale_).astype(np.float32)
        tokens = self._tokens(X)
        if weights is not None:
            tokens[SAMPLE_WEIGHT] = weights.astype(np.float32)
        if warm:
            # A trained copy: an interrupted or failed fit leaves the fitted model as it was.
            epochs = self._budget(len(X)).epochs
            self.net_ = continue_levy_net(
                self.net_, tokens, target, seed, epochs, verbose=self.verbose
            )
            self.__dict__.pop("conformal_", None)
            return self
        self.n_layers_, self.value_embedding_ = self._architecture(len(X))
        resolved = {}
        n_valid = math.ceil(self.validation_fraction * len(X))
        if n_valid < _MIN_VALIDATION_ROWS and len(X) > n_valid:  # none left: fit says so
            resolved["validation_fraction"] = 0.0
        net = make_levy_net(
            self._network_spec(
                X.shape[1],
                self.n_targets_,
                n_layers=self.n_layers_,
                positional_keys=bool(self.positional_keys),
                noise_head=bool(self.noise_head),
                value_embedding=self.value_embedding_,
            ),
            self._training_spec(seed, len(X), recipe="rows", **resolved),
        )
        self.net_: LevyNeuralNet = fit_levy_net(net, tokens, target, seed)
        return self

    def _architecture(self, n_rows: int) -> tuple[int, str]:
        """``n_layers`` and ``value_embedding`` with ``"auto"`` resolved for ``n_rows``
        training rows."""
        large = n_rows >= _LARGE_TABLE_ROWS
        n_layers = (1 if large else 0) if self.n_layers == "auto" else int(self.n_layers)
        embedding = self.value_embedding
        if embedding == "auto":
            embedding = "periodic" if large else "linear"
        return n_layers, embedding

    def _check_fit_data(
        self, X: ArrayLike, y: ArrayLike, sample_weight: ArrayLike | None, reset: bool
    ) -> tuple[NDArray, NDArray, NDArray | None]:
        """Validated rows, ``(n, Q)`` targets and row weights (``None``: equal weights);
        rows of weight 0 are dropped."""
        refuse_dates(X)
        refuse_dates(y, "y")
        refuse_repeated_columns(X, "X", "features are matched by name")
        with _explain_bad_input():
            X, y = validate_data(
                self,
                X,
                y,
                dtype=np.float64,
                ensure_all_finite="allow-nan",
                multi_output=True,
                y_numeric=True,
                reset=reset,
            )
            # y_numeric converts object arrays only: numbers as text (a CSV read as str)
            # would fail in the scaling with numpy's ufunc error. scikit-learn checks an
            # object y for NaN before that conversion, which turns None into NaN: check again.
            y = y.astype(np.float64, copy=False)
            assert_all_finite(y, input_name="y")
        check_magnitude(y)
        empty = np.flatnonzero(np.isnan(X).all(axis=0))
        if reset and empty.size:
            names = getattr(self, "feature_names_in_", np.arange(X.shape[1]))[empty]
            warnings.warn(
                f"Feature(s) {names.tolist()} of X have no observed value (all NaN): the "
                "model learns nothing from them. Drop them, e.g. X.drop(columns=[...]) or "
                "X[:, keep] with keep the observed columns.",
                UserWarning,
                stacklevel=3,
            )
        weights = None
        if sample_weight is not None:
            weights = _check_sample_weight(
                sample_weight, X, dtype=np.float64, ensure_non_negative=True
            )
            keep = weights > 0
            if not keep.any():  # scikit-learn < 1.7 lets all-zero weights through
                raise ValueError(
                    "sample_weight must contain at least one non-zero weight: a fit needs "
                    "rows that count."
                )
            X, y, weights = X[keep], y[keep], weights[keep]
            if weights.max() / _MAX_WEIGHT_RATIO > weights.min():  # no overflow near 1e308
                # The weighted moments then come from a few rows alone, and the others'
                # standardised targets overflow float32 (torch's error, a page of NaN).
                raise ValueError(
                    f"sample_weight spans {weights.max() / weights.min():.1e}, more than "
                    f"{_MAX_WEIGHT_RATIO:.0e} between its largest and smallest positive "
                    "weight; set the negligible weights to 0 to drop those rows."
                )
            counts = np.minimum(weights, 2.0**62).astype(np.int64)  # castable, exactly
            if np.all(weights == weights[0]):
                weights = None  # the unweighted fit, bitwise
            elif np.all(counts == weights) and weights.sum() <= _MAX_REPEAT * len(counts):
                # Integer weights are frequency weights: repeating the rows makes a weight
                # of k exactly k copies (the loss over mini-batches and every random draw
                # see the same rows), which a weighted loss can only match in expectation.
                X, y, weights = np.repeat(X, counts, axis=0), np.repeat(y, counts, axis=0), None
            else:
                weights = weights / weights.mean()
        # Train on the rows in one canonical order, so that the fit does not depend on the
        # order they came in (nor, with integer weights, on weights versus repeated rows).
        order = np.lexsort(np.column_stack([np.nan_to_num(X, nan=np.inf), y]).T[::-1])
        X, y = X[order], y[order]
        if weights is not None:
            weights = weights[order]
        if reset:
            self._y_1d = y.ndim == 1
        Y = y.reshape(len(y), -1)
        if not reset and Y.shape[1] != self.n_targets_:
            raise ValueError(
                f"y has {Y.shape[1]} targets but the model was fitted on {self.n_targets_}; "
                "with warm_start=True pass y shaped like in the first fit (or set "
                "warm_start=False to start afresh)."
            )
        return X, Y, weights

    def _tokens(self, X: NDArray) -> dict[str, NDArray]:
        return tokens_from_rows(
            (X - self.x_mean_) / self.x_scale_, self.n_targets_, self.feature_times_
        )

    # ------------------------------------------------------------------ prediction
    def _check_X(self, X: ArrayLike) -> NDArray:
        """Validated float64 rows for a fitted estimator (``NaN`` allowed)."""
        check_is_fitted(self)
        refuse_dates(X)
        refuse_repeated_columns(X, "X", "features are matched by name")
        with _explain_bad_input():
            return validate_data(
                self, X, dtype=np.float64, ensure_all_finite="allow-nan", reset=False
            )

    def _moments(self, X: ArrayLike) -> tuple[NDArray, NDArray, NDArray, NDArray, NDArray]:
        """Mean, std, noise variance ``(n, Q)``, evidence, disagreement ``(n, Q, H)``.

        In target units (squared for the noise variance and the disagreement).
        """
        X = self._check_X(X)
        # Tokens take four arrays per cell: build them a chunk of rows at a time, so that
        # prediction adds memory for its outputs only (benchmarks/memory.py measures it).
        out = predict_in_chunks(
            self.net_,
            (
                self._tokens(X[start : start + _PREDICT_CHUNK])
                for start in range(0, len(X), _PREDICT_CHUNK)
            ),
        )
        mean = out.mean * self.y_scale_ + self.y_mean_
        std = np.sqrt(out.variance) * self.y_scale_
        disagreement = out.disagreement * self.y_scale_[:, None] ** 2
        return mean, std, out.noise * self.y_scale_**2, out.evidence, disagreement

    def _shape(self, a: NDArray) -> NDArray:
        """Drop the target axis (axis 1) when ``y`` was one-dimensional in ``fit``."""
        return a[:, 0] if self._y_1d else a

    def predict(self, X: ArrayLike, return_std: bool = False) -> NDArray | tuple[NDArray, NDArray]:
        """Predictive mean and, optionally, standard deviation.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            ``NaN`` marks an unobserved feature.
        return_std : bool, default=False
            Also return σ (the ``GaussianProcessRegressor`` convention, which MAPIE's
            ``"std_normalized"`` score relies on).

        Returns
        -------
        mean : ndarray of shape (n_samples,) or (n_samples, n_targets)
            Shaped like ``y`` in ``fit``.
        std : ndarray, same shape as ``mean``
            Only with ``return_std=True``.

        Examples
        --------
        >>> import numpy as np
        >>> from levy_sklearn.regressor import LevyAttentionRegressor
        >>> X = np.random.default_rng(0).normal(size=(60, 2))
        >>> reg = LevyAttentionRegressor(max_epochs=2, random_state=0).fit(X, X @ [1.0, 2.0])
        >>> mean, std = reg.predict(X[:3], return_std=True)
        >>> mean.shape, std.shape
        ((3,), (3,))
        """
        mean, std, *_ = self._moments(X)
        if return_std:
            return self._shape(mean), self._shape(std)
        return self._shape(mean)

    def predict_interval(
        self,
        X: ArrayLike,
        coverage: float | Sequence[float] = 0.9,
        method: str = "gaussian",
    ) -> NDArray:
        """Central prediction intervals.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            ``NaN`` marks an unobserved feature.
        coverage : float or list of float, default=0.9
            Nominal coverage(s), each strictly between 0 and 1.
        method : {"gaussian", "conformal"}, default="gaussian"
            ``"gaussian"``: ``mean ± z σ`` with ``z`` the ``(1 + coverage) / 2`` normal
            quantile of the single-pass σ. ``"conformal"``: split-conformal intervals from
            MAPIE with the score ``|y − μ| / σ``, calibrated by :meth:`conformalize`.

        Returns
        -------
        ndarray of shape (n_samples, 2[, n_targets][, n_coverages])
            ``[:, 0]`` lower and ``[:, 1]`` upper bounds (MAPIE's layout). The target axis is
            present when ``y`` was two-dimensional in ``fit``; the coverage axis when
            ``coverage`` is a list.

        Examples
        --------
        >>> import numpy as np
        >>> from levy_sklearn.regressor import LevyAttentionRegressor
        >>> X = np.random.default_rng(0).normal(size=(60, 2))
        >>> reg = LevyAttentionRegressor(max_epochs=2, random_state=0).fit(X, X @ [1.0, 2.0])
        >>> reg.predict_interval(X[:3]).shape
        (3, 2)
        >>> reg.predict_interval(X[:3], coverage=[0.5, 0.8, 0.95]).shape
        (3, 2, 3)
        """
        intervals = self._intervals(method)
        mean, std, *_ = self._moments(X)
        lower, upper = intervals.interval(mean, std, coverage)
        bounds = np.stack([lower, upper], axis=1)  # (n, 2, Q[, L])
        return bounds[:, :, 0] if self._y_1d else bounds

    def _intervals(self, method: str) -> Intervals:
        """The intervals ``predict_interval(method=...)`` asks for."""
        if method == "gaussian":
            return GaussianIntervals()
        if method != "conformal":
            raise ValueError(f"method={method!r} must be one of ('gaussian', 'conformal').")
        if not hasattr(self, "conformal_"):
            raise ValueError(
                "method='conformal' needs a calibration set: call "
                "conformalize(X_cal, y_cal) on rows not used in fit first."
            )
        return self.conformal_

    def predict_uncertainty(self, X: ArrayLike) -> Bunch:
        """Per-sample uncertainty breakdown: why is a prediction uncertain?

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            ``NaN`` marks an unobserved feature.

        Returns
        -------
        Bunch
            ``mean``, ``std``: as :meth:`predict` returns them.
            ``evidence``: expected number of Poisson points supporting the prediction,
            summed over the output layer's heads; low means too little data (σ then grows
            toward the prior's spread). ``disagreement``: spread of the attended values seen
            through the readout, summed over heads, in squared target units; high means the
            observations conflict. Both are shaped like ``mean``.
            ``evidence_per_head``, ``disagreement_per_head``: the same per head, with a
            trailing head axis. For ``attention="softmax"`` evidence and disagreement are 0.
            ``noise_variance``: the noise head's variance inside ``std²``, in squared target
            units (``noise_head=True``, the default): what the data's own noise adds where
            evidence and disagreement do not reach; ``std² − noise_variance`` is the Lévy
            layer's variance. 0 with ``noise_head=False``; for ``attention="softmax"``, the
            twin's variance head, all of ``std²``.

        Examples
        --------
        >>> import numpy as np
        >>> from levy_sklearn.regressor import LevyAttentionRegressor
        >>> X = np.random.default_rng(0).normal(size=(60, 2))
        >>> reg = LevyAttentionRegressor(max_epochs=2, random_state=0).fit(X, X @ [1.0, 2.0])
        >>> u = reg.predict_uncertainty(X[:3])
        >>> sorted(u)  # doctest: +NORMALIZE_WHITESPACE
        ['disagreement', 'disagreement_per_head', 'evidence', 'evidence_per_head', 'mean',
         'noise_variance', 'std']
        >>> u.evidence.shape, u.evidence_per_head.shape
        ((3,), (3, 4))
        >>> bool((u.noise_variance < u.std**2).all())  # the Lévy layer's variance is the rest
        True
        """
        mean, std, noise, evidence, disagreement = self._moments(X)
        return Bunch(
            mean=self._shape(mean),
            std=self._shape(std),
            evidence=self._shape(evidence.sum(-1)),
            disagreement=self._shape(disagreement.sum(-1)),
            evidence_per_head=self._shape(evidence),
            disagreement_per_head=self._shape(disagreement),
            noise_variance=self._shape(noise),
        )

    def sample_y(
        self,
        X: ArrayLike,
        n_samples: int = 1,
        method: str = "poisson",
        random_state: int | np.random.RandomState | None = 0,
    ) -> NDArray:
        """Draw predictions by repeated stochastic passes (how the baselines get σ).

        The single-pass σ of :meth:`predict` is exactly the spread these draws estimate for
        ``method="poisson"``; sampling is here to compare against, not to use in its place.

        Parameters
        ----------
        X : array-like of shape (n_rows, n_features)
            ``NaN`` marks an unobserved feature.
        n_samples : int, default=1
            Draws per row.
        method : {"poisson", "mc_dropout"}, default="poisson"
            ``"poisson"``: the output layer drawn from its Poisson construction (one encoder
            pass; the "sampler" baseline). ``"mc_dropout"``: the mean of ``n_samples``
            full passes in training mode (MC dropout; needs ``dropout > 0`` and encoder
            blocks, ``n_layers >= 1``, where dropout acts, typically with
            ``attention="softmax"``; ``observation_dropout`` hides tokens in these passes
            too, and is all that varies them without encoder blocks).
        random_state : int, RandomState instance or None, default=0
            Seed of the draws, by the estimator's rule for ``random_state``.

        Returns
        -------
        ndarray of shape (n_rows, n_samples) or (n_rows, n_targets, n_samples)
            Draws in target units, shaped like ``GaussianProcessRegressor.sample_y``.

        Examples
        --------
        >>> import numpy as np
        >>> from levy_sklearn.regressor import LevyAttentionRegressor
        >>> X = np.random.default_rng(0).normal(size=(60, 2))
        >>> reg = LevyAttentionRegressor(max_epochs=2, random_state=0).fit(X, X @ [1.0, 2.0])
        >>> reg.sample_y(X[:3], n_samples=50).shape
        (3, 50)
        """
        X = self._check_X(X)
        if not _is_int(n_samples) or n_samples < 1:
            raise ValueError(f"n_samples={n_samples!r} must be a positive integer.")
        seed = torch_seed(random_state)
        draws = self.net_.predict_samples(self._tokens(X), n_samples, method, seed)
        draws = draws * self.y_scale_ + self.y_mean_  # (S, n, Q)
        draws = np.moveaxis(draws, 0, -1)  # (n, Q, S)
        return draws[:, 0] if self._y_1d else draws

    # ------------------------------------------------------------------ conformal
    def conformalize(self, X_cal: ArrayLike, y_cal: ArrayLike) -> LevyAttentionRegressor:
        """Calibrate split-conformal intervals on held-out rows (MAPIE, score ``|y − μ|/σ``).

        Parameters
        ----------
        X_cal : array-like of shape (n_cal, n_features)
            Rows not used in :meth:`fit`.
        y_cal : array-like of shape (n_cal,) or (n_cal, n_targets)
            Their targets.

        Returns
        -------
        self : LevyAttentionRegressor
            Writes ``conformal_`` (a :class:`~levy_sklearn.conformal.ConformalIntervals`),
            used by ``predict_interval(..., method="conformal")``.

        Raises
        ------
        ValueError
            With fewer than 10 calibration rows (per target), too few for the default
            coverage 0.9; a higher coverage ``c`` needs ``1 / (1 − c)`` rows, which
            ``predict_interval`` checks.

        Examples
        --------
        >>> import numpy as np
        >>> from levy_sklearn.regressor import LevyAttentionRegressor
        >>> rng = np.random.default_rng(0)
        >>> X = rng.normal(size=(300, 2))
        >>> y = X[:, 0] + 0.3 * rng.normal(size=300)
        >>> reg = LevyAttentionRegressor(max_epochs=3, random_state=0).fit(X[:150], y[:150])
        >>> reg = reg.conformalize(X[150:250], y[150:250])
        >>> reg.predict_interval(X[250:], coverage=0.9, method="conformal").shape
        (50, 2)
        """
        mean, std, *_ = self._moments(X_cal)
        y_cal = check_array(y_cal, ensure_2d=False, dtype=np.float64, input_name="y_cal")
        if len(y_cal) != len(mean):
            raise ValueError(f"X_cal has {len(mean)} rows but y_cal has {len(y_cal)}.")
        y_cal = y_cal.reshape(len(mean), -1)
        if y_cal.shape[1] != self.n_targets_:
            raise ValueError(
                f"y_cal has {y_cal.shape[1]} targets but the model was fitted on "
                f"{self.n_targets_}; pass y_cal shaped like y in fit."
            )
        calibrator = ConformalIntervals(mean, std, y_cal)
        try:
            # Fail here, where the rows are given, rather than at the first predict_interval.
            calibrator.conformalizers(0.9)
        except ValueError as err:
            raise ValueError(
                f"X_cal and y_cal have {len(y_cal)} rows, too few for conformal intervals at "
                f"the default coverage 0.9: {err}"
            ) from err
        self.conformal_ = calibrator
        return self
