"""The proper scoring rules a network is trained on, scored on ``(mean, variance)``."""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn

__all__ = ["LOSSES", "GaussianScore", "gaussian_crps_torch"]

#: Training objectives (``loss``): closed-form Gaussian CRPS, Gaussian negative
#: log-likelihood, β-NLL (the NLL weighted by ``stop_gradient(σ^{2β})``, β = 0.5), or squared
#: error of the mean with σ calibrated afterwards.
LOSSES = ("crps", "nll", "beta_nll", "mse")
# β of the β-NLL (Seitzer et al., 2022): 0.5 balances NLL's neglect of badly fitted points.
_BETA_NLL = 0.5
_SQRT_PI = math.sqrt(math.pi)


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
