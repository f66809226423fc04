"""Property-based tests (hypothesis) over random irregular inputs, for both front-ends.

Each module fits its models once (fixtures) and lets hypothesis vary what is predicted:
outputs are finite, σ > 0, intervals are nested as coverage grows, and the order of the
observations does not matter. Runs are small, to fit the CI budget.
"""

import numpy as np
import pandas as pd
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from sktime.forecasting.base import ForecastingHorizon

from levy_sklearn.forecaster import LevyForecaster
from levy_sklearn.regressor import LevyAttentionRegressor

torch.set_num_threads(1)

# Derandomised (the same examples on every run) and without an example database on disk.
SETTINGS = settings(
    max_examples=25,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)
FORECASTER_SETTINGS = settings(SETTINGS, max_examples=15)
N_FEATURES = 4
COVERAGES = st.lists(st.floats(0.01, 0.99), min_size=2, max_size=5, unique=True).map(sorted)

# Rows of 1-12 samples, each cell a value anywhere from -1e6 to 1e6 or missing (NaN).
rows = arrays(
    np.float64,
    st.tuples(st.integers(1, 12), st.just(N_FEATURES)),
    elements=st.one_of(st.floats(-1e6, 1e6), st.just(np.nan)),
)


@pytest.fixture(scope="module")
def regressor():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(150, N_FEATURES))
    y = X @ [1.0, -1.0, 0.5, 0.2] + 0.2 * rng.normal(size=150)
    X[rng.random(X.shape) < 0.3] = np.nan
    return LevyAttentionRegressor(d_model=8, n_heads=2, max_epochs=3, random_state=0).fit(X, y)


@SETTINGS
@given(X=rows, coverage=COVERAGES)
def test_regressor_outputs_finite_positive_sigma_nested_intervals(regressor, X, coverage):
    mean, std = regressor.predict(X, return_std=True)
    assert np.isfinite(mean).all() and np.isfinite(std).all()
    assert (std > 0).all()
    bounds = regressor.predict_interval(X, coverage=coverage)  # (n, 2, n_levels), levels sorted
    lower, upper = bounds[:, 0], bounds[:, 1]
    assert np.isfinite(bounds).all()
    assert (lower <= mean[:, None]).all() and (mean[:, None] <= upper).all()
    assert (np.diff(lower, axis=1) <= 0).all() and (np.diff(upper, axis=1) >= 0).all()


@SETTINGS
@given(X=rows, seed=st.integers(0, 2**32 - 1))
def test_regressor_row_order_and_token_order_do_not_matter(regressor, X, seed):
    rng = np.random.default_rng(seed)
    # Rows are independent: permuting them permutes the answers.
    order = rng.permutation(len(X))
    mean, std = regressor.predict(X, return_std=True)
    mean_p, std_p = regressor.predict(X[order], return_std=True)
    np.testing.assert_allclose(mean_p, mean[order], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(std_p, std[order], rtol=1e-12, atol=1e-12)
    # A row is a *set* of observation tokens: shuffling the token slots changes nothing.
    tokens = regressor._tokens(X)
    slots = rng.permutation(N_FEATURES)
    shuffled = {
        k: (v[:, slots] if k in ("times", "channels", "values", "mask") else v)
        for k, v in tokens.items()
    }
    a = regressor.net_.predict_moments(tokens)
    b = regressor.net_.predict_moments(shuffled)
    np.testing.assert_allclose(b.mean, a.mean, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(b.variance, a.variance, rtol=1e-9, atol=1e-15)


# ---------------------------------------------------------------- forecaster


def irregular_series(rng, n, start="2022-01-01"):
    """An irregular hourly-ish series with missing values and a random level and scale."""
    t = np.cumsum(rng.uniform(0.2, 3.0, n))
    values = rng.uniform(-100, 100) + rng.uniform(0.1, 20) * np.sin(t / 4 + rng.uniform(0, 6))
    values[rng.random(n) < 0.2] = np.nan
    index = pd.DatetimeIndex(pd.Timestamp(start) + pd.to_timedelta(t, unit="h"))
    return pd.Series(values + rng.normal(0, 0.3, n), index=index)


@pytest.fixture(scope="module")
def pretrained():
    """Pretrained once; fit(series) then only sets the context (zero-shot), which is cheap."""
    rng = np.random.default_rng(1)
    panel = pd.concat({f"p{i}": irregular_series(rng, 80) for i in range(4)}).to_frame("y")
    f = LevyForecaster(
        d_model=8,
        n_heads=2,
        n_windowed_heads=1,
        n_layers=0,
        max_epochs=3,
        context_length=12,
        max_horizon=6,
        windows_per_series=40,
        random_state=0,
    )
    return f.pretrain(panel)


panels = st.builds(
    lambda seed, lengths: pd.concat(
        {
            f"s{i}": irregular_series(np.random.default_rng([seed, i]), n)
            for i, n in enumerate(lengths)
        }
    ).to_frame("y"),
    st.integers(0, 2**32 - 1),
    st.lists(st.integers(2, 40), min_size=1, max_size=4),
)
# Minutes after the cutoff, negative = in-sample; unique so that fh is a set.
horizons = st.lists(st.integers(-1800, 6000), min_size=1, max_size=6, unique=True)


@FORECASTER_SETTINGS
@given(panel=panels, minutes=horizons, coverage=COVERAGES)
def test_forecaster_outputs_finite_positive_sigma_nested_intervals(
    pretrained, panel, minutes, coverage
):
    f = pretrained.clone().fit(panel)
    fh = ForecastingHorizon(pd.to_timedelta(minutes, unit="min"), is_relative=True)
    mean, var = f.predict(fh), f.predict_var(fh)
    assert np.isfinite(mean.to_numpy()).all() and np.isfinite(var.to_numpy()).all()
    assert (var.to_numpy() > 0).all()
    intervals = f.predict_interval(fh, coverage=coverage)
    lower = np.stack([intervals[("y", c, "lower")] for c in coverage], axis=1)
    upper = np.stack([intervals[("y", c, "upper")] for c in coverage], axis=1)
    assert np.isfinite(lower).all() and np.isfinite(upper).all()
    m = mean.to_numpy()
    assert (lower <= m).all() and (m <= upper).all()
    assert (np.diff(lower, axis=1) <= 0).all() and (np.diff(upper, axis=1) >= 0).all()


@FORECASTER_SETTINGS
@given(panel=panels, minutes=horizons, seed=st.integers(0, 2**32 - 1))
def test_forecaster_order_of_series_and_of_fh_does_not_matter(pretrained, panel, minutes, seed):
    rng = np.random.default_rng(seed)
    keys = panel.index.get_level_values(0).unique()
    shuffled = pd.concat([panel.loc[[k]] for k in rng.permutation(keys)])
    fh = ForecastingHorizon(pd.to_timedelta(minutes, unit="min"), is_relative=True)
    fh_shuffled = ForecastingHorizon(
        pd.to_timedelta(rng.permutation(minutes), unit="min"), is_relative=True
    )
    f, g = pretrained.clone().fit(panel), pretrained.clone().fit(shuffled)
    for method in ("predict", "predict_var"):
        a = getattr(f, method)(fh)
        b = getattr(g, method)(fh_shuffled)
        b = b.loc[a.index]  # rows matched by (series, time), whatever order they came in
        np.testing.assert_allclose(b.to_numpy(), a.to_numpy(), rtol=1e-9, atol=1e-12)


@pytest.fixture(scope="module")
def global_fit():
    """A global fit on a quarterly panel, and its forecasts: the reference for rescaling."""
    rng = np.random.default_rng(2)
    index = pd.period_range("2000Q1", periods=24, freq="Q")
    panel = pd.concat(
        {f"s{i}": pd.Series(rng.normal(0, 1, 24).cumsum() + 10, index=index) for i in range(4)},
        names=["series", "time"],
    ).to_frame("y")
    fit = LevyForecaster(**GLOBAL_TINY).fit(panel)
    return panel, fit.predict(fh=[1, 2, 3]), np.sqrt(fit.predict_var(fh=[1, 2, 3]))


GLOBAL_TINY = dict(
    d_model=8, n_heads=2, n_windowed_heads=1, n_layers=0, max_epochs=2, context_length=8,
    max_horizon=3, windows_per_series=16, random_state=0,
)  # fmt: skip


@settings(SETTINGS, max_examples=6)
@given(exponent=st.floats(-3, 4), key=st.sampled_from(["s0", "s1", "s2", "s3"]))
def test_scaling_one_series_scales_its_forecasts_and_sigma_alone(global_fit, exponent, key):
    """Every series is forecast in its own units: multiplying one series of a global fit by
    10⁻³ … 10⁴ multiplies its forecasts and σ alike and leaves the other series' unchanged
    (one panel-wide scale forecast small series far off their level: the many-series issue)."""
    panel, mean, sd = global_fit
    c = 10.0**exponent
    scaled = panel.copy()
    scaled.loc[key] = scaled.loc[key].to_numpy() * c
    f = LevyForecaster(**GLOBAL_TINY).fit(scaled)
    mean_c, sd_c = f.predict(fh=[1, 2, 3]), np.sqrt(f.predict_var(fh=[1, 2, 3]))
    np.testing.assert_allclose(mean_c.loc[key], c * mean.loc[key], rtol=1e-5)
    np.testing.assert_allclose(sd_c.loc[key], c * sd.loc[key], rtol=1e-5)
    others = mean.index.get_level_values(0) != key
    np.testing.assert_allclose(mean_c[others], mean[others], rtol=1e-5)
    np.testing.assert_allclose(sd_c[others], sd[others], rtol=1e-5)


@pytest.fixture(scope="module")
def flat_and_short_fit():
    """A global fit on a daily panel with a random walk, a flat series (a stuck sensor) and
    a series of three observations, and its forecasts and scales: the reference for a panel
    whose random walk is in other units."""
    rng = np.random.default_rng(3)
    index = pd.date_range("2021-01-01", periods=40, freq="D")
    panel = pd.concat(
        {
            "walk": pd.Series(rng.normal(0, 1, 40).cumsum() + 10, index=index),
            "flat": pd.Series(7.0, index=index[-20:]),
            "short": pd.Series([10.0, 11.0, 12.0], index=index[-3:]),
        },
        names=["series", "time"],
    ).to_frame("y")
    fit = LevyForecaster(**GLOBAL_TINY).fit(panel)
    fh = [1, 2, 3]
    return panel, fit.predict(fh=fh), np.sqrt(fit.predict_var(fh=fh)), fit.series_scale_


@pytest.mark.parametrize("factor", [1e6, 1e-3])
def test_another_series_units_do_not_move_a_flat_or_short_series(flat_and_short_fit, factor):
    """A series with no spread or a few observations is forecast in its own units: the
    random walk 10⁶ times larger (or 10³ smaller) moves neither the flat series' nor the
    short one's forecast or σ by 1 % of its own scale. Training is not what differs: every
    series' tokens are its values in its own standardisation, which the walk's units do not
    enter, so the network is the same. Taking the panel's scale instead forecast a flat 7
    at -7,005 ± 23,400 beside a series near 10⁶."""
    panel, mean, sd, scale = flat_and_short_fit
    scaled = panel.copy()
    scaled.loc["walk"] = scaled.loc["walk"].to_numpy() * factor
    f = LevyForecaster(**GLOBAL_TINY).fit(scaled)
    mean_c, sd_c = f.predict(fh=[1, 2, 3]), np.sqrt(f.predict_var(fh=[1, 2, 3]))
    for row, key in [(1, "flat"), (2, "short")]:
        tolerance = 0.01 * scale[row, 0]
        np.testing.assert_allclose(mean_c.loc[key], mean.loc[key], rtol=0, atol=tolerance)
        np.testing.assert_allclose(sd_c.loc[key], sd.loc[key], rtol=0, atol=tolerance)
    np.testing.assert_allclose(f.series_scale_[1:], scale[1:], rtol=1e-12)
