"""levy_sklearn.plotting on the Agg backend, with hand-built sktime-style inputs."""

import importlib
import sys

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
from matplotlib.axes import Axes  # noqa: E402
from matplotlib.collections import PolyCollection  # noqa: E402
from matplotlib.colors import to_rgba  # noqa: E402

import levy_sklearn.plotting as plotting  # noqa: E402
from levy_sklearn.metrics import aurc  # noqa: E402
from levy_sklearn.plotting import (  # noqa: E402
    plot_fan_chart,
    plot_risk_coverage,
    plot_uncertainty_breakdown,
)


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def make_forecast(coverages=(0.5, 0.8, 0.95), variables=("y",), index="period"):
    """History, point forecast, truth and a predict_interval-style DataFrame."""
    if index == "period":
        full = pd.period_range("2000-01", periods=30, freq="M")
    elif index == "datetime":
        full = pd.date_range("2000-01-01", periods=30, freq="D")
    else:
        full = pd.RangeIndex(30)
    train, fh = full[:24], full[24:]
    rng = np.random.default_rng(0)
    y_train = pd.Series(rng.normal(size=24).cumsum(), index=train, name=variables[0])
    y_pred = pd.Series(np.full(6, y_train.iloc[-1]), index=fh, name=variables[0])
    y_test = pd.Series(y_pred.to_numpy() + rng.normal(size=6), index=fh, name=variables[0])
    columns = pd.MultiIndex.from_product([list(variables), list(coverages), ["lower", "upper"]])
    values = []
    for _ in variables:
        for c in coverages:
            half = (1 + c) * np.linspace(1.0, 2.0, 6)  # wider for higher coverage
            values += [y_pred.to_numpy() - half, y_pred.to_numpy() + half]
    intervals = pd.DataFrame(np.column_stack(values), index=fh, columns=columns)
    return y_train, y_pred, y_test, intervals


def legend_texts(ax):
    return [t.get_text() for t in ax.get_legend().get_texts()]


# ---------------------------------------------------------------------------
# plot_fan_chart
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("index", ["period", "datetime", "range"])
@pytest.mark.parametrize("coverages", [(0.9,), (0.5, 0.8, 0.95)])
def test_fan_chart_one_band_per_coverage(coverages, index):
    y_train, y_pred, y_test, intervals = make_forecast(coverages, index=index)
    ax = plot_fan_chart(y_train, y_pred, intervals, y_test=y_test, title="fan")
    assert isinstance(ax, Axes)
    bands = [c for c in ax.collections if isinstance(c, PolyCollection)]
    assert len(bands) == len(coverages)
    assert [line.get_label() for line in ax.get_lines()] == ["history", "forecast", "actual"]
    assert ax.get_title() == "fan"
    assert (ax.get_xlabel(), ax.get_ylabel()) == ("time", "y")  # it had no labels
    expected = [f"{100 * c:g}% interval" for c in sorted(coverages, reverse=True)]
    assert legend_texts(ax)[: len(coverages)] == expected


def test_fan_chart_of_a_panel_asks_for_one_series():
    y_train, y_pred, _, intervals = make_forecast()
    panel = pd.concat({"a": y_pred, "b": y_pred})  # was matplotlib's TypeError on tuples
    with pytest.raises(ValueError, match=r"y_pred holds a panel .* y_pred.loc\[key\]"):
        plot_fan_chart(y_train, panel, intervals)
    with pytest.raises(ValueError, match="intervals holds a panel"):
        plot_fan_chart(y_train, y_pred, pd.concat({"a": intervals, "b": intervals}))


def test_fan_chart_wider_bands_are_lighter_and_drawn_first():
    y_train, y_pred, _, intervals = make_forecast((0.5, 0.8, 0.95))
    ax = plot_fan_chart(y_train, y_pred, intervals)
    bands = [c for c in ax.collections if isinstance(c, PolyCollection)]
    # band order: 95%, 80%, 50%; lightness = mean of RGB, decreasing inwards
    lightness = [np.mean(to_rgba(b.get_facecolor()[0])[:3]) for b in bands]
    assert lightness[0] > lightness[1] > lightness[2]
    # the widest band spans the 95% bounds
    band_y = bands[0].get_paths()[0].vertices[:, 1]
    bounds = intervals["y"][0.95]
    assert band_y.min() == pytest.approx(bounds["lower"].min())
    assert band_y.max() == pytest.approx(bounds["upper"].max())


def test_fan_chart_without_truth_and_on_given_axes():
    y_train, y_pred, _, intervals = make_forecast()
    fig, ax = plt.subplots()
    out = plot_fan_chart(y_train, y_pred, intervals, ax=ax)
    assert out is ax
    assert "actual" not in legend_texts(ax)
    assert ax.get_title() == ""


def test_fan_chart_selects_variable_from_dataframes():
    y_train, y_pred, y_test, intervals = make_forecast((0.8,), variables=("a", "b"))

    def frame(s):
        return pd.DataFrame({"a": s.to_numpy(), "b": s.to_numpy() + 100.0}, index=s.index)

    ax = plot_fan_chart(frame(y_train), frame(y_pred), intervals, variable="b")
    history = ax.get_lines()[0].get_ydata()
    np.testing.assert_allclose(history, y_train.to_numpy() + 100.0)
    # default: the first variable of intervals
    ax = plot_fan_chart(frame(y_train), frame(y_pred), intervals)
    np.testing.assert_allclose(ax.get_lines()[0].get_ydata(), y_train.to_numpy())


def test_fan_chart_unnamed_sktime_variable():
    # sktime names the variable 0 when y has no name
    y_train, y_pred, _, intervals = make_forecast((0.9,), variables=(0,))
    ax = plot_fan_chart(y_train.rename(None), y_pred.rename(None), intervals)
    assert legend_texts(ax) == ["90% interval", "history", "forecast"]


def test_fan_chart_bad_input():
    y_train, y_pred, _, intervals = make_forecast()
    with pytest.raises(ValueError, match="3-level"):
        plot_fan_chart(y_train, y_pred, intervals["y"])
    with pytest.raises(ValueError, match="variable 'z' is not in intervals"):
        plot_fan_chart(y_train, y_pred, intervals, variable="z")
    with pytest.raises(ValueError, match="lacks a 'lower' or 'upper'"):
        plot_fan_chart(y_train, y_pred, intervals.drop(columns=[("y", 0.8, "upper")]))
    swapped = intervals.rename(columns={"lower": "upper", "upper": "lower"}, level=2)
    with pytest.raises(ValueError, match="'lower' above 'upper'"):  # not drawn as if fine
        plot_fan_chart(y_train, y_pred, swapped)
    with pytest.raises(TypeError, match="pandas Series or DataFrame"):
        plot_fan_chart(y_train.to_numpy(), y_pred, intervals)
    two = pd.DataFrame({"p": y_train, "q": y_train})
    with pytest.raises(ValueError, match="none is the variable"):
        plot_fan_chart(two, y_pred, intervals)
    assert plt.get_fignums() == []  # validation happens before a figure is made


# ---------------------------------------------------------------------------
# plot_risk_coverage
# ---------------------------------------------------------------------------
def test_risk_coverage_curves_and_legend():
    rng = np.random.default_rng(1)
    std = rng.uniform(0.1, 1.0, size=300)
    errors = np.abs(rng.normal(scale=std))
    methods = {"Lévy σ": std, "MC dropout": std + rng.uniform(size=300)}
    ax = plot_risk_coverage(errors, methods)
    assert isinstance(ax, Axes)
    texts = legend_texts(ax)
    assert len(texts) == 3
    for text, name in zip(texts, ["Lévy σ", "MC dropout", "oracle"], strict=True):
        assert text.startswith(name)
        assert "AURC=" in text
    assert f"{aurc(errors, std):.3g}" in texts[0]
    assert f"{aurc(errors, errors):.3g}" in texts[2]
    lines = ax.get_lines()
    assert len(lines) == 3
    for line in lines:  # every curve ends at coverage 1 and the overall mean error
        assert line.get_xdata()[-1] == pytest.approx(1.0)
        assert line.get_ydata()[-1] == pytest.approx(errors.mean())


def test_risk_coverage_bad_input():
    with pytest.raises(TypeError, match="mapping"):
        plot_risk_coverage([1.0, 2.0], [[1.0, 2.0]])
    with pytest.raises(ValueError, match="same shape"):
        plot_risk_coverage([1.0, 2.0], {"m": [1.0, 2.0, 3.0]})
    assert plt.get_fignums() == []


# ---------------------------------------------------------------------------
# plot_uncertainty_breakdown
# ---------------------------------------------------------------------------
def test_uncertainty_breakdown_with_errors_has_colourbar():
    rng = np.random.default_rng(2)
    evidence = np.exp(rng.normal(size=50))
    disagreement = rng.exponential(size=50)
    errors = rng.normal(size=50)
    ax = plot_uncertainty_breakdown(evidence, disagreement, errors)
    assert ax.get_xscale() == "log"
    (points,) = ax.collections
    assert len(points.get_offsets()) == 50
    np.testing.assert_allclose(points.get_array(), np.abs(errors))
    assert points.colorbar is not None
    assert points.colorbar.ax.get_ylabel() == "|error|"
    assert len(ax.figure.axes) == 2


def test_uncertainty_breakdown_without_errors():
    ax = plot_uncertainty_breakdown([0.1, 1.0, 10.0], [0.5, 0.2, 0.1])
    assert ax.get_xscale() == "log"
    (points,) = ax.collections
    assert points.colorbar is None
    assert len(ax.figure.axes) == 1


def test_uncertainty_breakdown_draws_zero_evidence_at_the_left_edge():
    # A sample with nothing observed has evidence 0: a symmetric-log axis keeps it on the plot.
    ax = plot_uncertainty_breakdown([0.0, 0.1, 10.0], [0.5, 0.2, 0.1])
    assert ax.get_xscale() == "symlog"
    (points,) = ax.collections
    assert points.get_offsets()[:, 0].tolist() == [0.0, 0.1, 10.0]


def test_uncertainty_breakdown_bad_input():
    with pytest.raises(ValueError, match="non-negative"):
        plot_uncertainty_breakdown([-1.0, 1.0], [0.5, 0.2])
    with pytest.raises(ValueError, match="same shape"):
        plot_uncertainty_breakdown([1.0, 2.0], [0.5, 0.2, 0.1])
    with pytest.raises(ValueError, match="errors contains NaN"):
        plot_uncertainty_breakdown([1.0, 2.0], [0.5, 0.2], [np.nan, 1.0])
    assert plt.get_fignums() == []


# ---------------------------------------------------------------------------
# matplotlib is optional
# ---------------------------------------------------------------------------
@pytest.fixture
def no_matplotlib(monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    monkeypatch.setitem(sys.modules, "matplotlib.pyplot", None)


def test_module_imports_without_matplotlib(no_matplotlib):
    importlib.reload(plotting)  # must not import matplotlib at import time


@pytest.mark.parametrize(
    ("func", "args"),
    [
        (plot_fan_chart, make_forecast()[:2] + make_forecast()[3:]),
        (plot_risk_coverage, ([1.0, 2.0], {"m": [1.0, 2.0]})),
        (plot_uncertainty_breakdown, ([1.0, 2.0], [0.5, 0.2])),
    ],
)
def test_missing_matplotlib_names_the_extra(no_matplotlib, func, args):
    with pytest.raises(ImportError, match=r'pip install "levy-sklearn\[plot\]"'):
        func(*args)
