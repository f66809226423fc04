"""The skorch layer shared by both front-ends: losses, the NeuralNet subclass, seeding.

skorch owns the training loop, validation split, early stopping, LR schedule and device
handling; this module only teaches it that LevyNet returns ``(mean, variance, …)`` and how to
score that with a proper scoring rule.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np
import torch
from skorch import NeuralNet
from skorch.callbacks import EarlyStopping, LRScheduler
from skorch.dataset import ValidSplit
from torch import Tensor, nn

from .adapters import take_tokens
from .network import LevyNet, LevyNetOutput

__all__ = [
    "GaussianScore",
    "LevyNeuralNet",
    "LOSSES",
    "NET_PARAMS",
    "fit_levy_net",
    "make_levy_net",
    "seeded",
]

LOSSES = ("crps", "nll", "mse")
# The flat hyperparameters both front-ends expose and pass to make_levy_net unchanged.
NET_PARAMS = (
    "d_model",
    "n_heads",
    "n_windowed_heads",
    "n_layers",
    "attention",
    "dropout",
    "loss",
    "lr",
    "max_epochs",
    "batch_size",
    "validation_fraction",
    "patience",
    "weight_decay",
    "device",
    "random_state",
    "verbose",
)
_SQRT_PI = math.sqrt(math.pi)


def gaussian_crps_torch(mean: Tensor, variance: Tensor, y: Tensor) -> Tensor:
    """Closed-form CRPS of ``N(mean, variance)`` at ``y``, elementwise."""
    sigma = variance.sqrt()
    z = (y - mean) / sigma
    normal = torch.distributions.Normal(torch.zeros_like(z), torch.ones_like(z))
    return sigma * (z * (2 * normal.cdf(z) - 1) + 2 * normal.log_prob(z).exp() - 1 / _SQRT_PI)


class GaussianScore(nn.Module):
    """Proper scoring rule on ``(mean, variance)``, averaged over observed targets.

    ``NaN`` targets (unobserved future points of a forecasting window) are left out.

    Parameters
    ----------
    loss : {"crps", "nll", "mse"}, default="crps"
        Closed-form Gaussian CRPS, Gaussian negative log-likelihood, or squared error of the
        mean alone (σ is then calibrated afterwards, see :meth:`LevyNeuralNet.calibrate`).
    """

    def __init__(self, loss: str = "crps") -> None:
        super().__init__()
        if loss not in LOSSES:
            raise ValueError(f"loss={loss!r} must be one of {LOSSES}.")
        self.loss = loss

    def forward(self, mean: Tensor, variance: Tensor, y: Tensor) -> Tensor:
        y = y.to(mean.dtype).reshape(mean.shape)
        observed = torch.isfinite(y)
        y = torch.where(observed, y, mean.detach())
        if self.loss == "crps":
            score = gaussian_crps_torch(mean, variance, y)
        elif self.loss == "nll":
            score = 0.5 * (torch.log(2 * math.pi * variance) + (y - mean).pow(2) / variance)
        else:
            score = (y - mean).pow(2)
        return (score * observed).sum() / observed.sum().clamp(min=1)


class LevyNeuralNet(NeuralNet):
    """skorch ``NeuralNet`` around :class:`~levy_sklearn.network.LevyNet`.

    Inputs are dicts of padded token arrays (``times``, ``channels``, ``values``, ``mask``,
    ``query_times``, ``query_channels``), targets are ``(n, Q)`` arrays (``NaN`` = unobserved).
    The module returns :class:`~levy_sklearn.network.LevyNetOutput`; :meth:`get_loss` scores
    mean and variance together, and :meth:`predict_moments` returns every output, where
    skorch's own ``predict`` would keep only the first. ``variance_scale_`` (1 unless
    :meth:`calibrate` set it) multiplies every predicted variance.
    """

    variance_scale_ = 1.0

    def get_loss(self, y_pred, y_true, X=None, training=False):
        mean, variance = y_pred[:2]
        return self.criterion_(mean, variance, y_true)

    def predict_moments(self, X: Mapping[str, np.ndarray]) -> LevyNetOutput:
        """Every output of the module for every query, as float64 numpy arrays.

        Parameters
        ----------
        X : dict of array
            Token arrays (see the class docstring).

        Returns
        -------
        LevyNetOutput
            ``mean`` and ``variance`` ``(n, Q)``; ``evidence`` and ``disagreement``
            ``(n, Q, H)``. ``variance`` and ``disagreement`` include ``variance_scale_``.
        """
        # DataLoader iteration draws a seed from torch's global RNG; isolate it so that
        # predicting never changes the caller's random stream.
        with seeded(None):
            parts = [
                [t.detach().cpu().to(torch.float64).numpy() for t in out]
                for out in self.forward_iter(X, training=False)
            ]
        mean, var, evidence, disagreement = (np.concatenate(p) for p in zip(*parts, strict=True))
        scale = self.variance_scale_
        return LevyNetOutput(mean, var * scale, evidence, disagreement * scale)

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
        """
        self.variance_scale_ = 1.0
        out = self.predict_moments(X)
        y = np.asarray(y, dtype=np.float64).reshape(out.mean.shape)
        ok = np.isfinite(y)
        ratio = (y - out.mean)[ok] ** 2 / out.variance[ok]
        self.variance_scale_ = float(np.mean(ratio)) if ratio.size else 1.0
        return self.variance_scale_


@contextmanager
def seeded(random_state: int | None) -> Iterator[None]:
    """Run a block under a fixed torch seed without disturbing the caller's global RNG."""
    with torch.random.fork_rng(devices=[]):
        if random_state is not None:
            torch.manual_seed(random_state)
        yield


def make_levy_net(
    *,
    n_channels: int,
    n_targets: int,
    d_model: int,
    n_heads: int,
    n_windowed_heads: int,
    n_layers: int,
    attention: str,
    dropout: float,
    loss: str,
    lr: float,
    max_epochs: int,
    batch_size: int,
    validation_fraction: float,
    patience: int | None,
    weight_decay: float,
    device: str,
    random_state: int | None,
    verbose: int,
    bandwidth: float = 1.0,
    lookback: float = 4.0,
    rate: float | Sequence[float] = 1.0,
    positional_keys: bool = False,
) -> LevyNeuralNet:
    """Build (not train) the skorch net for given flat hyperparameters.

    Adam with cosine-annealed learning rate; with ``validation_fraction > 0`` skorch holds
    that share out (seeded) and, when ``patience`` is set, stops early on the validation loss
    and restores the best weights.
    """
    callbacks: list[tuple[str, Any]] = [
        ("lr_schedule", LRScheduler("CosineAnnealingLR", T_max=max(max_epochs, 1)))
    ]
    split = None
    if validation_fraction > 0:
        split = ValidSplit(validation_fraction, random_state=random_state)
        if patience is not None:
            callbacks.append(("early_stopping", EarlyStopping(patience=patience, load_best=True)))
    return LevyNeuralNet(
        module=LevyNet,
        module__n_channels=n_channels,
        module__n_targets=n_targets,
        module__d_model=d_model,
        module__n_heads=n_heads,
        module__n_windowed_heads=n_windowed_heads,
        module__n_layers=n_layers,
        module__attention=attention,
        module__dropout=dropout,
        module__bandwidth=bandwidth,
        module__lookback=lookback,
        module__rate=rate,
        module__positional_keys=positional_keys,
        criterion=GaussianScore,
        criterion__loss=loss,
        optimizer=torch.optim.AdamW,
        optimizer__weight_decay=weight_decay,
        lr=lr,
        max_epochs=max_epochs,
        batch_size=batch_size,
        train_split=split,
        callbacks=callbacks,
        # Shuffling draws from torch's global RNG, which fit_levy_net seeds.
        iterator_train__shuffle=True,
        device=device,
        verbose=verbose,
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
    """
    with seeded(random_state):
        net.fit(X, y)
    net.module_.double()
    if net.criterion__loss == "mse":
        if net.train_split is None:
            net.calibrate(X, y)
        else:
            _, valid = net.get_split_datasets(X, y)
            net.calibrate(take_tokens(X, valid.indices), y[valid.indices])
    return net
