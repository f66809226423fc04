"""Split-conformal calibration of precomputed Gaussian moments (levy_sklearn.conformal)."""

import math

import numpy as np
import pytest
from mapie.regression import SplitConformalRegressor
from scipy.stats import norm
from sklearn.base import clone

from levy_sklearn.conformal import (
    ConformalIntervals,
    GaussianIntervals,
    MomentsRegressor,
    SigmaNormalisedScore,
    conformal_interval,
    fit_conformal,
)
from levy_sklearn.metrics import check_coverage


def heteroscedastic(n, rng):
    """Moments of a perfectly specified model: y ~ N(mean, std²)."""
    mean = rng.normal(size=n)
    std = rng.uniform(0.2, 3.0, size=n)
    return mean, std, mean + std * rng.normal(size=n)


def textbook_quantile(scores, level):
    """The ⌈level·(n+1)⌉-th smallest score: the split-conformal quantile, written out here."""
    k = math.ceil(level * (len(scores) + 1))
    return np.sort(scores)[k - 1]


def test_moments_regressor_returns_its_columns():
    moments = np.array([[1.0, 0.5], [-2.0, 3.0]])
    reg = MomentsRegressor()
    np.testing.assert_array_equal(reg.predict(moments), [1.0, -2.0])
    mean, std = reg.predict(moments, return_std=True)
    np.testing.assert_array_equal(mean, [1.0, -2.0])
    np.testing.assert_array_equal(std, [0.5, 3.0])
    assert reg.fit(moments) is reg
    assert clone(reg).__sklearn_is_fitted__()


def test_moments_regressor_rejects_other_shapes():
    with pytest.raises(ValueError, match="2 columns"):
        MomentsRegressor().predict(np.ones((3, 3)))


@pytest.mark.parametrize("level", [0.5, 0.8, 0.9, 0.95])
def test_interval_is_textbook_split_conformal(level):
    rng = np.random.default_rng(0)
    mean, std, y = heteroscedastic(199, rng)
    fitted = fit_conformal(mean, std, y, level)
    new_mean, new_std = rng.normal(size=5), rng.uniform(0.5, 2.0, size=5)
    lower, upper = conformal_interval(fitted, new_mean, new_std)
    q = textbook_quantile(np.abs(y - mean) / std, level)
    np.testing.assert_allclose(lower[:, 0], new_mean - q * new_std, rtol=1e-12)
    np.testing.assert_allclose(upper[:, 0], new_mean + q * new_std, rtol=1e-12)


def test_symmetric_where_std_normalized_is_not():
    # The reason for SigmaNormalisedScore: MAPIE 1.6's "std_normalized" reads its lower bound
    # from one order statistic below the upper one.
    rng = np.random.default_rng(1)
    mean, std, y = heteroscedastic(100, rng)
    cal, new = np.column_stack([mean, std]), np.array([[0.0, 1.0]])
    bounds = {}
    for name, score in [("ours", SigmaNormalisedScore()), ("mapie", "std_normalized")]:
        mapie = SplitConformalRegressor(
            MomentsRegressor(), confidence_level=0.9, conformity_score=score, prefit=True
        ).conformalize(cal, y)
        bounds[name] = mapie.predict_interval(new)[1][0, :, 0]
    q = textbook_quantile(np.abs(y - mean) / std, 0.9)
    np.testing.assert_allclose(bounds["ours"], [-q, q])
    assert bounds["mapie"][1] == pytest.approx(q)
    assert -bounds["mapie"][0] < q


def test_score_can_ask_a_fitted_model_for_sigma():
    rng = np.random.default_rng(2)
    mean, std, y = heteroscedastic(300, rng)
    X = np.column_stack([mean, std])
    via_model = SplitConformalRegressor(
        MomentsRegressor(),
        conformity_score=SigmaNormalisedScore(sigma_estimator=MomentsRegressor()),
        prefit=True,
    ).conformalize(X, y)
    via_columns = SplitConformalRegressor(
        MomentsRegressor(), conformity_score=SigmaNormalisedScore(), prefit=True
    ).conformalize(X, y)
    np.testing.assert_allclose(
        via_model.predict_interval(X[:7])[1], via_columns.predict_interval(X[:7])[1]
    )


def test_empirical_coverage_matches_nominal():
    rng = np.random.default_rng(3)
    hits = {0.5: [], 0.9: []}
    for _ in range(40):
        mean, std, y = heteroscedastic(300, rng)
        cal = ConformalIntervals(mean[:150], std[:150], y[:150])
        lower, upper = cal.interval(mean[150:], std[150:], coverage=[0.5, 0.9])
        for j, level in enumerate(hits):
            inside = (y[150:] >= lower[:, j]) & (y[150:] <= upper[:, j])
            hits[level].append(inside.mean())
    # Split conformal guarantees ≥ level, and at most level + 1/(n_cal + 1) on average.
    for level, h in hits.items():
        assert level - 0.02 <= np.mean(h) <= level + 1 / 151 + 0.02


def test_multi_target_and_missing_targets():
    rng = np.random.default_rng(4)
    cols = [heteroscedastic(200, rng) for _ in range(2)]
    mean, std, y = (np.column_stack([c[i] for c in cols]) for i in range(3))
    y_holes = y.copy()
    y_holes[:50, 1] = np.nan  # unobserved: left out of target 1's calibration
    fitted = fit_conformal(mean, std, y_holes, [0.8, 0.9])
    assert len(fitted) == 2
    lower, upper = conformal_interval(fitted, mean[:6], std[:6])
    assert lower.shape == upper.shape == (6, 2, 2)
    alone = fit_conformal(mean[50:, 1], std[50:, 1], y[50:, 1], [0.8, 0.9])
    np.testing.assert_allclose(conformal_interval(alone, mean[:6, 1], std[:6, 1])[1], upper[:, 1])
    assert (upper[:, :, 1] > upper[:, :, 0]).all()


def test_calibrator_scalar_and_list_shapes_and_cache():
    rng = np.random.default_rng(5)
    mean, std, y = heteroscedastic(100, rng)
    cal = ConformalIntervals(mean, std, y)
    lower, upper = cal.interval(mean[:4], std[:4], coverage=0.9)
    assert lower.shape == upper.shape == (4,)
    lower2, _ = cal.interval(mean[:4], std[:4], coverage=[0.9])
    assert lower2.shape == (4, 1)
    np.testing.assert_array_equal(lower, lower2[:, 0])
    assert cal.conformalizers(0.9) is cal.conformalizers(0.9)
    assert cal.n_samples == 100 and cal.n_targets == 1


@pytest.mark.parametrize("bad", [0.0, 1.0, 1.5, -0.1, [0.5, 1.0], []])
def test_bad_coverage_is_rejected(bad):
    with pytest.raises(ValueError, match="strictly between 0 and 1"):
        check_coverage(bad)
    rng = np.random.default_rng(7)
    mean, std, y = heteroscedastic(50, rng)
    for intervals in (GaussianIntervals(), ConformalIntervals(mean, std, y)):
        with pytest.raises(ValueError, match="strictly between 0 and 1"):
            intervals.interval(mean, std, bad)


def test_gaussian_intervals_are_scipys_normal_intervals():
    rng = np.random.default_rng(8)
    mean, std = rng.normal(size=(6, 2)), rng.uniform(0.5, 2.0, size=(6, 2))
    lower, upper = GaussianIntervals().interval(mean, std, [0.5, 0.9])
    assert lower.shape == upper.shape == (6, 2, 2)
    for j, level in enumerate([0.5, 0.9]):
        ref_lower, ref_upper = norm.interval(level, loc=mean, scale=std)
        np.testing.assert_allclose(lower[..., j], ref_lower, rtol=1e-12)
        np.testing.assert_allclose(upper[..., j], ref_upper, rtol=1e-12)
    scalar = GaussianIntervals().interval(mean, std, 0.9)
    np.testing.assert_array_equal(scalar[1], upper[..., 1])


def test_both_intervals_share_one_interface():
    rng = np.random.default_rng(9)
    mean, std, y = heteroscedastic(300, rng)
    for coverage, shape in [(0.9, (5,)), ([0.5, 0.8, 0.9], (5, 3))]:
        for intervals in (GaussianIntervals(), ConformalIntervals(mean, std, y)):
            lower, upper = intervals.interval(mean[:5], std[:5], coverage)
            assert lower.shape == upper.shape == shape
            assert (lower < upper).all()


def test_sigma_scale_makes_the_gaussian_interval_the_conformal_one():
    rng = np.random.default_rng(11)
    mean, std, y = heteroscedastic(300, rng)
    y = mean + 1.7 * (y - mean)  # σ is too small by a factor 1.7
    cal = ConformalIntervals(mean, std, y)
    scale = cal.sigma_scale(0.9)
    q = textbook_quantile(np.abs(y - mean) / std, 0.9)
    np.testing.assert_allclose(scale, [q / norm.ppf(0.95)], rtol=1e-12)
    gaussian = GaussianIntervals().interval(mean[:4], std[:4] * scale, 0.9)
    np.testing.assert_allclose(gaussian, cal.interval(mean[:4], std[:4], 0.9), rtol=1e-12)


def test_too_few_rows_for_a_coverage_say_how_many_are_needed():
    rng = np.random.default_rng(12)
    mean, std, y = heteroscedastic(20, rng)
    y[5:] = np.nan
    cal = ConformalIntervals(mean, std, y)
    with pytest.raises(ValueError, match="coverage=0.9 needs at least 10 .* has 5"):
        cal.sigma_scale(0.9)
    with pytest.raises(ValueError, match="one float"):
        cal.conformalizers([0.5, 0.8])


def test_too_few_calibration_rows_for_the_level_are_refused_when_fitting():
    # MAPIE accepted them and refused later, when predicting ("score is too low").
    rng = np.random.default_rng(6)
    mean, std, y = heteroscedastic(5, rng)
    with pytest.raises(ValueError, match="coverage=0.99 needs at least 100 .* has 5"):
        fit_conformal(mean, std, y, [0.5, 0.99])
    y[:] = np.nan
    with pytest.raises(ValueError, match="has 0 \\(rows with an observed y\\)"):
        fit_conformal(mean, std, y, 0.5)


def test_every_coverage_is_refused_here_or_reached_never_refused_inside_mapie():
    # Coverage 1 − 1/n (or 1/n) would pass a tolerant check here and fail inside MAPIE at
    # predict time ("score is too low"), its decimal alpha rounding 1/alpha above n (203
    # such pairs for n = 2 to 199). The advice's level must be reachable too.
    rng = np.random.default_rng(3)
    for n in range(2, 41):
        mean, std, y = heteroscedastic(n, rng)
        cal = ConformalIntervals(mean, std, y)
        for level in {1 - 1 / n, 1 / n, 0.1, 0.3, 0.5, 0.8, 0.9, 0.95, 0.99}:
            try:
                cal.interval(mean[:1], std[:1], level)
            except ValueError as error:
                message = str(error)
                assert f"coverage={level:g} needs at least" in message, message
                advised = float(message.rsplit(" ", 1)[-1].rstrip("."))
                cal.interval(mean[:1], std[:1], advised)


def test_shape_mismatch_is_rejected():
    with pytest.raises(ValueError, match="same shape"):
        fit_conformal(np.zeros(5), np.ones(4), np.zeros(5))
    fitted = fit_conformal(np.zeros(20), np.ones(20), np.linspace(-1, 1, 20), 0.5)
    with pytest.raises(ValueError, match="one\\s+column per fitted target"):
        conformal_interval(fitted, np.zeros((3, 2)), np.ones((3, 2)))


@pytest.mark.parametrize(
    ("mean", "std", "y", "message"),
    [
        (0.0, -1.0, 0.5, "std must be finite and positive"),  # intervals of ±2e12
        (0.0, 0.0, 0.5, "std must be finite and positive"),  # scores of 5e11
        (0.0, np.nan, 0.5, "std must be finite"),
        (np.inf, 1.0, 0.5, "mean holds NaN or infinite"),
        (0.0, 1.0, np.inf, "y holds infinite values"),  # not dropped unsaid
    ],
)
def test_calibration_moments_no_interval_can_come_from_are_refused(mean, std, y, message):
    rng = np.random.default_rng(0)
    means, stds, ys = np.zeros(50), np.ones(50), rng.normal(size=50)
    means[3], stds[3], ys[3] = mean, std, y
    with pytest.raises(ValueError, match=message):
        fit_conformal(means, stds, ys)
    with pytest.raises(ValueError, match=message):
        ConformalIntervals(means, stds, ys)


def test_new_moments_with_a_negative_std_are_refused():
    fitted = fit_conformal(np.zeros(50), np.ones(50), np.linspace(-2, 2, 50))
    with pytest.raises(ValueError, match="std must be finite and non-negative"):
        conformal_interval(fitted, np.zeros(3), np.array([1.0, -1.0, 1.0]))
    with pytest.raises(ValueError, match="std must be finite and non-negative"):
        GaussianIntervals().interval(0.0, -1.0, 0.9)  # gave lower > upper
    lower, upper = GaussianIntervals().interval(np.zeros(2), np.zeros(2), 0.9)
    np.testing.assert_array_equal([lower, upper], np.zeros((2, 2)))  # σ = 0: the mean


def test_mapie_score_refuses_a_sigma_no_interval_can_come_from():
    # A negative σ (raw features taken as [mean, std] rows) floored at 1e-12 would give
    # scores of 1e12 and intervals of ±1e12 beside ones of ±1.2.
    from mapie.regression import SplitConformalRegressor

    rng = np.random.default_rng(0)
    moments = np.column_stack([np.zeros(200), rng.normal(size=200)])
    mapie = SplitConformalRegressor(
        MomentsRegressor(),
        confidence_level=0.9,
        conformity_score=SigmaNormalisedScore(),
        prefit=True,
    )
    with pytest.raises(ValueError, match="std must be finite and positive.*sigma_estimator"):
        mapie.conformalize(moments, rng.normal(size=200))
    mapie.conformalize(np.abs(moments), rng.normal(size=200))
    with pytest.raises(ValueError, match="std must be finite and non-negative"):
        mapie.predict_interval(np.array([[0.0, 1.0], [0.0, -1.0]]))
