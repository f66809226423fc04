"""LevyNet: observation tokens in, mean and variance per query out.

The architecture is described in the user guide (``docs/user_guide/levy_attention.rst``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import NamedTuple

import torch
from torch import Tensor, nn
from torch.nn import functional as F

from .attention import KeySet, LevyAttention, SoftmaxAttention

__all__ = ["LevelGain", "LevyNet", "LevyNetOutput", "LinearLags", "PeriodicValueEmbedding"]

ATTENTION_KINDS = ("levy", "softmax")
VALUE_EMBEDDINGS = ("linear", "periodic")
# Added to every predictive variance so that σ > 0 even when the last layer is certain.
_VAR_FLOOR = 1e-6
# Hat-weight sums below this count as "nothing observed near this lag" (LinearLags).
_EMPTY_WEIGHT = 1e-6
# softplus(log(e − 1)) = 1: the gain of LevelGain at its start.
_SOFTPLUS_ONE = math.log(math.e - 1)


def _without_padding(mask: Tensor, *tokens: Tensor) -> tuple[Tensor, ...]:
    """``tokens`` with their padded slots (``mask`` ``False``) set to 0: padding carries
    whatever the caller left there, and nothing non-finite may leak into the (masked)
    arithmetic."""
    return tuple(torch.where(mask, t, torch.zeros_like(t)) for t in tokens)


class LevyNetOutput(NamedTuple):
    """What :class:`LevyNet` returns for every query.

    Attributes
    ----------
    mean : Tensor
        Predictive mean, shape ``(B, Q)``.
    variance : Tensor
        Predictive variance, shape ``(B, Q)``.
    evidence : Tensor
        Evidence ``Λ`` of each head of the output layer, shape ``(B, Q, H)`` (zeros for the
        softmax twin, which has none).
    disagreement : Tensor
        Disagreement of each head seen through the readout, ``Σ_j a_j (wᵀ(v_j − μ))²``, in
        squared output units, shape ``(B, Q, H)`` (zeros for the softmax twin).
    noise : Tensor
        The learned noise variance inside ``variance``, shape ``(B, Q)``: zeros without a
        noise head; for the softmax twin, its variance head (all of ``variance`` but a
        floor of ``1e-6``).

    Examples
    --------
    >>> import torch
    >>> from levy_sklearn.network import LevyNet, LevyNetOutput
    >>> net = LevyNet(n_channels=3, n_targets=1)
    >>> tokens = dict(
    ...     times=torch.rand(2, 5), channels=torch.randint(0, 3, (2, 5)),
    ...     values=torch.randn(2, 5), mask=torch.ones(2, 5, dtype=torch.bool),
    ...     query_times=torch.ones(2, 4), query_channels=torch.zeros(2, 4, dtype=torch.long))
    >>> out = LevyNetOutput(*net(**tokens))
    >>> out.mean.shape, out.evidence.shape  # (B, Q) and (B, Q, H)
    (torch.Size([2, 4]), torch.Size([2, 4, 4]))
    >>> bool((out.variance > 0).all())
    True
    """

    mean: Tensor
    variance: Tensor
    evidence: Tensor
    disagreement: Tensor
    noise: Tensor


class _LinearValueEmbedding(nn.Linear):
    """``w v + b``: the value as a direction in the embedding (the same parameters, and so
    the same checkpoints, as a plain ``nn.Linear(1, d_model)``)."""

    def __init__(self, d_model: int) -> None:
        super().__init__(1, d_model)

    def forward(self, values: Tensor, channels: Tensor) -> Tensor:
        return super().forward(values.unsqueeze(-1))


class PeriodicValueEmbedding(nn.Module):
    """Periodic embedding of scalar values, one set of frequencies per channel.

    ``relu(W [cos(2π f_c v), sin(2π f_c v), v] + b)`` with learned frequencies ``f_c`` drawn
    from ``N(0, σ²)`` at the start: the "PLR" embedding of Gorishniy et al. (2022), *On
    Embeddings for Numerical Features in Tabular Deep Learning*, where it let attention
    models fit sharp and non-monotone effects of a feature that a linear embedding of the
    value cannot. Written here because no maintained torch library ships it for tokens
    that carry their own channel (rtdl's embeddings take whole feature columns).

    Parameters
    ----------
    n_channels : int
        Number of channels (features); each has its own frequencies.
    d_model : int
        Embedding size.
    n_frequencies : int, default=16
        Frequencies per channel.
    sigma : float, default=0.5
        Standard deviation of the initial frequencies (in cycles per unit of the
        standardised value).

    Examples
    --------
    >>> import torch
    >>> from levy_sklearn.network import PeriodicValueEmbedding
    >>> embed = PeriodicValueEmbedding(n_channels=3, d_model=8)
    >>> embed(torch.randn(2, 5), torch.randint(0, 3, (2, 5))).shape
    torch.Size([2, 5, 8])
    """

    def __init__(
        self, n_channels: int, d_model: int, n_frequencies: int = 16, sigma: float = 0.5
    ) -> None:
        super().__init__()
        self.frequency = nn.Parameter(sigma * torch.randn(n_channels, n_frequencies))
        self.proj = nn.Linear(2 * n_frequencies + 1, d_model)

    def forward(self, values: Tensor, channels: Tensor) -> Tensor:
        v = values.unsqueeze(-1)
        angle = 2 * math.pi * v * self.frequency[channels]
        return torch.relu(self.proj(torch.cat([angle.cos(), angle.sin(), v], dim=-1)))


class TimeEncoding(nn.Module):
    """Learned Fourier features of (already scaled) continuous time."""

    def __init__(self, d_model: int, n_frequencies: int = 8) -> None:
        super().__init__()
        # Periods from 1/4 to 64 time units, so both fine and coarse structure is reachable.
        periods = torch.logspace(math.log10(0.25), math.log10(64.0), n_frequencies)
        self.frequency = nn.Parameter(2 * math.pi / periods)
        self.phase = nn.Parameter(torch.zeros(n_frequencies))
        self.proj = nn.Linear(2 * n_frequencies + 1, d_model)

    def forward(self, t: Tensor) -> Tensor:
        angle = t.unsqueeze(-1) * self.frequency + self.phase
        return self.proj(torch.cat([angle.sin(), angle.cos(), t.unsqueeze(-1)], dim=-1))


def _make_attention(
    kind: str, d_model: int, n_heads: int, n_windowed_heads: int, dropout: float, **levy_init
) -> nn.Module:
    if kind == "levy":
        return LevyAttention(d_model, n_heads, n_windowed_heads, **levy_init)
    levy_init.pop("query_prior", None)
    levy_init.pop("count_prior", None)
    return SoftmaxAttention(d_model, n_heads, dropout=dropout)


class EncoderBlock(nn.Module):
    """Pre-LayerNorm self-attention + feed-forward block with residuals."""

    def __init__(self, attention: nn.Module, d_model: int, dropout: float) -> None:
        super().__init__()
        self.norm1 = nn.LayerNorm(d_model)
        self.attention = attention
        self.out_proj = nn.Linear(d_model, d_model)
        self.norm2 = nn.LayerNorm(d_model)
        self.ffn = nn.Sequential(
            nn.Linear(d_model, 2 * d_model), nn.GELU(), nn.Linear(2 * d_model, d_model)
        )
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: Tensor, times: Tensor, padding: Tensor) -> Tensor:
        h = self.norm1(x)
        x = x + self.dropout(self.out_proj(self.attention(h, KeySet(h, h, times, padding), times)))
        return x + self.dropout(self.ffn(self.norm2(x)))


class LinearLags(nn.Module):
    r"""A linear autoregression on the context, added to the network's mean.

    The observed context of each channel is read on a regular grid of ``n_lags`` lags, one
    time unit apart and ending at the window's origin (lag ``k`` at time ``−k``): each
    grid point gets the average of the channel's values within one unit of it, weighted
    by the hat function ``max(0, 1 − |lag − k|)`` (on a regular series, exactly the value
    ``k`` steps back; ``0``, the window's anchor, where nothing was observed near it). A
    linear map per target, horizon and channel turns the grid into a shift of the mean;
    horizons ``1 … n_horizons`` time units have their own weights, interpolated between
    them, and queries outside take the nearest. The weights start at zero, so the network
    starts as it would without this path.

    It is the classical direct multi-step autoregression: the linear dependence of a
    forecast on the recent past (an oscillation, a partial mean reversion) that attention,
    a convex combination of values, can express only through several heads. The shift is a
    deterministic function of the observations, so the Lévy variance stays exact.

    Parameters
    ----------
    n_channels, n_targets : int
        Channels read (ids ``0 … n_channels − 1``; tokens of later channels, a
        forecaster's input channels, are not read) and query channels.
    n_lags : int
        Grid points (the autoregression's order), ``≥ 1``.
    n_horizons : int
        Horizons with their own weights, ``≥ 1``.
    seasonal_lags : sequence of float, default=()
        Whole seasonal cycles ``s`` (time units; a day, a week) whose echo each query reads:
        the value ``s`` before the query's own time and the value ``s`` before the origin
        (hat-weighted as the grid is, ``0`` where nothing was observed near), each with a
        weight per target, horizon and channel. A query ``h`` ahead then reads "the same
        time a week ago" (lag ``s − h``) through one weight, and "a week ago it went from
        there to there" through two, whatever ``h`` is: the seasonal naive forecast and its
        anchored variant are points of this model.

    Examples
    --------
    >>> import torch
    >>> from levy_sklearn.network import LinearLags
    >>> lags = LinearLags(n_channels=1, n_targets=1, n_lags=3, n_horizons=2)
    >>> with torch.no_grad():
    ...     lags.weight[0, :, 0, 1] = 1.0  # forecast the value one step back
    >>> times = torch.tensor([[-2.0, -1.0, 0.0]])
    >>> values = torch.tensor([[5.0, 7.0, 0.0]])
    >>> mask = torch.ones(1, 3, dtype=torch.bool)
    >>> zeros = torch.zeros(1, 3, dtype=torch.long)
    >>> lags(times, zeros, values, mask, torch.tensor([[1.0, 2.0]]), zeros[:, :2]).tolist()
    [[7.0, 7.0]]
    """

    def __init__(
        self,
        n_channels: int,
        n_targets: int,
        n_lags: int,
        n_horizons: int,
        seasonal_lags: Sequence[float] = (),
    ) -> None:
        super().__init__()
        self.seasonal_lags = tuple(float(s) for s in seasonal_lags)
        if n_lags < 1 and not self.seasonal_lags or n_lags < 0 or n_horizons < 1:
            raise ValueError(
                "LinearLags needs n_lags >= 1 (or seasonal_lags) and n_horizons >= 1."
            )
        if any(not s > 0 for s in self.seasonal_lags):
            raise ValueError(f"seasonal_lags={seasonal_lags!r} must all be positive.")
        self.weight = nn.Parameter(torch.zeros(n_targets, n_horizons, n_channels, n_lags))
        if self.seasonal_lags:
            # Two reads per cycle (before the query, before the origin); created only with
            # cycles, so a network without them has the parameters it always had.
            self.seasonal_weight = nn.Parameter(
                torch.zeros(n_targets, n_horizons, n_channels, 2 * len(self.seasonal_lags))
            )

    def forward(
        self,
        times: Tensor,
        channels: Tensor,
        values: Tensor,
        mask: Tensor,
        query_times: Tensor,
        query_channels: Tensor,
    ) -> Tensor:
        """The autoregression's shift of the mean for every query.

        Parameters
        ----------
        times, channels, values, mask, query_times, query_channels : Tensor
            Tokens and queries as in :meth:`LevyNet.forward` (padded slots may hold
            anything); token times relative to the window's origin (those ``> 0``, known
            ahead, are not read).

        Returns
        -------
        Tensor
            ``(B, Q)`` shift, in the normalised units of ``values``.

        Examples
        --------
        >>> import torch
        >>> from levy_sklearn.network import LinearLags
        >>> lags = LinearLags(n_channels=2, n_targets=1, n_lags=2, n_horizons=1)
        >>> tokens = (torch.tensor([[0.0, -1.0]]), torch.tensor([[0, 1]]),
        ...           torch.tensor([[0.0, 4.0]]), torch.ones(1, 2, dtype=torch.bool))
        >>> lags(*tokens, torch.tensor([[1.0]]), torch.tensor([[0]])).tolist()  # starts at 0
        [[0.0]]
        """
        _, n_horizons, n_channels, n_lags = self.weight.shape
        dtype = self.weight.dtype
        mask = mask.bool()
        times, channels, values = _without_padding(
            mask, times.to(dtype), channels, values.to(dtype)
        )
        # Lags end at the origin: a known-ahead input's token after it is no lag; nor is a
        # token of a channel not read (an input's).
        mask = mask & (times <= 0) & (channels < n_channels)
        channels = torch.where(mask, channels, torch.zeros_like(channels))
        per_channel = F.one_hot(channels, n_channels).to(dtype)  # (B, L, C)
        # Grid point k reads the hat-weighted values at time -k.
        lagged = _hat_read(
            times,
            per_channel,
            values,
            mask,
            -torch.arange(n_lags, dtype=dtype, device=times.device),
        )  # (B, C, K)
        by_horizon = torch.einsum("thck,bck->bth", self.weight, lagged)  # (B, targets, H)
        shift = _at_horizon(by_horizon, query_times, query_channels)
        if self.seasonal_lags:
            shift = shift + self._seasonal(
                times, per_channel, values, mask, query_times, query_channels
            )
        return shift

    def _seasonal(
        self,
        times: Tensor,
        per_channel: Tensor,
        values: Tensor,
        mask: Tensor,
        query_times: Tensor,
        query_channels: Tensor,
    ) -> Tensor:
        """The seasonal reads' shift ``(B, Q)``: for each cycle ``s``, the values at
        ``τ − s`` (per query) and at ``−s`` (per window), weighted per horizon."""
        dtype = self.weight.dtype
        cycles = torch.tensor(self.seasonal_lags, dtype=dtype, device=times.device)
        b, q = query_times.shape
        at_query = _hat_read(
            times, per_channel, values, mask, (query_times.unsqueeze(-1) - cycles).flatten(1)
        ).view(b, -1, q, cycles.numel())  # (B, C, Q, E)
        at_origin = _hat_read(times, per_channel, values, mask, -cycles)  # (B, C, E)
        reads = torch.cat([at_query, at_origin.unsqueeze(2).expand_as(at_query)], dim=-1)
        # Each query's weights, interpolated between the horizons around its time.
        n_targets, n_horizons = self.seasonal_weight.shape[:2]
        at = query_times.to(dtype).clamp(1, n_horizons)
        below = at.floor()
        frac = (at - below).unsqueeze(-1).unsqueeze(-1)
        flat = self.seasonal_weight.flatten(0, 1)  # (targets · H, C, 2E)
        start = query_channels.long() * n_horizons - 1
        low = flat[start + below.long()]
        high = flat[start + (below.long() + 1).clamp(max=n_horizons)]
        weight = (1 - frac) * low + frac * high  # (B, Q, C, 2E)
        return torch.einsum("bqce,bcqe->bq", weight, reads)


class LevelGain(nn.Module):
    r"""A gain of the output layer read off each window's level, per target and horizon.

    A window's values are changes from its level in units of its scale, and its scale is the
    step size of the series' whole history, so the attention cannot tell a window near 0.1
    from one near 40 of the same series: where the spread of what comes next follows the
    level itself (noise and elimination proportional to a concentration), the output in
    window units has to be wide near 40 and narrow near 0.1, which no function of the
    window's normalised tokens can say. Each query reads the features ``f = (1, loc /
    scale, 1 / scale)`` of its window's location ``loc`` and scale ``scale`` (in the
    series' standardised units, :class:`~levy_sklearn.windows.SeriesWindows`' ``query_loc``
    and ``query_scale``): the level in window units of a series whose own zero lies at
    ``−m/s`` of them (mean ``m``, scale ``s``) is ``(loc + m/s) / scale``, a combination of
    the features wherever the series share ``m/s`` (concentrations of one drug across
    subjects, say). The gain

    ``g = softplus(log(e − 1) + vₕᵀ f)``

    has weights ``vₕ`` per target and horizon ``1 … n_horizons`` time units, interpolated
    between them (queries outside take the nearest). They start at zero, a gain of 1, so
    the network starts as it would without it. :class:`LevyNet` multiplies the Lévy
    layer's mean by ``g`` and its variance by ``g²``: a deterministic map of the layer's
    output, so the variance stays the layer's exact variance, and the evidence ``Λ`` and
    the attention weights never see the gain.

    Parameters
    ----------
    n_targets : int
        Query channels.
    n_horizons : int
        Horizons with their own weights, ``≥ 1``.

    Examples
    --------
    >>> import torch
    >>> from levy_sklearn.network import LevelGain
    >>> gain = LevelGain(n_targets=1, n_horizons=2)
    >>> loc, scale = torch.tensor([[2.0, 2.0]]), torch.tensor([[0.5, 0.5]])
    >>> times, channels = torch.tensor([[1.0, 2.0]]), torch.zeros(1, 2, dtype=torch.long)
    >>> gain(loc, scale, times, channels).tolist()  # at the start: a gain of 1
    [[1.0, 1.0]]
    >>> with torch.no_grad():
    ...     gain.weight[0, 1, 1] = 1.0  # two units ahead: grows with loc / scale
    >>> [round(g, 3) for g in gain(loc, scale, times, channels)[0].tolist()]
    [1.0, 4.552]
    """

    #: Features per query: a constant, the location over the scale, and the inverse scale.
    N_FEATURES = 3

    def __init__(self, n_targets: int, n_horizons: int) -> None:
        super().__init__()
        if n_targets < 1 or n_horizons < 1:
            raise ValueError("LevelGain needs n_targets >= 1 and n_horizons >= 1.")
        self.weight = nn.Parameter(torch.zeros(n_targets, n_horizons, self.N_FEATURES))

    def forward(
        self, query_loc: Tensor, query_scale: Tensor, query_times: Tensor, query_channels: Tensor
    ) -> Tensor:
        """The gain of every query, ``(B, Q)``.

        Parameters
        ----------
        query_loc, query_scale : Tensor
            ``(B, Q)`` each query's window location and scale (standardised units; padded
            queries hold a location of 0 and a scale of 1, as windows pad them).
        query_times, query_channels : Tensor
            ``(B, Q)`` as in :meth:`LevyNet.forward`.

        Returns
        -------
        Tensor
            ``(B, Q)`` gains, all positive.

        Examples
        --------
        >>> import torch
        >>> from levy_sklearn.network import LevelGain
        >>> gain = LevelGain(n_targets=1, n_horizons=1)
        >>> with torch.no_grad():
        ...     gain.weight[0, 0, 1] = 1.0  # the higher the level, the wider
        >>> g = gain(torch.tensor([[-1.0, 1.0]]), torch.ones(1, 2), torch.ones(1, 2),
        ...          torch.zeros(1, 2, dtype=torch.long))
        >>> bool(g[0, 0] < 1 < g[0, 1])
        True
        """
        dtype = self.weight.dtype
        loc, scale = query_loc.to(dtype), query_scale.to(dtype)
        features = torch.stack([torch.ones_like(loc), loc / scale, 1 / scale], dim=-1)
        # Per feature, each query's weight interpolated between the horizons around it.
        per_feature = self.weight.permute(2, 0, 1).unsqueeze(1).expand(-1, loc.shape[0], -1, -1)
        weight = torch.stack(
            [_at_horizon(w, query_times, query_channels) for w in per_feature], dim=-1
        )
        return F.softplus((weight * features).sum(-1) + _SOFTPLUS_ONE)


def _at_horizon(by_horizon: Tensor, query_times: Tensor, query_channels: Tensor) -> Tensor:
    """Each query's value of ``by_horizon`` ``(B, targets, H)`` (horizons ``1 … H`` time
    units), interpolated between the two horizons around its time; queries outside take
    the nearest."""
    n_horizons = by_horizon.shape[-1]
    dtype = by_horizon.dtype
    # Each query reads the hat functions of the two horizons around it, the only ones
    # not 0 there: a (B, Q, H) product of them all took gigabytes at a long max_horizon.
    at = query_times.to(dtype).clamp(1, n_horizons)
    below = at.floor()
    flat = by_horizon.flatten(1)  # (B, targets · H)
    start = query_channels.long() * n_horizons - 1  # horizon h of a target at start + h
    shift = (1 - (at - below)).clamp(min=0) * flat.gather(1, start + below.long())
    above = below + 1
    upper = flat.gather(1, start + above.clamp(max=n_horizons).long())
    return shift + torch.where(above <= n_horizons, (1 - (above - at)).clamp(min=0), 0) * upper


def _hat_read(
    times: Tensor, per_channel: Tensor, values: Tensor, mask: Tensor, at: Tensor
) -> Tensor:
    """Per channel, the average of the tokens' values within one time unit of each time of
    ``at`` (``(K,)`` or ``(B, K)``), weighted by the hat function ``max(0, 1 − |t − at|)``:
    ``(B, C, K)``; ``0`` (the window's anchor) where nothing was observed near."""
    hat = (1 - (times.unsqueeze(-1) - (at if at.dim() == 1 else at.unsqueeze(1))).abs()).clamp(
        min=0
    )
    hat = hat * mask.to(hat.dtype).unsqueeze(-1)  # (B, L, K)
    weight_sum = torch.einsum("blk,blc->bck", hat, per_channel)
    value_sum = torch.einsum("blk,blc,bl->bck", hat, per_channel, values)
    # A point with nothing observed near it has both sums 0: it reads 0, the anchor.
    return value_sum / weight_sum.clamp(min=_EMPTY_WEIGHT)


class LevyNet(nn.Module):
    r"""Probabilistic set-to-query network whose output layer is Lévy cross-attention.

    Observation tokens ``(time, channel, value)`` are embedded (value embedding + channel
    embedding + learned Fourier time encoding), passed through pre-LayerNorm encoder blocks, and
    read by query tokens (target channel embedding + time encoding of the target time). The last
    layer is a Lévy cross-attention followed only by an affine readout per target, so the
    returned variance is the exact variance of that stochastic layer given the (expected)
    encoder below it (plus, with ``noise_head``, a learned noise variance). Only observed
    tokens are keys of the output layer, so its evidence ``Λ`` counts observations and
    nothing else; when little or nothing was observed, the output
    moves to the layer's learned prior ``N(m₀, S₀)`` (a function of the query's target and
    time, never of the observations), whose spread is what the network has learned "knowing
    nothing" costs. During training, ``token_dropout`` hides random subsets of the observed
    tokens so that this prior and the evidence path learn what missing information costs.

    Parameters
    ----------
    n_channels : int
        Number of observation channels (token channel ids are ``0 … n_channels − 1``).
    n_targets : int
        Number of query channels (query channel ids are ``0 … n_targets − 1``).
    d_model : int, default=32
        Embedding size.
    n_heads : int, default=4
        Attention heads per layer.
    n_windowed_heads : int, default=0
        Heads of the output (decoder) layer with a learned soft look-back window ending at the
        query time; the rest, and every encoder head, are global.
    n_layers : int, default=1
        Encoder blocks.
    attention : {"levy", "softmax"}, default="levy"
        ``"softmax"`` builds the baseline twin: standard scaled dot-product attention
        everywhere and a heteroscedastic variance head instead of the Lévy variance.
    dropout : float, default=0.0
        Dropout in residual branches (and on softmax attention weights): the MC-dropout
        baseline keeps it active at prediction time.
    n_prior_tokens : int, default=4
        Learned timeless tokens the softmax twin's queries can attend to (it has no evidence,
        so this is its only way to answer a query with nothing observed). The Lévy network
        never uses them as keys: its prior is the output layer's ``(m₀, S₀)``.
    token_dropout : float, default=0.0
        Training only: the share of rows (windows) whose observed tokens are thinned. Each such
        row keeps every token with a probability drawn uniformly from ``[0, 1)``, so it may
        keep almost all of them or none; the ``(B, L)`` ``mask`` is the unit hidden.
    bandwidth, lookback : float, default=1.0, 4.0
        Initial mollifier bandwidth and look-back (in the scaled time units of the inputs).
    rate : float or sequence of float, default=1.0
        Initial rate ``ρ`` of the output layer's heads: one value for all, or one per head.
        Spreading it over orders of magnitude starts some heads where evidence is plentiful
        (precise means, ``ψ(Λ) ≈ 1/Λ`` small) and others where it is scarce (uncertainty
        that tracks how much was observed); training moves ``log ρ`` only slowly.
    positional_keys : bool, default=False
        Key the output layer on where each observation is (channel embedding + time
        encoding, as in mTAN's time-only keys) plus a per-channel linear term in its value
        that starts at zero, instead of on the encoded token. The attention weights and the
        evidence ``Λ`` then start out depending only on which channels were observed and
        when, and pick up value-dependence only where training finds it useful (e.g. a
        feature that drives the noise); the values still carry the data. On small tabular
        data this removes most value-by-value interactions through the weights, which
        overfit.
    count_prior : bool, default=False
        Let the output layer's prior ``(m₀, S₀)`` also depend on how many tokens a query
        sees (see :class:`~levy_sklearn.attention.LevyAttention`); never its evidence.
    value_embedding : {"linear", "periodic"}, default="linear"
        How a token's value enters its embedding: a linear map of the value, or a
        :class:`PeriodicValueEmbedding` (more capacity per feature; pays on large tables).
    noise_head : bool, default=False
        Add a learned, input-dependent noise variance to the Lévy layer's: ``σ² = Var[u] +
        softplus(wₙᵀ E[Y] + bₙ)`` per target, the softmax twin's variance head read off the
        Lévy layer's expected output ``E[Y]`` (what the readout sees). It models noise
        around the target, which the Lévy variance (the precision of what was observed plus
        the prior's spread) does not; it never enters the evidence ``Λ`` or the attention
        weights, and :meth:`sample` adds it as independent Gaussian noise. The softmax twin
        always has this head: it is its whole variance.
    n_lags, n_lag_horizons : int, default=0, 1
        With ``n_lags > 0``, a :class:`LinearLags` autoregression of order ``n_lags`` (with
        ``n_lag_horizons`` horizons of its own weights) of every channel but the inputs
        adds to the mean; it never enters the variance, the evidence or the attention
        weights.
    seasonal_lags : sequence of float, default=()
        Seasonal cycles (time units) the autoregression also reads at each query (see
        :class:`LinearLags`); with them it is built even without ``n_lags``.
    calendar_periods : sequence of float, default=()
        Calendar periods (time units; a day and a week on clock time) whose phase every
        token and query also carries: ``sin`` and ``cos`` of ``2π (φ_p + t / P_p)``, mapped
        into the time encoding, where ``φ_p`` is the phase of the window's origin given as
        ``calendar`` to :meth:`forward`. Tokens at the same time of day (or week) then share
        these features whatever their distance, as do a forecast time and its echoes.
    calendar_harmonics : int, default=1
        Harmonics ``k = 1 … K`` of each calendar phase in that encoding (``sin`` and ``cos``
        of ``2πk (φ_p + t / P_p)``), at most ``⌊P_p / 2⌋`` of a period (higher ones alias
        onto lower ones at whole time units): the first alone gives a smooth day, more
        resolve its sharp shape and, of a week, its weekend.
    n_inputs : int, default=0
        The last ``n_inputs`` of the ``n_channels`` are inputs (a forecaster's covariates:
        observed, never forecast). They are tokens like any other, but the autoregression
        does not read them: their values keep the level of their standardisation, which
        the windows do not normalise as they do the forecast channels', so a lag weight on
        them would map a level onto a change of the target.
    level_gain : bool, default=False
        Multiply the Lévy readout (mean by ``g``, variance by ``g²``) by a
        :class:`LevelGain` ``g`` of each query's window location and scale (``query_loc``
        and ``query_scale`` of :meth:`forward`), with weights per target and each of
        ``n_lag_horizons`` horizons. The variance stays the layer's exact variance; the
        evidence and the attention weights never see the gain.

    Examples
    --------
    >>> import torch
    >>> from levy_sklearn.network import LevyNet
    >>> net = LevyNet(n_channels=3, n_targets=1)
    >>> out = net(
    ...     times=torch.rand(2, 5), channels=torch.randint(0, 3, (2, 5)),
    ...     values=torch.randn(2, 5), mask=torch.ones(2, 5, dtype=torch.bool),
    ...     query_times=torch.ones(2, 4), query_channels=torch.zeros(2, 4, dtype=torch.long))
    >>> mean, variance, evidence, disagreement, noise = out
    >>> mean.shape, variance.shape, evidence.shape
    (torch.Size([2, 4]), torch.Size([2, 4]), torch.Size([2, 4, 4]))
    """

    def __init__(
        self,
        n_channels: int,
        n_targets: int,
        d_model: int = 32,
        n_heads: int = 4,
        n_windowed_heads: int = 0,
        n_layers: int = 1,
        attention: str = "levy",
        dropout: float = 0.0,
        n_prior_tokens: int = 4,
        bandwidth: float = 1.0,
        lookback: float = 4.0,
        rate: float | Sequence[float] = 1.0,
        positional_keys: bool = False,
        token_dropout: float = 0.0,
        count_prior: bool = False,
        noise_head: bool = False,
        value_embedding: str = "linear",
        n_lags: int = 0,
        n_lag_horizons: int = 1,
        seasonal_lags: Sequence[float] = (),
        calendar_periods: Sequence[float] = (),
        calendar_harmonics: int = 1,
        n_inputs: int = 0,
        level_gain: bool = False,
    ) -> None:
        super().__init__()
        if attention not in ATTENTION_KINDS:
            raise ValueError(f"attention={attention!r} must be one of {ATTENTION_KINDS}.")
        if value_embedding not in VALUE_EMBEDDINGS:
            raise ValueError(
                f"value_embedding={value_embedding!r} must be one of {VALUE_EMBEDDINGS}."
            )
        if n_channels < 1 or n_targets < 1:
            raise ValueError("LevyNet needs n_channels >= 1 and n_targets >= 1.")
        if not 0 <= n_inputs < n_channels:
            raise ValueError(
                f"n_inputs={n_inputs!r} must be at least 0 and below n_channels={n_channels}."
            )
        if not 0.0 <= token_dropout <= 1.0:
            raise ValueError(f"token_dropout={token_dropout!r} must be in [0, 1].")
        self.attention = attention
        self.n_targets = n_targets
        self.positional_keys = positional_keys
        self.token_dropout = token_dropout
        self.noise_head = noise_head and attention == "levy"
        if positional_keys:
            # Per-channel direction along which a token's value moves its key; zero at the
            # start, so keys begin purely positional and acquire value-dependence only where
            # training finds it useful (e.g. evidence that shrinks as a noise-driving feature
            # grows).
            self.key_value = nn.Parameter(torch.zeros(n_channels, d_model))
        levy_init = {"bandwidth": bandwidth, "lookback": lookback}
        self.value_embedding = (
            PeriodicValueEmbedding(n_channels, d_model)
            if value_embedding == "periodic"
            else _LinearValueEmbedding(d_model)
        )
        self.channel_embedding = nn.Embedding(n_channels, d_model)
        self.time_encoding = TimeEncoding(d_model)
        self.encoder = nn.ModuleList(
            EncoderBlock(
                # Encoder heads are global: a windowed head's mass is a special function per
                # (query, key) pair, too costly on L × L; recency windows act in the decoder.
                _make_attention(attention, d_model, n_heads, 0, dropout, **levy_init),
                d_model,
                dropout,
            )
            for _ in range(n_layers)
        )
        self.memory_norm = nn.LayerNorm(d_model)
        if attention == "softmax":
            self.prior_tokens = nn.Parameter(
                torch.randn(n_prior_tokens, d_model) / math.sqrt(d_model)
            )
        self.query_embedding = nn.Embedding(n_targets, d_model)
        self.query_norm = nn.LayerNorm(d_model)
        self.cross = _make_attention(
            attention,
            d_model,
            n_heads,
            n_windowed_heads,
            dropout,
            query_prior=True,
            count_prior=count_prior,
            **levy_init,
        )
        if attention == "levy":
            rates = torch.as_tensor(rate, dtype=self.cross.log_rate.dtype).flatten()
            if rates.numel() not in (1, n_heads) or not bool((rates > 0).all()):
                raise ValueError(
                    f"rate={rate!r} must be one positive value or one per head ({n_heads})."
                )
            with torch.no_grad():
                self.cross.log_rate.copy_(rates.log().expand(n_heads))
        head_dim = d_model // n_heads
        self.readout_weight = nn.Parameter(
            torch.randn(n_targets, n_heads, head_dim) / math.sqrt(d_model)
        )
        self.readout_bias = nn.Parameter(torch.zeros(n_targets))
        if attention == "softmax" or self.noise_head:
            # Built last, so that without it every other parameter starts where it did.
            self.variance_head = nn.Linear(d_model, n_targets)
        # Built after the rest, so that without it every other parameter starts where it did.
        self.lags = (
            LinearLags(n_channels - n_inputs, n_targets, n_lags, n_lag_horizons, seasonal_lags)
            if n_lags > 0 or len(seasonal_lags)
            else None
        )
        self.calendar_periods = tuple(float(p) for p in calendar_periods)
        if any(not p > 0 for p in self.calendar_periods):
            raise ValueError(f"calendar_periods={calendar_periods!r} must all be positive.")
        if not (isinstance(calendar_harmonics, int) and calendar_harmonics >= 1):
            raise ValueError(
                f"calendar_harmonics={calendar_harmonics!r} must be an integer >= 1 (1: the "
                "phase's sine and cosine alone)."
            )
        self.calendar_harmonics = calendar_harmonics
        # (period, harmonic) of each calendar feature: at most ⌊P/2⌋ harmonics of a period P,
        # as higher ones alias onto lower ones at whole time units.
        self._calendar_terms = [
            (i, k)
            for i, p in enumerate(self.calendar_periods)
            for k in range(1, min(calendar_harmonics, max(int(p // 2), 1)) + 1)
        ]
        # Built last, so that without it every other parameter starts where it did.
        self.calendar_encoding = (
            nn.Linear(2 * len(self._calendar_terms), d_model) if self.calendar_periods else None
        )
        # Built last, so that without it every other parameter starts where it did.
        self.level_gain = LevelGain(n_targets, n_lag_horizons) if level_gain else None
        # The output layer's readout, chosen once: the Lévy layer's closed-form moments, or the
        # softmax twin's attention output and variance head.
        self._readout = self._levy_readout if attention == "levy" else self._softmax_readout

    def encode_time(self, times: Tensor, calendar: Tensor | None = None) -> Tensor:
        """The time encoding of relative times, plus, with ``calendar_periods``, that of
        their phase in each calendar period.

        Parameters
        ----------
        times : Tensor
            ``(B, L)`` times relative to each window's origin (scaled units).
        calendar : Tensor, optional
            ``(B, P)`` phase of each window's origin in each calendar period, in cycles
            (``None``: no calendar term).

        Returns
        -------
        Tensor
            ``(B, L, d_model)``.

        Examples
        --------
        >>> import torch
        >>> from levy_sklearn.network import LevyNet
        >>> net = LevyNet(n_channels=1, n_targets=1, d_model=8, calendar_periods=[24.0])
        >>> a = net.encode_time(torch.tensor([[0.0]]), torch.tensor([[0.25]]))
        >>> b = net.encode_time(torch.tensor([[0.0]]), torch.tensor([[0.5]]))
        >>> bool(torch.allclose(a, b))  # six hours later in the day: another encoding
        False
        """
        encoded = self.time_encoding(times)
        if self.calendar_encoding is None or calendar is None:
            return encoded
        periods = torch.tensor(self.calendar_periods, dtype=times.dtype, device=times.device)
        phase = calendar.to(times.dtype).unsqueeze(1) + times.unsqueeze(-1) / periods
        angle = 2 * math.pi * torch.remainder(phase, 1.0)  # (B, L, P)
        period, k = torch.tensor(self._calendar_terms, device=times.device).T
        angle = angle[..., period] * k.to(times.dtype)  # (B, L, F), each period's harmonics
        return encoded + self.calendar_encoding(torch.cat([angle.sin(), angle.cos()], dim=-1))

    def embed(
        self, times: Tensor, channels: Tensor, values: Tensor, calendar: Tensor | None = None
    ) -> Tensor:
        """Token embeddings: value embedding + channel embedding + time encoding.

        Parameters
        ----------
        times, values : Tensor
            ``(B, L)`` float token times (scaled) and values (standardised).
        channels : Tensor
            ``(B, L)`` long token channel ids.
        calendar : Tensor, optional
            ``(B, P)`` phases of the windows' origins (see :meth:`encode_time`).

        Returns
        -------
        Tensor
            ``(B, L, d_model)``.

        Examples
        --------
        >>> import torch
        >>> from levy_sklearn.network import LevyNet
        >>> net = LevyNet(n_channels=3, n_targets=1, d_model=16)
        >>> net.embed(torch.rand(2, 5), torch.randint(0, 3, (2, 5)), torch.randn(2, 5)).shape
        torch.Size([2, 5, 16])
        """
        return (
            self.value_embedding(values, channels)
            + self.channel_embedding(channels)
            + self.encode_time(times, calendar)
        )

    def _memory(
        self,
        times: Tensor,
        channels: Tensor,
        values: Tensor,
        mask: Tensor,
        calendar: Tensor | None = None,
    ) -> KeySet:
        """The encoded observations as the output layer's keys (values: the encoded tokens)."""
        dtype = self.readout_weight.dtype
        times, values = times.to(dtype), values.to(dtype)
        values, times, channels = _without_padding(mask, values, times, channels)
        padding = ~mask
        x = self.embed(times, channels, values, calendar)
        for block in self.encoder:
            x = block(x, times, padding)
        memory = self.memory_norm(x)
        keys = memory
        if self.positional_keys:
            position = self.channel_embedding(channels) + self.encode_time(times, calendar)
            keys = self.memory_norm(position) + values.unsqueeze(-1) * self.key_value[channels]
        return KeySet(keys, memory, times, padding)

    def _levy_readout(
        self, q: Tensor, keys: KeySet, query_times: Tensor, query_channels: Tensor
    ) -> tuple[Tensor, Tensor, Tensor, Tensor, Tensor]:
        # Evidence counts observations only: no learned token is a key of the Lévy layer.
        head = None
        if self.noise_head:
            # The variance head reads E[Y], which is linear in the layer: its logit is the
            # expectation of a second affine readout, computed alongside the first.
            shape = self.readout_weight.shape
            head = (self.variance_head.weight.view(shape), self.variance_head.bias)
        mean, variance, evidence, disagreement, *logit = self.cross.readout(
            q,
            keys,
            self.readout_weight,
            self.readout_bias,
            query_channels,
            query_times,
            expect=head,
        )
        noise = F.softplus(logit[0]) if logit else torch.zeros_like(mean)
        return mean, variance + noise + _VAR_FLOOR, evidence, disagreement, noise

    def _head_variance(self, y: Tensor, query_channels: Tensor) -> Tensor:
        """The variance head's ``softplus(wₜᵀ y + bₜ)`` ``(B, Q)`` for each query's target."""
        logit = torch.gather(self.variance_head(y), -1, query_channels.unsqueeze(-1))
        return F.softplus(logit.squeeze(-1))

    def _softmax_readout(
        self, q: Tensor, keys: KeySet, query_times: Tensor, query_channels: Tensor
    ) -> tuple[Tensor, Tensor, Tensor, Tensor, Tensor]:
        # The twin has no evidence: learned prior tokens, never padding, are its only answer
        # to a query with nothing observed. It reads no key times.
        b, n_prior = q.shape[0], self.prior_tokens.shape[0]
        prior = self.prior_tokens.expand(b, -1, -1)
        keys = KeySet(
            key=torch.cat([prior, keys.key], dim=1),
            value=torch.cat([prior, keys.value], dim=1),
            padding=torch.cat([keys.padding.new_zeros(b, n_prior), keys.padding], dim=1),
        )
        weight = self.readout_weight[query_channels]  # (B, Q, H, d)
        bias = self.readout_bias[query_channels]
        y = self.cross(q, keys, query_times)
        heads = y.view(*y.shape[:2], *weight.shape[2:])
        mean = (heads * weight).sum((-1, -2)) + bias
        zeros = mean.new_zeros(*mean.shape, weight.shape[2])
        noise = self._head_variance(y, query_channels)
        return mean, noise + _VAR_FLOOR, zeros, zeros, noise

    def _drop_tokens(self, mask: Tensor) -> Tensor:
        """Training only: thin the observed tokens of a random ``token_dropout`` share of rows."""
        if not (self.training and self.token_dropout > 0):
            return mask
        b = mask.shape[0]
        thinned = torch.rand(b, 1, device=mask.device) < self.token_dropout
        keep_rate = torch.rand(b, 1, device=mask.device)
        keep = torch.rand(mask.shape, device=mask.device) < keep_rate
        return mask & (keep | ~thinned)

    def _queries(
        self, query_times: Tensor, query_channels: Tensor, calendar: Tensor | None = None
    ) -> Tensor:
        q = self.query_embedding(query_channels) + self.encode_time(query_times, calendar)
        return self.query_norm(q)

    def forward(
        self,
        times: Tensor,
        channels: Tensor,
        values: Tensor,
        mask: Tensor,
        query_times: Tensor,
        query_channels: Tensor,
        calendar: Tensor | None = None,
        query_loc: Tensor | None = None,
        query_scale: Tensor | None = None,
    ) -> tuple[Tensor, Tensor, Tensor, Tensor, Tensor]:
        """Predict every query.

        Parameters
        ----------
        times, values : Tensor
            ``(B, L)`` float token times (scaled) and values (standardised).
        channels : Tensor
            ``(B, L)`` long token channel ids.
        mask : Tensor
            ``(B, L)`` bool, ``True`` where the token is observed, ``False`` for padding.
        query_times : Tensor
            ``(B, Q)`` float target times.
        query_channels : Tensor
            ``(B, Q)`` long target ids.
        calendar : Tensor, optional
            ``(B, P)`` phase (in cycles) of each window's origin in each of the
            ``calendar_periods`` (ignored without them).
        query_loc, query_scale : Tensor, optional
            ``(B, Q)`` each query's window location and scale (standardised units, as
            series windows give them): needed with ``level_gain``, ignored without.

        Returns
        -------
        tuple of Tensor
            ``(mean, variance, evidence, disagreement, noise)`` as described in
            :class:`LevyNetOutput` (a plain tuple, which skorch can move between devices).

        Examples
        --------
        >>> import torch
        >>> from levy_sklearn.network import LevyNet
        >>> net = LevyNet(n_channels=3, n_targets=1)
        >>> tokens = dict(
        ...     times=torch.rand(2, 5), channels=torch.randint(0, 3, (2, 5)),
        ...     values=torch.randn(2, 5), mask=torch.ones(2, 5, dtype=torch.bool),
        ...     query_times=torch.ones(2, 4), query_channels=torch.zeros(2, 4, dtype=torch.long))
        >>> mean, variance, evidence, disagreement, noise = net(**tokens)
        >>> mean.shape, disagreement.shape
        (torch.Size([2, 4]), torch.Size([2, 4, 4]))
        """
        dtype = self.readout_weight.dtype
        query_times = query_times.to(dtype)
        mask = self._drop_tokens(mask.bool())
        keys = self._memory(times, channels, values, mask, calendar)
        mean, variance, evidence, disagreement, noise = self._readout(
            self._queries(query_times, query_channels, calendar), keys, query_times, query_channels
        )
        shift = self._lag_shift(times, channels, values, mask, query_times, query_channels)
        gain = self._gain(query_loc, query_scale, query_times, query_channels)
        if gain is not None:
            mean = gain * mean
            gain2 = gain.square()
            # The floor stays a floor: a gain near 0 narrows σ down to it, not below.
            variance, noise = (gain2 * variance).clamp(min=_VAR_FLOOR), gain2 * noise
            disagreement = gain2.unsqueeze(-1) * disagreement
        return mean + shift, variance, evidence, disagreement, noise

    def _gain(
        self,
        query_loc: Tensor | None,
        query_scale: Tensor | None,
        query_times: Tensor,
        query_channels: Tensor,
    ) -> Tensor | None:
        """The :class:`LevelGain` of every query (``None`` without ``level_gain``)."""
        if self.level_gain is None:
            return None
        if query_loc is None or query_scale is None:
            raise ValueError(
                "A LevyNet with level_gain=True needs query_loc and query_scale (each "
                "query's window location and scale, as series windows carry them)."
            )
        return self.level_gain(query_loc, query_scale, query_times, query_channels)

    def _lag_shift(self, *tokens_and_queries: Tensor) -> Tensor | float:
        """The autoregression's shift of the mean (``0`` without ``n_lags``), for the
        arguments of :meth:`forward`."""
        return 0.0 if self.lags is None else self.lags(*tokens_and_queries)

    @torch.no_grad()
    def sample(
        self,
        times: Tensor,
        channels: Tensor,
        values: Tensor,
        mask: Tensor,
        query_times: Tensor,
        query_channels: Tensor,
        n_samples: int = 50,
        generator: torch.Generator | None = None,
        calendar: Tensor | None = None,
        query_loc: Tensor | None = None,
        query_scale: Tensor | None = None,
    ) -> Tensor:
        """Draw predictions from the Poisson construction of the output layer.

        The sampler baseline: the encoder runs once in expectation, the last layer draws
        ``n_samples`` outputs by its definition (see :meth:`LevyAttention.sample`), and the
        affine readout maps them to targets; with ``noise_head`` each draw also gets
        independent ``N(0, noise variance)`` noise.

        Parameters
        ----------
        times, channels, values, mask, query_times, query_channels : Tensor
            Tokens and queries, as in :meth:`forward`.
        n_samples : int, default=50
            Number of independent draws.
        generator : torch.Generator, optional
            Source of randomness, for reproducible draws.
        calendar, query_loc, query_scale : Tensor, optional
            As in :meth:`forward`.

        Returns
        -------
        Tensor
            ``(n_samples, B, Q)`` draws.

        Examples
        --------
        >>> import torch
        >>> from levy_sklearn.network import LevyNet
        >>> net = LevyNet(n_channels=3, n_targets=1).eval()
        >>> tokens = dict(
        ...     times=torch.rand(2, 5), channels=torch.randint(0, 3, (2, 5)),
        ...     values=torch.randn(2, 5), mask=torch.ones(2, 5, dtype=torch.bool),
        ...     query_times=torch.ones(2, 4), query_channels=torch.zeros(2, 4, dtype=torch.long))
        >>> draws = net.sample(**tokens, n_samples=20, generator=torch.Generator().manual_seed(0))
        >>> draws.shape
        torch.Size([20, 2, 4])
        """
        if self.attention != "levy":
            raise ValueError("Sampling needs attention='levy'.")
        dtype = self.readout_weight.dtype
        query_times = query_times.to(dtype)
        keys = self._memory(times, channels, values, mask.bool(), calendar)
        q = self._queries(query_times, query_channels, calendar)
        draws, mean = self.cross.sample(
            q, keys, query_times, n_samples=n_samples, generator=generator, return_mean=True
        )  # (S, B, H, Q, d) and (B, H, Q, d)
        weight = self.readout_weight[query_channels]  # (B, Q, H, d)
        out = torch.einsum("sbhqd,bqhd->sbq", draws, weight) + self.readout_bias[query_channels]
        gain = self._gain(query_loc, query_scale, query_times, query_channels)
        if gain is not None:
            out = gain * out
        out = out + self._lag_shift(times, channels, values, mask, query_times, query_channels)
        if self.noise_head:
            # E[Y] with the heads side by side, as the readout's expect sees it.
            y = mean.transpose(1, 2).reshape(*q.shape)
            std = self._head_variance(y, query_channels).sqrt()
            if gain is not None:
                std = gain * std
            noise = torch.randn(out.shape, dtype=out.dtype, device=out.device, generator=generator)
            out = out + std * noise
        return out
