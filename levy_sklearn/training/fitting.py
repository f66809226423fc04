"""Building a net from its specs, and training it reproducibly (first fit or continued)."""

from __future__ import annotations

import copy
import math
from collections.abc import Mapping
from dataclasses import asdict, replace
from typing import Any

import numpy as np
import torch
from skorch.callbacks import EarlyStopping
from skorch.dataset import ValidSplit
from torch.utils.data import Dataset, default_convert

from ..network import LevyNet
from ..tokens import take_tokens
from .data import TokenDataset, epoch_loader
from .device import check_device, has_fused_adamw
from .distributed import DataParallel, local_device
from .losses import GaussianScore
from .net import LevyNeuralNet
from .progress import EpochTable, FitProgressBar
from .schedule import BaseLRScheduler
from .seeding import seeded
from .specs import RECIPES, NetworkSpec, TrainingSpec

__all__ = ["continue_levy_net", "fit_levy_net", "make_levy_net"]

# Learning-rate multiplier of the log-scale scalars in the "rows" recipe (see make_levy_net).
_LOG_PARAM_LR = 10.0
# Rows of a dataset (made per batch) made at once after training: for the check that
# training learned (evenly spaced rows) and for the variance calibration of loss="mse".
_CHUNK_ROWS = 4096


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
        Not initialised: ``fit`` builds the module. Its ``network_spec_`` and
        ``training_spec_`` are the specs it was built from.

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
        # Inert outside a data-parallel block (pretrain under torchrun); first, so that every
        # later callback reads the losses of all the processes' rows.
        ("data_parallel", DataParallel()),
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
    device = local_device(check_device(run.device))
    net = LevyNeuralNet(
        module=LevyNet,
        **module,
        module__rate=rate,
        criterion=GaussianScore,
        criterion__loss=run.loss,
        optimizer=torch.optim.AdamW,
        optimizer__weight_decay=run.weight_decay,
        # One fused kernel for the whole AdamW update where torch has one: the regressor's
        # default fit about 6 % faster (benchmarks/results/speed_floor_notes.md).
        **{f"optimizer__{'fused' if has_fused_adamw(device) else 'foreach'}": True},
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
        # Shuffling draws from torch's global RNG, which fit_levy_net seeds; an epoch of
        # `rows` draws that many rows (training bounded below one epoch).
        iterator_train=epoch_loader,
        iterator_train__shuffle=True,
        iterator_train__rows=run.rows,
        device=device,
        verbose=run.verbose,
        # With verbose > 0 skorch's epoch table is printed above the progress bar.
        callbacks__print_log=EpochTable,
    )
    # The specs it was built from: a model file rebuilds the net from them (levy_sklearn.
    # serialization), and continue_levy_net keeps them in step with what it changes.
    net.network_spec_, net.training_spec_ = network, training
    return net


def fit_levy_net(
    net: LevyNeuralNet,
    X: Mapping[str, np.ndarray] | Dataset,
    y: np.ndarray | None,
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
    X : dict of array or torch Dataset
        Token arrays, or a dataset of ``(tokens, targets)`` rows made per batch
        (:class:`BatchDataset`).
    y : ndarray of shape (n, Q) or None
        float32 targets (``NaN`` = unobserved, left out of the loss); ``None`` with a
        dataset.
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
    _check_split(net, _n_rows(X, y))
    with seeded(random_state):
        net.fit(X, y)
    _checked_for_inference(net, X, y)
    if net.criterion__loss == "mse":
        rows = np.arange(_n_rows(X, y))
        if net.train_split is not None:
            rows = net.get_split_datasets(X, y)[1].indices
        _calibrate(net, X, y, rows)
    return net


def _n_rows(X: Mapping[str, np.ndarray] | Dataset, y: np.ndarray | None) -> int:
    return len(X) if y is None else len(y)


def _rows(
    X: Mapping[str, np.ndarray] | Dataset, y: np.ndarray | None, rows: np.ndarray
) -> tuple[Mapping[str, np.ndarray], np.ndarray]:
    """Token arrays and targets of ``rows`` of the training data (made, for a dataset)."""
    if y is None:
        return X.__getitems__(rows)
    return take_tokens(X, rows), y[rows]


def _calibrate(
    net: LevyNeuralNet, X: Mapping[str, np.ndarray] | Dataset, y: np.ndarray | None, rows
) -> None:
    """``net.calibrate`` on ``rows`` of the training data, a chunk of rows at a time for a
    dataset (whose rows are made per batch)."""
    if y is not None:
        net.calibrate(take_tokens(X, rows), y[rows])
        return
    chunks = (_rows(X, y, rows[i : i + _CHUNK_ROWS]) for i in range(0, len(rows), _CHUNK_ROWS))
    net.calibrate_chunks(chunks)


def _checked_for_inference(
    net: LevyNeuralNet, X: Mapping[str, np.ndarray] | Dataset, y: np.ndarray | None
) -> None:
    """After training on ``X``, ``y``: refuse non-finite weights, warn when the loss ended
    worse than the trivial forecast's (on evenly spaced rows of a dataset, whose rows are
    made per batch), and switch to float64 inference."""
    net.check_finite()
    if y is None:
        n = len(X)
        y = _rows(X, y, np.unique(np.linspace(0, n - 1, min(n, _CHUNK_ROWS)).astype(int)))[1]
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
    X: Mapping[str, np.ndarray] | Dataset,
    y: np.ndarray | None,
    random_state: int | None,
    epochs: int,
    verbose: int | None = None,
    batch_size: int | None = None,
    rows: int | None = None,
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
    X : dict of array or torch Dataset
        Token arrays, or a dataset (see :func:`fit_levy_net`).
    y : ndarray of shape (n, Q) or None
        float32 targets (``NaN`` = unobserved); ``None`` with a dataset.
    random_state : int or None
        Seed of every random choice of the further training.
    epochs : int
        Passes over ``X``.
    verbose : int, optional
        The copy's verbosity (see :func:`make_levy_net`); ``None`` keeps ``net``'s.
    batch_size : int, optional
        The copy's rows per step; ``None`` keeps ``net``'s.
    rows : int, optional
        Rows each epoch draws (see :func:`epoch_loader`); ``None``: every row.

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
    net.iterator_train__rows = rows
    net.training_spec_ = replace(
        net.training_spec_, verbose=net.verbose, batch_size=net.batch_size, rows=rows
    )
    net.module_.float()
    _check_split(net, _n_rows(X, y))
    with seeded(random_state):
        net.partial_fit(X, y, epochs=epochs)
    _checked_for_inference(net, X, y)
    if net.criterion__loss == "mse":
        _calibrate(net, X, y, np.arange(_n_rows(X, y)))
    return net
