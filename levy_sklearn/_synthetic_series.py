"""Synthetic series for the examples, tests and benchmarks: a series thinned at random
(:func:`make_irregular`) and a simulated ICU cohort (:func:`make_irregular_vitals`).

Both are public through :mod:`levy_sklearn.datasets`; they live here so that the loaders of
real data and the generators each stay a module a reader can hold.
"""

from __future__ import annotations

import numbers

import numpy as np
import pandas as pd
from sklearn.utils import check_random_state


def check_time_as(time_as):
    if time_as not in ("timedelta", "float"):
        raise ValueError(f"time_as must be 'timedelta' or 'float', got {time_as!r}.")


def _check_real(value, name, *, low=None, high=None, low_inclusive=True):
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {value!r}.")
    value = float(value)
    if not np.isfinite(value):
        raise ValueError(f"{name} must be finite, got {value!r}.")
    if low is not None:
        if (low_inclusive and value < low) or (not low_inclusive and value <= low):
            op = ">=" if low_inclusive else ">"
            raise ValueError(f"{name} must be {op} {low}, got {value!r}.")
    if high is not None and value > high:
        raise ValueError(f"{name} must be <= {high}, got {value!r}.")
    return value


def _check_int(value, name, low=1):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer, got {value!r}.")
    if value < low:
        raise ValueError(f"{name} must be >= {low}, got {value!r}.")
    return int(value)


def _check_range(value, name, *, positive):
    try:
        lo, hi = value
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a pair (low, high), got {value!r}.") from None
    lo = _check_real(lo, f"{name}[0]", low=0.0, low_inclusive=not positive)
    hi = _check_real(hi, f"{name}[1]", low=0.0, low_inclusive=not positive)
    if lo > hi:
        raise ValueError(f"{name} must satisfy {name}[0] <= {name}[1], got {value!r}.")
    return lo, hi


# ---------------------------------------------------------------------------
# make_irregular
# ---------------------------------------------------------------------------
def make_irregular(y, keep=0.5, random_state=None):
    """Subsample a series, frame or panel at random, independently per channel.

    In every channel (column; and every instance of a panel) a uniformly
    random subset of the ``n_observed`` observed (non-NaN) values is kept.  Its
    size is ``keep * n_observed`` rounded down or up at random (so that the
    expected kept fraction is exactly ``keep``), but at least one observed
    value is always kept.  Dropped values become NaN and
    rows that become entirely NaN are removed, so the result is irregularly
    sampled in time.  Rows that were entirely NaN in the input are left as
    they are.

    Parameters
    ----------
    y : pd.Series or pd.DataFrame
        A series, a multivariate frame (channels are columns) or a panel /
        hierarchical frame with a ``pd.MultiIndex`` (the last level is time;
        subsampling is done per instance, i.e. per value of the other levels).
    keep : float, default=0.5
        Fraction of the observed values to keep in each channel, in (0, 1].
    random_state : int, RandomState instance or None, default=None
        Seed; the same seed gives the same output.

    Returns
    -------
    y_irr : pd.Series or pd.DataFrame
        Same type and columns as ``y``, with a subset of the rows.  Integer
        columns of a DataFrame become float when NaN are introduced.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from levy_sklearn.datasets import make_irregular
    >>> y = pd.Series(np.arange(100.0))
    >>> y_irr = make_irregular(y, keep=0.3, random_state=0)
    >>> len(y_irr)
    30
    """
    if not isinstance(y, (pd.Series, pd.DataFrame)):
        raise TypeError(f"y must be a pd.Series or pd.DataFrame, got {type(y).__name__}.")
    if isinstance(keep, bool) or not isinstance(keep, numbers.Real) or not 0 < keep <= 1:
        raise ValueError(f"keep must be a float in (0, 1], got {keep!r}.")
    rng = check_random_state(random_state)

    is_series = isinstance(y, pd.Series)
    frame = y.to_frame() if is_series else y
    n_rows = len(frame)
    if isinstance(frame.index, pd.MultiIndex) and frame.index.nlevels > 1:
        codes, _ = pd.factorize(frame.index.droplevel(-1))
        codes = np.asarray(codes, dtype=np.int64)
    else:
        codes = np.zeros(n_rows, dtype=np.int64)
    n_groups = int(codes.max()) + 1 if n_rows else 0

    observed = frame.notna().to_numpy()
    kept = np.zeros_like(observed)
    for j in range(observed.shape[1]):
        rows = np.flatnonzero(observed[:, j])
        if rows.size == 0:
            continue
        g = codes[rows]
        order = np.lexsort((rng.random_sample(rows.size), g))
        g_sorted = g[order]
        counts = np.bincount(g, minlength=n_groups)
        # unbiased stochastic rounding of keep * counts, at least one kept
        n_keep = np.floor(keep * counts + rng.random_sample(n_groups))
        n_keep = np.where(counts > 0, np.maximum(1, n_keep), 0)
        start = np.cumsum(counts) - counts
        rank = np.arange(rows.size) - start[g_sorted]
        kept[rows[order[rank < n_keep[g_sorted]]], j] = True

    was_empty = ~observed.any(axis=1)
    keep_rows = kept.any(axis=1) | was_empty
    if is_series:
        return y[keep_rows].copy()
    out = frame.where(pd.DataFrame(kept | ~observed, index=frame.index, columns=frame.columns))
    return out[keep_rows]


# ---------------------------------------------------------------------------
# make_irregular_vitals
# ---------------------------------------------------------------------------
def make_irregular_vitals(
    n_patients=100,
    n_channels=3,
    *,
    duration=48.0,
    obs_rate=(0.2, 5.0),
    noise=(0.05, 0.3),
    jump_rate=0.05,
    random_state=None,
    return_noise=False,
    time_as="timedelta",
):
    """Generate an ICU-like panel of irregularly observed, noisy vital signs.

    For patient ``i`` and channel ``c`` the latent signal is a mean-reverting
    Ornstein-Uhlenbeck process with jumps,

    .. math::

        dX_t = \\theta_{ic} (\\mu_{ic} - X_t)\\,dt + s_{ic}\\sqrt{2\\theta_{ic}}\\,dW_t
               + dJ_t,

    started in its stationary law, where

    * the baseline :math:`\\mu_{ic} \\sim N(0, 1)`, the reversion rate
      :math:`\\theta_{ic} \\sim \\mathrm{LogUniform}(0.05, 0.5)` per hour and the
      stationary standard deviation :math:`s_{ic} \\sim U(0.3, 1)`;
    * :math:`J` is compound Poisson: acute events occur at rate ``jump_rate``
      per hour per patient, shared by all channels, each moving every
      channel by an independent :math:`N(0, 1)` amount, which then decays
      back to the baseline.

    Channel ``c`` is observed at the times of a homogeneous Poisson process
    on ``[0, duration]`` whose rate is log-spaced from ``obs_rate[0]``
    (channel 0, sparse) to ``obs_rate[1]`` (last channel, dense) per hour; a
    single channel uses the geometric mean.  Each channel of each patient is
    observed at least once.  The process is simulated exactly at the
    observation times (no discretisation error).  Observations are
    :math:`y = X + \\sigma_i \\varepsilon` with :math:`\\varepsilon \\sim N(0, 1)`
    and a per-patient noise level :math:`\\sigma_i \\sim U(\\text{noise}[0],
    \\text{noise}[1])`.

    Parameters
    ----------
    n_patients : int, default=100
        Number of patients (panel instances).
    n_channels : int, default=3
        Number of channels (columns ``ch0``, ``ch1``, ...).
    duration : float, default=48.0
        Length of each stay in hours.
    obs_rate : tuple of float, default=(0.2, 5.0)
        Observation rates per hour of the sparsest and the densest channel,
        ``0 < obs_rate[0] <= obs_rate[1]``.
    noise : tuple of float, default=(0.05, 0.3)
        Range of the per-patient measurement noise standard deviation,
        ``0 <= noise[0] <= noise[1]``.
    jump_rate : float, default=0.05
        Rate of acute events (jumps) per hour; 0 disables jumps.
    random_state : int, RandomState instance or None, default=None
        Seed; the same seed gives the same output.
    return_noise : bool, default=False
        If True, also return the per-patient noise standard deviations.
    time_as : {"timedelta", "float"}, default="timedelta"
        Type of the time level: ``pd.TimedeltaIndex`` (a valid sktime
        ``pd-multiindex`` panel) or float hours since admission.

    Returns
    -------
    X : pd.DataFrame
        Panel with index ``(patient, time)`` (int, time since admission)
        sorted by patient then time, and float columns ``ch0..``.  Each row is
        a time at which at least one channel was observed; the other channels
        are NaN there.
    noise_std : pd.Series
        Only if ``return_noise=True``: per-patient noise standard deviation,
        indexed by patient.

    Examples
    --------
    >>> from levy_sklearn.datasets import make_irregular_vitals
    >>> X, noise_std = make_irregular_vitals(
    ...     n_patients=5, random_state=0, return_noise=True
    ... )
    >>> list(X.columns)
    ['ch0', 'ch1', 'ch2']
    >>> X.index.get_level_values("patient").nunique()
    5
    >>> noise_std.shape
    (5,)
    """
    n_patients = _check_int(n_patients, "n_patients")
    n_channels = _check_int(n_channels, "n_channels")
    duration = _check_real(duration, "duration", low=0.0, low_inclusive=False)
    rate_lo, rate_hi = _check_range(obs_rate, "obs_rate", positive=True)
    noise_lo, noise_hi = _check_range(noise, "noise", positive=False)
    jump_rate = _check_real(jump_rate, "jump_rate", low=0.0)
    check_time_as(time_as)
    rng = check_random_state(random_state)

    if n_channels == 1:
        rates = np.array([np.sqrt(rate_lo * rate_hi)])
    else:
        rates = np.geomspace(rate_lo, rate_hi, n_channels)

    shape = (n_patients, n_channels)
    mu = rng.normal(0.0, 1.0, shape)
    theta = np.exp(rng.uniform(np.log(0.05), np.log(0.5), shape))
    scale = rng.uniform(0.3, 1.0, shape)
    noise_std = rng.uniform(noise_lo, noise_hi, n_patients)

    # shared acute events: padded jump times (inf = no event) and sizes
    n_jumps = rng.poisson(jump_rate * duration, n_patients)
    max_jumps = int(n_jumps.max()) if n_patients else 0
    jump_t = rng.uniform(0.0, duration, (n_patients, max_jumps))
    jump_t[np.arange(max_jumps)[None, :] >= n_jumps[:, None]] = np.inf
    jump_size = rng.normal(0.0, 1.0, (n_patients, max_jumps, n_channels))

    pid_parts, t_parts, v_parts, c_parts = [], [], [], []
    for c in range(n_channels):
        n_obs = np.maximum(rng.poisson(rates[c] * duration, n_patients), 1)
        length = int(n_obs.max())
        valid = np.arange(length)[None, :] < n_obs[:, None]
        t = rng.uniform(0.0, duration, (n_patients, length))
        t[~valid] = np.inf
        t.sort(axis=1)
        t[~valid] = duration  # padding: zero time steps, never returned
        z = rng.standard_normal((n_patients, length))
        eps = rng.standard_normal((n_patients, length))

        jumps = _landed_jumps(t, n_obs, jump_t, jump_size[:, :, c], theta[:, c], duration)
        dev = _ou_deviations(t, z, theta[:, c], scale[:, c], jumps)
        values = mu[:, c, None] + dev + noise_std[:, None] * eps
        pid_parts.append(np.broadcast_to(np.arange(n_patients)[:, None], t.shape)[valid])
        t_parts.append(t[valid])
        v_parts.append(values[valid])
        c_parts.append(np.full(int(valid.sum()), c))

    X = _vitals_frame(
        np.concatenate(pid_parts).astype(np.int64),
        np.concatenate(t_parts),
        np.concatenate(v_parts),
        np.concatenate(c_parts),
        (n_patients, n_channels),
        time_as,
    )
    if return_noise:
        return X, pd.Series(
            noise_std, index=pd.Index(np.arange(n_patients), name="patient"), name="noise_std"
        )
    return X


def _ou_deviations(
    t: np.ndarray, z: np.ndarray, theta: np.ndarray, scale: np.ndarray, jumps: np.ndarray
) -> np.ndarray:
    """The exact Ornstein–Uhlenbeck recursion at the observation times ``t`` (stationary
    start, standard normal draws ``z``) plus the landed ``jumps``, ``(n_patients, length)``."""
    dt = np.diff(t, axis=1)
    a = np.exp(-theta[:, None] * dt)
    innov = scale[:, None] * np.sqrt(-np.expm1(-2.0 * theta[:, None] * dt)) * z[:, 1:]
    dev = np.empty(t.shape)
    dev[:, 0] = scale * z[:, 0] + jumps[:, 0]
    for k in range(1, t.shape[1]):
        dev[:, k] = a[:, k - 1] * dev[:, k - 1] + innov[:, k - 1] + jumps[:, k]
    return dev


def _landed_jumps(
    t: np.ndarray,
    n_obs: np.ndarray,
    jump_t: np.ndarray,
    jump_size: np.ndarray,
    theta: np.ndarray,
    duration: float,
) -> np.ndarray:
    """Each acute event's jump, decayed at rate ``theta`` to the first observation at or
    after it (where it enters the recursion), ``(n_patients, length)`` like ``t``."""
    n_patients, length = t.shape
    jumps = np.zeros((n_patients, length))
    if not jump_t.shape[1]:
        return jumps
    rows = np.arange(n_patients)
    offset = rows[:, None] * (2.0 * duration + 1.0)  # one sorted axis for every patient
    has = np.isfinite(jump_t)
    tau = np.where(has, jump_t, 0.0)
    pos = np.searchsorted((t + offset).ravel(), (tau + offset).ravel(), side="left")
    pos = pos.reshape(tau.shape) - rows[:, None] * length
    hit = has & (pos < n_obs[:, None])
    t_land = np.take_along_axis(t, np.minimum(pos, length - 1), axis=1)
    lag = np.maximum(t_land - tau, 0.0)
    contrib = jump_size * np.exp(-theta[:, None] * lag)
    np.add.at(jumps, (np.broadcast_to(rows[:, None], pos.shape)[hit], pos[hit]), contrib[hit])
    return jumps


def _vitals_frame(
    pid: np.ndarray,
    times: np.ndarray,
    vals: np.ndarray,
    chan: np.ndarray,
    shape: tuple[int, int],
    time_as: str,
) -> pd.DataFrame:
    """One row per (patient, time) with a value, one column per channel (``NaN`` where a
    channel was not measured then), as ``make_irregular_vitals`` returns it."""
    n_patients, n_channels = shape
    if time_as == "timedelta":
        times = np.rint(times * 3.6e12).astype(np.int64)  # hours -> ns
    order = np.lexsort((times, pid))
    pid, times, vals, chan = pid[order], times[order], vals[order], chan[order]
    new_row = np.ones(len(pid), dtype=bool)
    new_row[1:] = (pid[1:] != pid[:-1]) | (times[1:] != times[:-1])
    row = np.cumsum(new_row) - 1
    data = np.full((int(new_row.sum()), n_channels), np.nan)
    data[row, chan] = vals

    time_values, time_codes = np.unique(times[new_row], return_inverse=True)
    if time_as == "timedelta":
        time_level = pd.TimedeltaIndex(time_values.view("timedelta64[ns]"))
    else:
        time_level = pd.Index(time_values, dtype=float)
    index = pd.MultiIndex(
        levels=[pd.Index(np.arange(n_patients), dtype=np.int64), time_level],
        codes=[pid[new_row], time_codes.ravel()],
        names=["patient", "time"],
    )
    return pd.DataFrame(data, index=index, columns=[f"ch{c}" for c in range(n_channels)])
