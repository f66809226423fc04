"""A window's instance normalisation: level, trend, season and scale from its own context.

Each window of :func:`~levy_sklearn.windows.series_windows` is measured from a location
``loc(τ) = level + slope·τ + s(τ)`` fitted to its context (the last value, the least-squares
line or the mean, and a seasonal pattern) and divided by a scale that never falls below that
of the series' whole history up to the cutoff.
"""

from __future__ import annotations

import numpy as np

#: Instance normalisations a window accepts (``normalization`` of :func:`series_windows`
#: and of the forecaster): subtract the context's last observation, its least-squares line
#: or its mean, or leave values alone.
NORMALIZATIONS = ("last", "trend", "mean", "none")
# Contexts thinner than this fall back to the mean (a slope from two tokens is noise).
_MIN_TOKENS_TREND = 3
# A seasonal pattern is fitted only to a context that spans at least this many periods (one
# period cannot tell a season from a trend), with at least this many tokens per coefficient.
MIN_SEASONS = 2
_TOKENS_PER_COEFFICIENT = 2
# A spread from fewer terms than this (residual degrees of freedom of a window, steps of a
# history) is noise: it does not count towards a scale.
_MIN_SCALE_TERMS = 2


def seasonal_coefficients(
    t: np.ndarray, c: np.ndarray, v: np.ndarray, n_channels: int, period: float | None
) -> np.ndarray | None:
    """Per-channel Fourier coefficients ``(n_channels, K, 2)`` of one context's seasonal
    pattern of ``period`` (time units), ``None`` without a period.

    Least squares of ``level + slope·τ + Σ_k a_k cos(2πkτ/P) + b_k sin(2πkτ/P)``, so a trend
    is not read as season; ``K = ⌊P/2⌋`` harmonics (every shape a regular season of ``P``
    steps can take; one that vanishes on the grid, ``sin(πτ)`` for an even ``P``, gets the
    minimum-norm coefficient 0), fewer where the channel has few tokens, none where its
    context spans less than two periods. The coefficients are shrunk towards no season by
    the positive-part James–Stein factor ``max(0, 1 − (p − 2) σ̂² / (RSS₀ − RSS₁))`` (``p``
    seasonal coefficients, ``RSS₁`` and ``RSS₀`` the residual sums of squares with and
    without them, ``σ̂² = RSS₁ / (n − p − 2)``): a few periods of context estimate up to
    ``P − 1`` coefficients, and where the season is weak against the noise the least-squares
    pattern is mostly noise that a forecast would repeat (a single spike of an intermittent
    series, read as a yearly one). A clear season keeps a factor near 1.
    """
    if period is None:
        return None
    # No channel can fit more harmonics than the context's tokens support: a season of
    # millions of steps (a day of a kilohertz sensor) allocates no millions of zeros.
    n_harmonics = max(0, min(int(period // 2), (t.size // _TOKENS_PER_COEFFICIENT - 2) // 2))
    coef = np.zeros((n_channels, n_harmonics, 2))
    for ch in range(n_channels):
        sel = c == ch
        tc, vc = t[sel], v[sel]
        k = min(n_harmonics, (tc.size // _TOKENS_PER_COEFFICIENT - 2) // 2)
        if k < 1 or np.ptp(tc) < MIN_SEASONS * period:
            continue
        angle = 2 * np.pi * np.outer(tc, np.arange(1, k + 1)) / period
        design = np.column_stack([np.ones_like(tc), tc, np.cos(angle), np.sin(angle)])
        beta, _, rank, _ = np.linalg.lstsq(design, vc, rcond=None)
        beta = beta * _james_stein(design, vc, beta, rank)
        coef[ch, :k, 0], coef[ch, :k, 1] = beta[2 : 2 + k], beta[2 + k :]
    return coef


def _james_stein(design: np.ndarray, v: np.ndarray, beta: np.ndarray, rank: int) -> float:
    """The positive-part James–Stein factor of the coefficients beyond the first two columns
    of ``design`` (the line), given their least-squares fit ``beta`` of rank ``rank``; ``1``
    (no shrinkage) where there are too few coefficients (``p ≤ 2``) or residual degrees of
    freedom."""
    n_season, dof = rank - 2, v.size - rank
    if n_season <= 2 or dof <= 0:
        return 1.0
    rss = np.sum((v - design @ beta) ** 2)
    line = np.linalg.lstsq(design[:, :2], v, rcond=None)[0]
    explained = np.sum((v - design[:, :2] @ line) ** 2) - rss
    if explained <= 0:  # the season explains nothing
        return 0.0
    return max(0.0, 1.0 - (n_season - 2) * (rss / dof) / explained)


def seasonal_term(
    coef: np.ndarray | None, t: np.ndarray, c: np.ndarray, period: float | None
) -> np.ndarray | float:
    """The seasonal pattern of :func:`seasonal_coefficients` at times ``t`` of channels
    ``c`` (``0`` without one)."""
    if coef is None:
        return 0.0
    angle = 2 * np.pi * np.outer(t, np.arange(1, coef.shape[1] + 1)) / period
    return np.sum(coef[c, :, 0] * np.cos(angle) + coef[c, :, 1] * np.sin(angle), axis=1)


def window_location(
    t: np.ndarray, c: np.ndarray, v: np.ndarray, n_channels: int, mode: str
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per-channel ``(level, slope, spread²)`` of one context: ``loc(τ) = level + slope·τ``
    (``"last"``: the channel's last value, slope 0; ``"trend"``: the least-squares line;
    ``"mean"``: the mean, slope 0).

    ``spread²`` is the residual variance around it with the degrees of freedom of the fit
    removed (unbiased, so a thin context does not read as a calm one); ``0`` where fewer than
    two residual degrees of freedom are left.
    """
    level = np.zeros(n_channels)
    slope = np.zeros(n_channels)
    spread2 = np.zeros(n_channels)
    if mode == "none":
        return level, slope, spread2
    for ch in range(n_channels):
        sel = c == ch
        n = int(sel.sum())
        if n == 0:
            continue
        tc, vc = t[sel], v[sel]
        if mode != "mean" and n >= _MIN_TOKENS_TREND and np.ptp(tc) > 0:
            # Least-squares line through the context, anchored at the origin (τ = 0); with
            # "last" only its residual spread is kept (the scale of a trending context).
            tm = tc.mean()
            slope[ch] = np.sum((tc - tm) * (vc - vc.mean())) / np.sum((tc - tm) ** 2)
            level[ch] = vc.mean() - slope[ch] * tm
            dof = n - 2
        else:
            level[ch] = vc.mean()
            dof = n - 1
        if dof >= _MIN_SCALE_TERMS:
            spread2[ch] = np.sum((vc - level[ch] - slope[ch] * tc) ** 2) / dof
        if mode == "last":
            # Forecast the change from the last observation, held flat: the trend stays in
            # the normalised context, where the network sees it.
            level[ch], slope[ch] = vc[np.argmax(tc)], 0.0
    return level, slope, spread2


class HistoryScale:
    """Per-channel scale floor of a series from its whole observed history up to a cutoff.

    The root mean square of the steps between consecutive observations of a channel (the
    error a last-value forecast makes, the scale MASE uses), over every step that ends at or
    before the cutoff, with ``min_scale`` added in quadrature. A scale taken from the few
    points inside one window alone shrinks exactly when the window is sparse or gappy, and
    every σ shrinks with it; this floor does not: thinning a history lengthens its steps
    (a larger floor), and a gap before the cutoff leaves the earlier history as it was.
    """

    def __init__(self, t: np.ndarray, v: np.ndarray, min_scale: float) -> None:
        self.min_scale = min_scale
        self.step_times, self.cum_squares = [], []
        for ch in range(v.shape[1]):
            ok = np.isfinite(v[:, ch])
            steps = np.diff(v[ok, ch])
            self.step_times.append(t[ok][1:])
            self.cum_squares.append(np.cumsum(steps**2))

    def __call__(self, cutoff: float, local_spread2: np.ndarray) -> np.ndarray:
        """Scale per channel at ``cutoff``: the larger of the history's step RMS and the
        window's own (unbiased) residual spread, so a window whose amplitude has grown beyond
        its history's is not under-scaled, and a thin one is never scaled below its history."""
        scale2 = np.asarray(local_spread2, dtype=np.float64).copy()
        for ch, (times, cum) in enumerate(zip(self.step_times, self.cum_squares, strict=True)):
            n = int(np.searchsorted(times, cutoff, side="right"))
            if n >= _MIN_SCALE_TERMS:
                scale2[ch] = max(scale2[ch], cum[n - 1] / n)
            elif scale2[ch] == 0:
                scale2[ch] = 1.0  # no history, no spread: the channel's global unit
        return np.sqrt(scale2 + self.min_scale**2)


def normalised_window(
    tt: np.ndarray,
    chans: np.ndarray,
    vv: np.ndarray,
    rel: np.ndarray,
    tgt: np.ndarray,
    location: tuple[np.ndarray, np.ndarray, np.ndarray],
    season: np.ndarray | None,
    period: float | None,
) -> tuple[tuple[np.ndarray, np.ndarray, np.ndarray], ...]:
    """One window's context event, its queries (every channel at every relative time) and
    their targets, normalised by ``loc(τ) = level + slope·τ + s(τ)`` and ``scale`` per
    channel (``location = (level, slope, scale)``, ``s`` the seasonal pattern, if any)."""
    level, slope, scale = location
    n_channels = level.size
    loc = level[chans] + slope[chans] * tt + seasonal_term(season, tt, chans, period)
    vv = (vv - loc) / scale[chans]
    rel_q = np.repeat(rel, n_channels)
    chan_q = np.tile(np.arange(n_channels), rel.size)
    loc_q = level[chan_q] + slope[chan_q] * rel_q + seasonal_term(season, rel_q, chan_q, period)
    scale_q = scale[chan_q]
    return (tt, chans, vv), rel_q, chan_q, (tgt.ravel() - loc_q) / scale_q, loc_q, scale_q
