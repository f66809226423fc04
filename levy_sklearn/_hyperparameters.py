"""The hyperparameter contract both front-ends share (in the style of scikit-learn's
``_BaseRidge``): one ``_parameter_constraints`` table, the cross-parameter checks, the
seeding rule and the documentation of every shared hyperparameter.

Both :class:`~levy_sklearn.regressor.LevyAttentionRegressor` and
:class:`~levy_sklearn.forecaster.LevyForecaster` inherit :class:`LevyHyperparameters`, extend
its table with their own parameters and call :meth:`~LevyHyperparameters._check_params` at
the start of every fit, so a bad value raises the same ``ValueError``, in the user's
parameter names, in both.
"""

from __future__ import annotations

import inspect
import textwrap
from numbers import Integral, Real
from typing import Any, ClassVar

import numpy as np
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions, make_constraint

from .network import ATTENTION_KINDS
from .training import LOSSES, Budget, NetworkSpec, TrainingSpec, training_budget

# Torch seeds are drawn below this bound (the scikit-learn convention for derived seeds).
_MAX_SEED = np.iinfo(np.int32).max


def torch_seed(random_state: int | np.random.RandomState | None) -> int:
    """The one seed rule of the package: an int ``random_state`` is the torch seed itself;
    ``None`` or a ``RandomState`` draws one through ``check_random_state`` (fresh for
    ``None``; a ``RandomState`` is advanced, so successive fits differ reproducibly).

    Examples
    --------
    >>> import numpy as np
    >>> torch_seed(7)
    7
    >>> torch_seed(np.random.RandomState(0)) == torch_seed(np.random.RandomState(0))
    True
    """
    if isinstance(random_state, Integral) and not isinstance(random_state, bool):
        return int(random_state)
    return int(check_random_state(random_state).randint(_MAX_SEED))


#: numpydoc entries of the shared hyperparameters, written once: name -> (type, description).
#: :func:`shared_docs` renders them, with each front-end's own defaults, into its docstring.
SHARED_DOCS = {
    "d_model": ("int", "Embedding size (a multiple of ``n_heads``)."),
    "n_heads": ("int", "Attention heads per layer."),
    "n_layers": (
        "int",
        "Encoder blocks (self-attention between the tokens) before the output layer.",
    ),
    "attention": (
        '{"levy", "softmax"}',
        """``"softmax"`` builds the baseline twin (standard attention and a variance head);
its ``evidence`` and ``disagreement`` are zeros.""",
    ),
    "dropout": (
        "float",
        "Dropout in the encoder blocks' residual branches during training, in ``[0, 1)`` "
        "(no effect with ``n_layers=0``).",
    ),
    "loss": (
        '{"crps", "nll", "beta_nll", "mse"}',
        """Training objective on standardised targets: closed-form Gaussian CRPS, Gaussian
negative log-likelihood, β-NLL (NLL weighted by the detached σ, see
:class:`~levy_sklearn.training.GaussianScore`), or squared error of the mean followed by a
one-scalar calibration of σ on the validation split (on the training data when there is
none).""",
    ),
    "lr": (
        "float",
        """AdamW learning rate (cosine-annealed over ``max_epochs``). In the regressor the
log-scale scalars of the Lévy layers (rate, sharpness, bandwidth, look-back) train at 10
times that rate; the forecaster doubles it on data too large for ``max_steps`` (see there).""",
    ),
    "max_epochs": ("int", "Maximum number of passes over the training data (at least 1)."),
    "max_steps": (
        "int or None",
        """Maximum number of optimizer steps in all: where ``max_epochs`` passes would take
more, the regressor stops after the last whole epoch within ``max_steps``, so a fit's cost
stops growing with the size of the data; ``None``: always ``max_epochs``. The forecaster
trains ``max_steps`` steps there, each epoch drawing an equal share of them (seeded), so that
its cost never falls as the data grow. It trains data too large for two such passes (over
``max_steps`` × ``batch_size`` / 2 windows, e.g. a panel of many series) for all
``max_epochs`` passes at 8 × ``batch_size`` and 2 × ``lr`` instead: chosen by ablation on
held-out competition panels, its cost then grows with the data. Where even one pass would
take more than ``max_steps`` steps, each epoch draws ``max_steps`` batches of rows (seeded)
instead of every row, so the cost of a fit is bounded however large the data (see
:func:`~levy_sklearn.training.training_budget`).""",
    ),
    "batch_size": (
        "int",
        """Rows (windows) per gradient step; the forecaster takes 8 times as many on data too
large for ``max_steps`` (see there). Prediction feeds the network larger batches, sized by
memory (:data:`~levy_sklearn.training.net.PREDICT_BATCH_BYTES`), never smaller.""",
    ),
    "validation_fraction": (
        "float",
        """Share of the training data held out (seeded) for early stopping and, with
``loss="mse"``, for calibrating σ; ``0`` trains on everything for ``max_epochs``. The
regressor ignores it when it would hold out fewer than 5 rows.""",
    ),
    "patience": (
        "int or None",
        """With a validation split, stop after this many epochs without a better validation
loss and restore the best weights; ``None`` never stops early.""",
    ),
    "weight_decay": ("float", "AdamW weight decay."),
    "device": (
        '{"cpu", "cuda", "auto"} or str',
        """Torch device for training and inference (also ``"cuda:<index>"``, ``"mps"``);
``"auto"`` takes CUDA when available, else the CPU. An unknown or absent device is a
``ValueError`` at fit. Fits are bitwise reproducible on CPU; on a GPU, some CUDA kernels
accumulate in a varying order, so repeated fits can differ in the last bits unless
``torch.use_deterministic_algorithms(True)`` is set (with
``CUBLAS_WORKSPACE_CONFIG=:4096:8``), and results differ between GPU models.""",
    ),
    "random_state": (
        "int, RandomState instance or None",
        """Seeds every random choice of training (weights, shuffling, dropout, splits). An
int is the torch seed itself and gives reproducible fits; a ``RandomState`` draws the seed
(reproducible, and advanced at every fit); ``None`` draws a fresh seed from NumPy's global
generator at every fit (the scikit-learn convention).""",
    ),
    "verbose": (
        "int",
        """``0``: silent. ``> 0``: every training run (``fit``, ``pretrain``, an ``update``
that retrains) shows a progress bar over all its epochs on ``stderr``, with the elapsed time,
the time left, the epochs done and their losses (tqdm, through skorch's ``ProgressBar``: see
:class:`~levy_sklearn.training.FitProgressBar`), and prints skorch's per-epoch table on
``stdout``. Each training is named: ``fit``, or for ``pretrain`` the fold held out of it
(``pretrain, fold 2/5 held out``) and the last one on all series. Written to a file or a pipe
rather than a terminal, the bar is a plain line per epoch and the table has no colour codes.
A warm-start fit and a further ``pretrain`` use the current ``verbose``. The bar draws no
random numbers: a fit is the same at every ``verbose``.""",
    ),
}
# Where a front-end's docstring takes the shared entries.
_SHARED_MARKER = "    <shared hyperparameters>\n"


def shared_docs(cls: type) -> type:
    """Class decorator: put the :data:`SHARED_DOCS` entries, with ``cls``'s defaults, where
    its docstring says ``<shared hyperparameters>`` (except those its docstring documents
    itself, where it accepts more than the other front-end)."""
    defaults = {
        name: param.default for name, param in inspect.signature(cls.__init__).parameters.items()
    }
    entries = "".join(
        f"    {name} : {kind}, default={defaults[name]!r}\n"
        + textwrap.indent(description, " " * 8)
        + "\n"
        for name, (kind, description) in SHARED_DOCS.items()
        if f"\n    {name} : " not in cls.__doc__
    )
    cls.__doc__ = cls.__doc__.replace(_SHARED_MARKER, entries)
    return cls


class NumberInterval(Interval):
    """scikit-learn's ``Interval`` without booleans, which it accepts because ``True`` is an
    ``Integral`` (and a ``Real``): ``n_heads=True`` is a mistake, not one head, and
    ``lr=True`` one of 1."""

    def is_satisfied_by(self, val: Any) -> bool:
        return not isinstance(val, bool | np.bool_) and super().is_satisfied_by(val)


def int_at_least(low: int = 1) -> list:
    """The constraint of an int hyperparameter ``>= low`` (booleans refused)."""
    return [NumberInterval(Integral, low, None, closed="left")]


class LevyHyperparameters:
    """Mixin: the validation and seeding of the hyperparameters both front-ends share.

    A front-end extends :attr:`_parameter_constraints` (scikit-learn's constraint language:
    ``Interval``, ``StrOptions``, ``"boolean"``, ...) with its own parameters and calls
    :meth:`_check_params` where a fit starts.

    Examples
    --------
    >>> from levy_sklearn.forecaster import LevyForecaster
    >>> from levy_sklearn.regressor import LevyAttentionRegressor
    >>> for estimator in (LevyAttentionRegressor(d_model=30), LevyForecaster(d_model=30)):
    ...     try:
    ...         estimator._check_params()
    ...     except ValueError as err:
    ...         print(str(err).split(": ")[1])
    d_model=30 must be a multiple of n_heads=4.
    d_model=30 must be a multiple of n_heads=4.
    """

    #: Whether the training budget grows with the data and never falls as it grows: data
    #: whose whole epochs fall short of ``max_steps`` fill it, and data too large for two
    #: passes within ``max_steps`` train every epoch at a larger batch (see
    #: :func:`~levy_sklearn.training.training_budget`): chosen on series panels only, so the
    #: regressor switches it off.
    _grows_on_large_data: ClassVar[bool] = True

    _parameter_constraints: ClassVar[dict[str, list]] = {
        "d_model": int_at_least(),
        "n_heads": int_at_least(),
        "n_windowed_heads": int_at_least(0),
        "n_layers": int_at_least(0),
        "attention": [StrOptions(set(ATTENTION_KINDS))],
        "dropout": [NumberInterval(Real, 0, 1, closed="left")],
        "loss": [StrOptions(set(LOSSES))],
        "lr": [NumberInterval(Real, 0, None, closed="neither")],
        "max_epochs": int_at_least(),
        "max_steps": [*int_at_least(), None],
        "batch_size": int_at_least(),
        "validation_fraction": [NumberInterval(Real, 0, 1, closed="left")],
        "patience": [*int_at_least(), None],
        "weight_decay": [NumberInterval(Real, 0, None, closed="left")],
        "observation_dropout": [NumberInterval(Real, 0, 1, closed="both")],
        # Resolved (and refused with the fix) by training.check_device when the net is built.
        "device": ["no_validation"],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
    }

    def _check_params(self) -> None:
        """Raise a ValueError naming every bad hyperparameter and what would be valid."""
        params = self.get_params(deep=False)
        problems = []
        for name, options in self._parameter_constraints.items():
            if "no_validation" in options:
                continue
            constraints = [make_constraint(option) for option in options]
            if not any(c.is_satisfied_by(params[name]) for c in constraints):
                allowed = " or ".join(str(c) for c in constraints if not c.hidden)
                problems.append(f"{name}={params[name]!r} must be {allowed}")
        if not problems:
            problems = self._cross_problems(params)
        if problems:
            raise ValueError(
                f"Invalid hyperparameters for {type(self).__name__}: " + "; ".join(problems) + "."
            )

    @staticmethod
    def _cross_problems(params: dict[str, Any]) -> list[str]:
        """What is wrong between parameters each valid on its own."""
        d_model, n_heads, n_windowed = (
            params[name] for name in ("d_model", "n_heads", "n_windowed_heads")
        )
        problems = []
        if d_model % n_heads:
            problems.append(f"d_model={d_model} must be a multiple of n_heads={n_heads}")
        if n_windowed > n_heads:
            problems.append(
                f"n_windowed_heads={n_windowed} must be an int between 0 and n_heads={n_heads}"
            )
        return problems

    def _network_spec(self, n_channels: int, n_targets: int, **resolved: Any) -> NetworkSpec:
        """The network of one fit: the shared hyperparameters, ``observation_dropout`` as
        the network's ``token_dropout``, and ``resolved`` (the front-end's own options and
        every ``"auto"`` decided for its data, e.g. ``n_layers``)."""
        shared = {
            "d_model": self.d_model,
            "n_heads": self.n_heads,
            "n_windowed_heads": self.n_windowed_heads,
            "n_layers": self.n_layers,
            "attention": self.attention,
            "dropout": self.dropout,
            "token_dropout": float(self.observation_dropout),
        }
        return NetworkSpec(n_channels=n_channels, n_targets=n_targets, **(shared | resolved))

    def _training_spec(self, seed: int, n_rows: int, **resolved: Any) -> TrainingSpec:
        """The training run of one fit on ``n_rows`` rows (windows): the shared
        hyperparameters within the budget of :meth:`_budget`, and ``resolved`` (the
        front-end's recipe and decisions, e.g. no validation split on too few rows, the
        batch size its ``"auto"`` resolved to, or ``steps_of``: train as long as on so many
        rows)."""
        validation_fraction = resolved.pop("validation_fraction", self.validation_fraction)
        batch_size, steps_of = resolved.pop("batch_size", None), resolved.pop("steps_of", None)
        budget = self._budget(n_rows, validation_fraction, batch_size, steps_of)
        return TrainingSpec(
            loss=self.loss,
            lr=budget.lr,
            weight_decay=self.weight_decay,
            epochs=budget.epochs,
            batch_size=budget.batch_size,
            validation_fraction=validation_fraction,
            patience=self.patience,
            device=self.device,
            seed=seed,
            verbose=self.verbose,
            rows=budget.rows,
            **resolved,
        )

    def _budget(
        self,
        n_rows: int,
        validation_fraction: float | None = None,
        batch_size: int | None = None,
        steps_of: int | None = None,
    ) -> Budget:
        """Epochs, batch size and learning rate of a fit or further training on ``n_rows``
        rows (windows), with this ``validation_fraction`` held out (the hyperparameter's by
        default) at this ``batch_size`` (the hyperparameter's by default; a front-end
        resolves its ``"auto"``): ``max_epochs`` within ``max_steps``, grown on large data
        where the front-end's :attr:`_grows_on_large_data` says so, as long as on
        ``steps_of`` rows where given (see :func:`~levy_sklearn.training.training_budget`)."""
        if validation_fraction is None:
            validation_fraction = self.validation_fraction
        return training_budget(
            n_rows,
            self.batch_size if batch_size is None else batch_size,
            self.lr,
            self.max_epochs,
            self.max_steps,
            validation_fraction,
            grow=self._grows_on_large_data,
            steps_of=steps_of,
        )

    def _seed(self) -> int:
        """The torch seed of one fit, pretrain or update (see :func:`torch_seed`)."""
        return torch_seed(self.random_state)
