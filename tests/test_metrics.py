"""levy_sklearn.metrics against independent references: quadrature, O(m²) sums, scipy."""

import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import integrate, stats

from levy_sklearn.metrics import (
    aurc,
    check_coverage,
    excess_aurc,
    gaussian_crps,
    gaussian_interval,
    interval_coverage,
    interval_width,
    risk_coverage_curve,
    sample_crps,
    spearman_uncertainty,
)


def crps_by_quadrature(y, mean, std):
    """∫ (F(x) − 1{x ≥ y})² dx, split at y where the integrand jumps."""
    cdf = stats.norm(mean, std).cdf
    left, _ = integrate.quad(lambda x: cdf(x) ** 2, -np.inf, y, epsabs=1e-12, epsrel=1e-10)
    right, _ = integrate.quad(lambda x: (1.0 - cdf(x)) ** 2, y, np.inf, epsabs=1e-12, epsrel=1e-10)
    return left + right


def crps_quadratic(y, x, fair=False):
    """The O(m²) definition E|X − y| − ½ E|X − X'| for one element."""
    m = len(x)
    pair_sum = np.abs(x[:, None] - x[None, :]).sum()
    return np.mean(np.abs(x - y)) - 0.5 * pair_sum / (m * (m - 1) if fair else m * m)


def aurc_bruteforce(errors, uncertainty):
    """Mean over k of the mean error of the k least uncertain (distinct uncertainties)."""
    order = sorted(range(len(errors)), key=lambda i: uncertainty[i])
    kept = [errors[i] for i in order]
    return np.mean([np.mean(kept[:k]) for k in range(1, len(kept) + 1)])


# ---------------------------------------------------------------------------
# gaussian_crps
# ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("y", "mean", "std"), [(0.0, 0.0, 1.0), (1.3, -0.4, 0.7), (-5.0, 2.0, 3.0), (10.0, 10.2, 0.01)]
)
def test_gaussian_crps_matches_quadrature(y, mean, std):
    got = gaussian_crps(y, mean, std)
    assert got == pytest.approx(crps_by_quadrature(y, mean, std), rel=1e-7, abs=1e-10)


def test_gaussian_crps_matches_large_normal_sample():
    rng = np.random.default_rng(0)
    y = np.array([0.0, 1.0, -2.5])
    mean = np.array([0.5, 1.0, 0.0])
    std = np.array([1.0, 0.3, 2.0])
    got = gaussian_crps(y, mean, std, reduce=False)
    # random draws: Monte Carlo error ~ 1e-3 relative at m = 10⁶
    draws = mean + std * rng.standard_normal((1_000_000, 3))
    np.testing.assert_allclose(got, sample_crps(y, draws, fair=True, reduce=False), rtol=1e-2)
    # stratified "sample" (normal quantiles at (i − ½)/m): deterministic and far more accurate
    m = 100_000
    quantiles = stats.norm.ppf((np.arange(m) + 0.5) / m)[:, None]
    strata = mean + std * quantiles
    np.testing.assert_allclose(got, sample_crps(y, strata, reduce=False), rtol=1e-6)


def test_gaussian_crps_reduce_and_broadcasting():
    y = np.array([[0.0, 1.0], [2.0, -1.0]])
    elementwise = gaussian_crps(y, 0.0, 1.0, reduce=False)
    assert elementwise.shape == y.shape
    assert gaussian_crps(y, 0.0, 1.0) == pytest.approx(elementwise.mean())
    assert isinstance(gaussian_crps(y, 0.0, 1.0), float)
    # tends to the MAE as the spread vanishes
    assert gaussian_crps(y, 0.0, 1e-9) == pytest.approx(np.abs(y).mean(), rel=1e-6)


def test_gaussian_crps_accepts_pandas():
    y = pd.Series([0.0, 1.0])
    assert gaussian_crps(y, pd.Series([0.0, 0.0]), [1.0, 1.0]) == pytest.approx(
        gaussian_crps([0.0, 1.0], 0.0, 1.0)
    )


# ---------------------------------------------------------------------------
# sample_crps
# ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("m", "fair"), [(1, False), (2, False), (2, True), (7, False), (7, True), (30, True)]
)
def test_sample_crps_matches_quadratic_definition(m, fair):
    rng = np.random.default_rng(m)
    y = rng.normal(size=(4, 3))
    samples = rng.normal(size=(m, 4, 3))
    samples[0, 0, 0] = samples[-1, 0, 0]  # a tie among the samples
    got = sample_crps(y, samples, fair=fair, reduce=False)
    expected = np.array(
        [[crps_quadratic(y[i, j], samples[:, i, j], fair) for j in range(3)] for i in range(4)]
    )
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)
    assert sample_crps(y, samples, fair=fair) == pytest.approx(expected.mean(), rel=1e-12)


def test_sample_crps_scalar_target_and_fair_bias():
    rng = np.random.default_rng(1)
    x = rng.normal(size=10)
    standard, fair = sample_crps(0.3, x), sample_crps(0.3, x, fair=True)
    pair_mean = np.abs(x[:, None] - x[None, :]).sum() / (10 * 9)
    # the standard estimator exceeds the fair one by E|X − X'| / 2m
    assert standard - fair == pytest.approx(pair_mean / 20)


def test_sample_crps_point_mass_is_absolute_error():
    y = np.array([0.0, 2.0, -1.0])
    samples = np.full((5, 3), 0.5)
    np.testing.assert_allclose(sample_crps(y, samples, reduce=False), np.abs(y - 0.5))


# ---------------------------------------------------------------------------
# intervals
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("coverage", [0.5, 0.8, 0.9, 0.95, 0.999])
def test_gaussian_interval_matches_scipy(coverage):
    mean = np.array([0.0, 3.0, -2.0])
    std = np.array([1.0, 0.5, 4.0])
    lower, upper = gaussian_interval(mean, std, coverage)
    ref_lower, ref_upper = stats.norm.interval(coverage, loc=mean, scale=std)
    np.testing.assert_allclose(lower, ref_lower, rtol=1e-12)
    np.testing.assert_allclose(upper, ref_upper, rtol=1e-12)


def test_gaussian_interval_broadcasts_scalar_std():
    lower, upper = gaussian_interval([[0.0], [1.0]], 2.0, 0.9)
    assert lower.shape == upper.shape == (2, 1)


def test_gaussian_interval_nominal_coverage_on_gaussian_data():
    rng = np.random.default_rng(2)
    mean, std = rng.normal(size=20_000), rng.uniform(0.5, 2.0, size=20_000)
    y = mean + std * rng.standard_normal(20_000)
    lower, upper = gaussian_interval(mean, std, 0.8)
    assert interval_coverage(y, lower, upper) == pytest.approx(0.8, abs=0.01)


def test_interval_coverage_known_example():
    y = [0.0, 1.0, 2.0, 3.0, 4.0]
    lower = [0.0, 1.5, 1.0, 3.5, -1.0]
    upper = [1.0, 2.0, 2.0, 4.0, 4.0]
    # inside (bounds included): 0 ∈ [0, 1], 2 ∈ [1, 2], 4 ∈ [−1, 4]; out: 1, 3
    assert interval_coverage(y, lower, upper) == pytest.approx(0.6)


def test_interval_width():
    assert interval_width([0.0, -1.0, 2.0], [1.0, 1.0, 5.0]) == pytest.approx(2.0)
    lower, upper = gaussian_interval(np.zeros(3), 1.0, 0.9)
    assert interval_width(lower, upper) == pytest.approx(2 * stats.norm.ppf(0.95))


# ---------------------------------------------------------------------------
# risk–coverage, AURC, Spearman
# ---------------------------------------------------------------------------
def test_risk_coverage_curve_shape_and_endpoint():
    rng = np.random.default_rng(3)
    errors, unc = rng.exponential(size=50), rng.uniform(size=50)
    coverage, risk = risk_coverage_curve(errors, unc)
    np.testing.assert_allclose(coverage, np.arange(1, 51) / 50)
    assert risk[-1] == pytest.approx(errors.mean())
    # first point: the error of the single least uncertain sample
    assert risk[0] == pytest.approx(errors[np.argmin(unc)])


def test_aurc_matches_bruteforce():
    rng = np.random.default_rng(4)
    errors, unc = rng.exponential(size=40), rng.uniform(size=40)
    assert aurc(errors, unc) == pytest.approx(aurc_bruteforce(errors, unc), rel=1e-12)


def test_aurc_perfect_reversed_and_oracle():
    rng = np.random.default_rng(5)
    errors = rng.exponential(size=100)
    oracle = aurc(errors, errors)
    assert aurc(errors, 2.0 * errors + 1.0) == pytest.approx(oracle)  # any increasing map
    assert aurc(errors, -errors) > oracle
    assert aurc(errors, rng.uniform(size=100)) > oracle
    assert excess_aurc(errors, errors**3) == pytest.approx(0.0, abs=1e-12)
    assert excess_aurc(errors, -errors) == pytest.approx(aurc(errors, -errors) - oracle)
    assert excess_aurc(errors, -errors) > 0


def test_aurc_constant_uncertainty_is_mean_error():
    errors = np.array([3.0, 0.0, 1.0, 5.0])
    assert aurc(errors, np.ones(4)) == pytest.approx(errors.mean())
    _, risk = risk_coverage_curve(errors, np.ones(4))
    np.testing.assert_allclose(risk, errors.mean())


def test_aurc_random_ranking_is_mean_error_on_average():
    rng = np.random.default_rng(6)
    errors = rng.exponential(size=200)
    values = [aurc(errors, rng.uniform(size=200)) for _ in range(200)]
    assert np.mean(values) == pytest.approx(errors.mean(), rel=0.02)


def test_ties_average_is_order_independent_and_stable_is_not():
    errors = np.array([0.0, 4.0, 1.0, 2.0])
    unc = np.array([0.0, 1.0, 1.0, 2.0])
    perm = np.array([0, 2, 1, 3])  # swap the two tied samples
    a = aurc(errors, unc)
    assert a == pytest.approx(aurc(errors[perm], unc[perm]))
    # expectation over the two tie-breaks
    both = [aurc_bruteforce(errors, unc), aurc_bruteforce(errors[perm], unc[perm])]
    assert a == pytest.approx(np.mean(both))
    # stable: tied samples keep input order, so it is the brute force on each order
    assert aurc(errors, unc, ties="stable") == pytest.approx(both[0])
    assert aurc(errors[perm], unc[perm], ties="stable") == pytest.approx(both[1])


def test_risk_coverage_flattens_2d_input():
    errors = np.array([[0.0, 1.0], [2.0, 3.0]])
    cov, risk = risk_coverage_curve(errors, errors)
    assert cov.shape == risk.shape == (4,)
    np.testing.assert_allclose(risk, [0.0, 0.5, 1.0, 1.5])


def test_spearman_uncertainty():
    rng = np.random.default_rng(7)
    errors, unc = rng.exponential(size=30), rng.uniform(size=30)
    expected = stats.spearmanr(errors, unc).statistic
    got = spearman_uncertainty(errors, unc)
    assert isinstance(got, float)
    assert got == pytest.approx(expected)
    assert spearman_uncertainty(errors, np.exp(errors)) == pytest.approx(1.0)
    assert spearman_uncertainty(errors, -errors) == pytest.approx(-1.0)


def test_spearman_constant_input_returns_zero():
    assert spearman_uncertainty([0.1, 0.4, 0.2], [1.0, 1.0, 1.0]) == 0.0
    assert spearman_uncertainty([1.0, 1.0, 1.0], [0.1, 0.4, 0.2]) == 0.0


# ---------------------------------------------------------------------------
# input validation
# ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("func", "args", "match"),
    [
        (gaussian_crps, ([0.0, 1.0], [0.0, 1.0, 2.0], 1.0), "mean has shape"),
        (gaussian_crps, (np.zeros(3), np.zeros((3, 1)), 1.0), "does not broadcast"),
        (gaussian_crps, ([0.0, 1.0], 0.0, [1.0, 0.0]), "strictly positive"),
        (gaussian_crps, ([0.0, 1.0], 0.0, -1.0), "strictly positive"),
        (gaussian_crps, ([0.0, np.nan], 0.0, 1.0), "y_true contains NaN"),
        (gaussian_crps, ([0.0, 1.0], [0.0, np.inf], 1.0), "mean contains NaN or infinite"),
        (gaussian_crps, ([], [], []), "empty"),
        (gaussian_crps, (["a"], 0.0, 1.0), "must be numeric"),
        (sample_crps, (np.zeros(3), np.zeros((3, 5))), "samples along axis 0"),
        (sample_crps, (np.zeros(3), np.zeros(3)), "samples must have shape"),
        (sample_crps, (np.zeros(2), np.full((4, 2), np.nan)), "samples contains NaN"),
        (gaussian_interval, ([0.0, 1.0], [1.0, 1.0, 1.0]), "broadcast together"),
        (gaussian_interval, (0.0, 0.0), "strictly positive"),
        (gaussian_interval, (0.0, 1.0, 1.0), "coverage must be strictly between"),
        (gaussian_interval, (0.0, 1.0, 0.0), "coverage must be strictly between"),
        (gaussian_interval, (0.0, 1.0, "high"), "coverage must be a float"),
        (interval_coverage, ([0.0], [1.0], [0.0]), "lower must be <= upper"),
        (interval_coverage, ([0.0, 1.0], [0.0, 0.0, 0.0], 1.0), "lower has shape"),
        (interval_coverage, ([0.0, np.nan], 0.0, 1.0), "y_true contains NaN"),
        (interval_width, ([0.0, 2.0], [1.0, 1.0]), "lower must be <= upper"),
        (interval_width, ([0.0, 1.0], [1.0, 2.0, 3.0]), "broadcast together"),
        (risk_coverage_curve, ([0.0, 1.0], [0.0, 1.0, 2.0]), "same shape"),
        (risk_coverage_curve, ([0.0, 1.0], [0.0, np.nan]), "uncertainty contains NaN"),
        (aurc, ([0.0, 1.0], [1.0]), "same shape"),
        (excess_aurc, ([np.nan, 1.0], [1.0, 2.0]), "errors contains NaN"),
        (spearman_uncertainty, ([1.0], [2.0]), "at least 2 samples"),
        (spearman_uncertainty, ([1.0, 2.0], [2.0]), "same shape"),
    ],
)
def test_bad_input_raises(func, args, match):
    with pytest.raises(ValueError, match=match):
        func(*args)


def test_bad_keyword_values_raise():
    assert sample_crps(0.0, [1.0]) == pytest.approx(1.0)  # one sample is fine unless fair
    with pytest.raises(ValueError, match="at least 2 samples"):
        sample_crps(0.0, [1.0], fair=True)
    with pytest.raises(ValueError, match="ties must be"):
        aurc([0.0, 1.0], [0.0, 1.0], ties="random")


def test_gaussian_interval_takes_a_list_of_coverages_on_a_trailing_axis():
    mean, std = np.array([[0.0, 3.0], [-2.0, 1.0]]), np.array([[1.0, 0.5], [4.0, 2.0]])
    lower, upper = gaussian_interval(mean, std, [0.5, 0.95])
    assert lower.shape == upper.shape == (2, 2, 2)
    for j, coverage in enumerate([0.5, 0.95]):
        ref_lower, ref_upper = stats.norm.interval(coverage, loc=mean, scale=std)
        np.testing.assert_allclose(lower[..., j], ref_lower, rtol=1e-12)
        np.testing.assert_allclose(upper[..., j], ref_upper, rtol=1e-12)


@pytest.mark.parametrize(
    ("coverage", "message"),
    [
        ("high", "must be a float or a list"),
        ([[0.5]], "must be a float or a list"),
        ([], "strictly between 0 and 1"),
        ([0.5, 1.0], "strictly between 0 and 1"),
        # text and flags convert to floats silently; they are refused, not read
        (True, "must be a float or a list"),
        ("0.9", "must be a float or a list"),
        ([b"0.9"], "must be a float or a list"),
        ([[0.5], 0.9], "must be a float or a list"),
    ],
)
def test_check_coverage_names_the_problem(coverage, message):
    with pytest.raises(ValueError, match=message):
        check_coverage(coverage)


@pytest.mark.parametrize("std", [1e-300, 1e-310, 1e-320])
def test_gaussian_crps_of_a_vanishing_std_is_the_point_mass_error(std):
    # A point mass's CRPS is |y − μ|; a subnormal σ gave inf (σ·z overflowed) with a warning.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        crps = gaussian_crps([1.0, -2.0, 0.0], 0.0, std, reduce=False)
    np.testing.assert_allclose(crps, [1.0, 2.0, 0.0], atol=1e-12)


def test_pandas_inputs_with_other_labels_are_refused_not_compared_by_position():
    # A forecast in another order than its targets, scored by position, would give
    # gaussian_crps 9.436 where the aligned answer is 0.234, and coverage 1.0 for 0.0.
    y = pd.Series([0.0, 10.0], index=[0, 1])
    mean = pd.Series([10.0, 0.0], index=[1, 0])
    with pytest.raises(ValueError, match="y_true and mean are pandas objects with different"):
        gaussian_crps(y, mean, 1.0)
    aligned = gaussian_crps(y, mean.reindex(y.index), 1.0)
    assert aligned == pytest.approx(crps_by_quadrature(0.0, 0.0, 1.0))  # both exact
    with pytest.raises(ValueError, match="y_true and lower"):
        interval_coverage(y, mean - 1, mean + 1)
    with pytest.raises(ValueError, match="errors and uncertainty"):
        aurc(y, mean)
    frame = pd.DataFrame({"a": [0.0, 1.0], "b": [5.0, 6.0]})
    with pytest.raises(ValueError, match="columns"):
        gaussian_crps(frame, frame[["b", "a"]], 1.0)
    assert gaussian_crps(frame, frame.to_numpy(), 1.0) == gaussian_crps(frame, frame, 1.0)


def test_text_is_not_a_number():
    with pytest.raises(ValueError, match="y_true must be numeric; got text"):
        gaussian_crps(["1.5", "2"], 0.0, 1.0)
