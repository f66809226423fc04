"""Metrics for probabilistic predictions and uncertainty rankings (numpy/scipy only).

These are the metrics of the evaluation protocol (:doc:`/user_guide/trust`), usable on the
outputs of any model, not only levy-sklearn's:

* proper scoring: :func:`gaussian_crps` (closed form for a Gaussian prediction) and
  :func:`sample_crps` (an ensemble or sampler, sorted ``O(m log m)`` formula);
* intervals: :func:`gaussian_interval`, :func:`interval_coverage`, :func:`interval_width`,
  and :func:`check_coverage`, the one check of a nominal coverage (or a list of them);
* ranking of errors by uncertainty: :func:`risk_coverage_curve`, :func:`aurc`,
  :func:`excess_aurc` and :func:`spearman_uncertainty`.

Conventions
-----------
* Inputs are array-likes (lists, numpy arrays, pandas objects). NaN and infinite values are
  rejected with a ``ValueError``: a missing target must be dropped by the caller, since silently
  skipping it would change the denominator of every mean. Values are compared by position:
  pandas inputs must carry the same labels in the same order (their index, and a DataFrame's
  columns), or a ``ValueError`` asks to align them.
* Scores that can be reported per element take ``reduce``: ``True`` (default) returns the mean
  over all elements as a Python ``float``; ``False`` returns the elementwise array.
* Uncertainty is "larger means less trusted" (a standard deviation, a disagreement). A
  confidence such as the evidence ``Λ`` must be negated (or inverted) before it is passed.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike
from scipy import stats

__all__ = [
    "aurc",
    "check_coverage",
    "excess_aurc",
    "gaussian_crps",
    "gaussian_interval",
    "interval_coverage",
    "interval_width",
    "risk_coverage_curve",
    "sample_crps",
    "spearman_uncertainty",
]

_INV_SQRT_PI = 1.0 / math.sqrt(math.pi)


# ---------------------------------------------------------------------------
# validation helpers
# ---------------------------------------------------------------------------
def as_finite(x: ArrayLike, name: str) -> np.ndarray:
    """Convert to a float array; reject empty, non-numeric (text too), NaN and infinite
    input."""
    raw = np.asarray(x)
    if raw.dtype.kind in "USO" and any(isinstance(v, (str, bytes)) for v in raw.ravel()):
        raise ValueError(f"{name} must be numeric; got text ({raw.ravel()[0]!r}, ...).")
    try:
        arr = np.asarray(x, dtype=float)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be numeric; got {type(x).__name__}.") from exc
    if arr.size == 0:
        raise ValueError(f"{name} is empty.")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} contains NaN or infinite values.")
    return arr


def _check_labels(**inputs: object) -> None:
    """Refuse pandas inputs whose labels disagree (the index, and a DataFrame's columns, in
    order): the metrics compare by position, so a forecast indexed in another order than its
    targets would be scored against the wrong ones."""
    first = None
    for name, x in inputs.items():
        if not (hasattr(x, "index") and hasattr(x, "to_numpy")):  # pandas, without pandas
            continue
        if first is None:
            first = name, x
            continue
        ref_name, ref = first
        columns = getattr(x, "columns", None), getattr(ref, "columns", None)
        if not x.index.equals(ref.index) or (
            all(c is not None for c in columns) and not columns[0].equals(columns[1])
        ):
            raise ValueError(
                f"{ref_name} and {name} are pandas objects with different labels (index or "
                "columns, or their order), and the metrics compare by position: align them "
                f"first, e.g. {name}.reindex({ref_name}.index)."
            )


def _broadcast_like(arr: np.ndarray, shape: tuple[int, ...], name: str, ref: str) -> np.ndarray:
    """Broadcast ``arr`` to exactly ``shape`` (a scalar is fine, an (n, 1) vs (n,) slip is not)."""
    try:
        return np.broadcast_to(arr, shape)
    except ValueError:
        raise ValueError(
            f"{name} has shape {arr.shape}, which does not broadcast to the shape of {ref} "
            f"{shape}."
        ) from None


def _check_positive_std(std: np.ndarray) -> None:
    if np.any(std <= 0):
        raise ValueError("std must be strictly positive everywhere.")


def check_same_shape(a: np.ndarray, b: np.ndarray, name_a: str, name_b: str) -> None:
    if a.shape != b.shape:
        raise ValueError(
            f"{name_a} and {name_b} must have the same shape; got {a.shape} and {b.shape}."
        )


def _reduce(values: np.ndarray, reduce: bool) -> float | np.ndarray:
    return float(np.mean(values)) if reduce else values


# ---------------------------------------------------------------------------
# CRPS
# ---------------------------------------------------------------------------
def gaussian_crps(
    y_true: ArrayLike, mean: ArrayLike, std: ArrayLike, *, reduce: bool = True
) -> float | np.ndarray:
    """Closed-form continuous ranked probability score of a Gaussian prediction.

    For a prediction ``N(μ, σ²)`` and an outcome ``y``, with ``z = (y − μ)/σ``,

    ``CRPS = σ (z (2Φ(z) − 1) + 2φ(z) − 1/√π)``

    (Gneiting & Raftery, 2007). It is in the units of ``y``, lower is better, and equals the
    mean absolute error when ``σ → 0``.

    Parameters
    ----------
    y_true : array-like
        Observed values, any shape.
    mean : array-like
        Predicted means; same shape as ``y_true`` or broadcastable to it.
    std : array-like
        Predicted standard deviations, strictly positive; same shape as ``y_true`` or
        broadcastable to it (e.g. a scalar for a homoscedastic model).
    reduce : bool, default=True
        If True, return the mean over all elements; if False, the elementwise scores.

    Returns
    -------
    float or ndarray
        The mean CRPS, or an array of the shape of ``y_true``.

    Raises
    ------
    ValueError
        On NaN/infinite or empty input, a shape that does not broadcast to ``y_true``, or a
        non-positive ``std``.

    Examples
    --------
    >>> from levy_sklearn.metrics import gaussian_crps
    >>> round(gaussian_crps(0.0, 0.0, 1.0), 6)  # (√2 − 1)/√π
    0.233695
    >>> gaussian_crps([0.0, 1.0], [0.0, 0.0], 1.0, reduce=False).round(4)
    array([0.2337, 0.6024])
    """
    _check_labels(y_true=y_true, mean=mean, std=std)
    y = as_finite(y_true, "y_true")
    mu = _broadcast_like(as_finite(mean, "mean"), y.shape, "mean", "y_true")
    sigma = _broadcast_like(as_finite(std, "std"), y.shape, "std", "y_true")
    _check_positive_std(sigma)
    # σ·z·(2Φ(z) − 1) written as (y − μ)(2Φ(z) − 1): a σ so small that z overflows to ±inf
    # then gives the limit |y − μ| (σ·z was inf · 0 or inf there).
    with np.errstate(over="ignore", divide="ignore"):
        z = (y - mu) / sigma
        crps = (y - mu) * (2.0 * stats.norm.cdf(z) - 1.0) + sigma * (
            2.0 * stats.norm.pdf(z) - _INV_SQRT_PI
        )
    return _reduce(crps, reduce)


def sample_crps(
    y_true: ArrayLike, samples: ArrayLike, *, fair: bool = False, reduce: bool = True
) -> float | np.ndarray:
    """CRPS of an ensemble or sampler, from its samples (energy form, sorted formula).

    ``CRPS = E|X − y| − ½ E|X − X'|`` with ``X, X'`` independent draws of the prediction. The
    second term is computed from the sorted samples ``x_(1) ≤ … ≤ x_(m)`` as
    ``Σ_i (2i − m − 1) x_(i) / m²``, which is exactly ``(1/2m²) Σ_i Σ_j |x_i − x_j|`` in
    ``O(m log m)`` time and ``O(m)`` memory instead of ``O(m²)``.

    By default (``fair=False``) this is the standard estimator: the exact CRPS of the empirical
    distribution of the samples, i.e. the score of the forecast the ensemble actually issues.
    It is biased upward as an estimate of the CRPS of the distribution the samples come from,
    by ``E|X − X'| / 2m``. ``fair=True`` divides the second term by ``m(m − 1)`` instead, which
    removes that bias (the "fair" CRPS of Ferro, 2014); use it to compare samplers with different
    ``m`` against closed-form predictions.

    Parameters
    ----------
    y_true : array-like
        Observed values, any shape ``S``.
    samples : array-like of shape ``(m, *S)``
        ``m`` samples per element of ``y_true``, stacked along axis 0 (the regressor's
        ``sample_y`` stacks them along the last axis, scikit-learn's convention: pass
        ``np.moveaxis(draws, -1, 0)``; with as many draws as rows a wrong axis is no error).
    fair : bool, default=False
        Use the unbiased ("fair") estimator of the second term; needs ``m ≥ 2``.
    reduce : bool, default=True
        If True, return the mean over all elements; if False, the elementwise scores.

    Returns
    -------
    float or ndarray
        The mean CRPS, or an array of shape ``S``.

    Raises
    ------
    ValueError
        On NaN/infinite or empty input, ``samples`` not of shape ``(m, *y_true.shape)``, or
        ``fair=True`` with a single sample.

    Examples
    --------
    >>> from levy_sklearn.metrics import sample_crps
    >>> sample_crps(0.0, [-1.0, 1.0])  # 1 − ½ · (0 + 2 + 2 + 0)/4
    0.5
    >>> sample_crps(0.0, [-1.0, 1.0], fair=True)  # 1 − ½ · 4/2
    0.0
    >>> sample_crps([0.0, 2.0], [[0.0, 0.0], [0.0, 0.0]], reduce=False)  # a point mass: |y − x|
    array([0., 2.])
    """
    y = as_finite(y_true, "y_true")
    x = as_finite(samples, "samples")
    if x.ndim != y.ndim + 1 or x.shape[1:] != y.shape:
        raise ValueError(
            f"samples must have shape (n_samples,) + y_true.shape = (n_samples,) + {y.shape}, "
            f"with the samples along axis 0; got {x.shape}."
        )
    m = x.shape[0]
    if fair and m < 2:
        raise ValueError("fair=True needs at least 2 samples per element.")
    abs_err = np.mean(np.abs(x - y), axis=0)
    x_sorted = np.sort(x, axis=0)
    # (2i − m − 1) for i = 1..m, shaped to broadcast over the trailing axes.
    weights = (2.0 * np.arange(1, m + 1) - m - 1).reshape((m,) + (1,) * y.ndim)
    spread = np.sum(weights * x_sorted, axis=0) / (m * (m - 1) if fair else m * m)
    return _reduce(abs_err - spread, reduce)


# ---------------------------------------------------------------------------
# intervals
# ---------------------------------------------------------------------------
def check_coverage(
    coverage: float | Sequence[float], name: str = "coverage"
) -> tuple[list[float], bool]:
    """Validate a nominal coverage (or confidence level), or a list of them.

    Every interval of levy-sklearn, Gaussian or conformal, checks its coverage here, once per
    public call; the forecaster's quantile levels too.

    Parameters
    ----------
    coverage : float or sequence of float
        Each strictly between 0 and 1. Strings and booleans are refused, not converted.
    name : str, default="coverage"
        The argument's name in error messages (e.g. ``"alpha"``).

    Returns
    -------
    levels : list of float
        The coverages as a list.
    scalar : bool
        Whether a single number was given (callers drop the level axis then).

    Raises
    ------
    ValueError
        On a non-numeric coverage, an empty list, or a value outside (0, 1).

    Examples
    --------
    >>> from levy_sklearn.metrics import check_coverage
    >>> check_coverage(0.9), check_coverage([0.5, 0.9])
    (([0.9], True), ([0.5, 0.9], False))
    """
    values = np.asarray(coverage, dtype=object)
    # "0.9" and True convert to floats silently; a coverage given as text or a flag is a
    # mistake in the caller's code, so only real numbers pass.
    if values.ndim > 1 or not all(
        isinstance(v, numbers.Real) and not isinstance(v, (bool, np.bool_)) for v in values.ravel()
    ):
        raise ValueError(
            f"{name} must be a float or a list of floats in (0, 1); got {coverage!r}."
        )
    levels = values.astype(float)
    example = "0.9 for a 90% interval" if name == "coverage" else "[0.05, 0.95]"
    if levels.size == 0 or not np.all((levels > 0.0) & (levels < 1.0)):
        raise ValueError(
            f"{name} must be strictly between 0 and 1 (a float or a non-empty list of "
            f"them), e.g. {name}={example}; got {coverage!r}."
        )
    return levels.ravel().tolist(), levels.ndim == 0


def normal_bounds(
    mean: ArrayLike, std: ArrayLike, levels: list[float]
) -> tuple[np.ndarray, np.ndarray]:
    """``mean ∓ z σ`` for each checked coverage level, ``z`` its central normal quantile.

    The one Gaussian interval of the package, with a trailing level axis and unchecked
    moments: :func:`gaussian_interval` checks its moments first, and the front-ends' Gaussian
    intervals (:class:`~levy_sklearn.conformal.GaussianIntervals`) trust their model's.
    """
    z = stats.norm.ppf(0.5 + 0.5 * np.asarray(levels))
    mean, std = np.asarray(mean, dtype=float)[..., None], np.asarray(std, dtype=float)[..., None]
    return mean - z * std, mean + z * std


def gaussian_interval(
    mean: ArrayLike, std: ArrayLike, coverage: float | Sequence[float] = 0.9
) -> tuple[np.ndarray, np.ndarray]:
    """Central prediction interval of a Gaussian prediction.

    ``[μ + σ Φ⁻¹((1 − c)/2), μ + σ Φ⁻¹((1 + c)/2)]`` for coverage ``c``.

    Parameters
    ----------
    mean : array-like
        Predicted means.
    std : array-like
        Predicted standard deviations, strictly positive; broadcastable against ``mean``.
    coverage : float or list of float, default=0.9
        Nominal coverage(s), each strictly between 0 and 1.

    Returns
    -------
    lower, upper : ndarray
        Interval bounds, of the broadcast shape of ``mean`` and ``std`` (0-d for scalars),
        with a trailing axis of one entry per coverage when ``coverage`` is a list.

    Raises
    ------
    ValueError
        On NaN/infinite or empty input, shapes that do not broadcast, a non-positive ``std``,
        or a ``coverage`` outside (0, 1).

    Examples
    --------
    >>> from levy_sklearn.metrics import gaussian_interval
    >>> lower, upper = gaussian_interval([0.0, 10.0], [1.0, 2.0], coverage=0.95)
    >>> lower.round(3), upper.round(3)
    (array([-1.96,  6.08]), array([ 1.96, 13.92]))
    >>> gaussian_interval([0.0, 10.0], [1.0, 2.0], coverage=[0.5, 0.95])[1].shape
    (2, 2)
    """
    levels, scalar = check_coverage(coverage)
    mu, sigma = _finite_pair(mean, std, "mean", "std")
    _check_positive_std(sigma)
    lower, upper = normal_bounds(mu, sigma, levels)
    return (lower[..., 0], upper[..., 0]) if scalar else (lower, upper)


def _finite_pair(
    a: ArrayLike, b: ArrayLike, name_a: str, name_b: str
) -> tuple[np.ndarray, np.ndarray]:
    """Two finite arrays broadcast together, or a ValueError naming both shapes."""
    _check_labels(**{name_a: a, name_b: b})
    a, b = as_finite(a, name_a), as_finite(b, name_b)
    try:
        return np.broadcast_arrays(a, b)
    except ValueError:
        raise ValueError(
            f"{name_a} and {name_b} must broadcast together; got shapes {a.shape} and {b.shape}."
        ) from None


def _check_bounds(lower: ArrayLike, upper: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    lo, hi = _finite_pair(lower, upper, "lower", "upper")
    if np.any(lo > hi):
        raise ValueError("lower must be <= upper everywhere (are the bounds swapped?).")
    return lo, hi


def interval_coverage(y_true: ArrayLike, lower: ArrayLike, upper: ArrayLike) -> float:
    """Fraction of outcomes inside their interval (bounds included).

    Parameters
    ----------
    y_true : array-like
        Observed values, any shape.
    lower, upper : array-like
        Interval bounds, broadcastable to the shape of ``y_true``, with ``lower <= upper``.

    Returns
    -------
    float
        Empirical coverage in [0, 1]; compare it with the nominal coverage.

    Raises
    ------
    ValueError
        On NaN/infinite or empty input, shapes that do not broadcast to ``y_true``, or
        ``lower > upper`` anywhere.

    Examples
    --------
    >>> from levy_sklearn.metrics import interval_coverage
    >>> interval_coverage([0.0, 1.0, 5.0, -3.0], lower=-1.0, upper=[1.0, 2.0, 3.0, 4.0])
    0.5
    """
    _check_labels(y_true=y_true, lower=lower, upper=upper)
    y = as_finite(y_true, "y_true")
    lo, hi = _check_bounds(lower, upper)
    lo = _broadcast_like(lo, y.shape, "lower", "y_true")
    hi = _broadcast_like(hi, y.shape, "upper", "y_true")
    return float(np.mean((lo <= y) & (y <= hi)))


def interval_width(lower: ArrayLike, upper: ArrayLike) -> float:
    """Mean width ``upper − lower`` of a set of intervals.

    Parameters
    ----------
    lower, upper : array-like
        Interval bounds, broadcastable together, with ``lower <= upper``.

    Returns
    -------
    float
        Mean width, in the units of the target; report it next to the coverage.

    Raises
    ------
    ValueError
        On NaN/infinite or empty input, shapes that do not broadcast, or ``lower > upper``.

    Examples
    --------
    >>> from levy_sklearn.metrics import interval_width
    >>> interval_width([0.0, 1.0], [2.0, 5.0])
    3.0
    """
    lo, hi = _check_bounds(lower, upper)
    return float(np.mean(hi - lo))


# ---------------------------------------------------------------------------
# ranking errors by uncertainty
# ---------------------------------------------------------------------------
def _check_ranking_inputs(errors: ArrayLike, uncertainty: ArrayLike) -> tuple[np.ndarray, ...]:
    _check_labels(errors=errors, uncertainty=uncertainty)
    e = as_finite(errors, "errors")
    u = as_finite(uncertainty, "uncertainty")
    check_same_shape(e, u, "errors", "uncertainty")
    return e.ravel(), u.ravel()


def risk_coverage_curve(
    errors: ArrayLike,
    uncertainty: ArrayLike,
    *,
    ties: Literal["average", "stable"] = "average",
) -> tuple[np.ndarray, np.ndarray]:
    """Risk–coverage curve of selective prediction: keep the most certain, measure the error.

    Samples are sorted by ``uncertainty`` ascending (most trusted first). Keeping the first ``k``
    of ``n`` gives coverage ``k/n`` and risk = mean error of the ``k`` samples kept, for
    ``k = 1..n`` (Geifman & El-Yaniv, 2017). A good uncertainty gives a curve that rises from a
    low risk; the last point is always the overall mean error.

    Parameters
    ----------
    errors : array-like
        Per-sample losses, e.g. ``|y − ŷ|`` or squared errors. Any shape; flattened.
    uncertainty : array-like
        Per-sample uncertainty, same shape as ``errors``; larger means less trusted.
    ties : {"average", "stable"}, default="average"
        How samples with equal uncertainty are ordered. The sort is always stable
        (deterministic). ``"average"`` then replaces the errors inside each group of tied
        uncertainties by the group mean: the risk is the expectation over random tie-breaking,
        so it does not depend on the input order, and a constant uncertainty gives a flat
        curve at the mean error (no ranking information). ``"stable"`` keeps tied samples in
        input order, as a plain ``argsort`` implementation does.

    Returns
    -------
    coverage : ndarray of shape (n,)
        ``(1, 2, …, n) / n``.
    risk : ndarray of shape (n,)
        Mean error of the retained samples at each coverage.

    Raises
    ------
    ValueError
        On NaN/infinite or empty input, shapes that differ, or an unknown ``ties``.

    See Also
    --------
    aurc : the area under this curve.

    Examples
    --------
    >>> from levy_sklearn.metrics import risk_coverage_curve
    >>> coverage, risk = risk_coverage_curve([0.0, 3.0, 1.0], [0.1, 0.9, 0.5])
    >>> coverage.round(3), risk
    (array([0.333, 0.667, 1.   ]), array([0.        , 0.5       , 1.33333333]))
    """
    if ties not in ("average", "stable"):
        raise ValueError(f"ties must be 'average' or 'stable'; got {ties!r}.")
    e, u = _check_ranking_inputs(errors, uncertainty)
    n = e.size
    order = np.argsort(u, kind="stable")
    e_sorted = e[order]
    if ties == "average":
        u_sorted = u[order]
        new_group = np.r_[True, u_sorted[1:] != u_sorted[:-1]]
        starts = np.flatnonzero(new_group)
        group_mean = np.add.reduceat(e_sorted, starts) / np.diff(np.r_[starts, n])
        e_sorted = group_mean[np.cumsum(new_group) - 1]
    k = np.arange(1, n + 1)
    return k / n, np.cumsum(e_sorted) / k


def aurc(
    errors: ArrayLike,
    uncertainty: ArrayLike,
    *,
    ties: Literal["average", "stable"] = "average",
) -> float:
    """Area under the risk–coverage curve (AURC); lower is better.

    The standard AURC of selective prediction (Geifman et al., 2019): the mean of the ``n``
    risks of :func:`risk_coverage_curve`, i.e. a right Riemann sum over the coverages
    ``1/n, …, 1``. It mixes the quality of the ranking with the overall error level; use
    :func:`excess_aurc` to isolate the ranking. The best possible value for given errors (the
    oracle, ranking by the errors themselves) is ``aurc(errors, errors)``.

    Parameters
    ----------
    errors : array-like
        Per-sample losses. Any shape; flattened.
    uncertainty : array-like
        Per-sample uncertainty, same shape; larger means less trusted.
    ties : {"average", "stable"}, default="average"
        Treatment of tied uncertainties; see :func:`risk_coverage_curve`. With ``"average"`` a
        constant uncertainty gives ``aurc == mean(errors)``, the value of a random ranking
        in expectation.

    Returns
    -------
    float
        The AURC, in the units of ``errors``.

    Raises
    ------
    ValueError
        On NaN/infinite or empty input, shapes that differ, or an unknown ``ties``.

    Examples
    --------
    >>> from levy_sklearn.metrics import aurc
    >>> errors = [0.0, 1.0, 2.0]
    >>> aurc(errors, [0.1, 0.5, 0.9])  # perfect ranking: (0 + 0.5 + 1)/3
    0.5
    >>> round(aurc(errors, [0.9, 0.5, 0.1]), 4)  # reversed: (2 + 1.5 + 1)/3
    1.5
    >>> aurc(errors, [1.0, 1.0, 1.0])  # no information: the mean error
    1.0
    """
    _, risk = risk_coverage_curve(errors, uncertainty, ties=ties)
    return float(np.mean(risk))


def excess_aurc(
    errors: ArrayLike,
    uncertainty: ArrayLike,
    *,
    ties: Literal["average", "stable"] = "average",
) -> float:
    """Excess AURC: ``aurc(errors, uncertainty) − aurc(errors, errors)``; 0 is a perfect ranking.

    Subtracting the oracle's AURC (samples ranked by their own errors) removes the part of the
    AURC due to the error level, so E-AURC compares uncertainty rankings of models with
    different accuracy (Geifman et al., 2019). It is non-negative.

    Parameters
    ----------
    errors : array-like
        Per-sample losses. Any shape; flattened.
    uncertainty : array-like
        Per-sample uncertainty, same shape; larger means less trusted.
    ties : {"average", "stable"}, default="average"
        Treatment of tied uncertainties; see :func:`risk_coverage_curve`. Ties in the oracle
        ranking do not matter (tied errors are equal).

    Returns
    -------
    float
        The E-AURC, in the units of ``errors``.

    Raises
    ------
    ValueError
        On NaN/infinite or empty input, shapes that differ, or an unknown ``ties``.

    Examples
    --------
    >>> from levy_sklearn.metrics import excess_aurc
    >>> excess_aurc([0.0, 1.0, 2.0], [0.1, 0.5, 0.9])
    0.0
    >>> excess_aurc([0.0, 1.0, 2.0], [0.9, 0.5, 0.1])  # 1.5 − 0.5
    1.0
    """
    return aurc(errors, uncertainty, ties=ties) - aurc(errors, errors)


def spearman_uncertainty(errors: ArrayLike, uncertainty: ArrayLike) -> float:
    """Spearman rank correlation between errors and uncertainty; higher is better.

    Computed with :func:`scipy.stats.spearmanr` (ties get average ranks). A value of 1 means
    the uncertainty ranks the errors perfectly.

    If either input is constant the correlation is undefined; this function then returns
    ``0.0`` rather than NaN or an error, because a constant uncertainty (e.g. a homoscedastic
    baseline) carries no ranking information, and a benchmark table should say so instead of
    crashing. This matches :func:`aurc`, which scores a constant uncertainty as a random ranking.

    Parameters
    ----------
    errors : array-like
        Per-sample errors, e.g. ``|y − ŷ|``. Any shape; flattened.
    uncertainty : array-like
        Per-sample uncertainty, same shape; larger means less trusted.

    Returns
    -------
    float
        Spearman's rho in [-1, 1].

    Raises
    ------
    ValueError
        On NaN/infinite input, shapes that differ, or fewer than 2 samples.

    Examples
    --------
    >>> from levy_sklearn.metrics import spearman_uncertainty
    >>> round(spearman_uncertainty([0.1, 0.5, 0.2, 3.0], [1.0, 1.5, 2.0, 9.0]), 6)
    0.8
    >>> spearman_uncertainty([0.1, 0.5, 0.2], [1.0, 1.0, 1.0])  # constant: no information
    0.0
    """
    e, u = _check_ranking_inputs(errors, uncertainty)
    if e.size < 2:
        raise ValueError("spearman_uncertainty needs at least 2 samples.")
    if np.ptp(e) == 0 or np.ptp(u) == 0:
        return 0.0
    return float(stats.spearmanr(e, u).statistic)
