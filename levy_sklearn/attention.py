"""Lévy attention: the closed-form moments of a Poisson random measure over keys.

The mathematics is set out in the user guide (``docs/user_guide/levy_attention.rst``). One head,
query ``i``, keys ``j``:

* intensity mass of key ``j``: ``ρ κ_ij w_ij`` with ``κ_ij = exp(β (cos(q_i, k_j) − 1))`` and
  ``w_ij`` the mass a Gaussian mollifier of bandwidth ``h`` around ``t_j`` puts in the query's
  visibility window (``1`` for global heads, the soft look-back ``[τ_i − r, τ_i]`` otherwise);
* evidence ``Λ_i = ρ Σ_j κ_ij w_ij``, weights ``a_ij = softmax_j(β cos_ij + log w_ij)``;
* when no point falls (probability ``p₀ = exp(−Λ_i)``) the output is drawn from a learned prior
  ``N(m₀, S₀)`` (diagonal ``S₀``), not fixed to a point: a query that observed nothing must not
  answer with certainty;
* ``E[Y_i] = (1 − p₀) μ_i + p₀ m₀`` with ``μ_i = Σ_j a_ij v_j``;
* ``Cov[Y_i] = ψ(Λ_i) Σ_V(i) + p₀ S₀ + p₀ (1 − p₀) (μ_i − m₀)(μ_i − m₀)ᵀ``.

Only the keys passed in count as evidence: learned tokens (priors, summaries) must not be
passed as keys, they belong in ``m₀`` and ``S₀``.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import torch
from torch import Tensor, nn
from torch.nn import functional as F

__all__ = [
    "psi",
    "KeySet",
    "LevyAttention",
    "SoftmaxAttention",
    "LevyMoments",
    "readout_moments",
]

_EULER_GAMMA = 0.5772156649015329
# Below the switch ψ is summed from its power series, above it from its asymptotic series.
# At Λ = 40 the power series needs ~100 terms (last term < 1e-13 relative) and the asymptotic
# series is optimally accurate (31!/40^31 ≈ 2e-16) after 30 terms.
_PSI_SWITCH = 40.0
_K_SERIES = torch.arange(1, 121, dtype=torch.float64)
_LOG_SERIES_DENOM = torch.lgamma(_K_SERIES + 1) + _K_SERIES.log()  # log(k · k!)
_K_ASYMPT = torch.arange(0, 31, dtype=torch.float64)
_LGAMMA_ASYMPT = torch.lgamma(_K_ASYMPT + 1)  # log k!
_LGAMMA_ASYMPT_GRAD = torch.lgamma(_K_ASYMPT + 2)  # log (k + 1)!
_SQRT_HALF = math.sqrt(0.5)
# Logit given to padded keys: finite, so a query whose keys are all padded still gets finite
# weights (and Λ = 0 exactly) instead of the NaN of softmax over −inf.
_PAD_LOGIT = -1e5
# The CPU flash-attention kernel also returns each row's logsumexp (private aten op, present
# since torch 2.2; without it, or on other devices, _attend materialises the weights).
_FLASH_CPU = getattr(torch.ops.aten, "_scaled_dot_product_flash_attention_for_cpu", None)
# The kernel pays only for one head-width of values over many keys: timed against _Attend
# in float64 on one thread (torch 2.13, Intel Xeon), it was 1.2-2.4x faster from 64 keys
# on, 0.6-0.9x as fast below, and 0.2-0.9x with three head-widths of values (three kernel
# calls) at any number of keys. Both give the same numbers to ~1e-15.
_FUSE_MIN_KEYS = 64

_EXP_CUTOFF = -80.0
_NORM_FLOOR = 1e-12


def _can_fuse(q: Tensor, k: Tensor, values: Tensor) -> bool:
    """Whether the CPU kernel (its logsumexp is not differentiable) is used, and pays."""
    return (
        _FLASH_CPU is not None
        and q.device.type == "cpu"
        and not torch.is_grad_enabled()
        and values.shape[-1] <= q.shape[-1]
        and k.shape[-2] >= _FUSE_MIN_KEYS
    )


def _on_entries(mask: Tensor, lam: Tensor, branch, out: Tensor) -> Tensor:
    """``out`` with ``branch(lam)`` on the entries of ``mask``.

    A branch is elementwise, so when ``mask`` holds every entry it runs on ``lam`` as it is,
    without the indexing and scatter that cost more than the series on a training batch.
    """
    if mask.all():
        return branch(lam)
    if mask.any():
        out[mask] = branch(lam[mask])
    return out


def _psi_series(lam: Tensor) -> Tensor:
    """ψ of ``0 < Λ ≤ switch``: Σ_k Λ^k/(k·k!) e^{−Λ}, summed over 2·max Λ + 30 terms.

    Past k = 2Λ the terms fall faster than halving, and the first one dropped is below
    1e-16 of the sum for every Λ up to the switch.
    """
    x = lam.unsqueeze(-1)
    n_terms = min(len(_K_SERIES), int(2 * x.max()) + 30)
    log_terms = _K_SERIES[:n_terms].to(lam) * x.log() - _LOG_SERIES_DENOM[:n_terms].to(lam)
    # logsumexp by hand, so that terms negligible against the largest skip the slow exp.
    top = log_terms.amax(-1, keepdim=True)
    log_sum = top + _exp_or_zero(log_terms - top).sum(-1, keepdim=True).log()
    return torch.exp(log_sum - x).squeeze(-1)


def _psi_asymptotic(lam: Tensor) -> Tensor:
    """ψ of ``Λ > switch``: Σ_k k!/Λ^{k+1}.

    e^{−Λ}(γ + ln Λ) is below 1e-16 relative to ψ above the switch, so it is dropped.
    """
    log_x = lam.unsqueeze(-1).log()
    return torch.exp(_LGAMMA_ASYMPT.to(lam) - (_K_ASYMPT.to(lam) + 1) * log_x).sum(-1)


def _psi_asymptotic_grad(lam: Tensor) -> Tensor:
    """ψ' of ``Λ > switch``: −Σ_k (k+1)!/Λ^{k+2}."""
    log_x = lam.unsqueeze(-1).log()
    return -torch.exp(_LGAMMA_ASYMPT_GRAD.to(lam) - (_K_ASYMPT.to(lam) + 2) * log_x).sum(-1)


def _psi_value(lam: Tensor) -> Tensor:
    """ψ by series: the power series below the switch, the asymptotic one above it."""
    large = lam > _PSI_SWITCH
    out = _on_entries((lam > 0) & ~large, lam, _psi_series, torch.zeros_like(lam))
    return _on_entries(large, lam, _psi_asymptotic, out)


class _Psi(torch.autograd.Function):
    @staticmethod
    def forward(ctx, lam: Tensor) -> Tensor:
        out = _psi_value(lam)
        ctx.save_for_backward(lam, out)
        return out

    @staticmethod
    def backward(ctx, grad: Tensor) -> Tensor:
        lam, out = ctx.saved_tensors
        # ψ'(Λ) = (1 − e^{−Λ})/Λ − ψ(Λ); the first term → 1 as Λ → 0. Above the switch the
        # two terms cancel to ~1/Λ², so there ψ' is summed directly.
        safe = lam.clamp(min=torch.finfo(lam.dtype).tiny)
        first = torch.where(lam > 1e-12, -torch.expm1(-safe) / safe, 1.0 - lam / 2)
        return grad * _on_entries(lam > _PSI_SWITCH, lam, _psi_asymptotic_grad, first - out)


def psi(lam: Tensor) -> Tensor:
    r"""Expected reciprocal count ``ψ(Λ) = E[1/N ; N ≥ 1]`` for ``N ~ Poisson(Λ)``.

    ``ψ(Λ) = e^{−Λ} (Ei(Λ) − γ − ln Λ)``: the factor that turns the disagreement of the attended
    values into the variance of Lévy attention's output. Torch-native, float32 and float64,
    finite for every ``Λ ≥ 0`` (``ψ(0) = 0``), relative error below 1e-6 in float64 for
    ``Λ`` in ``[1e-8, 1e6]``, and differentiable with the closed-form derivative
    ``ψ'(Λ) = (1 − e^{−Λ})/Λ − ψ(Λ)``.

    Parameters
    ----------
    lam : Tensor
        Poisson rates ``Λ ≥ 0`` of any shape.

    Returns
    -------
    Tensor
        ``ψ(Λ)``, same shape and dtype as ``lam``.

    Examples
    --------
    >>> import torch
    >>> from levy_sklearn import psi
    >>> psi(torch.tensor([0.0, 1.0, 1e6], dtype=torch.float64))
    tensor([0.0000e+00, 4.8483e-01, 1.0000e-06], dtype=torch.float64)
    """
    if not torch.is_tensor(lam):
        lam = torch.as_tensor(lam, dtype=torch.get_default_dtype())
    return _Psi.apply(lam)


class LevyMoments(NamedTuple):
    """Per-head, per-query closed-form moments of one Lévy attention layer.

    Shapes use ``B`` batch, ``H`` heads, ``Q`` queries, ``L`` keys, ``d`` head dimension.

    Attributes
    ----------
    weights : Tensor
        ``a``, shape ``(B, H, Q, L)``; zero on padded keys.
    values : Tensor
        Per-head values ``v``, shape ``(B, H, L, d)``.
    mu : Tensor
        ``μ = Σ_j a_j v_j``, shape ``(B, H, Q, d)``.
    log_evidence : Tensor
        ``log Λ``, shape ``(B, H, Q)``.
    evidence : Tensor
        ``Λ``, shape ``(B, H, Q)``.
    p0 : Tensor
        ``e^{−Λ}``, shape ``(B, H, Q)``.
    prior_mean : Tensor
        ``m₀``, the mean of the output when no point falls, broadcastable to ``(B, H, Q, d)``.
    prior_var : Tensor
        Diagonal of ``S₀``, the prior's covariance, broadcastable to ``(B, H, Q, d)``.
    mean : Tensor
        ``E[Y] = (1 − p₀) μ + p₀ m₀``, shape ``(B, H, Q, d)``.

    Examples
    --------
    >>> import torch
    >>> from levy_sklearn.attention import KeySet, LevyAttention, psi
    >>> layer = LevyAttention(8, num_heads=2).double()
    >>> q = torch.randn(1, 3, 8, dtype=torch.float64)
    >>> kv = torch.randn(1, 5, 8, dtype=torch.float64)
    >>> m = layer.moments(q, KeySet(kv, kv))
    >>> m.evidence.shape, m.trace_variance.shape
    (torch.Size([1, 2, 3]), torch.Size([1, 2, 3]))
    >>> prior_gap = (m.mu - m.prior_mean).pow(2).sum(-1)  # the variance identity
    >>> prior_spread = m.prior_var.expand_as(m.mu).sum(-1)
    >>> identity = (psi(m.evidence) * m.disagreement + m.p0 * prior_spread
    ...             + m.p0 * (1 - m.p0) * prior_gap)
    >>> bool(torch.allclose(m.trace_variance, identity))
    True
    """

    weights: Tensor
    values: Tensor
    mu: Tensor
    log_evidence: Tensor
    evidence: Tensor
    p0: Tensor
    prior_mean: Tensor
    prior_var: Tensor
    mean: Tensor

    @property
    def disagreement(self) -> Tensor:
        """``D = tr Σ_V = Σ_j a_j ‖v_j − μ‖²``, shape ``(B, H, Q)``."""
        diff = self.values.unsqueeze(2) - self.mu.unsqueeze(3)
        return (self.weights * diff.pow(2).sum(-1)).sum(-1)

    @property
    def trace_variance(self) -> Tensor:
        """``tr Cov[Y] = ψ(Λ) D + p₀ tr S₀ + p₀(1 − p₀)‖μ − m₀‖²``, shape ``(B, H, Q)``."""
        prior_gap = (self.mu - self.prior_mean).pow(2).sum(-1)
        prior_spread = self.prior_var.expand_as(self.mu).sum(-1)
        p0 = self.p0
        return (
            psi(self.evidence) * self.disagreement + p0 * prior_spread + p0 * (1 - p0) * prior_gap
        )


def _split_heads(x: Tensor, num_heads: int) -> Tensor:
    b, n, _ = x.shape
    return x.view(b, n, num_heads, -1).transpose(1, 2)


def _exp_or_zero(x: Tensor) -> Tensor:
    """``exp(x)``, exactly 0 below ``exp(−80)``.

    Padded and out-of-window keys have logits far below the row maximum; exp of such inputs
    takes a slow subnormal path on CPUs (~15× slower). Their weights are below 1e-34 of the
    largest one, so zeroing them changes no result.
    """
    return torch.where(x > _EXP_CUTOFF, torch.exp(x.clamp(min=_EXP_CUTOFF)), 0.0)


def _exp_or_zero_(x: Tensor) -> Tensor:
    """:func:`_exp_or_zero` in place (no autograd): four passes, none allocating a tensor
    of the input's size but the boolean mask."""
    far = x <= _EXP_CUTOFF
    return x.clamp_(min=_EXP_CUTOFF).exp_().masked_fill_(far, 0.0)


def _norm(x: Tensor) -> Tensor:
    """Euclidean norm over the last axis, kept, floored like ``F.normalize``."""
    return torch.linalg.vector_norm(x, dim=-1, keepdim=True).clamp(min=_NORM_FLOOR)


class KeySet(NamedTuple):
    """What the queries of an attention layer attend to: ``L`` keys and what goes with them.

    Attributes
    ----------
    key, value : Tensor
        ``(B, L, E)`` key and value embeddings.
    times : Tensor, optional
        ``(B, L)`` key locations; needed when there are windowed heads.
    padding : Tensor, optional
        ``(B, L)`` boolean, ``True`` marks padding (the ``key_padding_mask`` convention of
        ``torch.nn.MultiheadAttention``).

    Examples
    --------
    >>> import torch
    >>> from levy_sklearn.attention import KeySet
    >>> kv = torch.randn(2, 5, 8)
    >>> keys = KeySet(kv, kv, times=-torch.rand(2, 5))
    >>> keys.padding is None, keys.times.shape
    (True, torch.Size([2, 5]))
    """

    key: Tensor
    value: Tensor
    times: Tensor | None = None
    padding: Tensor | None = None


def _key_padding_bias(padding: Tensor | None, like: Tensor) -> Tensor | None:
    """``(B, 1, 1, L)`` additive logit bias that removes padded keys (``True`` = padding)."""
    if padding is None:
        return None
    zeros = torch.zeros((), dtype=like.dtype, device=like.device)
    pad = torch.full((), _PAD_LOGIT, dtype=like.dtype, device=like.device)
    return torch.where(padding[:, None, None, :], pad, zeros)


def _unit(q: Tensor, k: Tensor, beta: Tensor) -> tuple[Tensor, Tensor]:
    """Unit-norm queries scaled by ``β`` and unit-norm keys: their products are ``β cos``."""
    return q * (beta / _norm(q)), k / _norm(k)


def _product_over_queries(a: Tensor, b: Tensor) -> Tensor:
    """``aᵀ b`` over the query axis of ``(…, Q, L)`` and ``(…, Q, m)``.

    With one query it is an outer product, done by broadcasting: batched matmul of inner
    size 1 costs several times more on a CPU.
    """
    if a.shape[-2] == 1:
        return a.transpose(-1, -2) * b
    return a.transpose(-1, -2) @ b


class _Attend(torch.autograd.Function):
    """Cosine-kernel attention that also returns every row's log-normaliser, exact gradients.

    The same arithmetic written out in autograd (normalisation, logits, max shift, exp,
    normalisation of the weights, product) records some twenty nodes per call; on small
    training batches their per-operator overhead, not the arithmetic, set the cost. Forward
    runs in place; backward is the closed-form Jacobian. With ``a`` the weights, the
    gradient of the logits is ``a ∘ (∂out·vᵀ − rowsum(∂out ∘ out) + ∂lse)`` (``∂lse/∂logits
    = a``); through ``q̂ = β q/‖q‖`` it is ``(β/‖q‖)(∂q̂ − (∂q̂·q̂) q̂/β²)`` and ``∂β =
    Σ ∂q̂·q̂/β``, and through ``k̂ = k/‖k‖`` it is ``(∂k̂ − (∂k̂·k̂) k̂)/‖k‖`` (norms at or
    below ``1e-12`` are floored, as in :func:`_norm`, and then pass no gradient).
    """

    @staticmethod
    def forward(ctx, q, k, beta, values, bias):
        q_norm, k_norm = _norm(q), _norm(k)
        q_scale = beta / q_norm
        # Written contiguous, so the products here and in backward do not copy them again.
        q_hat = torch.mul(q, q_scale, out=torch.empty(q.shape, dtype=q.dtype, device=q.device))
        k_hat = torch.div(k, k_norm, out=torch.empty(k.shape, dtype=k.dtype, device=k.device))
        values = values.contiguous()
        logits = q_hat @ k_hat.transpose(-1, -2)
        if bias is not None:
            logits += bias
        top = logits.amax(-1, keepdim=True)
        weights = _exp_or_zero_(logits.sub_(top))
        total = weights.sum(-1, keepdim=True)
        weights /= total
        out = weights @ values
        ctx.save_for_backward(q_hat, q_scale, q_norm, k_hat, k_norm, beta, values, weights, out)
        ctx.shapes = beta.shape, None if bias is None else bias.shape
        return out, (top + total.log()).squeeze(-1)

    @staticmethod
    def backward(ctx, grad_out, grad_lse):
        q_hat, q_scale, q_norm, k_hat, k_norm, beta, values, weights, out = ctx.saved_tensors
        beta_shape, bias_shape = ctx.shapes
        grad_logits = grad_out @ values.transpose(-1, -2)
        grad_logits -= (grad_out * out).sum(-1, keepdim=True) - grad_lse.unsqueeze(-1)
        grad_logits *= weights
        grad_q_hat = grad_logits @ k_hat
        grad_k_hat = _product_over_queries(grad_logits, q_hat)
        q_dot = (grad_q_hat * q_hat).sum(-1, keepdim=True)
        k_dot = (grad_k_hat * k_hat).sum(-1, keepdim=True)
        q_dot_free = torch.where(q_norm > _NORM_FLOOR, q_dot, 0.0) / beta**2
        k_dot_free = torch.where(k_norm > _NORM_FLOOR, k_dot, 0.0)
        need_values, need_bias = ctx.needs_input_grad[3:]
        return (
            grad_q_hat.addcmul_(q_hat, q_dot_free, value=-1).mul_(q_scale),
            grad_k_hat.addcmul_(k_hat, k_dot_free, value=-1).div_(k_norm),
            (q_dot / beta).sum_to_size(beta_shape),
            _product_over_queries(weights, grad_out) if need_values else None,
            grad_logits.sum_to_size(bias_shape) if need_bias else None,
        )


def _attend(
    q: Tensor, k: Tensor, beta: Tensor, values: Tensor, bias: Tensor | None
) -> tuple[Tensor, Tensor]:
    """``Σ_j a_ij values_j`` ``(B, H, Q, m)`` and ``logsumexp_j(logits_ij)`` ``(B, H, Q)``.

    ``a = softmax(β cos(q, k) + bias)`` from per-head queries and keys as projected.
    Stacking several value moments along ``m`` gets all of them from one product with the
    weights. Without autograd on a CPU, over many keys, at most ``d`` value columns (the
    kernel needs equal head sizes) go through the fused kernel without materialising the
    ``(B, H, Q, L)`` weights (see :data:`_FUSE_MIN_KEYS`); otherwise :class:`_Attend` does.
    """
    if not _can_fuse(q, k, values):
        return _Attend.apply(q, k, beta, values, bias)
    q, k = _unit(q, k, beta)
    d, m = q.shape[-1], values.shape[-1]
    if m < d:
        values = F.pad(values, (0, d - m))
    out, log_norm = _FLASH_CPU(q, k, values, 0.0, False, attn_mask=bias, scale=1.0)[:2]
    return out[..., :m], log_norm


class LevyAttention(nn.Module):
    r"""Multi-head Lévy attention: cosine-kernel attention with closed-form uncertainty.

    Each head carries an independent Poisson random measure over (time × key); its expectation
    is the softmax of ``β·cos(q, k) + log w`` over keys, so the layer is a drop-in for softmax
    attention, and its variance follows in closed form from the evidence ``Λ`` and the
    disagreement of the attended values (see :doc:`/user_guide/levy_attention`).

    Parameters
    ----------
    embed_dim : int
        Model dimension of queries, keys and values (split evenly across heads).
    num_heads : int, default=4
        Number of heads.
    num_windowed_heads : int, default=0
        How many of the heads are windowed (soft look-back ``[τ − r, τ]``); the rest are global.
    bandwidth : float, default=1.0
        Initial mollifier bandwidth ``h`` (in the time units of ``query_times`` and of the
        keys' ``times``).
    lookback : float, default=4.0
        Initial look-back ``r`` of the windowed heads.
    sharpness : float, default=4.0
        Initial cosine sharpness ``β``.
    rate : float, default=1.0
        Initial rate ``ρ``.
    prior_var : float, default=1.0
        Initial diagonal of every head's prior covariance ``S₀`` (the spread of the output
        when no point falls), in the units of the head's values.
    query_prior : bool, default=False
        Make the prior ``(m₀, S₀)`` an affine function of the query embedding (its target and
        time, never the observations), on top of the learned per-head constants; the output
        layer of :class:`~levy_sklearn.network.LevyNet` uses this so that each target and
        horizon has its own prior.
    count_prior : bool, default=False
        Let the prior ``(m₀, log S₀)`` also move linearly with ``log(1 + n)``, ``n`` the
        number of keys a query sees (non-padding). The count reaches the prior only, never
        ``Λ`` or the weights, so evidence still counts observations alone; it lets the
        spread of "nothing fell" depend on how much of the input was there at all.

    Examples
    --------
    >>> import torch
    >>> from levy_sklearn.attention import KeySet, LevyAttention
    >>> layer = LevyAttention(8, num_heads=2, num_windowed_heads=1)
    >>> q, kv = torch.randn(3, 5, 8), torch.randn(3, 7, 8)
    >>> keys = KeySet(kv, kv, times=-torch.rand(3, 7))
    >>> out = layer(q, keys, query_times=torch.zeros(3, 5))
    >>> out.shape
    torch.Size([3, 5, 8])
    >>> m = layer.moments(q, keys, torch.zeros(3, 5))
    >>> m.evidence.shape, m.trace_variance.shape
    (torch.Size([3, 2, 5]), torch.Size([3, 2, 5]))
    """

    def __init__(
        self,
        embed_dim: int,
        num_heads: int = 4,
        num_windowed_heads: int = 0,
        *,
        bandwidth: float = 1.0,
        lookback: float = 4.0,
        sharpness: float = 4.0,
        rate: float = 1.0,
        prior_var: float = 1.0,
        query_prior: bool = False,
        count_prior: bool = False,
    ) -> None:
        super().__init__()
        if embed_dim % num_heads:
            raise ValueError(
                f"embed_dim={embed_dim} must be divisible by num_heads={num_heads}; "
                "pick an embed_dim that is a multiple of num_heads."
            )
        if not 0 <= num_windowed_heads <= num_heads:
            raise ValueError(
                f"num_windowed_heads={num_windowed_heads} must be between 0 and "
                f"num_heads={num_heads}."
            )
        self.embed_dim = embed_dim
        self.num_heads = num_heads
        self.num_windowed_heads = num_windowed_heads
        self.head_dim = embed_dim // num_heads
        self.q_proj = nn.Linear(embed_dim, embed_dim)
        self.k_proj = nn.Linear(embed_dim, embed_dim)
        self.v_proj = nn.Linear(embed_dim, embed_dim)
        # Positive per-head parameters are learned on the log scale.
        self.log_sharpness = nn.Parameter(torch.full((num_heads,), math.log(sharpness)))
        self.log_bandwidth = nn.Parameter(torch.full((num_heads,), math.log(bandwidth)))
        self.log_lookback = nn.Parameter(torch.full((num_heads,), math.log(lookback)))
        self.log_rate = nn.Parameter(torch.full((num_heads,), math.log(rate)))
        # The empty measure's prior N(m₀, diag S₀) per head (log-variance for positivity).
        self.prior_mean = nn.Parameter(torch.zeros(num_heads, self.head_dim))
        self.prior_log_var = nn.Parameter(
            torch.full((num_heads, self.head_dim), math.log(prior_var))
        )
        self.prior_proj = None
        if query_prior:
            # Starts at zero, so the prior begins as the per-head constants.
            self.prior_proj = nn.Linear(embed_dim, 2 * embed_dim)
            nn.init.zeros_(self.prior_proj.weight)
            nn.init.zeros_(self.prior_proj.bias)
        self.prior_count = None
        if count_prior:
            # Slopes of (m₀, log S₀) in log(1 + n); zero at the start, like prior_proj.
            self.prior_count = nn.Parameter(torch.zeros(2, num_heads, self.head_dim))

    def prior(self, query: Tensor, keys: KeySet | None = None) -> tuple[Tensor, Tensor]:
        """The empty measure's prior ``(m₀, diag S₀)`` for every head and query.

        Parameters
        ----------
        query : Tensor
            ``(B, Q, E)`` query embeddings (used only with ``query_prior=True``).
        keys : KeySet, optional
            What the queries attend to; only its size (the non-padding count) is used, and
            only with ``count_prior=True``, where it is required.

        Returns
        -------
        prior_mean, prior_var : Tensor
            ``(B, H, Q, d)`` with ``query_prior=True``, else ``(1 or B, H, 1, d)``
            (broadcastable).

        Examples
        --------
        >>> import torch
        >>> from levy_sklearn.attention import LevyAttention
        >>> layer = LevyAttention(8, num_heads=2, query_prior=True)
        >>> m0, s0 = layer.prior(torch.randn(3, 5, 8))
        >>> m0.shape, bool((s0 > 0).all())
        (torch.Size([3, 2, 5, 4]), True)
        """
        mean = self.prior_mean[None, :, None, :]
        log_var = self.prior_log_var[None, :, None, :]
        if self.prior_proj is not None:
            shift = _split_heads(self.prior_proj(query), self.num_heads)  # (B, H, Q, 2d)
            mean = mean + shift[..., : self.head_dim]
            log_var = log_var + shift[..., self.head_dim :]
        if self.prior_count is not None:
            if keys is None:
                raise ValueError("count_prior=True needs the keys to count them.")
            n = keys.key.new_full(keys.key.shape[:1], keys.key.shape[1])
            if keys.padding is not None:
                n = (~keys.padding).sum(-1).to(keys.key.dtype)
            # (2, B, H, 1, d): the count's pull on m₀ and on log S₀.
            slope = torch.log1p(n)[None, :, None, None, None] * self.prior_count[:, None, :, None]
            mean, log_var = mean + slope[0], log_var + slope[1]
        return mean, log_var.exp()

    def _log_window_mass(self, query_times: Tensor, key_times: Tensor) -> Tensor:
        """``log w`` of the windowed heads, shape ``(B, W, Q, L)``."""
        h = self.log_bandwidth.exp()[self.num_heads - self.num_windowed_heads :]
        r = self.log_lookback.exp()[self.num_heads - self.num_windowed_heads :]
        lag = (query_times[:, None, :, None] - key_times[:, None, None, :]) / h[:, None, None]
        upper, lower = lag, lag - (r / h)[:, None, None]
        # Φ(u) − Φ(l) for u > l, on the tail where the difference does not cancel: with
        # s = −1 it is (erfc(−u/√2) − erfc(−l/√2))/2, with s = +1 (both arguments past the
        # window) (erfc(l/√2) − erfc(u/√2))/2. erfc is ~4× cheaper here than log_ndtr, the
        # cost that dominated the decoder; w below the smallest normal number is floored,
        # which changes weights only where Λ ≈ 0 already makes them irrelevant.
        sign = torch.where(lower > 0, 1.0, -1.0).to(lag.dtype)
        # Arguments are clipped where erfc nears the smallest normal number (its subnormal
        # path is slow); this moves w by less than 1e-31 absolute.
        clip = math.sqrt(-math.log(torch.finfo(lag.dtype).tiny)) - 1.0
        far_lo = (sign * lower * _SQRT_HALF).clamp(-clip, clip)
        far_hi = (sign * upper * _SQRT_HALF).clamp(-clip, clip)
        w = 0.5 * sign * (torch.erfc(far_lo) - torch.erfc(far_hi))
        return torch.log(w.clamp(min=torch.finfo(w.dtype).tiny))

    def moments(
        self, query: Tensor, keys: KeySet, query_times: Tensor | None = None
    ) -> LevyMoments:
        """Closed-form moments of every head for every query.

        Parameters
        ----------
        query : Tensor
            ``(B, Q, E)`` query embeddings.
        keys : KeySet
            What the queries attend to.
        query_times : Tensor, optional
            ``(B, Q)`` query locations; needed when there are windowed heads.

        Returns
        -------
        LevyMoments

        Examples
        --------
        >>> import torch
        >>> from levy_sklearn.attention import KeySet, LevyAttention
        >>> layer = LevyAttention(8, num_heads=2)
        >>> q, kv = torch.randn(1, 3, 8), torch.randn(1, 5, 8)
        >>> m = layer.moments(q, KeySet(kv, kv))
        >>> m.weights.shape, m.evidence.shape, m.mean.shape  # (B, H, Q, L), (B, H, Q), ...
        (torch.Size([1, 2, 3, 5]), torch.Size([1, 2, 3]), torch.Size([1, 2, 3, 4]))
        >>> bool(torch.allclose(m.weights.sum(-1), torch.ones(1, 2, 3)))
        True
        """
        return self._closed_forms(query, keys, *self._logits(query, keys, query_times))

    def _closed_forms(
        self, query: Tensor, keys: KeySet, logits: Tensor, values: Tensor, beta: Tensor
    ) -> LevyMoments:
        """:meth:`moments` from the ``(B, H, Q, L)`` logits, values and β of :meth:`_logits`."""
        # Softmax and its log-normaliser from one exp pass (torch.logsumexp would take a second).
        top = logits.amax(-1, keepdim=True)
        unnormalised = _exp_or_zero(logits - top)
        total = unnormalised.sum(-1, keepdim=True)
        weights = unnormalised / total
        lse = (top + total.log()).squeeze(-1)
        mu = weights @ values
        log_evidence = self._log_evidence(lse, beta)  # log ρ Σ κ w
        evidence = log_evidence.exp()
        p0 = torch.exp(-evidence)
        prior_mean, prior_var = self.prior(query, keys)
        mean = torch.lerp(mu, prior_mean.to(mu.dtype), p0.unsqueeze(-1))  # (1 − p₀) μ + p₀ m₀
        return LevyMoments(
            weights, values, mu, log_evidence, evidence, p0, prior_mean, prior_var, mean
        )

    def _bias(self, keys: KeySet, query_times: Tensor | None, like: Tensor) -> Tensor | None:
        """``log w`` plus padding as an additive logit bias broadcastable to ``(B, H, Q, L)``."""
        bias = _key_padding_bias(keys.padding, like)
        if not self.num_windowed_heads:
            return bias
        if query_times is None or keys.times is None:
            raise ValueError(
                "LevyAttention has windowed heads, which need query_times and the keys' times; "
                "pass both or set num_windowed_heads=0."
            )
        log_w = self._log_window_mass(query_times.to(like.dtype), keys.times.to(like.dtype))
        # Global heads (first) take the padding bias alone; one buffer, written once.
        n_global = self.num_heads - self.num_windowed_heads
        out = log_w.new_empty(log_w.shape[0], self.num_heads, *log_w.shape[2:])
        out[:, :n_global] = 0.0 if bias is None else bias
        out[:, n_global:] = log_w if bias is None else log_w + bias
        return out

    def _project(self, query: Tensor, keys: KeySet) -> tuple[Tensor, Tensor, Tensor, Tensor]:
        """Per-head queries, keys and values ``(B, H, ·, d)``, and β ``(1, H, 1, 1)``."""
        return (
            _split_heads(self.q_proj(query), self.num_heads),
            _split_heads(self.k_proj(keys.key), self.num_heads),
            _split_heads(self.v_proj(keys.value), self.num_heads),
            self.log_sharpness.exp()[None, :, None, None],
        )

    def _logits(
        self, query: Tensor, keys: KeySet, query_times: Tensor | None
    ) -> tuple[Tensor, Tensor, Tensor]:
        """``β cos + log w`` (padding at a huge negative value) ``(B, H, Q, L)``, values, β."""
        q, k, v, beta = self._project(query, keys)
        q, k = _unit(q, k, beta)
        logits = q @ k.transpose(-1, -2)
        bias = self._bias(keys, query_times, logits)
        return (logits if bias is None else logits + bias), v, beta

    def forward(self, query: Tensor, keys: KeySet, query_times: Tensor | None = None) -> Tensor:
        """Exact expectation ``E[Y]`` with heads concatenated, shape ``(B, Q, E)``.

        The result equals the ``mean`` of :meth:`moments`: one attention product gives ``μ``
        and the log-normaliser that gives ``Λ`` (without autograd on a CPU, one fused kernel
        that never materialises the weights).

        Parameters
        ----------
        query, keys, query_times
            As in :meth:`moments`.

        Returns
        -------
        Tensor
            ``(B, Q, E)``.

        Examples
        --------
        >>> import torch
        >>> from levy_sklearn.attention import KeySet, LevyAttention
        >>> layer = LevyAttention(8, num_heads=2)
        >>> q, kv = torch.randn(2, 3, 8), torch.randn(2, 5, 8)
        >>> y = layer(q, KeySet(kv, kv))
        >>> y.shape
        torch.Size([2, 3, 8])
        >>> mean = layer.moments(q, KeySet(kv, kv)).mean  # (B, H, Q, d): heads side by side in y
        >>> bool(torch.allclose(y, mean.transpose(1, 2).reshape(2, 3, 8), atol=1e-5))
        True
        """
        b, q_len, _ = query.shape
        q, k, v, beta = self._project(query, keys)
        mu, lse = _attend(q, k, beta, v, self._bias(keys, query_times, q))
        p0 = torch.exp(-self._log_evidence(lse, beta).exp())[..., None]
        prior_mean = self.prior(query, keys)[0].to(mu.dtype)
        mean = torch.lerp(mu, prior_mean, p0)  # (1 − p₀) μ + p₀ m₀
        return mean.transpose(1, 2).reshape(b, q_len, self.embed_dim)

    def _log_evidence(self, lse: Tensor, beta: Tensor) -> Tensor:
        """``log Λ = log ρ + logsumexp_j(β cos + log w) − β`` from ``(B, H, Q)`` lse."""
        return self.log_rate[None, :, None] + lse - beta[..., 0]

    def readout(
        self,
        query: Tensor,
        keys: KeySet,
        weight: Tensor,
        bias: Tensor,
        query_channels: Tensor,
        query_times: Tensor | None = None,
        *,
        expect: tuple[Tensor, Tensor] | None = None,
    ) -> tuple[Tensor, ...]:
        """Exact mean and variance of a per-target affine readout of this layer.

        Query ``i`` reads its target ``c_i`` through ``u_i = Σ_h weight[c_i, h]ᵀ Y_ih +
        bias[c_i]``: the same numbers as :meth:`moments` followed by
        :func:`readout_moments`, from one attention product over the values seen through
        every target's readout and their squares (without autograd on a CPU, fused kernels
        that never materialise the ``(B, H, Q, L)`` weights).

        Parameters
        ----------
        query, keys
            As in :meth:`moments`.
        weight : Tensor
            ``(T, H, d)`` readout weights of each of ``T`` targets.
        bias : Tensor
            ``(T,)`` readout biases.
        query_channels : Tensor
            ``(B, Q)`` long, the target of every query.
        query_times : Tensor, optional
            As in :meth:`moments`.
        expect : (Tensor, Tensor), optional
            ``(T', H, d)`` weights and ``(T',)`` biases of a second per-target affine
            readout, of which only the expectation ``E[u'] = Σ_h weight'[c_i, h]ᵀ E[Y_ih] +
            bias'[c_i]`` is needed (e.g. the input of a variance head); it comes from the
            same attention product.

        Returns
        -------
        mean, variance : Tensor
            ``(B, Q)``.
        evidence, disagreement : Tensor
            ``(B, Q, H)``: ``Λ`` and the projected disagreement of every head.
        expected : Tensor
            Only with ``expect``: ``E[u']``, ``(B, Q)``.

        Examples
        --------
        >>> import torch
        >>> from levy_sklearn.attention import KeySet, LevyAttention
        >>> layer = LevyAttention(8, num_heads=2)
        >>> q, kv = torch.randn(2, 3, 8), torch.randn(2, 5, 8)
        >>> weight, bias = torch.randn(4, 2, 4), torch.zeros(4)  # 4 targets
        >>> targets = torch.ones(2, 3, dtype=torch.long)
        >>> mean, var, evidence, dis = layer.readout(q, KeySet(kv, kv), weight, bias, targets)
        >>> mean.shape, evidence.shape
        (torch.Size([2, 3]), torch.Size([2, 3, 2]))
        """
        q, k, v, beta = self._project(query, keys)
        # Every key's value seen through every target's readout, s (B, H, L, T), shifted by the
        # first key's (ref) so that Σ a s² − (Σ a s)² cancels little. One attention product
        # averages s and s² like values and returns the logsumexp that gives Λ; wᵀμ = ref +
        # Σ a (s − ref), so μ itself is never formed. The expect readout's values, v through
        # its weights, ride along as more columns.
        n_targets = len(weight)
        s = torch.einsum("bhld,thd->bhlt", v, weight)
        ref = s[:, :, :1]
        shifted = s - ref
        columns = [shifted, shifted * shifted]
        if expect is not None:
            columns.append(torch.einsum("bhld,thd->bhlt", v, expect[0]))
        mask = self._bias(keys, query_times, q)
        averaged, lse = _attend(q, k, beta, torch.cat(columns, dim=-1), mask)
        index = query_channels[:, None, :].expand(*averaged.shape[:3])  # (B, H, Q)
        first = _pick(averaged[..., :n_targets], index)
        second = _pick(averaged[..., n_targets : 2 * n_targets], index)
        disagreement = (second - first * first).clamp(min=0.0)
        centre = first + _pick(ref, index)  # wᵀμ
        prior = self.prior(query, keys)
        prior_mean, prior_spread = _project_prior(*prior, _per_query(weight, query_channels))
        evidence = self._log_evidence(lse, beta).exp()
        out = _readout_heads(
            centre,
            prior_mean,
            prior_spread,
            evidence,
            disagreement,
            _per_query(bias, query_channels),
        )
        if expect is None:
            return out
        # E[u'] per head: (1 − p₀) w'ᵀμ + p₀ w'ᵀm₀, summed over heads, plus the bias.
        centre = _pick(averaged[..., 2 * n_targets :], index)
        prior_mean = _project_prior(*prior, _per_query(expect[0], query_channels))[0]
        expected = torch.lerp(centre, prior_mean, torch.exp(-evidence)).sum(1)
        return (*out, expected + _per_query(expect[1], query_channels))

    @torch.no_grad()
    def sample(
        self,
        query: Tensor,
        keys: KeySet,
        query_times: Tensor | None = None,
        *,
        n_samples: int = 1,
        generator: torch.Generator | None = None,
        return_mean: bool = False,
    ) -> Tensor | tuple[Tensor, Tensor]:
        """Draw outputs from the Poisson construction itself (the definition, no closed form).

        By superposition each key ``j`` receives an independent count
        ``n_j ~ Poisson(ρ κ_ij w_ij)`` and ``Y_i = Σ_j n_j v_j / Σ_j n_j``; when every count
        is zero, ``Y_i`` is drawn from the prior ``N(m₀, diag S₀)``. Used to verify the closed
        forms and as the sampler baseline.

        Parameters
        ----------
        query, keys, query_times
            As in :meth:`moments`.
        n_samples : int, default=1
            Number of independent draws.
        generator : torch.Generator, optional
            Source of randomness, for reproducible draws.
        return_mean : bool, default=False
            Also return the closed-form ``E[Y]``, from the same logits (what :meth:`forward`
            returns, with the heads apart), so a caller needs no second attention pass.

        Returns
        -------
        draws : Tensor
            ``(n_samples, B, H, Q, d)`` draws of every head's output.
        mean : Tensor
            Only with ``return_mean``: ``E[Y]``, ``(B, H, Q, d)``.

        Examples
        --------
        >>> import torch
        >>> from levy_sklearn.attention import KeySet, LevyAttention
        >>> _ = torch.manual_seed(0)
        >>> layer = LevyAttention(8, num_heads=2)
        >>> q, keys = torch.randn(1, 3, 8), KeySet(*2 * [torch.randn(1, 5, 8)])
        >>> draws = layer.sample(q, keys, n_samples=4000,
        ...                      generator=torch.Generator().manual_seed(0))
        >>> draws.shape
        torch.Size([4000, 1, 2, 3, 4])
        >>> m = layer.moments(q, keys)  # the closed forms the draws agree with
        >>> bool((draws.mean(0) - m.mean).abs().max() < 0.05)
        True
        """
        logits, values, beta = self._logits(query, keys, query_times)
        m = self._closed_forms(query, keys, logits, values, beta)
        # Intensity mass of each key, straight from the definition: ρ κ_ij w_ij.
        rates = _exp_or_zero(self.log_rate[None, :, None, None] + logits - beta)
        counts = torch.poisson(rates.expand(n_samples, *rates.shape), generator=generator)
        total = counts.sum(-1, keepdim=True)
        y = (counts @ values) / total.clamp(min=1)
        prior_mean, prior_var = (p.to(y.dtype) for p in (m.prior_mean, m.prior_var))
        noise = torch.randn(y.shape, dtype=y.dtype, device=y.device, generator=generator)
        draws = torch.where(total > 0, y, prior_mean + prior_var.sqrt() * noise)
        return (draws, m.mean) if return_mean else draws


def _pick(columns: Tensor, index: Tensor) -> Tensor:
    """Every query's own target column: ``(B, H, Q or 1, T)`` columns, ``(B, H, Q)`` index.

    With one target it is a view, which spares the gather and its backward's scatter.
    """
    if columns.shape[-1] == 1:
        return columns[..., 0]
    return columns.expand(*index.shape, -1).gather(-1, index.unsqueeze(-1))[..., 0]


def _per_query(table: Tensor, index: Tensor) -> Tensor:
    """``table[index]``; with one row (one target), a broadcast view of it instead, which
    spares the indexing and its backward's scatter."""
    if len(table) == 1:
        return table[0].expand(*index.shape, *table.shape[1:])
    return table[index]


def readout_moments(
    moments: LevyMoments, weight: Tensor, bias: Tensor | None = None
) -> tuple[Tensor, Tensor, Tensor]:
    """Exact mean and variance of an affine readout ``u = Σ_h w_hᵀ Y_h + b``.

    ``Var[u] = Σ_h ψ(Λ_h) Σ_j a_j (w_hᵀ(v_j − μ_h))² + p₀ w_hᵀ S₀ w_h
    + p₀(1 − p₀)(w_hᵀ(μ_h − m₀))²``: heads carry independent measures, so their variances add.

    Parameters
    ----------
    moments : LevyMoments
        Output of :meth:`LevyAttention.moments`.
    weight : Tensor
        Readout weights per query, shape ``(B, Q, H, d)`` (or broadcastable to it).
    bias : Tensor, optional
        Readout bias per query, shape ``(B, Q)``.

    Returns
    -------
    mean : Tensor
        ``E[u]``, shape ``(B, Q)``.
    variance : Tensor
        ``Var[u]``, shape ``(B, Q)``.
    disagreement : Tensor
        Per-head projected disagreement ``Σ_j a_j (w_hᵀ(v_j − μ_h))²``, shape ``(B, Q, H)``.

    Examples
    --------
    >>> import torch
    >>> from levy_sklearn.attention import KeySet, LevyAttention, readout_moments
    >>> layer = LevyAttention(8, num_heads=2)
    >>> x = torch.randn(1, 6, 8)
    >>> m = layer.moments(x[:, :2], KeySet(x, x))
    >>> mean, var, dis = readout_moments(m, torch.randn(1, 2, 2, 4))
    >>> bool((var >= 0).all())
    True
    """
    w = weight.permute(0, 2, 1, 3)  # (B, H, Q, d)
    s = torch.einsum("bhqd,bhld->bhql", w, moments.values)
    centre = (moments.weights * s).sum(-1)  # w_hᵀ μ_h
    disagreement = (moments.weights * (s - centre.unsqueeze(-1)).pow(2)).sum(-1)
    prior_mean, prior_spread = _project_prior(moments.prior_mean, moments.prior_var, weight)
    mean, variance, _, disagreement = _readout_heads(
        centre, prior_mean, prior_spread, moments.evidence, disagreement, bias
    )
    return mean, variance, disagreement


def _project_prior(prior_mean: Tensor, prior_var: Tensor, weight: Tensor) -> tuple[Tensor, Tensor]:
    """``wᵀm₀`` and ``wᵀS₀w`` ``(B, H, Q)`` from the prior and ``(B, Q, H, d)`` weights."""
    w = weight.permute(0, 2, 1, 3)  # (B, H, Q, d)
    return (w * prior_mean).sum(-1), (w.pow(2) * prior_var).sum(-1)


def _readout_heads(
    centre: Tensor,
    prior_mean: Tensor,
    prior_spread: Tensor,
    evidence: Tensor,
    disagreement: Tensor,
    bias: Tensor | None,
) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """Sum the heads' readout moments from ``(B, H, Q)`` parts (the variance identity).

    ``prior_mean`` and ``prior_spread`` are ``wᵀm₀`` and ``wᵀS₀w``. Returns mean and
    variance ``(B, Q)``, evidence and disagreement ``(B, Q, H)``.
    """
    p0 = torch.exp(-evidence)
    head_mean = torch.lerp(centre, prior_mean, p0)
    head_var = (
        psi(evidence) * disagreement
        + p0 * prior_spread
        + p0 * (1 - p0) * (centre - prior_mean).pow(2)
    )
    mean = head_mean.sum(1)
    if bias is not None:
        mean = mean + bias
    return mean, head_var.sum(1), evidence.transpose(1, 2), disagreement.transpose(1, 2)


class SoftmaxAttention(nn.Module):
    """Standard scaled dot-product multi-head attention: the baseline twin of LevyAttention.

    Same projections and call signature as :class:`LevyAttention` (times are accepted and
    ignored: no head is windowed here), with dropout on the attention weights so the twin
    doubles as the MC-dropout baseline.

    Parameters
    ----------
    embed_dim : int
        Model dimension.
    num_heads : int, default=4
        Number of heads.
    dropout : float, default=0.0
        Dropout probability on the attention weights.

    Examples
    --------
    >>> import torch
    >>> from levy_sklearn.attention import KeySet, SoftmaxAttention
    >>> layer = SoftmaxAttention(8, num_heads=2)
    >>> layer(torch.randn(3, 5, 8), KeySet(torch.randn(3, 7, 8), torch.randn(3, 7, 8))).shape
    torch.Size([3, 5, 8])
    """

    def __init__(self, embed_dim: int, num_heads: int = 4, dropout: float = 0.0) -> None:
        super().__init__()
        if embed_dim % num_heads:
            raise ValueError(f"embed_dim={embed_dim} must be divisible by num_heads={num_heads}.")
        self.embed_dim = embed_dim
        self.num_heads = num_heads
        self.dropout = dropout
        self.q_proj = nn.Linear(embed_dim, embed_dim)
        self.k_proj = nn.Linear(embed_dim, embed_dim)
        self.v_proj = nn.Linear(embed_dim, embed_dim)

    def forward(self, query: Tensor, keys: KeySet, query_times: Tensor | None = None) -> Tensor:
        """Attention output with heads concatenated, shape ``(B, Q, E)``.

        Parameters
        ----------
        query : Tensor
            ``(B, Q, E)`` queries.
        keys : KeySet
            Keys and values; only their ``padding`` is read besides.
        query_times : Tensor, optional
            Accepted for the call signature of :class:`LevyAttention` and ignored.

        Returns
        -------
        Tensor
            ``(B, Q, E)``.

        Examples
        --------
        >>> import torch
        >>> from levy_sklearn.attention import KeySet, SoftmaxAttention
        >>> layer = SoftmaxAttention(8, num_heads=2)
        >>> q, kv = torch.randn(2, 3, 8), torch.randn(2, 5, 8)
        >>> pad = torch.tensor([[False] * 5, [False, False, False, True, True]])
        >>> layer(q, KeySet(kv, kv, padding=pad)).shape
        torch.Size([2, 3, 8])
        """
        q = _split_heads(self.q_proj(query), self.num_heads)
        k = _split_heads(self.k_proj(keys.key), self.num_heads)
        v = _split_heads(self.v_proj(keys.value), self.num_heads)
        bias = _key_padding_bias(keys.padding, q)
        out = F.scaled_dot_product_attention(
            q, k, v, attn_mask=bias, dropout_p=self.dropout if self.training else 0.0
        )
        b, _, q_len, _ = out.shape
        return out.transpose(1, 2).reshape(b, q_len, self.embed_dim)
