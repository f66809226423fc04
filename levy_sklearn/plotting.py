"""Matplotlib helpers: forecast fan charts and views of the uncertainty signals.

matplotlib is an optional dependency, installed by the ``plot`` extra::

    pip install "levy-sklearn[plot]"

It is imported when a function is called, not when this module is imported, so
``import levy_sklearn.plotting`` always works. Every function draws on ``ax`` (a new figure when
it is None) and returns the Axes, so plots compose with the caller's own figure layout.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from .metrics import as_finite, aurc, check_same_shape, risk_coverage_curve

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.axes import Axes

__all__ = ["plot_fan_chart", "plot_risk_coverage", "plot_uncertainty_breakdown"]

_EXTRA_HINT = 'pip install "levy-sklearn[plot]"'


def _pyplot() -> Any:
    """Import pyplot or raise an ImportError that names the extra to install."""
    try:
        # The top-level package first, so a blocked ``matplotlib`` is reported even when
        # ``matplotlib.pyplot`` is already cached in sys.modules.
        import matplotlib  # noqa: F401
        import matplotlib.pyplot as plt
    except ImportError as exc:
        raise ImportError(
            "levy_sklearn.plotting requires matplotlib, which is not installed. Install the "
            f"plot extra with: {_EXTRA_HINT}"
        ) from exc
    return plt


# ---------------------------------------------------------------------------
# fan chart
# ---------------------------------------------------------------------------
def _plot_index(index: pd.Index) -> Any:
    """x values matplotlib can draw: periods as timestamps, timedeltas as float hours."""
    if isinstance(index, pd.PeriodIndex):
        return index.to_timestamp()
    if isinstance(index, pd.TimedeltaIndex):
        return np.asarray(index / pd.Timedelta(1, "h"))
    return index


def _select(y: pd.Series | pd.DataFrame, variable: Hashable, name: str) -> pd.Series:
    """The series of ``variable`` from a Series (taken as is) or a DataFrame."""
    if isinstance(y, pd.Series):
        return y
    if isinstance(y, pd.DataFrame):
        if variable in y.columns:
            return y[variable]
        if y.shape[1] == 1:
            return y.iloc[:, 0]
        raise ValueError(
            f"{name} has columns {list(y.columns)} and none is the variable {variable!r}."
        )
    raise TypeError(f"{name} must be a pandas Series or DataFrame; got {type(y).__name__}.")


def _band_colors(color: Any, n: int) -> list[tuple[float, float, float]]:
    """``n`` opaque tints of ``color``, lightest first (mixed with white)."""
    from matplotlib.colors import to_rgb

    rgb = np.array(to_rgb(color))
    # Opaque tints, not stacked alpha: each band keeps its own shade wherever bands overlap.
    strengths = np.linspace(0.25, 0.6, n) if n > 1 else np.array([0.45])
    return [tuple(1.0 - s * (1.0 - rgb)) for s in strengths]


def plot_fan_chart(
    y_train: pd.Series | pd.DataFrame,
    y_pred: pd.Series | pd.DataFrame,
    intervals: pd.DataFrame,
    ax: Axes | None = None,
    y_test: pd.Series | pd.DataFrame | None = None,
    title: str | None = None,
    *,
    variable: Hashable | None = None,
    color: Any = "C0",
) -> Axes:
    """Fan chart of a probabilistic forecast: history, point forecast and nested intervals.

    Parameters
    ----------
    y_train : pd.Series or pd.DataFrame
        The observed history.
    y_pred : pd.Series or pd.DataFrame
        The point forecast, as returned by a forecaster's ``predict``.
    intervals : pd.DataFrame
        Prediction intervals in sktime's ``predict_interval`` format: one row per forecast time
        and a 3-level column MultiIndex ``(variable, coverage, "lower"/"upper")``. One shaded band
        is drawn per coverage, nested, wider bands lighter.
    ax : matplotlib Axes, optional
        Axes to draw on; a new figure is created if None.
    y_test : pd.Series or pd.DataFrame, optional
        Held-out truth over the forecast horizon, drawn for comparison.
    title : str, optional
        Axes title.
    variable : hashable, optional
        Which variable to draw when there are several; default: the first of ``intervals``.
        From a DataFrame ``y_train``/``y_pred``/``y_test`` the column of that name is used (or
        its only column); a Series is used as is.
    color : matplotlib colour, default="C0"
        Colour of the forecast line; the bands are tints of it.

    Returns
    -------
    matplotlib.axes.Axes
        The Axes drawn on.

    Raises
    ------
    ImportError
        If matplotlib is not installed.
    ValueError
        If ``intervals`` is not in the format above, ``variable`` is not in it, or the data
        hold a panel (select one series first).

    Notes
    -----
    A ``pd.PeriodIndex`` is drawn at its start timestamps and a ``pd.TimedeltaIndex`` as float
    hours, since matplotlib draws neither directly.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import pandas as pd
    >>> from levy_sklearn.plotting import plot_fan_chart
    >>> y = pd.Series([1.0, 2.0, 1.5, 2.5], index=pd.RangeIndex(4))
    >>> fh = pd.RangeIndex(4, 6)
    >>> y_pred = pd.Series([2.0, 2.2], index=fh)
    >>> columns = pd.MultiIndex.from_product([["y"], [0.5, 0.9], ["lower", "upper"]])
    >>> intervals = pd.DataFrame(
    ...     [[1.7, 2.3, 1.2, 2.8], [1.8, 2.6, 1.1, 3.3]], index=fh, columns=columns
    ... )
    >>> ax = plot_fan_chart(y, y_pred, intervals, title="demo")
    >>> len(ax.collections)  # one band per coverage
    2
    >>> [t.get_text() for t in ax.get_legend().get_texts()]
    ['90% interval', '50% interval', 'history', 'forecast']
    """
    plt = _pyplot()
    if not isinstance(intervals, pd.DataFrame) or intervals.columns.nlevels != 3:
        raise ValueError(
            "intervals must be a DataFrame in sktime's predict_interval format, with a 3-level "
            "column MultiIndex (variable, coverage, 'lower'/'upper')."
        )
    for name, data in (("y_train", y_train), ("y_pred", y_pred), ("intervals", intervals)):
        if isinstance(getattr(data, "index", None), pd.MultiIndex):
            raise ValueError(
                f"{name} holds a panel (a MultiIndex); a fan chart draws one series: select "
                "it first, e.g. y_pred.loc[key] for the series key."
            )
    variables = intervals.columns.get_level_values(0).unique()
    if variable is None:
        variable = variables[0]
    elif variable not in variables:
        raise ValueError(f"variable {variable!r} is not in intervals; it has {list(variables)}.")
    bands = intervals[variable]
    coverages = sorted(bands.columns.get_level_values(0).unique(), reverse=True)
    # Everything is validated before drawing, so bad input leaves no half-drawn figure.
    limits = []
    for coverage in coverages:  # widest first, so the narrower (darker) bands go over it
        try:
            limits.append((coverage, bands[(coverage, "lower")], bands[(coverage, "upper")]))
        except KeyError:
            raise ValueError(
                f"coverage {coverage} of intervals lacks a 'lower' or 'upper' column."
            ) from None
        if (limits[-1][1] > limits[-1][2]).any():  # drawn as a band all the same
            raise ValueError(
                f"coverage {coverage} of intervals has 'lower' above 'upper' (swapped columns?)."
            )
    lines = [
        (_select(y_train, variable, "y_train"), {"color": "black", "lw": 1.2, "label": "history"}),
        (_select(y_pred, variable, "y_pred"), {"color": color, "lw": 1.8, "label": "forecast"}),
    ]
    if y_test is not None:
        style = {"color": "black", "ls": "--", "lw": 1.2, "label": "actual"}
        lines.append((_select(y_test, variable, "y_test"), style))

    if ax is None:
        _, ax = plt.subplots()
    x_fh = _plot_index(intervals.index)
    for (coverage, lower, upper), shade in zip(
        limits, _band_colors(color, len(limits)), strict=True
    ):
        ax.fill_between(
            x_fh,
            np.asarray(lower, dtype=float),
            np.asarray(upper, dtype=float),
            color=shade,
            linewidth=0,
            label=f"{100 * float(coverage):g}% interval",
            zorder=1,
        )
    for series, style in lines:
        ax.plot(_plot_index(series.index), series.to_numpy(dtype=float), zorder=3, **style)
    if title is not None:
        ax.set_title(title)
    if not ax.get_xlabel() and not ax.get_ylabel():  # a user's own labels stay
        ax.set_xlabel(intervals.index.name or "time")
        ax.set_ylabel(str(variable))
    ax.legend(loc="best")
    return ax


# ---------------------------------------------------------------------------
# uncertainty diagnostics
# ---------------------------------------------------------------------------
def plot_risk_coverage(
    errors: ArrayLike,
    uncertainty_by_method: Mapping[str, ArrayLike],
    ax: Axes | None = None,
) -> Axes:
    """Risk–coverage curves of several uncertainty rankings of the same errors, and the oracle.

    Each curve keeps the samples a method trusts most (lowest uncertainty) and plots their mean
    error against the fraction kept (:func:`levy_sklearn.metrics.risk_coverage_curve`); lower
    is better. The oracle ranks by the errors themselves, the best any method can do. The
    legend gives each curve's AURC (:func:`levy_sklearn.metrics.aurc`).

    Parameters
    ----------
    errors : array-like
        Per-sample losses, e.g. ``|y − ŷ|``.
    uncertainty_by_method : mapping of str to array-like
        Per-sample uncertainty of each method, same shape as ``errors``; larger means less
        trusted (pass a confidence such as the evidence negated).
    ax : matplotlib Axes, optional
        Axes to draw on; a new figure is created if None.

    Returns
    -------
    matplotlib.axes.Axes
        The Axes drawn on.

    Raises
    ------
    ImportError
        If matplotlib is not installed.
    ValueError
        On invalid errors or uncertainties (see :func:`levy_sklearn.metrics.risk_coverage_curve`).

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import numpy as np
    >>> from levy_sklearn.plotting import plot_risk_coverage
    >>> rng = np.random.default_rng(0)
    >>> std = rng.uniform(0.1, 1.0, size=200)
    >>> errors = np.abs(rng.normal(scale=std))
    >>> ax = plot_risk_coverage(errors, {"std": std, "random": rng.uniform(size=200)})
    >>> [t.get_text().split(" ")[0] for t in ax.get_legend().get_texts()]
    ['std', 'random', 'oracle']
    """
    if not isinstance(uncertainty_by_method, Mapping):
        raise TypeError(
            "uncertainty_by_method must be a mapping {method name: uncertainty}; got "
            f"{type(uncertainty_by_method).__name__}."
        )
    plt = _pyplot()
    # Every curve is computed before drawing, so bad input leaves no half-drawn figure.
    curves = {
        name: (*risk_coverage_curve(errors, uncertainty), aurc(errors, uncertainty))
        for name, uncertainty in uncertainty_by_method.items()
    }
    oracle = (*risk_coverage_curve(errors, errors), aurc(errors, errors))
    if ax is None:
        _, ax = plt.subplots()
    for name, (coverage, risk, area) in curves.items():
        ax.plot(coverage, risk, label=f"{name} (AURC={area:.3g})")
    coverage, risk, area = oracle
    ax.plot(coverage, risk, color="black", ls="--", label=f"oracle (AURC={area:.3g})")
    ax.set_xlabel("coverage (fraction of samples kept)")
    ax.set_ylabel("risk (mean error of kept samples)")
    ax.set_xlim(0.0, 1.0)
    ax.legend(loc="best")
    return ax


def plot_uncertainty_breakdown(
    evidence: ArrayLike,
    disagreement: ArrayLike,
    errors: ArrayLike | None = None,
    ax: Axes | None = None,
) -> Axes:
    """Scatter of evidence ``Λ`` (log scale) against disagreement, coloured by ``|error|``.

    The two signals of Lévy attention (:doc:`/user_guide/levy_attention`): the variance is roughly
    disagreement × ψ(evidence), so points with low evidence (left) or high disagreement (top)
    are the ones the model trusts least. Colouring by the error shows which signal tracks it.

    Parameters
    ----------
    evidence : array-like
        Evidence per sample, non-negative, drawn on a log axis; where some sample has
        evidence 0 (nothing observed), the axis is symmetric-log, linear below the smallest
        positive evidence, so those samples stand at its left edge.
    disagreement : array-like
        Disagreement per sample, same shape as ``evidence``.
    errors : array-like, optional
        Errors per sample, same shape; points are coloured by their absolute value, with a
        colourbar.
    ax : matplotlib Axes, optional
        Axes to draw on; a new figure is created if None.

    Returns
    -------
    matplotlib.axes.Axes
        The Axes drawn on.

    Raises
    ------
    ImportError
        If matplotlib is not installed.
    ValueError
        On NaN/infinite input, shapes that differ, or negative evidence.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import numpy as np
    >>> from levy_sklearn.plotting import plot_uncertainty_breakdown
    >>> rng = np.random.default_rng(0)
    >>> evidence = np.exp(rng.normal(size=100))
    >>> disagreement = rng.exponential(size=100)
    >>> errors = rng.normal(size=100) * np.sqrt(disagreement / evidence)
    >>> ax = plot_uncertainty_breakdown(evidence, disagreement, errors)
    >>> ax.get_xscale()
    'log'
    """
    plt = _pyplot()
    lam = as_finite(evidence, "evidence")
    spread = as_finite(disagreement, "disagreement")
    check_same_shape(lam, spread, "evidence", "disagreement")
    if np.any(lam < 0):
        raise ValueError("evidence must be non-negative (it is an expected count of points).")
    colour = None
    if errors is not None:
        err = as_finite(errors, "errors")
        check_same_shape(lam, err, "evidence", "errors")
        colour = np.abs(err).ravel()
    lam, spread = lam.ravel(), spread.ravel()
    if ax is None:
        _, ax = plt.subplots()
    if colour is None:
        ax.scatter(lam, spread, s=12, alpha=0.7)
    else:
        points = ax.scatter(lam, spread, c=colour, cmap="viridis", s=12, alpha=0.8)
        ax.figure.colorbar(points, ax=ax, label="|error|")
    positive = lam[lam > 0]
    if positive.size == lam.size:
        ax.set_xscale("log")
    else:  # Λ = 0 (nothing observed) has no place on a log axis
        ax.set_xscale("symlog", linthresh=float(positive.min()) if positive.size else 1.0)
    ax.set_xlabel("evidence Λ")
    ax.set_ylabel("disagreement")
    return ax
