"""Prediction intervals from Gaussian moments: the Normal's own, or split-conformal (MAPIE).

Both front-ends (:class:`~levy_sklearn.regressor.LevyAttentionRegressor` and the sktime
forecaster) turn a predicted mean and σ into intervals through one interface, so neither
branches on how an interval is made. Any model that has already produced Gaussian moments
can be calibrated here, without MAPIE ever calling the model again.

Contract
--------
* **Intervals.** :class:`GaussianIntervals` (``mean ∓ z σ``) and :class:`ConformalIntervals`
  (split conformal, calibrated on held-out moments) share :class:`Intervals`'s
  ``interval(mean, std, coverage) -> (lower, upper)``: ``mean`` and ``std`` of shape ``(n,)``
  for one target or ``(n, Q)`` for ``Q`` targets; bounds of shape ``mean.shape`` for a
  scalar coverage and ``mean.shape + (n_coverages,)`` for a list. The coverage is checked
  there, once (:func:`~levy_sklearn.metrics.check_coverage`).
  :meth:`ConformalIntervals.sigma_scale` gives the factor of σ that makes the Gaussian
  interval the conformal one.
* **Moments as features.** :class:`MomentsRegressor` is a trivial sklearn regressor whose
  ``X`` is the two-column array ``[mean, std]`` of predictions that were already computed;
  ``predict(X)`` returns column 0 and ``predict(X, return_std=True)`` returns
  ``(X[:, 0], X[:, 1])``. It is "prefit" from birth, so MAPIE's
  :class:`~mapie.regression.SplitConformalRegressor` can conformalize any model's moments.
* **Score.** :class:`SigmaNormalisedScore` is ``|y − μ| / σ``, symmetric (see its docstring
  for why we do not use MAPIE's built-in ``"std_normalized"``). It reads ``σ`` from column 1
  of the moments array, or from ``sigma_estimator.predict(X, return_std=True)`` when given one.
* **Functions** (all arrays float; ``std > 0``):

  - ``fit_conformal(mean, std, y, confidence_level=0.9) -> list[SplitConformalRegressor]``:
    one conformalized MAPIE regressor per target (MAPIE is single-output). Rows whose ``y``
    is ``NaN`` are left out of that target's calibration set.
  - ``conformal_interval(fitted, mean, std) -> (lower, upper)``: intervals for new moments,
    each of shape ``mean.shape + (n_levels,)`` (the levels given to :func:`fit_conformal`, in
    that order; the trailing axis is always there, even for one level).

Every conformal quantile comes from MAPIE (``SplitConformalRegressor.predict_interval``);
nothing here computes order statistics by hand.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from decimal import Decimal

import numpy as np
from mapie.conformity_scores import BaseRegressionScore
from mapie.regression import SplitConformalRegressor
from numpy.typing import ArrayLike, NDArray
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.utils.validation import check_array

from .metrics import check_coverage, normal_bounds

__all__ = [
    "ConformalIntervals",
    "GaussianIntervals",
    "Intervals",
    "MomentsRegressor",
    "SigmaNormalisedScore",
    "conformal_interval",
    "fit_conformal",
]


# σ is floored here before dividing by it, so a (numerically) zero σ gives a huge but finite
# score instead of inf/NaN.
_SIGMA_FLOOR = 1e-12


class MomentsRegressor(RegressorMixin, BaseEstimator):
    """A "model" whose features are its own predictions: ``X = [mean, std]``.

    Lets MAPIE conformalize moments computed elsewhere (by either front-end, once) without
    calling the model again. It needs no fitting: ``fit`` only validates the input, and the
    estimator reports itself as fitted from the start, as a prefit estimator must.

    Examples
    --------
    >>> import numpy as np
    >>> from levy_sklearn.conformal import MomentsRegressor
    >>> moments = np.array([[1.0, 0.5], [2.0, 0.1]])
    >>> MomentsRegressor().predict(moments)
    array([1., 2.])
    >>> MomentsRegressor().predict(moments, return_std=True)[1]
    array([0.5, 0.1])
    """

    # Fitted state that MAPIE's prefit checks look for; constant for this estimator.
    n_features_in_ = 2

    def fit(self, X: ArrayLike, y: ArrayLike | None = None) -> MomentsRegressor:
        """Validate ``X`` (two columns, ``[mean, std]``); nothing is learned.

        Parameters
        ----------
        X : array-like of shape (n_samples, 2)
            Precomputed ``[mean, std]``.
        y : array-like of shape (n_samples,), optional
            Ignored; accepted for the scikit-learn API.

        Returns
        -------
        self : MomentsRegressor

        Examples
        --------
        >>> import numpy as np
        >>> from levy_sklearn.conformal import MomentsRegressor
        >>> MomentsRegressor().fit(np.array([[1.0, 0.5], [2.0, 0.1]])).predict([[3.0, 1.0]])
        array([3.])
        """
        self._moments(X)
        return self

    def __sklearn_is_fitted__(self) -> bool:
        return True

    @staticmethod
    def _moments(X: ArrayLike) -> NDArray:
        X = check_array(X, dtype=np.float64)
        if X.shape[1] != 2:
            raise ValueError(
                f"MomentsRegressor expects X = [mean, std] with 2 columns, got {X.shape[1]}; "
                "stack precomputed predictions with np.column_stack([mean, std])."
            )
        return X

    def predict(self, X: ArrayLike, return_std: bool = False) -> NDArray | tuple[NDArray, NDArray]:
        """Return column 0 (the mean) and, with ``return_std=True``, column 1 (σ).

        Parameters
        ----------
        X : array-like of shape (n_samples, 2)
            Precomputed ``[mean, std]``.
        return_std : bool, default=False
            Also return σ (the ``GaussianProcessRegressor`` convention MAPIE relies on).

        Returns
        -------
        mean : ndarray of shape (n_samples,)
        std : ndarray of shape (n_samples,)
            Only with ``return_std=True``.

        Examples
        --------
        >>> from levy_sklearn.conformal import MomentsRegressor
        >>> mean, std = MomentsRegressor().predict([[1.0, 0.5], [2.0, 0.1]], return_std=True)
        >>> mean.tolist(), std.tolist()
        ([1.0, 2.0], [0.5, 0.1])
        """
        X = self._moments(X)
        if return_std:
            return X[:, 0].copy(), X[:, 1].copy()
        return X[:, 0].copy()


class SigmaNormalisedScore(BaseRegressionScore):
    """Symmetric conformity score ``|y − μ| / σ`` with σ the model's own predicted std.

    Why not MAPIE 1.6's built-in ``"std_normalized"`` (``StdConformityScore``)? It is the same
    score, but its own ``get_bounds`` reads the two sides of a symmetric interval from
    different order statistics: the upper bound from the ``⌈(1−α)(n+1)⌉``-th smallest score,
    the lower bound from one rank lower, so the lower side is slightly short of the
    split-conformal guarantee. This subclass keeps the base class's symmetric path, where one
    quantile, ``⌈(1−α)(n+1)⌉``-th smallest, serves both sides: the textbook split-conformal
    interval ``μ ± q σ`` with coverage ≥ ``1 − α``.

    Parameters
    ----------
    sigma_estimator : estimator, optional
        A fitted regressor with ``predict(X, return_std=True)`` (such as
        :class:`~levy_sklearn.regressor.LevyAttentionRegressor`) used to compute σ from the
        features MAPIE passes around. Without it, ``X`` must be the ``[mean, std]`` array of
        :class:`MomentsRegressor` and σ is its column 1 (no second model call).

    Examples
    --------
    >>> import numpy as np
    >>> from mapie.regression import SplitConformalRegressor
    >>> from levy_sklearn.conformal import MomentsRegressor, SigmaNormalisedScore
    >>> rng = np.random.default_rng(0)
    >>> std = rng.uniform(0.5, 2.0, 200)
    >>> y = rng.normal(0.0, std)
    >>> cal = np.column_stack([np.zeros(200), std])
    >>> mapie = SplitConformalRegressor(
    ...     MomentsRegressor(), confidence_level=0.9,
    ...     conformity_score=SigmaNormalisedScore(), prefit=True,
    ... ).conformalize(cal, y)
    >>> _, bounds = mapie.predict_interval(np.array([[0.0, 1.0], [0.0, 2.0]]))
    >>> bounds.shape  # (n_samples, lower/upper, n_levels)
    (2, 2, 1)
    >>> bool(np.isclose(bounds[1, 1, 0], 2 * bounds[0, 1, 0]))  # width scales with σ
    True
    """

    def __init__(self, sigma_estimator: RegressorMixin | None = None) -> None:
        # The consistency check compares y with μ + score·σ to machine epsilon in absolute
        # terms, which float rounding breaks for large y; the algebra is exact.
        super().__init__(sym=True, consistency_check=False)
        self.sigma_estimator = sigma_estimator

    def _sigma(self, X: ArrayLike | None, calibration: bool) -> NDArray:
        if X is None:
            raise ValueError("SigmaNormalisedScore needs X to read σ from; MAPIE passes it.")
        if self.sigma_estimator is not None:
            _, sigma = self.sigma_estimator.predict(X, return_std=True)
        else:
            sigma = MomentsRegressor._moments(X)[:, 1]
        sigma = np.asarray(sigma, dtype=np.float64)
        # A negative σ (raw features read as [mean, std] rows) gave intervals of any width.
        _check_std(
            sigma,
            calibration,
            "without sigma_estimator, X must be MomentsRegressor's [mean, std] rows; "
            "to score raw features pass sigma_estimator=<the fitted regressor>.",
        )
        return np.maximum(sigma, _SIGMA_FLOOR)

    def get_signed_conformity_scores(
        self, y: ArrayLike, y_pred: ArrayLike, X: ArrayLike | None = None, **kwargs
    ) -> NDArray:
        """Signed score ``(y − μ) / σ`` (MAPIE takes the absolute value, ``sym=True``).

        Parameters
        ----------
        y : array-like of shape (n_samples,)
            Observed targets.
        y_pred : array-like of shape (n_samples,)
            Predicted means ``μ``.
        X : array-like, optional
            What σ is read from: ``[mean, std]`` rows, or the features of
            ``sigma_estimator``. MAPIE always passes it.
        **kwargs
            Ignored; part of MAPIE's interface.

        Returns
        -------
        ndarray of shape (n_samples,)

        Examples
        --------
        >>> import numpy as np
        >>> from levy_sklearn.conformal import SigmaNormalisedScore
        >>> X = np.array([[0.0, 1.0], [0.0, 2.0]])  # [mean, std]
        >>> SigmaNormalisedScore().get_signed_conformity_scores([1.0, -1.0], X[:, 0], X=X)
        array([ 1. , -0.5])
        """
        return (np.asarray(y, dtype=np.float64) - np.asarray(y_pred)) / self._sigma(X, True)

    def get_estimation_distribution(
        self,
        y_pred: ArrayLike,
        conformity_scores: ArrayLike,
        X: ArrayLike | None = None,
        **kwargs,
    ) -> NDArray:
        """``μ + score · σ`` (inverts :meth:`get_signed_conformity_scores`).

        Parameters
        ----------
        y_pred : array-like of shape (n_samples,) or (n_samples, n_levels)
            Predicted means ``μ``.
        conformity_scores : array-like
            Scores (or their quantiles) broadcastable against ``y_pred``.
        X : array-like, optional
            What σ is read from, as in :meth:`get_signed_conformity_scores`.
        **kwargs
            Ignored; part of MAPIE's interface.

        Returns
        -------
        ndarray
            Shaped like ``y_pred``.

        Examples
        --------
        >>> import numpy as np
        >>> from levy_sklearn.conformal import SigmaNormalisedScore
        >>> X = np.array([[0.0, 1.0], [0.0, 2.0]])  # [mean, std]
        >>> SigmaNormalisedScore().get_estimation_distribution(X[:, 0], np.array([1.0, -0.5]), X=X)
        array([ 1., -1.])
        """
        y_pred = np.asarray(y_pred, dtype=np.float64)
        sigma = self._sigma(X, False)
        # MAPIE passes bounds as (n_samples, n_levels) against quantiles of (1, n_levels).
        if y_pred.ndim == 2:
            sigma = sigma[:, None]
        return y_pred + np.asarray(conformity_scores) * sigma


def _as_columns(a: ArrayLike) -> NDArray:
    a = np.asarray(a, dtype=np.float64)
    return a[:, None] if a.ndim == 1 else a


def _checked_moments(mean: NDArray, std: NDArray, calibration: bool = False) -> None:
    """Refuse moments no interval can be made from: a mean that is not finite, a std that
    is not finite or is negative (zero too on a calibration set, whose scores divide by
    it; it was floored at 1e-12 and gave scores of 1e12)."""
    if not np.isfinite(mean).all():
        raise ValueError("mean holds NaN or infinite values; pass the model's finite means.")
    _check_std(std, calibration, "pass predicted standard deviations, not variances or residuals.")


def _check_std(std: NDArray, calibration: bool, fix: str) -> None:
    """Refuse a std that is not finite or is negative (zero too on a calibration set)."""
    floor = "positive" if calibration else "non-negative"
    if not np.isfinite(std).all() or (std <= 0 if calibration else std < 0).any():
        raise ValueError(f"std must be finite and {floor}; {fix}")


def _calibration_columns(
    mean: ArrayLike, std: ArrayLike, y: ArrayLike
) -> tuple[NDArray, NDArray, NDArray]:
    """Calibration moments and targets as ``(n_samples, n_targets)`` columns, one shape."""
    mean, std, y = _as_columns(mean), _as_columns(std), _as_columns(y)
    if not mean.shape == std.shape == y.shape:
        raise ValueError(
            f"mean {mean.shape}, std {std.shape} and y {y.shape} must have the same shape."
        )
    _checked_moments(mean, std, calibration=True)
    if np.isinf(y).any():
        raise ValueError("y holds infinite values; NaN (unobserved) is the only gap allowed.")
    return mean, std, y


def _mapie_minimum(level: float) -> int:
    """The fewest scores with which MAPIE takes coverage ``level``, in its own arithmetic
    (alpha ``= 1 − level`` in decimal, then its test ``n ≥ 1/alpha, 1/(1 − alpha)`` in
    floats): a level accepted here is never refused from inside MAPIE at predict time (a
    tolerance here let ``1 − 1/n`` through, which MAPIE's rounding refuses)."""
    alpha = float(Decimal(1) - Decimal(str(level)))
    return math.ceil(max(1 / alpha, 1 / (1 - alpha)))


def _reachable(level: float, n: int) -> str:
    """The advice for a ``level`` that ``n`` scores cannot reach: the nearest level they
    can, on a grid of thousandths."""
    ok = [c for c in np.arange(1, 1000) / 1000 if _mapie_minimum(float(c)) <= n]
    if not ok:
        return ""
    nearest = min(ok, key=lambda c: abs(c - level))
    return f" or ask for coverage {'≤' if nearest < level else '≥'} {nearest:g}"


def _conformalize(
    mean: NDArray, std: NDArray, y: NDArray, levels: list[float]
) -> list[SplitConformalRegressor]:
    """One MAPIE conformalizer per column, each on the rows where that column's ``y`` is
    observed; the arguments are already checked, but for enough rows for every level."""
    # MAPIE reaches coverage c only with at least 1/(1 − c) scores (and 1/c), and says so
    # when predicting; say it here, in terms of the calibration rows rather than its "alpha".
    n = int(np.isfinite(y).sum(axis=0).min())
    for level in levels:
        needed = _mapie_minimum(level)
        if n < needed:
            raise ValueError(
                f"coverage={level:g} needs at least {needed} calibration rows "
                f"per target, but the conformal calibration has {n} (rows with an observed "
                f"y); calibrate on more held-out rows{_reachable(level, n)}."
            )
    fitted = []
    for q in range(mean.shape[1]):
        keep = np.isfinite(y[:, q])
        mapie = SplitConformalRegressor(
            MomentsRegressor(),
            confidence_level=levels,
            conformity_score=SigmaNormalisedScore(),
            prefit=True,
        )
        moments = np.column_stack([mean[keep, q], std[keep, q]])
        fitted.append(mapie.conformalize(moments, y[keep, q]))
    return fitted


def fit_conformal(
    mean: ArrayLike,
    std: ArrayLike,
    y: ArrayLike,
    confidence_level: float | Sequence[float] = 0.9,
) -> list[SplitConformalRegressor]:
    """Conformalize precomputed Gaussian moments on a calibration set, one target at a time.

    Parameters
    ----------
    mean, std : array-like of shape (n_samples,) or (n_samples, n_targets)
        Predicted mean and standard deviation on the calibration rows (never seen in fit).
    y : array-like, same shape as ``mean``
        Observed targets; ``NaN`` leaves that (row, target) out of the calibration.
    confidence_level : float or list of float, default=0.9
        Level(s) of the intervals :func:`conformal_interval` will return.

    Returns
    -------
    list of mapie.regression.SplitConformalRegressor
        One per target, each conformalized with :class:`SigmaNormalisedScore` around a
        :class:`MomentsRegressor`.

    Examples
    --------
    >>> import numpy as np
    >>> from levy_sklearn.conformal import conformal_interval, fit_conformal
    >>> rng = np.random.default_rng(0)
    >>> std = rng.uniform(0.5, 2.0, 500)
    >>> fitted = fit_conformal(np.zeros(500), std, rng.normal(0.0, std), [0.5, 0.9])
    >>> lower, upper = conformal_interval(fitted, np.zeros(3), np.ones(3))
    >>> lower.shape  # (n_samples, n_levels)
    (3, 2)
    >>> bool((upper[:, 1] > upper[:, 0]).all())
    True
    """
    levels, _ = check_coverage(confidence_level)
    return _conformalize(*_calibration_columns(mean, std, y), levels)


def conformal_interval(
    fitted: Sequence[SplitConformalRegressor], mean: ArrayLike, std: ArrayLike
) -> tuple[NDArray, NDArray]:
    """Conformal intervals for new predictions from :func:`fit_conformal`'s output.

    Parameters
    ----------
    fitted : list of SplitConformalRegressor
        As returned by :func:`fit_conformal` (one per target).
    mean, std : array-like of shape (n_samples,) or (n_samples, n_targets)
        New predicted moments, with as many targets as ``fitted``.

    Returns
    -------
    lower, upper : ndarray of shape ``mean.shape + (n_levels,)``
        Interval bounds, one slice per confidence level given to :func:`fit_conformal`.

    Examples
    --------
    >>> import numpy as np
    >>> from levy_sklearn.conformal import conformal_interval, fit_conformal
    >>> rng = np.random.default_rng(1)
    >>> mean = rng.normal(size=(300, 2))
    >>> fitted = fit_conformal(mean, np.ones((300, 2)), mean + rng.normal(size=(300, 2)))
    >>> lower, upper = conformal_interval(fitted, np.zeros((4, 2)), np.ones((4, 2)))
    >>> lower.shape
    (4, 2, 1)
    """
    one_target = np.ndim(mean) == 1
    mean, std = _as_columns(mean), _as_columns(std)
    if mean.shape != std.shape or mean.shape[1] != len(fitted):
        raise ValueError(
            f"mean {mean.shape} and std {std.shape} must have the same shape, with one "
            f"column per fitted target ({len(fitted)})."
        )
    _checked_moments(mean, std)
    lowers, uppers = [], []
    for q, mapie in enumerate(fitted):
        _, bounds = mapie.predict_interval(np.column_stack([mean[:, q], std[:, q]]))
        lowers.append(bounds[:, 0, :])
        uppers.append(bounds[:, 1, :])
    lower, upper = np.stack(lowers, axis=1), np.stack(uppers, axis=1)
    if one_target:
        return lower[:, 0], upper[:, 0]
    return lower, upper


class Intervals:
    """Base class of the intervals a front-end makes from predicted moments.

    :meth:`interval` is the one interface, and the coverage is checked there, once; a
    subclass gives the bounds for a list of checked levels (``_bounds``). The subclasses are
    :class:`GaussianIntervals` and :class:`ConformalIntervals`.

    Examples
    --------
    >>> import numpy as np
    >>> from levy_sklearn.conformal import ConformalIntervals, GaussianIntervals
    >>> rng = np.random.default_rng(0)
    >>> mean, std = np.zeros(300), np.ones(300)
    >>> conformal = ConformalIntervals(mean, std, rng.normal(size=300))
    >>> for intervals in (GaussianIntervals(), conformal):
    ...     print(intervals.interval(mean[:2], std[:2], [0.5, 0.9])[1].shape)
    (2, 2)
    (2, 2)
    """

    def _bounds(
        self, mean: ArrayLike, std: ArrayLike, levels: list[float]
    ) -> tuple[NDArray, NDArray]:
        raise NotImplementedError

    def interval(
        self, mean: ArrayLike, std: ArrayLike, coverage: float | Sequence[float] = 0.9
    ) -> tuple[NDArray, NDArray]:
        """Central ``(lower, upper)`` for predicted moments.

        Parameters
        ----------
        mean, std : array-like of shape (n_samples,) or (n_samples, n_targets)
            Predicted moments (for :class:`ConformalIntervals`, with the targets of its
            calibration).
        coverage : float or list of float, default=0.9
            Coverage(s) in ``(0, 1)``.

        Returns
        -------
        lower, upper : ndarray
            Shape ``mean.shape`` for a scalar coverage, ``mean.shape + (n_coverages,)``
            for a list.

        Examples
        --------
        >>> import numpy as np
        >>> from levy_sklearn.conformal import GaussianIntervals
        >>> lower, upper = GaussianIntervals().interval(np.zeros(3), np.ones(3), [0.5, 0.9])
        >>> lower.shape  # (n_samples, n_coverages)
        (3, 2)
        """
        levels, scalar = check_coverage(coverage)
        _checked_moments(np.asarray(mean, dtype=np.float64), np.asarray(std, dtype=np.float64))
        lower, upper = self._bounds(mean, std, levels)
        return (lower[..., 0], upper[..., 0]) if scalar else (lower, upper)


class GaussianIntervals(Intervals):
    """Central intervals of the predicted Normal itself: ``mean ∓ z σ``.

    ``z`` is the ``(1 + coverage) / 2`` normal quantile. The moments are the model's own and
    are not checked (use :func:`~levy_sklearn.metrics.gaussian_interval` for moments from
    elsewhere). It needs no fitting, and shares :meth:`Intervals.interval` with
    :class:`ConformalIntervals`.

    Examples
    --------
    >>> import numpy as np
    >>> from levy_sklearn.conformal import GaussianIntervals
    >>> lower, upper = GaussianIntervals().interval(np.zeros(2), np.array([1.0, 2.0]), 0.95)
    >>> upper.round(3)
    array([1.96, 3.92])
    """

    def _bounds(
        self, mean: ArrayLike, std: ArrayLike, levels: list[float]
    ) -> tuple[NDArray, NDArray]:
        return normal_bounds(mean, std, levels)


class ConformalIntervals(Intervals):
    """Split-conformal intervals around the model's σ, calibrated on held-out moments.

    Keeps the calibration ``(mean, std, y)`` and builds (and caches) one MAPIE conformalizer
    per target at each coverage asked for, since MAPIE fixes the level when a conformalizer
    is built; this is cheap because :class:`MomentsRegressor` never calls the model. Shares
    :meth:`Intervals.interval` with :class:`GaussianIntervals`.

    Parameters
    ----------
    mean, std, y : array-like of shape (n_samples,) or (n_samples, n_targets)
        Predicted moments and observed targets on held-out calibration rows; a ``NaN``
        target leaves that (row, target) out.

    Attributes
    ----------
    n_samples : int
        Number of calibration rows.
    n_targets : int
        Number of targets.

    Examples
    --------
    >>> import numpy as np
    >>> from levy_sklearn.conformal import ConformalIntervals
    >>> rng = np.random.default_rng(0)
    >>> cal = ConformalIntervals(np.zeros(400), np.ones(400), rng.normal(size=400))
    >>> lower, upper = cal.interval(np.zeros(2), np.ones(2), coverage=0.9)
    >>> lower.shape
    (2,)
    >>> lower, upper = cal.interval(np.zeros(2), np.ones(2), coverage=[0.5, 0.9])
    >>> lower.shape
    (2, 2)
    """

    def __init__(self, mean: ArrayLike, std: ArrayLike, y: ArrayLike) -> None:
        self._mean, self._std, self._y = _calibration_columns(mean, std, y)
        self.n_samples, self.n_targets = self._mean.shape
        self._fitted: dict[float, list[SplitConformalRegressor]] = {}

    def to_state(self) -> dict[str, np.ndarray]:
        """The calibration columns by name (what a model file holds).

        Returns
        -------
        dict of str to ndarray of shape (n_samples, n_targets)

        Examples
        --------
        >>> from levy_sklearn.conformal import ConformalIntervals
        >>> sorted(ConformalIntervals([0.0, 1.0], [1.0, 1.0], [0.5, 0.5]).to_state())
        ['_mean', '_std', '_y']
        """
        return {"_mean": self._mean, "_std": self._std, "_y": self._y}

    @classmethod
    def from_state(cls, state: dict) -> ConformalIntervals:
        """The calibration of :meth:`to_state`'s columns, checked as the constructor checks
        moments (MAPIE's conformalizers are rebuilt from them on first use).

        Parameters
        ----------
        state : dict
            ``"_mean"``, ``"_std"`` and ``"_y"``, 2-D arrays of one shape.

        Returns
        -------
        ConformalIntervals

        Examples
        --------
        >>> from levy_sklearn.conformal import ConformalIntervals
        >>> cal = ConformalIntervals([0.0, 1.0], [1.0, 1.0], [0.5, 0.5])
        >>> ConformalIntervals.from_state(cal.to_state()).n_samples
        2
        """
        if set(state) != {"_mean", "_std", "_y"}:
            raise ValueError(f"the columns are _mean, _std and _y, not {sorted(state)}.")
        shapes = {np.shape(column) for column in state.values()}
        if len(shapes) != 1 or len(next(iter(shapes))) != 2:
            raise ValueError(f"the columns must be 2-D and of one shape, not {sorted(shapes)}.")
        return cls(state["_mean"], state["_std"], state["_y"])

    def conformalizers(self, coverage: float) -> list[SplitConformalRegressor]:
        """The MAPIE conformalizers (one per target) at one coverage, built on first use.

        Parameters
        ----------
        coverage : float
            Coverage in ``(0, 1)``.

        Returns
        -------
        list of mapie.regression.SplitConformalRegressor
            One per target, cached for later calls at the same coverage.

        Raises
        ------
        ValueError
            When some target has too few calibration rows for ``coverage``.

        Examples
        --------
        >>> import numpy as np
        >>> from levy_sklearn.conformal import ConformalIntervals
        >>> rng = np.random.default_rng(0)
        >>> cal = ConformalIntervals(np.zeros(100), np.ones(100), rng.normal(size=100))
        >>> len(cal.conformalizers(0.9)), cal.conformalizers(0.9) is cal.conformalizers(0.9)
        (1, True)
        """
        levels, scalar = check_coverage(coverage)
        if not scalar:
            raise ValueError(f"coverage={coverage!r} must be one float here.")
        return self._conformalizers(levels[0])

    def _conformalizers(self, level: float) -> list[SplitConformalRegressor]:
        if level not in self._fitted:
            self._fitted[level] = _conformalize(self._mean, self._std, self._y, [level])
        return self._fitted[level]

    def _bounds(
        self, mean: ArrayLike, std: ArrayLike, levels: list[float]
    ) -> tuple[NDArray, NDArray]:
        bounds = [conformal_interval(self._conformalizers(c), mean, std) for c in levels]
        return (
            np.concatenate([b[0] for b in bounds], axis=-1),
            np.concatenate([b[1] for b in bounds], axis=-1),
        )

    def sigma_scale(self, coverage: float = 0.9) -> NDArray:
        """Per-target factor of σ that makes the Gaussian interval the conformal one.

        The conformal interval is ``mean ∓ q̂ σ`` and the Gaussian one ``mean ∓ z σ``, so a
        Normal with σ times ``q̂ / z`` has exactly the conformal interval at ``coverage``
        (and keeps its shape at other coverages).

        Parameters
        ----------
        coverage : float, default=0.9
            Coverage in ``(0, 1)`` at which the two intervals agree.

        Returns
        -------
        ndarray of shape (n_targets,)

        Raises
        ------
        ValueError
            When some target has too few calibration rows for ``coverage``.

        Examples
        --------
        >>> import numpy as np
        >>> from levy_sklearn.conformal import ConformalIntervals
        >>> rng = np.random.default_rng(0)
        >>> cal = ConformalIntervals(np.zeros(2000), np.ones(2000), 2 * rng.normal(size=2000))
        >>> cal.sigma_scale(0.9).round(1)  # σ = 1 was half the true spread
        array([2.])
        """
        unit = np.zeros((1, self.n_targets)), np.ones((1, self.n_targets))  # μ = 0, σ = 1
        _, q = self.interval(*unit, coverage)
        _, z = GaussianIntervals().interval(*unit, coverage)
        return q[0] / z[0]
