"""The skorch layer shared by both front-ends: losses, the NeuralNet subclass, seeding.

skorch owns the training loop, validation split, early stopping, LR schedule and device
handling; this module only teaches it that LevyNet returns ``(mean, variance, …)`` and how to
score that with a proper scoring rule.
"""

from __future__ import annotations

import builtins
import copy
import math
import sys
import threading
import time
import warnings
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import asdict, dataclass
from numbers import Number
from typing import Any

import numpy as np
import torch
import tqdm
from skorch import NeuralNet
from skorch.callbacks import EarlyStopping, LRScheduler, PrintLog, ProgressBar
from skorch.dataset import Dataset, ValidSplit
from torch import Tensor, nn
from torch.utils.data import default_convert

from .network import LevyNet, LevyNetOutput
from .tokens import take_tokens

# What a user calls: the skorch net for a LevyNet of one's own (built from the two specs, as
# the FAQ's multi-GPU recipe does), its loss and the progress bar of verbose=1. The rest is
# the front-ends' shared plumbing, importable but not promised.
__all__ = [
    "FitProgressBar",
    "GaussianScore",
    "LevyNeuralNet",
    "NetworkSpec",
    "TrainingSpec",
    "fit_levy_net",
    "make_levy_net",
    "progress_label",
]

#: Training objectives (``loss``): closed-form Gaussian CRPS, Gaussian negative
#: log-likelihood, β-NLL (the NLL weighted by ``stop_gradient(σ^{2β})``, β = 0.5), or squared
#: error of the mean with σ calibrated afterwards.
LOSSES = ("crps", "nll", "beta_nll", "mse")
# β of the β-NLL (Seitzer et al., 2022): 0.5 balances NLL's neglect of badly fitted points.
_BETA_NLL = 0.5
#: Training recipes (``recipe`` of :class:`TrainingSpec`), each tuned for its inputs.
#: ``"rows"`` (tables, :class:`~levy_sklearn.regressor.LevyAttentionRegressor`): the output
#: heads start at rates spread over three decades, and the log-scale scalars of the Lévy
#: layers train at 10 times ``lr``. ``"windows"`` (series windows,
#: :class:`~levy_sklearn.forecaster.LevyForecaster`): every head starts at rate 1, one
#: learning rate for all parameters. In both, an autoregression (``n_lags > 0``) learns at
#: ``lags_lr`` times ``lr``.
RECIPES = ("rows", "windows")
# Learning-rate multiplier of the log-scale scalars in the "rows" recipe (see make_levy_net).
_LOG_PARAM_LR = 10.0
#: Memory budget of one inference batch, in bytes: :meth:`LevyNeuralNet.predict_moments`
#: feeds the network as many rows at a time as keep its activations (width ``d_model`` per
#: token and query, one attention row per head) within it, and never fewer than
#: ``batch_size``. 8 MiB (530 rows of 18 tokens at the regressor's default width, 221
#: forecast windows of 24 tokens and 13 queries) lies where a sweep of batch sizes on one
#: CPU thread was fastest for both (256–2,048 rows of the clinical benchmark's patients,
#: 64–256 windows): smaller batches pay a network call each, larger ones fall out of the
#: processor's caches (``benchmarks/speed.py --predict`` times it against ``batch_size``).
#: The network holds a dozen or so such tensors at once: predicting 10⁶ rows × 10 features
#: (``benchmarks/memory.py``) peaked 0.12 GiB higher than with ``batch_size`` rows a batch
#: (0.30 GiB added against 0.19).
PREDICT_BATCH_BYTES = 8 * 2**20
#: Key of the optional per-row weights in a token dict (see :class:`LevyNeuralNet`).
SAMPLE_WEIGHT = "sample_weight"
_SQRT_PI = math.sqrt(math.pi)
# Targets scored by the trivial forecast after training (LevyNeuralNet.check_learned).
_LEARNED_CHECK_ROWS = 100_000
# Re-entrant: predict_moments (seeded) may run inside a seeded training block.
_RNG_LOCK = threading.RLock()
_TORCH_VERSION = tuple(int(part) for part in torch.__version__.split(".")[:2])


def gaussian_crps_torch(mean: Tensor, variance: Tensor, y: Tensor) -> Tensor:
    """Closed-form CRPS of ``N(mean, variance)`` at ``y``, elementwise."""
    sigma = variance.sqrt()
    z = (y - mean) / sigma
    # No argument validation: a diverged network's NaN would fail inside torch's Normal with a
    # page of tensor; LevyNeuralNet.get_loss names the problem and the fix instead.
    normal = torch.distributions.Normal(
        torch.zeros_like(z), torch.ones_like(z), validate_args=False
    )
    return sigma * (z * (2 * normal.cdf(z) - 1) + 2 * normal.log_prob(z).exp() - 1 / _SQRT_PI)


class GaussianScore(nn.Module):
    """Proper scoring rule on ``(mean, variance)``, averaged over observed targets.

    ``NaN`` targets (unobserved future points of a forecasting window) are left out. With
    row weights ``w``, the average is ``Σ w·score / Σ w`` over observed targets.

    Parameters
    ----------
    loss : {"crps", "nll", "beta_nll", "mse"}, default="crps"
        Closed-form Gaussian CRPS, Gaussian negative log-likelihood, β-NLL (the negative
        log-likelihood of each point weighted by its detached ``σ^{2β}``, β = 0.5, so that
        points with large σ are not neglected: Seitzer et al., 2022), or squared error of the
        mean alone (σ is then calibrated afterwards, see :meth:`LevyNeuralNet.calibrate`).

    Examples
    --------
    >>> import torch
    >>> from levy_sklearn.training import GaussianScore
    >>> mean, variance = torch.zeros(2, 2), torch.ones(2, 2)
    >>> y = torch.tensor([[0.0, float("nan")], [1.0, -1.0]])  # NaN: not observed, no loss
    >>> round(GaussianScore("nll")(mean, variance, y).item(), 4)  # mean of 3 observed
    1.2523
    >>> w = torch.tensor([0.0, 1.0])  # row weights: the first row does not count
    >>> round(GaussianScore("nll")(mean, variance, y, w).item(), 4)
    1.4189
    """

    def __init__(self, loss: str = "crps") -> None:
        super().__init__()
        if loss not in LOSSES:
            raise ValueError(f"loss={loss!r} must be one of {LOSSES}.")
        self.loss = loss

    def forward(
        self, mean: Tensor, variance: Tensor, y: Tensor, weight: Tensor | None = None
    ) -> Tensor:
        y = y.to(mean.dtype).reshape(mean.shape)
        observed = torch.isfinite(y)
        y = torch.where(observed, y, mean.detach())
        if weight is not None:
            # Row weights: each observed target's score counts ``weight`` times.
            observed = observed * weight.to(mean.dtype).reshape(-1, *[1] * (mean.ndim - 1))
        if self.loss == "crps":
            score = gaussian_crps_torch(mean, variance, y)
        elif self.loss in ("nll", "beta_nll"):
            score = 0.5 * (torch.log(2 * math.pi * variance) + (y - mean).pow(2) / variance)
            if self.loss == "beta_nll":
                score = score * variance.detach().pow(_BETA_NLL)
        else:
            score = (y - mean).pow(2)
        return (score * observed).sum() / observed.sum().clamp(min=1)


class TokenDataset(Dataset):
    """skorch's ``Dataset``, fetched a whole batch at a time.

    torch's ``DataLoader`` asks a dataset with ``__getitems__`` for all the rows of a batch
    at once; indexing the token arrays with the batch's row indices takes a handful of
    numpy slices, where fetching every row and stacking them again took a fifth of a small
    step. Paired with ``collate_fn=default_convert`` (which only turns the arrays into
    tensors), the loader yields the same batches as before: the same rows, in the same
    order (the sampler and its random draws are torch's own), with the same values.

    Examples
    --------
    >>> import numpy as np
    >>> from torch.utils.data import DataLoader, default_convert
    >>> from levy_sklearn.training import TokenDataset
    >>> data = TokenDataset({"values": np.arange(10.0).reshape(5, 2)}, np.arange(5.0))
    >>> loader = DataLoader(data, batch_size=2, collate_fn=default_convert)
    >>> [y.tolist() for _, y in loader]
    [[0.0, 1.0], [2.0, 3.0], [4.0]]
    """

    def __getitems__(self, indices: list[int]) -> tuple[Any, Any]:
        return self[np.asarray(indices, dtype=np.int64)]


class BaseLRScheduler(LRScheduler):
    """skorch's ``LRScheduler`` with a cycle per training call, recording the base rate.

    skorch continues the first call's schedule from the epochs in the history, so a later
    call (a warm start, a pretraining update) ran at the rates the first cycle ended on: 0
    for a cosine cycle, and a warm start changed nothing. Here every call starts its own
    cycle from each group's base rate over the epochs it plans (``T_max``); a first fit is
    scheduled as before. skorch records the rate of the *first* parameter group, which is
    the first custom group of ``optimizer__param_groups`` (the front-ends give the Lévy
    layers' log-scale scalars a larger rate there), so ``verbose`` printed a multiple of
    ``lr``; skorch puts the group of every other parameter last, and that one is recorded.

    Examples
    --------
    >>> from levy_sklearn.training import BaseLRScheduler
    >>> BaseLRScheduler("CosineAnnealingLR", T_max=10).event_name
    'event_lr'
    """

    def _get_scheduler(self, net, policy, **scheduler_kwargs):
        for group in net.optimizer_.param_groups:
            group["lr"] = group.setdefault("initial_lr", group["lr"])
        if "T_max" in scheduler_kwargs:
            planned = getattr(net, "_planned_epochs", scheduler_kwargs["T_max"])
            scheduler_kwargs["T_max"] = max(int(planned), 1)
        return policy(net.optimizer_, **{**scheduler_kwargs, "last_epoch": -1})

    def _record_last_lr(self, net, kind):
        if self.event_name is None or not hasattr(self.lr_scheduler_, "get_last_lr"):
            return
        lr = self.lr_scheduler_.get_last_lr()[-1]
        if kind == "epoch":
            net.history.record(self.event_name, lr)
        else:
            net.history.record_batch(self.event_name, lr)


_LABELS: ContextVar[tuple[str, ...]] = ContextVar("levy_sklearn_progress_labels", default=())
# Off a terminal, one line per epoch and, within a long epoch, one at most this often.
_LOG_INTERVAL_S = 60.0
# The bar's text without the bar (a log file cannot redraw it): tqdm's fields otherwise.
_PLAIN_FORMAT = (
    "{desc}: {percentage:3.0f}% {n_fmt}/{total_fmt} [{elapsed}<{remaining}, {rate_fmt}{postfix}]"
)


@contextmanager
def progress_label(label: str) -> Iterator[None]:
    """Name the trainings run inside the block in the progress output of ``verbose > 0``.

    Labels of nested blocks join (``"pretrain, fold 2/5 held out"``); a training outside
    every block is called ``"fit"``. The label only names the output: a fit is the same
    with and without it.

    Parameters
    ----------
    label : str
        What the trainings in the block are (a fold of a cross-fitted pretraining, …).

    Yields
    ------
    None

    Examples
    --------
    >>> import contextlib, io
    >>> import numpy as np
    >>> from levy_sklearn.regressor import LevyAttentionRegressor
    >>> from levy_sklearn.training import progress_label
    >>> X = np.random.default_rng(0).normal(size=(50, 3))
    >>> reg = LevyAttentionRegressor(max_epochs=2, random_state=0, verbose=1)
    >>> table, log = io.StringIO(), io.StringIO()  # not terminals: plain lines, no bar
    >>> with contextlib.redirect_stdout(table), contextlib.redirect_stderr(log):
    ...     with progress_label("pretrain"), progress_label("fold 2/5 held out"):
    ...         _ = reg.fit(X, X[:, 0])
    >>> log.getvalue().splitlines()[-1].split(":")[0]
    'pretrain, fold 2/5 held out'
    """
    token = _LABELS.set((*_LABELS.get(), label))
    try:
        yield
    finally:
        _LABELS.reset(token)


def _in_notebook() -> bool:
    """Whether this runs in a Jupyter kernel (skorch's test, ``ProgressBar.in_ipynb``)."""
    shell = getattr(builtins, "get_ipython", None)  # IPython puts it there
    return shell is not None and type(shell()).__name__ == "ZMQInteractiveShell"


def _redraws(stream: Any) -> bool:
    """Whether ``stream`` shows a bar redrawn in place and colours (a terminal, or a Jupyter
    notebook's output), rather than keeping every character (a file, a pipe, a capture)."""
    isatty = getattr(stream, "isatty", None)
    try:
        terminal = bool(isatty()) if callable(isatty) else False
    except ValueError:  # a closed stream
        terminal = False
    return terminal or _in_notebook()


def _write_above_bars(text: str) -> None:
    """``print`` that keeps a running tqdm bar intact, and reaches a file in order with the
    progress lines on ``stderr``."""
    tqdm.tqdm.write(text)
    sys.stdout.flush()


class EpochTable(PrintLog):
    """skorch's per-epoch table (``PrintLog``), printed above the progress bar, and only
    with ``verbose > 0`` (skorch's ``PrintLog`` ignores ``verbose`` for any sink but
    ``print``). skorch colours each column's best value with ANSI codes; on ``stdout`` that
    is not a terminal (a file, a pipe) the values are written plain."""

    def __init__(self, *args: Any, sink: Any = _write_above_bars, **kwargs: Any) -> None:
        super().__init__(*args, sink=sink, **kwargs)

    def format_row(self, row, key, color):
        if not _redraws(sys.stdout):
            # PrintLog's only colour is the best value's, marked by the ``<key>_best`` entry.
            row, color = {**row, f"{key}_best": False}, ""
        return super().format_row(row, key, color)

    def on_epoch_end(self, net, **kwargs):
        if net.verbose > 0:
            super().on_epoch_end(net, **kwargs)


class FitProgressBar(ProgressBar):
    """skorch's ``ProgressBar`` spanning a whole fit, with the time left, when ``verbose > 0``.

    skorch's bar counts the batches of one epoch and is erased when the epoch ends, so on
    the small epochs of a table or a pretraining panel it only flickers, and its time left
    is the epoch's. This one counts every batch the fit will run (epochs planned × batches
    per epoch, validation batches included) on one tqdm bar, written to ``stderr``, with
    the elapsed time, the time left, the epochs done and their last losses; it stays on
    screen when the fit ends (short of 100 % when early stopping ended it). The bar is
    named by :func:`progress_label` (``"fit"`` by default; a cross-fitted ``pretrain``
    names each fold's training and the last one on all series).

    Where ``stderr`` is not a terminal (a file, a pipe, a captured stream), which cannot
    redraw a bar, the same text is written as plain lines instead: one when each epoch
    ends, and within a long epoch one a minute.

    It reads ``net.verbose`` when each fit starts: with ``verbose=0`` it does nothing. It
    draws no random numbers, so a fit is the same with and without it.

    Parameters
    ----------
    batches_per_epoch : int or "auto", default="auto"
        Batches in one epoch; ``"auto"`` counts them from the data and the batch sizes.
    detect_notebook : bool, default=True
        In a Jupyter notebook, draw tqdm's notebook widget (``tqdm.auto``; the text bar
        where ipywidgets is missing).
    postfix_keys : list of str, optional
        Epoch-level history keys shown after the bar when they are recorded (default:
        ``train_loss``, ``valid_loss``).

    Examples
    --------
    >>> import numpy as np
    >>> from levy_sklearn.regressor import LevyAttentionRegressor
    >>> X = np.random.default_rng(0).normal(size=(50, 3))
    >>> reg = LevyAttentionRegressor(max_epochs=2, random_state=0).fit(X, X[:, 0])
    >>> dict(reg.net_.callbacks_)["progress"].total_  # verbose=0: no bar was drawn
    0
    """

    def __init__(
        self,
        batches_per_epoch: int | str = "auto",
        detect_notebook: bool = True,
        postfix_keys: list[str] | None = None,
    ) -> None:
        super().__init__(batches_per_epoch, detect_notebook, postfix_keys)

    def on_train_begin(self, net, X=None, y=None, **kwargs):
        self.pbar_ = None
        self.total_ = 0
        self.first_epoch_ = len(net.history)
        self.started_ = None

    def on_epoch_begin(self, net, dataset_train=None, dataset_valid=None, **kwargs):
        if getattr(self, "started_", None) is not None or net.verbose <= 0:
            return
        # skorch notifies on_train_begin before fit_loop knows a partial_fit's epochs.
        self.epochs_ = int(getattr(net, "_planned_epochs", net.max_epochs))
        per_epoch = self.batches_per_epoch
        if per_epoch == "auto":
            per_epoch = self._get_batches_per_epoch(net, dataset_train, dataset_valid)
        self.total_ = int(per_epoch) * self.epochs_
        self.label_ = ", ".join(_LABELS.get()) or "fit"
        self.done_, self.postfix_ = 0, ""
        self.started_ = self.written_ = time.monotonic()
        if not _redraws(sys.stderr):
            return  # plain lines (see _write_line)
        bar = tqdm.tqdm
        if self.detect_notebook:
            # tqdm's own choice: the notebook widget in Jupyter when ipywidgets is there
            # (skorch's tqdm_notebook is deprecated and fails without ipywidgets).
            from tqdm.auto import tqdm as bar
        self.pbar_ = bar(total=self.total_, unit="batch", desc=self.label_, dynamic_ncols=True)

    def on_batch_end(self, net, **kwargs):
        if getattr(self, "started_", None) is None:
            return
        self.done_ += 1
        if self.pbar_ is not None:
            self.pbar_.update()
        elif time.monotonic() - self.written_ >= _LOG_INTERVAL_S:
            self._write_line()

    def on_epoch_end(self, net, **kwargs):
        # One bar for the whole fit (closed when training ends); the epoch's losses after it.
        if getattr(self, "started_", None) is None:
            return
        epoch = len(net.history) - self.first_epoch_
        postfix = {"epoch": f"{epoch}/{self.epochs_}"}
        postfix.update((k, net.history[-1][k]) for k in self.postfix_keys if k in net.history[-1])
        if self.pbar_ is not None:
            self.pbar_.set_postfix(postfix)
            return
        self.postfix_ = ", ".join(
            f"{key}={tqdm.tqdm.format_num(value) if isinstance(value, Number) else value}"
            for key, value in postfix.items()
        )
        self._write_line()

    def on_train_end(self, net, X=None, y=None, **kwargs):
        if getattr(self, "pbar_", None) is not None:
            self.pbar_.close()
        self.pbar_ = None
        self.started_ = None

    def _write_line(self) -> None:
        """The bar's text as one line on ``stderr``, after the table rows already printed."""
        self.written_ = time.monotonic()
        line = tqdm.tqdm.format_meter(
            self.done_,
            self.total_,
            self.written_ - self.started_,
            prefix=self.label_,
            unit="batch",
            postfix=self.postfix_,
            bar_format=_PLAIN_FORMAT,
        )
        sys.stdout.flush()
        print(line, file=sys.stderr, flush=True)


class LevyNeuralNet(NeuralNet):
    """skorch ``NeuralNet`` around :class:`~levy_sklearn.network.LevyNet`.

    Inputs are dicts of padded token arrays (``times``, ``channels``, ``values``, ``mask``,
    ``query_times``, ``query_channels``), targets are ``(n, Q)`` arrays (``NaN`` = unobserved).
    An optional ``"sample_weight"`` entry of shape ``(n,)`` weights the rows in the loss (see
    :class:`GaussianScore`) and is not passed to the module.
    The module returns :class:`~levy_sklearn.network.LevyNetOutput`; :meth:`get_loss` scores
    mean and variance together, and :meth:`predict_moments` returns every output, where
    skorch's own ``predict`` would keep only the first. ``variance_scale_`` (1 unless
    :meth:`calibrate` set it) multiplies every predicted variance.

    Unlike skorch's ``NeuralNet``, whose ``fit`` and ``partial_fit`` swallow a
    ``KeyboardInterrupt`` and return a partly trained net, this net re-raises it once skorch
    has finished its ``on_train_end`` hooks: Ctrl-C stops the caller (a grid search, a
    script), and the front-ends leave no half-fitted estimator behind. (skorch's
    ``EarlyStopping`` stops training by raising ``KeyboardInterrupt`` too; that one is not
    re-raised.)

    Examples
    --------
    >>> import numpy as np
    >>> from levy_sklearn.tokens import tokens_from_rows
    >>> from levy_sklearn.regressor import LevyAttentionRegressor
    >>> X = np.random.default_rng(0).normal(size=(50, 3))
    >>> net = LevyAttentionRegressor(max_epochs=2, random_state=0).fit(X, X[:, 0]).net_
    >>> tokens = tokens_from_rows(X[:4])
    >>> type(net).__name__, type(net.module_).__name__
    ('LevyNeuralNet', 'LevyNet')
    >>> net.predict_moments(tokens).variance.shape  # (n, Q): one query per row here
    (4, 1)
    """

    variance_scale_ = 1.0

    def fit_loop(self, X, y=None, epochs=None, **fit_params):
        self._interrupted = False
        try:
            return super().fit_loop(X, y, epochs=epochs, **fit_params)
        except KeyboardInterrupt:
            self._interrupted = not any(
                isinstance(cb, EarlyStopping) and cb.misses_ == cb.patience
                for _, cb in self.callbacks_
            )
            raise

    def partial_fit(self, X, y=None, classes=None, **fit_params):
        # The epochs this call will run, known before skorch's on_train_begin (which comes
        # before fit_loop): the progress bar's total and the learning-rate cycle's length.
        epochs = fit_params.get("epochs")
        self._planned_epochs = self.max_epochs if epochs is None else epochs
        super().partial_fit(X, y, classes=classes, **fit_params)
        if getattr(self, "_interrupted", False):
            raise KeyboardInterrupt("Training was interrupted.")
        return self

    def infer(self, x, **fit_params):
        # Row weights travel with the tokens (so that skorch batches and splits them alike)
        # but are the loss's business, not the module's.
        if isinstance(x, Mapping) and SAMPLE_WEIGHT in x:
            x = {k: v for k, v in x.items() if k != SAMPLE_WEIGHT}
        return super().infer(x, **fit_params)

    def get_loss(self, y_pred, y_true, X=None, training=False):
        mean, variance = y_pred[:2]
        weight = X.get(SAMPLE_WEIGHT) if isinstance(X, Mapping) else None
        if weight is not None:
            weight = torch.as_tensor(weight, device=mean.device)
        loss = self.criterion_(mean, variance, y_true, weight)
        if not torch.isfinite(loss):  # stop before a NaN gradient spreads to every weight
            raise self._diverged(f"the loss is no longer finite in epoch {len(self.history)}")
        return loss

    def _diverged(self, what: str) -> FloatingPointError:
        return FloatingPointError(
            f"Training diverged: {what} (lr={self.lr:g}, weight_decay="
            f"{self.optimizer__weight_decay:g}). Lower lr (e.g. ten times) or weight_decay, or "
            "check the data for extreme values."
        )

    def check_learned(self, y: np.ndarray) -> None:
        """Warn when training ended worse on its own data than the trivial forecast: the
        targets' centre with unit spread (their standardised mean and scale, ``N(0, 1)`` in
        the network's units), scored by the training loss. A diverged training need not
        reach a non-finite loss: at ``lr=0.5`` a regressor ended at twice that forecast's
        CRPS with σ a thousandth of y's spread, and at ``lr=1`` a forecaster's airline
        forecasts were negative, without a word.

        Parameters
        ----------
        y : ndarray
            The training targets in the network's units (``NaN``: unobserved).

        Examples
        --------
        >>> import numpy as np
        >>> from levy_sklearn.regressor import LevyAttentionRegressor
        >>> X = np.random.default_rng(0).normal(size=(50, 3))
        >>> reg = LevyAttentionRegressor(max_epochs=5, random_state=0).fit(X, X[:, 0])
        >>> reg.net_.check_learned((X[:, :1] - reg.y_mean_) / reg.y_scale_)  # silent
        """
        target = torch.as_tensor(np.asarray(y, dtype=np.float32)[:_LEARNED_CHECK_ROWS])
        with torch.no_grad():
            trivial = float(
                self.criterion_(torch.zeros_like(target), torch.ones_like(target), target)
            )
        final = float(self.history[-1, "train_loss"])
        if final > trivial + 0.5 * abs(trivial):
            warnings.warn(
                f"Training ended with a loss of {final:.3g} on its own data, worse than the "
                f"{trivial:.3g} of forecasting the targets' standardised mean with unit "
                f"spread: it diverged or stopped far too early (lr={self.lr:g}, "
                f"max_epochs={self.max_epochs}). Lower lr (e.g. ten times), or raise "
                "max_epochs.",
                UserWarning,
                stacklevel=2,
            )

    def check_finite(self) -> None:
        """Refuse a net whose weights are NaN or infinite: its training diverged.

        Raises
        ------
        FloatingPointError
            Naming the learning rate and the fix.

        Examples
        --------
        >>> import numpy as np
        >>> from levy_sklearn.regressor import LevyAttentionRegressor
        >>> X = np.random.default_rng(0).normal(size=(50, 3))
        >>> net = LevyAttentionRegressor(max_epochs=1, random_state=0).fit(X, X[:, 0]).net_
        >>> net.check_finite()  # a trained net passes
        """
        if not all(bool(torch.isfinite(p).all()) for p in self.module_.parameters()):
            raise self._diverged("the network's weights are no longer finite after training")

    def predict_moments(self, X: Mapping[str, np.ndarray]) -> LevyNetOutput:
        """Every output of the module for every query, as float64 numpy arrays.

        Parameters
        ----------
        X : dict of array
            Token arrays (see the class docstring).

        Returns
        -------
        LevyNetOutput
            ``mean``, ``variance`` and ``noise`` ``(n, Q)``; ``evidence`` and
            ``disagreement`` ``(n, Q, H)``. ``variance``, ``disagreement`` and ``noise``
            include ``variance_scale_``.

        Examples
        --------
        >>> import numpy as np
        >>> from levy_sklearn.tokens import tokens_from_rows
        >>> from levy_sklearn.regressor import LevyAttentionRegressor
        >>> X = np.random.default_rng(0).normal(size=(50, 3))
        >>> net = LevyAttentionRegressor(max_epochs=2, random_state=0).fit(X, X[:, 0]).net_
        >>> tokens = tokens_from_rows(X[:4])
        >>> out = net.predict_moments(tokens)
        >>> out.mean.shape, out.evidence.shape, out.mean.dtype
        ((4, 1), (4, 1, 4), dtype('float64'))
        """
        n_rows = len(X["times"])
        rows = self.predict_batch_rows(X)

        # Whole slices of rows (views, no per-row work), each through skorch's evaluation
        # step (eval mode, no autograd, ``infer``). Isolated from torch's global RNG so that
        # predicting never changes the caller's random stream.
        def as_numpy(outputs):
            return [t.detach().cpu().to(torch.float64).numpy() for t in outputs]

        with seeded(None):
            parts = [
                as_numpy(
                    self.evaluation_step(
                        ({k: v[start : start + rows] for k, v in X.items()}, None)
                    )
                )
                for start in range(0, n_rows, rows)
            ]
            if not parts:  # no rows: let skorch's iterator say what it says about empty data
                parts = [as_numpy(out) for out in self.forward_iter(X, training=False)]
        mean, var, evidence, disagreement, noise = (
            np.concatenate(p) for p in zip(*parts, strict=True)
        )
        scale = self.variance_scale_
        return LevyNetOutput(mean, var * scale, evidence, disagreement * scale, noise * scale)

    def predict_batch_rows(self, X: Mapping[str, np.ndarray]) -> int:
        """Rows per inference batch of :meth:`predict_moments` for the token arrays ``X``.

        As many rows as keep one batch's activations within :data:`PREDICT_BATCH_BYTES`
        (``(tokens + queries) × (d_model + n_heads × tokens)`` values per row, in the
        module's float type), never fewer than the training ``batch_size`` and never more
        than the rows of ``X``. Independent of the training batch size otherwise.

        Parameters
        ----------
        X : dict of array
            Token arrays (see the class docstring).

        Returns
        -------
        int

        Examples
        --------
        >>> import numpy as np
        >>> from levy_sklearn.tokens import tokens_from_rows
        >>> from levy_sklearn.regressor import LevyAttentionRegressor
        >>> X = np.random.default_rng(0).normal(size=(50, 3))
        >>> net = LevyAttentionRegressor(max_epochs=2, random_state=0).fit(X, X[:, 0]).net_
        >>> net.predict_batch_rows(tokens_from_rows(np.zeros((100_000, 18))))
        530
        >>> net.predict_batch_rows(tokens_from_rows(X))  # all 50 rows in one batch
        50
        """
        n_rows, n_tokens = np.shape(X["times"])[:2]
        n_queries = np.shape(X["query_times"])[1]
        module = getattr(self, "module_", None)
        itemsize = 8
        if isinstance(module, nn.Module):
            itemsize = next(module.parameters()).element_size()
        width = self.module__d_model + self.module__n_heads * n_tokens
        per_row = itemsize * (n_tokens + n_queries) * width
        rows = max(PREDICT_BATCH_BYTES // max(per_row, 1), self.batch_size)
        return int(max(1, min(rows, n_rows)))

    def predict_samples(
        self,
        X: Mapping[str, np.ndarray],
        n_samples: int,
        method: str = "poisson",
        random_state: int | None = None,
    ) -> np.ndarray:
        """Draw predictions by repeated stochastic passes (the baselines' way to get σ).

        Parameters
        ----------
        X : dict of array
            Token arrays.
        n_samples : int
            Number of draws per query.
        method : {"poisson", "mc_dropout"}, default="poisson"
            ``"poisson"`` draws the output layer from its Poisson construction (one encoder
            pass, see :meth:`LevyNet.sample`); ``"mc_dropout"`` runs the whole network
            ``n_samples`` times with dropout active (needs ``dropout > 0``).
        random_state : int, optional
            Seed of the draws.

        Returns
        -------
        ndarray of shape (n_samples, n, Q)
            Draws in the module's output units (``variance_scale_`` is not applied: draws
            carry their own spread).

        Examples
        --------
        >>> import numpy as np
        >>> from levy_sklearn.tokens import tokens_from_rows
        >>> from levy_sklearn.regressor import LevyAttentionRegressor
        >>> X = np.random.default_rng(0).normal(size=(50, 3))
        >>> net = LevyAttentionRegressor(max_epochs=2, random_state=0).fit(X, X[:, 0]).net_
        >>> tokens = tokens_from_rows(X[:4])
        >>> draws = net.predict_samples(tokens, n_samples=50, random_state=0)
        >>> draws.shape
        (50, 4, 1)
        >>> bool(np.array_equal(draws, net.predict_samples(tokens, 50, random_state=0)))
        True
        """
        if method not in ("poisson", "mc_dropout"):
            raise ValueError(f"method={method!r} must be 'poisson' or 'mc_dropout'.")
        if method == "mc_dropout" and self.module__dropout <= 0:
            raise ValueError("method='mc_dropout' needs a network trained with dropout > 0.")
        module = self.module_
        draws = []
        with seeded(random_state), torch.no_grad():
            for batch in self.get_iterator(self.get_dataset(X), training=False):
                tokens = {k: v.to(self.device) for k, v in batch[0].items()}
                if method == "poisson":
                    draws.append(module.sample(**tokens, n_samples=n_samples))
                    continue
                module.train()
                try:
                    draws.append(torch.stack([module(**tokens)[0] for _ in range(n_samples)]))
                finally:
                    module.eval()
        return torch.cat(draws, dim=1).cpu().to(torch.float64).numpy()

    def calibrate(self, X: Mapping[str, np.ndarray], y: np.ndarray) -> float:
        """Fit the one scalar ``s²`` with ``mean((y − μ)² / (s² σ²)) = 1`` on held-out data.

        Used after training with ``loss="mse"``, whose σ is otherwise unscaled; writes and
        returns ``variance_scale_``.

        Parameters
        ----------
        X : dict of array
            Token arrays of the held-out rows.
        y : ndarray of shape (n, Q)
            Their targets (``NaN`` = unobserved, left out).

        Returns
        -------
        float
            ``s²``, the new ``variance_scale_``.

        Examples
        --------
        >>> import numpy as np
        >>> from levy_sklearn.tokens import tokens_from_rows
        >>> from levy_sklearn.regressor import LevyAttentionRegressor
        >>> X = np.random.default_rng(0).normal(size=(50, 3))
        >>> net = LevyAttentionRegressor(max_epochs=2, random_state=0).fit(X, X[:, 0]).net_
        >>> tokens = tokens_from_rows(X[:4])
        >>> y = np.full((4, 1), 10.0)  # far from every prediction: σ must grow
        >>> net.calibrate(tokens, y) > 1, net.variance_scale_ > 1
        (True, True)
        """
        self.variance_scale_ = 1.0
        out = self.predict_moments(X)
        y = np.asarray(y, dtype=np.float64).reshape(out.mean.shape)
        ok = np.isfinite(y)
        ratio = (y - out.mean)[ok] ** 2 / out.variance[ok]
        self.variance_scale_ = float(np.mean(ratio)) if ratio.size else 1.0
        return self.variance_scale_


def check_device(device: str | torch.device) -> str:
    """Resolve the ``device`` hyperparameter to a torch device string, or say how to fix it.

    ``"auto"`` picks ``"cuda"`` when a GPU is visible and ``"cpu"`` otherwise; ``"cpu"``,
    ``"cuda"``, ``"cuda:<index>"`` and ``"mps"`` (Apple GPUs) pass through when available.

    Parameters
    ----------
    device : str or torch.device
        The requested device.

    Returns
    -------
    str
        A device string skorch and torch accept.

    Raises
    ------
    ValueError
        For a string torch cannot read, another kind of device, or a GPU that is not there.

    Examples
    --------
    >>> from levy_sklearn.training import check_device
    >>> check_device("cpu")
    'cpu'
    >>> check_device("auto") in ("cpu", "cuda")
    True
    """
    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    fix = "use 'cpu', 'cuda', 'cuda:<index>', 'mps' or 'auto' (CUDA when available, else CPU)"
    try:
        kind = torch.device(device).type
    except (RuntimeError, TypeError) as err:
        raise ValueError(f"device={device!r} is not a device torch knows; {fix}.") from err
    available = {
        "cpu": True,
        "cuda": torch.cuda.is_available(),
        "mps": torch.backends.mps.is_available(),
    }
    if kind not in available:
        raise ValueError(f"device={device!r} is not supported; {fix}.")
    if not available[kind]:
        raise ValueError(
            f"device={device!r} was requested but torch sees no {kind.upper()} device (torch "
            f"{torch.__version__}); use device='cpu', or 'auto' to take a GPU only when "
            "there is one."
        )
    return str(device)


@contextmanager
def seeded(random_state: int | None) -> Iterator[None]:
    """Run a block under a fixed torch seed without disturbing the caller's global RNG.

    torch's generator is global to the process, so the block holds a process-wide lock:
    fits running in threads of one process (joblib's threading backend, a Dask cluster with
    ``processes=False``) take turns instead of drawing from each other's streams, and stay
    reproducible.

    Parameters
    ----------
    random_state : int or None
        Seed of torch's CPU generator inside the block; ``None`` leaves it as it is (the
        block's draws are still undone on exit).

    Yields
    ------
    None

    Examples
    --------
    >>> import torch
    >>> from levy_sklearn.training import seeded
    >>> before = torch.random.get_rng_state()
    >>> with seeded(0):
    ...     a = torch.rand(2)
    >>> with seeded(0):
    ...     b = torch.rand(2)
    >>> bool(torch.equal(a, b)), bool(torch.equal(torch.random.get_rng_state(), before))
    (True, True)
    """
    with _RNG_LOCK, torch.random.fork_rng(devices=[]):
        if random_state is not None:
            torch.manual_seed(random_state)
        yield


#: Where ``max_steps`` would allow fewer than two passes over the training data, a budget
#: that grows with the data (``grow=True`` in :func:`training_budget`; the forecaster's
#: panels) trains all ``max_epochs`` passes at this many times ``batch_size`` and
#: :data:`LARGE_DATA_LR_GROWTH` times ``lr``. Chosen on competition sets no report uses (M3
#: other and quarterly, M1 monthly and quarterly; ``benchmarks/results/panel_budget.md``):
#: against one capped epoch it lowered MASE 0.5-4 % and scaled CRPS 2-11 % on every set,
#: at 4-5 times the CPU; ten epochs at the small batch gained as much at 7 times.
LARGE_DATA_BATCH_GROWTH = 8
#: See :data:`LARGE_DATA_BATCH_GROWTH` (about the square root of the batch's growth).
LARGE_DATA_LR_GROWTH = 2.0


@dataclass(frozen=True)
class Budget:
    """How long and in what steps a fit trains (see :func:`training_budget`)."""

    epochs: int
    batch_size: int
    lr: float


def training_budget(
    n_rows: int,
    batch_size: int,
    lr: float,
    max_epochs: int,
    max_steps: int | None,
    validation_fraction: float = 0.0,
    grow: bool = False,
) -> Budget:
    """The epochs, batch size and learning rate of a fit on ``n_rows`` rows.

    Small data keeps ``max_epochs`` passes at ``batch_size`` and ``lr``. Where they would take
    over ``max_steps`` steps, training stops after the last whole epoch within ``max_steps``
    (always at least one), so the cost of a fit stops growing with the number of rows; with
    ``grow``, data so large that fewer than two epochs would fit train all ``max_epochs``
    passes at :data:`LARGE_DATA_BATCH_GROWTH` times ``batch_size`` and
    :data:`LARGE_DATA_LR_GROWTH` times ``lr`` instead (their cost grows with the data).

    Parameters
    ----------
    n_rows : int
        Rows (windows) given to the fit, before the validation split.
    batch_size : int
        Rows per optimizer step.
    lr : float
        Learning rate.
    max_epochs : int
        Most epochs.
    max_steps : int or None
        Most optimizer steps in all at ``batch_size``; ``None``: no limit.
    validation_fraction : float, default=0.0
        Share of the rows held out (as skorch's ``ValidSplit`` holds it out).
    grow : bool, default=False
        Whether large data trains longer at a larger batch (see above).

    Returns
    -------
    Budget

    Examples
    --------
    >>> from levy_sklearn.training import training_budget
    >>> training_budget(442, 64, 0.01, max_epochs=40, max_steps=1000).epochs  # all 40
    40
    >>> training_budget(5000, 64, 0.01, max_epochs=40, max_steps=1000).epochs  # 79 steps each
    12
    >>> training_budget(40000, 32, 0.01, max_epochs=10, max_steps=500, grow=True)
    Budget(epochs=10, batch_size=256, lr=0.02)
    """
    if max_steps is None:
        return Budget(max_epochs, batch_size, lr)
    n_train = n_rows - math.ceil(validation_fraction * n_rows)
    steps_per_epoch = max(1, math.ceil(n_train / batch_size))
    epochs = max(1, min(max_epochs, max_steps // steps_per_epoch))
    if grow and epochs < min(2, max_epochs):
        return Budget(max_epochs, LARGE_DATA_BATCH_GROWTH * batch_size, LARGE_DATA_LR_GROWTH * lr)
    return Budget(epochs, batch_size, lr)


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


def _fused_adamw(device: str) -> bool:
    """Whether torch has a fused AdamW for ``device`` (CUDA, and the CPU from torch 2.4)."""
    kind = torch.device(device).type
    return kind == "cuda" or (kind == "cpu" and _TORCH_VERSION >= (2, 4))


def make_levy_net(network: NetworkSpec, training: TrainingSpec) -> LevyNeuralNet:
    """Build (not train) the skorch net of a network and a training spec.

    AdamW with a cosine-annealed learning rate; with ``validation_fraction > 0`` skorch
    holds that share out (seeded) and, when ``patience`` is set, stops early on the
    validation loss and restores the best weights.

    Parameters
    ----------
    network : NetworkSpec
    training : TrainingSpec

    Returns
    -------
    LevyNeuralNet
        Not initialised: ``fit`` builds the module.

    Examples
    --------
    >>> from levy_sklearn.training import NetworkSpec, TrainingSpec, make_levy_net
    >>> net = make_levy_net(
    ...     NetworkSpec(n_channels=3, n_targets=1, d_model=8, n_heads=2, n_windowed_heads=0,
    ...                 n_layers=0, attention="levy", dropout=0.0),
    ...     TrainingSpec(loss="crps", lr=1e-2, weight_decay=0.0, epochs=2, batch_size=32,
    ...                  validation_fraction=0.0, patience=None, device="cpu", seed=0,
    ...                  verbose=0))
    >>> net.max_epochs, net.criterion__loss, net.initialized_
    (2, 'crps', False)
    """
    run = training
    if run.recipe not in RECIPES:
        raise ValueError(f"recipe={run.recipe!r} must be one of {RECIPES}.")
    rate: float | list[float] = 1.0
    param_groups = []
    if run.recipe == "rows":
        # Output heads start at rates 1 … 1000: some where evidence is plentiful (precise
        # means), some where it is scarce (σ that tracks how much of the row was seen).
        rate = np.logspace(0, 3, network.n_heads).tolist()
        # The Lévy layer's positive scalars (rate, sharpness, bandwidth, look-back) live on
        # the log scale, where Adam's steps of about ``lr`` would take thousands of steps to
        # move a rate by a factor of 10; they get a larger learning rate.
        param_groups = [("*log_*", {"lr": _LOG_PARAM_LR * run.lr})]
    if network.n_lags > 0 and run.lags_lr != 1:
        param_groups.append(("lags.*", {"lr": run.lags_lr * run.lr}))
    callbacks: list[tuple[str, Any]] = [
        ("lr_schedule", BaseLRScheduler("CosineAnnealingLR", T_max=max(run.epochs, 1))),
        ("progress", FitProgressBar()),
    ]
    split = None
    if run.validation_fraction > 0:
        split = ValidSplit(run.validation_fraction, random_state=run.seed)
        if run.patience is not None:
            callbacks.append(
                ("early_stopping", EarlyStopping(patience=run.patience, load_best=True))
            )
    module = {f"module__{name}": value for name, value in asdict(network).items()}
    device = check_device(run.device)
    return LevyNeuralNet(
        module=LevyNet,
        **module,
        module__rate=rate,
        criterion=GaussianScore,
        criterion__loss=run.loss,
        optimizer=torch.optim.AdamW,
        optimizer__weight_decay=run.weight_decay,
        # One fused kernel for the whole AdamW update (CPU from torch 2.4): at the regressor's
        # 54 parameter tensors it took 0.17 ms a step against foreach's 0.61 (session 19).
        **{f"optimizer__{'fused' if _fused_adamw(device) else 'foreach'}": True},
        optimizer__param_groups=param_groups,
        lr=run.lr,
        max_epochs=run.epochs,
        batch_size=int(run.batch_size),  # torch's loader refuses a NumPy integer
        train_split=split,
        callbacks=callbacks,
        # Batches are indexed whole and only converted to tensors (see TokenDataset).
        dataset=TokenDataset,
        iterator_train__collate_fn=default_convert,
        iterator_valid__collate_fn=default_convert,
        # Shuffling draws from torch's global RNG, which fit_levy_net seeds.
        iterator_train__shuffle=True,
        device=device,
        verbose=run.verbose,
        # With verbose > 0 skorch's epoch table is printed above the progress bar.
        callbacks__print_log=EpochTable,
    )


def fit_levy_net(
    net: LevyNeuralNet,
    X: Mapping[str, np.ndarray],
    y: np.ndarray,
    random_state: int | None,
) -> LevyNeuralNet:
    """Train ``net`` reproducibly, calibrate σ for ``loss="mse"``, switch to float64 inference.

    Every random choice (initial weights, shuffling, dropout, the validation split) flows from
    ``random_state``. With ``loss="mse"`` the variance scale is fitted on skorch's validation
    split (on the training data when there is none). Inference then runs in float64, so
    predictions do not depend on how rows are batched (float32 rounding would, at ~1e-7).

    Parameters
    ----------
    net : LevyNeuralNet
        From :func:`make_levy_net`.
    X : dict of array
        Token arrays.
    y : ndarray of shape (n, Q)
        float32 targets (``NaN`` = unobserved, left out of the loss).
    random_state : int or None
        Seed of every random choice of training.

    Returns
    -------
    LevyNeuralNet
        ``net``, trained.

    Examples
    --------
    >>> import numpy as np
    >>> from levy_sklearn.tokens import tokens_from_rows
    >>> from levy_sklearn.training import (NetworkSpec, TrainingSpec, fit_levy_net,
    ...                                    make_levy_net)
    >>> X = np.random.default_rng(0).normal(size=(50, 3))
    >>> tokens, y = tokens_from_rows(X), X[:, :1].astype(np.float32)
    >>> network = NetworkSpec(n_channels=3, n_targets=1, d_model=8, n_heads=2,
    ...                       n_windowed_heads=0, n_layers=0, attention="levy", dropout=0.0)
    >>> training = TrainingSpec(loss="crps", lr=1e-2, weight_decay=0.0, epochs=2,
    ...                         batch_size=32, validation_fraction=0.0, patience=None,
    ...                         device="cpu", seed=0, verbose=0)
    >>> def trained():
    ...     return fit_levy_net(make_levy_net(network, training), tokens, y, random_state=0)
    >>> a, b = trained().predict_moments(tokens), trained().predict_moments(tokens)
    >>> bool(np.array_equal(a.mean, b.mean))  # same seed, same model
    True
    """
    _check_split(net, len(y))
    with seeded(random_state):
        net.fit(X, y)
    _checked_for_inference(net, y)
    if net.criterion__loss == "mse":
        if net.train_split is None:
            net.calibrate(X, y)
        else:
            _, valid = net.get_split_datasets(X, y)
            net.calibrate(take_tokens(X, valid.indices), y[valid.indices])
    return net


def _checked_for_inference(net: LevyNeuralNet, y: np.ndarray) -> None:
    """After training on targets ``y``: refuse non-finite weights, warn when the loss ended
    worse than the trivial forecast's, and switch to float64 inference."""
    net.check_finite()
    net.check_learned(y)
    net.module_.double()


def _check_split(net: LevyNeuralNet, n_rows: int) -> None:
    """Refuse a validation split that leaves no row to train on (scikit-learn's split would
    fail naming its own ``test_size``)."""
    if net.train_split is not None and n_rows - math.ceil(net.train_split.cv * n_rows) < 1:
        raise ValueError(
            f"validation_fraction={net.train_split.cv:g} holds out every one of the {n_rows} "
            "training rows (windows for a forecaster); lower it, or set it to 0 to train on "
            "them all."
        )


def continue_levy_net(
    net: LevyNeuralNet,
    X: Mapping[str, np.ndarray],
    y: np.ndarray,
    random_state: int | None,
    epochs: int,
    verbose: int | None = None,
    batch_size: int | None = None,
) -> LevyNeuralNet:
    """Train a copy of a fitted net ``epochs`` more epochs (warm start, pretraining updates).

    The copy trains in float32 from the net's weights and optimiser state, with a new cosine
    learning-rate cycle, as :func:`fit_levy_net` trains; σ is recalibrated for
    ``loss="mse"``, and inference switches back to float64. ``net`` itself is left as it
    was, so an interrupted or failed call changes nothing.

    Parameters
    ----------
    net : LevyNeuralNet
        A net trained by :func:`fit_levy_net`.
    X : dict of array
        Token arrays.
    y : ndarray of shape (n, Q)
        float32 targets (``NaN`` = unobserved).
    random_state : int or None
        Seed of every random choice of the further training.
    epochs : int
        Passes over ``X``.
    verbose : int, optional
        The copy's verbosity (see :func:`make_levy_net`); ``None`` keeps ``net``'s.
    batch_size : int, optional
        The copy's rows per step; ``None`` keeps ``net``'s.

    Returns
    -------
    LevyNeuralNet
        The trained copy.

    Examples
    --------
    >>> import numpy as np
    >>> from levy_sklearn.tokens import tokens_from_rows
    >>> from levy_sklearn.training import (NetworkSpec, TrainingSpec, continue_levy_net,
    ...                                    fit_levy_net, make_levy_net)
    >>> X = np.random.default_rng(0).normal(size=(50, 3))
    >>> tokens, y = tokens_from_rows(X), X[:, :1].astype(np.float32)
    >>> net = fit_levy_net(make_levy_net(
    ...     NetworkSpec(n_channels=3, n_targets=1, d_model=8, n_heads=2, n_windowed_heads=0,
    ...                 n_layers=0, attention="levy", dropout=0.0),
    ...     TrainingSpec(loss="crps", lr=1e-2, weight_decay=0.0, epochs=2, batch_size=32,
    ...                  validation_fraction=0.0, patience=None, device="cpu", seed=0,
    ...                  verbose=0)), tokens, y, random_state=0)
    >>> more = continue_levy_net(net, tokens, y, random_state=0, epochs=3)
    >>> len(net.history), len(more.history), more.module_.readout_bias.dtype
    (2, 5, torch.float64)
    """
    net = copy.deepcopy(net)
    if verbose is not None:
        net.verbose = verbose
    if batch_size is not None:
        net.batch_size = int(batch_size)
    net.module_.float()
    _check_split(net, len(y))
    with seeded(random_state):
        net.partial_fit(X, y, epochs=epochs)
    _checked_for_inference(net, y)
    if net.criterion__loss == "mse":
        net.calibrate(X, y)
    return net


def predict_in_chunks(
    net: LevyNeuralNet, chunks: Iterable[Mapping[str, np.ndarray]]
) -> LevyNetOutput:
    """:meth:`LevyNeuralNet.predict_moments` of every chunk of token arrays, concatenated.

    Token arrays take several values per observed cell: building them a chunk of rows at a
    time keeps the memory of a prediction to its outputs.

    Parameters
    ----------
    net : LevyNeuralNet
        A trained net.
    chunks : iterable of dict of array
        Token arrays, one dict per chunk of rows (e.g. a generator).

    Returns
    -------
    LevyNetOutput
        The outputs of every row, in order.

    Examples
    --------
    >>> import numpy as np
    >>> from levy_sklearn.regressor import LevyAttentionRegressor
    >>> from levy_sklearn.tokens import tokens_from_rows
    >>> from levy_sklearn.training import predict_in_chunks
    >>> X = np.random.default_rng(0).normal(size=(50, 3))
    >>> net = LevyAttentionRegressor(max_epochs=2, random_state=0).fit(X, X[:, 0]).net_
    >>> out = predict_in_chunks(net, (tokens_from_rows(X[i : i + 20]) for i in range(0, 50, 20)))
    >>> whole = net.predict_moments(tokens_from_rows(X))
    >>> out.mean.shape, bool(np.allclose(out.mean, whole.mean))
    ((50, 1), True)
    """
    parts = [net.predict_moments(chunk) for chunk in chunks]
    return LevyNetOutput(*(np.concatenate(part) for part in zip(*parts, strict=True)))
