"""Checks and standardisation of the input values both front-ends apply before tokenising."""

from __future__ import annotations

import warnings
from collections.abc import Iterable

import numpy as np

# The front-ends' shared checks: importable, not part of the public API.
__all__: list[str] = []

# Largest target magnitude accepted (see check_magnitude).
_MAX_MAGNITUDE = 1e150
# A channel of a series is standardised by its own spread from this many observations on,
# by its population's below where that population is alike (see own_scaling): the standard
# deviation of n draws is off by about 1/sqrt(2n), a fifth at 10.
MIN_OWN_SCALE = 10


def column_scaling(
    values: np.ndarray, weights: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """NaN-aware mean and standard deviation of every column, to standardise by.

    A column with no finite value gets mean 0, a constant one scale 1. Moments are taken of
    the values divided by the column's largest magnitude, so that columns anywhere in
    float64's range do not overflow (``np.nanstd`` alone squares values beyond 1e154).

    Parameters
    ----------
    values : ndarray of shape (n_rows, n_columns)
        Values; ``NaN`` marks an unobserved cell.
    weights : ndarray of shape (n_rows,), optional
        Positive row weights: the moments of the weighted empirical distribution (a row of
        weight 2 counts as two rows). ``None`` weighs rows equally.

    Returns
    -------
    mean, scale : ndarray of shape (n_columns,)

    Examples
    --------
    >>> import numpy as np
    >>> from levy_sklearn.validation import column_scaling
    >>> column_scaling(np.array([[1.0, np.nan, 2.0], [3.0, np.nan, 2.0]]))
    (array([2., 0., 2.]), array([1., 1., 1.]))
    >>> column_scaling(np.array([[1e200], [3e200]]))
    (array([2.e+200]), array([1.e+200]))
    >>> column_scaling(np.empty((0, 2)))
    (array([0., 0.]), array([1., 1.]))
    >>> column_scaling(np.array([[1.0], [3.0]]), weights=np.array([3.0, 1.0]))
    (array([1.5]), array([0.8660254]))
    """
    values = np.asarray(values, dtype=np.float64)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN columns: handled below
        size = np.nanmax(np.abs(values), axis=0, initial=0.0)
        size = np.where(np.isfinite(size) & (size > 0), size, 1.0)
        if weights is None:
            mean = np.nanmean(values / size, axis=0) * size
            scale = np.nanstd(values / size, axis=0) * size
        else:
            unit = values / size
            w = np.where(np.isnan(unit), 0.0, np.asarray(weights, dtype=np.float64)[:, None])
            unit = np.nan_to_num(unit)
            total = w.sum(axis=0)
            mean_unit = (w * unit).sum(axis=0) / total
            var_unit = (w * (unit - mean_unit) ** 2).sum(axis=0) / total
            mean, scale = mean_unit * size, np.sqrt(var_unit) * size
    return (
        np.where(np.isfinite(mean), mean, 0.0),
        np.where(np.isfinite(scale) & (scale > 0), scale, 1.0),
    )


def target_scaling(
    values: np.ndarray, weights: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`column_scaling` for values the network predicts: a constant column is scaled
    by its magnitude where that is below 1 (by 1 otherwise, and for zero).

    The network predicts in standardised units to about 1e-3; with scale 1, a target
    constant at 1e-6 came back as -2e-3 with σ 1.5e-2. In its own magnitude it comes back
    to its own precision, and a larger constant keeps scale 1 (its magnitude would make the
    same relative error larger in data units).

    Parameters
    ----------
    values, weights : ndarray
        As for :func:`column_scaling`.

    Returns
    -------
    mean, scale : ndarray
        One of each per column.

    Examples
    --------
    >>> from numpy import array
    >>> from levy_sklearn.validation import target_scaling
    >>> target_scaling(array([[1e-6, 5.0, 1.0], [1e-6, 5.0, 3.0]]))
    (array([1.e-06, 5.e+00, 2.e+00]), array([1.e-06, 1.e+00, 1.e+00]))
    """
    mean, scale = column_scaling(values, weights)
    return mean, np.where(_has_spread(values), scale, _flat_scale(mean))


def _flat_scale(mean: np.ndarray) -> np.ndarray:
    """The scale of a column without spread at ``mean``: its magnitude, capped at 1 (1 at
    zero; see :func:`target_scaling`)."""
    return np.where(mean != 0, np.minimum(1.0, np.abs(mean)), 1.0)


def _has_spread(values: np.ndarray) -> np.ndarray:
    """Whether each column holds two different observed values."""
    values = np.asarray(values, dtype=np.float64)  # integer columns cannot start at ±inf
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN columns: no spread
        return np.nanmax(values, axis=0, initial=-np.inf) > np.nanmin(
            values, axis=0, initial=np.inf
        )


def own_scaling(
    values: np.ndarray,
    population_mean: np.ndarray,
    population_scale: np.ndarray,
    alike: bool = True,
) -> tuple[np.ndarray, np.ndarray]:
    """A series' per-channel mean and scale: its own, the population's only where that is a
    prior the series shares.

    Each series is standardised by its own mean and spread, so a panel that mixes levels and
    spreads (a series near 1,000 beside one near 1.0) is forecast in each series' own units:
    one panel-wide scale would make a small series' windows look flat against the window
    scale's floor and hide its errors from the loss. Where a channel has too little data for
    a spread of its own, what stands in for it depends on what the population is:

    - ``alike=True`` (a pretraining panel and the subjects fitted after it, drawn alike by
      ``pretrain``'s contract): a spread read off a few observations is noise, and σ would
      follow it (two observations of a new subject one small step apart gave a third of the
      σ of one observation), so a channel with fewer than ``MIN_OWN_SCALE`` observations (or
      no spread) takes the population's scale.
    - ``alike=False`` (a panel given to ``fit``, which may mix units: a stuck sensor at 7
      beside one near 1e6): the population's scale is in other series' units and would put
      the channel's σ in them, so every observed channel is scaled by its own values alone:
      its spread wherever it has any, else its magnitude, capped at 1 (1 at zero; see
      :func:`target_scaling`). With fewer than ``MIN_OWN_SCALE`` observations the spread
      counts only above that magnitude, so a few observations one small step apart never
      get a smaller scale than one of them alone. Nothing of another series enters its
      tokens.

    A channel never observed takes the population's mean and scale either way: there is
    nothing of its own.

    Parameters
    ----------
    values : ndarray of shape (n_rows, n_channels)
        The series' values; ``NaN`` marks an unobserved cell.
    population_mean, population_scale : ndarray of shape (n_channels,)
        The population's standardisation (see :func:`column_scaling`).
    alike : bool, default=True
        Whether the population's scale is a prior for this series (see above).

    Returns
    -------
    mean, scale : ndarray of shape (n_channels,)

    Examples
    --------
    >>> import numpy as np
    >>> from levy_sklearn.validation import own_scaling
    >>> few = np.array([[1.0, 5.0], [2.0, np.nan]])  # 2 and 1 observations: too few
    >>> own_scaling(few, np.zeros(2), np.full(2, 10.0))
    (array([1.5, 5. ]), array([10., 10.]))
    >>> own_scaling(few * 10, np.zeros(2), np.full(2, 10.0), alike=False)  # its own
    (array([15., 50.]), array([5., 1.]))
    >>> own_scaling(few, np.zeros(2), np.full(2, 10.0), alike=False)  # spread 0.5 < 1
    (array([1.5, 5. ]), array([1., 1.]))
    """
    mean, scale = target_scaling(values)
    n_observed = np.isfinite(values).sum(axis=0)
    if alike:
        own = (n_observed >= MIN_OWN_SCALE) & _has_spread(values)
    else:
        own = n_observed > 0
        few = n_observed < MIN_OWN_SCALE
        scale = np.where(few, np.maximum(scale, _flat_scale(mean)), scale)
    return (
        np.where(n_observed > 0, mean, population_mean),
        np.where(own, scale, population_scale),
    )


def check_magnitude(values: np.ndarray, name: str = "y") -> None:
    """Refuse targets so large that their predictive variance would overflow float64.

    A variance is in squared units of ``values``: beyond ``1e150`` it can exceed float64's
    1.8e308 and become ``inf``.

    Parameters
    ----------
    values : ndarray
        Target values (``NaN`` allowed).
    name : str, default="y"
        How the error message names them.

    Raises
    ------
    ValueError
        Naming the problem and the fix (rescale).

    Examples
    --------
    >>> import numpy as np
    >>> from levy_sklearn.validation import check_magnitude
    >>> check_magnitude(np.array([1e12, -3.0, np.nan]))
    >>> check_magnitude(np.array([1e38], dtype=np.float32))  # no overflow warning
    >>> check_magnitude(np.array([2e150]))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: y has values beyond ±1e+150, whose predictive variance would overflow ...
    """
    # In float64: a float32 array would cast the bound to float32, where it overflows.
    if np.nanmax(np.abs(np.asarray(values, dtype=np.float64)), initial=0.0) > _MAX_MAGNITUDE:
        raise ValueError(
            f"{name} has values beyond ±{_MAX_MAGNITUDE:g}, whose predictive variance would "
            f"overflow float64; rescale {name} (e.g. divide it by a power of 10)."
        )


def refuse_dates(values: object, name: str = "X") -> None:
    """Refuse dates and durations where numbers are expected.

    scikit-learn's validation casts ``datetime64`` and ``timedelta64`` to floats in their own
    resolution (microseconds or nanoseconds since 1970), so the same instants would read
    differently by their unit, and rows far from 1970 lose their differences to rounding.

    Parameters
    ----------
    values : array-like
        ``X`` or ``y`` as given (a DataFrame's columns are checked one by one).
    name : str, default="X"
        How the error message names them.

    Raises
    ------
    ValueError
        Naming the columns and how to turn them into numbers.

    Examples
    --------
    >>> import pandas as pd
    >>> from levy_sklearn.validation import refuse_dates
    >>> refuse_dates(pd.DataFrame({"dose": [1.0, 2.0]}))
    >>> refuse_dates(pd.DataFrame({"t": pd.to_datetime(["2020", "2021"])}))
    Traceback (most recent call last):
    ...
    ValueError: Column(s) ['t'] of X hold dates or durations; ...
    """
    dtypes = getattr(values, "dtypes", None)  # a DataFrame's, one per column
    if isinstance(dtypes, Iterable) and not isinstance(dtypes, np.dtype):
        columns = [c for c, d in dtypes.items() if d.kind in "mM"]
        what = f"Column(s) {columns} of {name} hold" if columns else None
    else:
        dtype = getattr(values, "dtype", None)
        what = f"{name} holds" if dtype is not None and dtype.kind in "mM" else None
    if what is not None:
        raise ValueError(
            f"{what} dates or durations; convert them to numbers in a unit of your choice "
            "first, e.g. (t - t.min()) / pd.Timedelta('1D') for days (a raw cast would count "
            "micro- or nanoseconds since 1970, by the data's unit)."
        )


def refuse_repeated_columns(values: object, name: str, why: str) -> None:
    """Refuse a DataFrame with two columns of one name (anything else passes).

    Parameters
    ----------
    values : object
        ``X`` or ``y`` as given.
    name : str
        How the error message names them.
    why : str
        Why each column needs its own name here, for the message.

    Raises
    ------
    ValueError
        Naming the repeated names (scikit-learn's validation failed inside narwhals).

    Examples
    --------
    >>> import pandas as pd
    >>> from levy_sklearn.validation import refuse_repeated_columns
    >>> X = pd.DataFrame([[1.0, 2.0]], columns=["a", "a"])
    >>> refuse_repeated_columns(X, "X", "features are matched by name")
    Traceback (most recent call last):
    ...
    ValueError: X has more than one column named ['a']; features are matched by name, so ...
    """
    columns = getattr(values, "columns", None)
    if columns is None or not hasattr(columns, "duplicated"):
        return
    repeated = columns[columns.duplicated()].unique().tolist()
    if repeated:
        raise ValueError(
            f"{name} has more than one column named {repeated}; {why}, so give every column "
            "its own name."
        )
