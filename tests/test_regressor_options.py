"""LevyAttentionRegressor: fit options and messages of issue 14 (float32 targets, the
reported learning rate, small calibration sets, sample weights, warm starts)."""

import copy
import warnings

import numpy as np
import pytest
import torch
from conftest import TINY_REG
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer
from sklearn.utils.validation import has_fit_parameter

from levy_sklearn.regressor import LevyAttentionRegressor
from levy_sklearn.training import LevyNeuralNet, seeded

torch.set_num_threads(1)


def table(n=80, p=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    return X, X[:, 0] - 0.5 * X[:, 1] + 0.1 * rng.normal(size=n)


def test_float32_targets_fit_without_overflow_warning_and_like_float64():
    X, y = table()
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        reg32 = LevyAttentionRegressor(**TINY_REG).fit(X, y.astype(np.float32))
    reg64 = LevyAttentionRegressor(**TINY_REG).fit(X, y.astype(np.float32).astype(np.float64))
    np.testing.assert_array_equal(reg32.predict(X), reg64.predict(X))


def test_verbose_reports_the_set_learning_rate_not_the_log_parameters_rate(capsys):
    X, y = table()
    reg = LevyAttentionRegressor(**{**TINY_REG, "lr": 5e-3, "verbose": 1}).fit(X, y)
    recorded = reg.net_.history[:, "event_lr"]
    # The cosine schedule starts at lr: epoch 1 reports the set rate itself.
    assert recorded[0] == pytest.approx(5e-3)
    assert max(recorded) == pytest.approx(5e-3)
    assert "0.0050" in capsys.readouterr().out
    # The log-scale scalars still train at their own (10x) rate: only the report changed.
    rates = sorted(group["initial_lr"] for group in reg.net_.optimizer_.param_groups)
    assert rates == pytest.approx([5e-3, 5e-2])


def test_conformalize_rejects_too_few_rows_at_once():
    X, y = table(120)
    reg = LevyAttentionRegressor(**TINY_REG).fit(X[:80], y[:80])
    with pytest.raises(ValueError, match=r"5 rows, too few .* at least 10 calibration rows"):
        reg.conformalize(X[80:85], y[80:85])
    assert not hasattr(reg, "conformal_")
    reg.conformalize(X[80:100], y[80:100])  # 20 rows: 0.9 and 0.95 are reachable
    assert reg.predict_interval(X[:3], coverage=0.95, method="conformal").shape == (3, 2)
    with pytest.raises(ValueError, match=r"coverage=0.99 needs at least 100 .* has 20"):
        reg.predict_interval(X[:3], coverage=0.99, method="conformal")


# ---------------------------------------------------------------- sample_weight


def test_sample_weight_is_a_fit_parameter():
    assert has_fit_parameter(LevyAttentionRegressor(), "sample_weight")


def test_zero_weight_is_removing_the_row_and_equal_weights_are_none():
    X, y = table(90)
    w = np.r_[np.ones(60), np.zeros(30)]
    subset = LevyAttentionRegressor(**TINY_REG).fit(X[:60], y[:60]).predict(X)
    weighted = LevyAttentionRegressor(**TINY_REG).fit(X, y, sample_weight=w).predict(X)
    np.testing.assert_array_equal(weighted, subset)
    plain = LevyAttentionRegressor(**TINY_REG).fit(X, y).predict(X)
    twos = LevyAttentionRegressor(**TINY_REG).fit(X, y, sample_weight=2 * np.ones(90)).predict(X)
    np.testing.assert_array_equal(twos, plain)


def test_fractional_weights_matter_by_their_ratios_even_near_the_float_limit():
    X, y = table(30)
    w = np.r_[0.5, np.ones(29)]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # 1e300 weights overflowed a check and a cast
        huge = LevyAttentionRegressor(**TINY_REG).fit(X, y, sample_weight=2e300 * w)
    half = LevyAttentionRegressor(**TINY_REG).fit(X, y, sample_weight=w / 4)
    plain = LevyAttentionRegressor(**TINY_REG).fit(X, y, sample_weight=w)
    np.testing.assert_array_equal(huge.predict(X), plain.predict(X))
    np.testing.assert_array_equal(half.predict(X), plain.predict(X))


def test_weights_pull_the_fit_toward_the_weighted_least_squares_line():
    # Half the rows say y = x, half y = -x; weighting the second half 3:1 moves the
    # mean-square fit to the weighted least-squares slope (numpy's as the reference).
    rng = np.random.default_rng(3)
    x = rng.uniform(-1, 1, size=400)
    y = np.r_[x[:200], -x[200:]] + 0.05 * rng.normal(size=400)
    w = np.r_[np.ones(200), 3 * np.ones(200)]
    slope, intercept = np.polyfit(x, y, 1, w=np.sqrt(w))  # polyfit squares its weights
    params = {**TINY_REG, "loss": "mse", "max_epochs": 30, "observation_dropout": 0.0}
    reg = LevyAttentionRegressor(**params).fit(x[:, None], y, sample_weight=w)
    grid = np.array([[-0.8], [0.0], [0.8]])
    np.testing.assert_allclose(reg.predict(grid), intercept + slope * grid[:, 0], atol=0.12)
    unweighted = LevyAttentionRegressor(**params).fit(x[:, None], y).predict(grid)
    assert abs(unweighted[2] - unweighted[0]) < 0.25  # no weights: slope near 0


def test_sample_weight_passes_through_pipeline_and_grid_search():
    X, y = table(90)
    w = np.r_[np.ones(60), np.zeros(30)]
    expected = LevyAttentionRegressor(**TINY_REG).fit(X[:60], y[:60]).predict(X[:60])
    pipe = make_pipeline(FunctionTransformer(), LevyAttentionRegressor(**TINY_REG))
    pipe.fit(X, y, levyattentionregressor__sample_weight=w)
    np.testing.assert_array_equal(pipe.predict(X[:60]), expected)
    grid = GridSearchCV(LevyAttentionRegressor(**TINY_REG), {"lr": [5e-3]}, cv=2)
    grid.fit(X, y, sample_weight=w)  # the refit on every row gets the weights too
    np.testing.assert_array_equal(grid.predict(X[:60]), expected)


@pytest.mark.parametrize(
    ("weights", "message"),
    [
        (-np.ones(80), "Negative values"),
        (np.ones(79), "sample_weight.shape"),
        (np.zeros(80), "non-zero"),
        # A few rows would carry the fit, and torch would raise on NaN targets.
        (np.r_[1.0, np.full(79, 1e-300)], r"spans 1.0e\+300, more than 1e\+12"),
        (np.r_[1e30, np.ones(79)], r"spans 1.0e\+30"),
    ],
)
def test_bad_sample_weight_is_refused(weights, message):
    X, y = table()
    with pytest.raises(ValueError, match=message):
        LevyAttentionRegressor(**TINY_REG).fit(X, y, sample_weight=weights)


# ---------------------------------------------------------------- warm_start


def test_warm_start_continues_from_the_fitted_net_on_new_rows():
    X, y = table(160)
    # fit trains on rows in a canonical order (sorted); give the new rows in that order, so
    # that skorch's partial_fit below sees them as fit does.
    new = 80 + np.lexsort(np.column_stack([X[80:120], y[80:120]]).T[::-1])
    X[80:120], y[80:120] = X[new], y[new]
    params = {**TINY_REG, "warm_start": True, "observation_dropout": 0.0}
    reg = LevyAttentionRegressor(**params).fit(X[:80], y[:80])
    first = copy.deepcopy(reg)
    reg.conformalize(X[120:], y[120:])
    reg.fit(X[80:120], y[80:120])
    # Standardisation of the first fit kept, conformal calibration dropped, weights moved on.
    np.testing.assert_array_equal(reg.x_mean_, first.x_mean_)
    np.testing.assert_array_equal(reg.y_scale_, first.y_scale_)
    assert not hasattr(reg, "conformal_")
    assert len(reg.net_.history) == 2 * TINY_REG["max_epochs"]
    assert not np.array_equal(reg.predict(X), first.predict(X))
    # Reference: skorch's own partial_fit of the first fit's net (weights and optimiser
    # state carried over), on the new rows standardised as in the first fit.
    net = copy.deepcopy(first.net_)
    net.module_.float()
    target = ((y[80:120, None] - first.y_mean_) / first.y_scale_).astype(np.float32)
    with seeded(params["random_state"]):  # an int random_state is the torch seed itself
        net.partial_fit(first._tokens(X[80:120]), target)
    net.module_.double()
    tokens = first._tokens(X)
    np.testing.assert_array_equal(
        reg.net_.predict_moments(tokens).mean, net.predict_moments(tokens).mean
    )


def test_a_warm_fit_runs_its_own_learning_rate_cycle():
    # skorch continued the first fit's cosine cycle from its last epoch: a one-epoch warm fit
    # on the opposite target ran at lr 0 and changed nothing (bitwise); so did pretraining
    # updates of the forecaster, which train the same way.
    X, y = table(120)
    reg = LevyAttentionRegressor(**{**TINY_REG, "warm_start": True, "max_epochs": 4}).fit(X, y)
    before = reg.predict(X)
    reg.set_params(max_epochs=2).fit(X, -y)
    rates = reg.net_.history[:, "event_lr"]
    assert rates[4:] == pytest.approx([reg.lr, reg.lr / 2])  # cosine over this call's 2 epochs
    assert np.abs(reg.predict(X) - before).max() > 1e-3


def test_warm_start_false_starts_afresh_and_warm_fits_are_reproducible():
    X, y = table(120)
    fresh = LevyAttentionRegressor(**TINY_REG).fit(X[:60], y[:60])
    again = LevyAttentionRegressor(**TINY_REG).fit(X, y).fit(X[:60], y[:60])
    np.testing.assert_array_equal(again.predict(X), fresh.predict(X))
    runs = [
        LevyAttentionRegressor(**{**TINY_REG, "warm_start": True})
        .fit(X[:60], y[:60])
        .fit(X[60:], y[60:])
        .predict(X)
        for _ in range(2)
    ]
    np.testing.assert_array_equal(runs[0], runs[1])


def test_interrupted_warm_fit_leaves_the_fitted_model_as_it_was(monkeypatch):
    X, y = table(120)
    reg = LevyAttentionRegressor(**{**TINY_REG, "warm_start": True}).fit(X[:60], y[:60])
    before = reg.predict(X, return_std=True)
    original = LevyNeuralNet.train_step

    def train_step(self, *args, **kwargs):
        raise KeyboardInterrupt  # as Ctrl-C in the first step would

    monkeypatch.setattr(LevyNeuralNet, "train_step", train_step)
    with pytest.raises(KeyboardInterrupt):
        reg.fit(X[60:], y[60:])
    monkeypatch.setattr(LevyNeuralNet, "train_step", original)
    after = reg.predict(X, return_std=True)
    np.testing.assert_array_equal(after[0], before[0])
    np.testing.assert_array_equal(after[1], before[1])


def test_warm_start_with_other_columns_or_targets_is_refused():
    X, y = table(80)
    reg = LevyAttentionRegressor(**{**TINY_REG, "warm_start": True}).fit(X, y)
    with pytest.raises(ValueError, match="features"):
        reg.fit(X[:, :2], y)
    with pytest.raises(ValueError, match="2 targets .* fitted on 1"):
        reg.fit(X, np.column_stack([y, y]))
    with pytest.raises(ValueError, match="warm_start='yes' must be an instance of 'bool'"):
        LevyAttentionRegressor(warm_start="yes").fit(X, y)


def test_fit_does_not_depend_on_row_order_and_integer_weights_are_copies():
    X, y = table(60)
    X[::7, 1] = np.nan
    ref = LevyAttentionRegressor(**TINY_REG).fit(X, y).predict(X, return_std=True)
    perm = np.random.default_rng(1).permutation(len(X))
    shuffled = LevyAttentionRegressor(**TINY_REG).fit(X[perm], y[perm]).predict(X, return_std=True)
    for a, b in zip(ref, shuffled, strict=True):
        np.testing.assert_array_equal(a, b)
    counts = np.random.default_rng(2).integers(0, 4, size=len(X))
    weighted = LevyAttentionRegressor(**TINY_REG).fit(X, y, sample_weight=counts)
    repeated = LevyAttentionRegressor(**TINY_REG).fit(
        np.repeat(X, counts, 0), np.repeat(y, counts)
    )
    np.testing.assert_array_equal(weighted.predict(X), repeated.predict(X))


def test_auto_architecture_follows_the_number_of_training_rows():
    # n_layers="auto", value_embedding="auto": an encoder block and periodic value
    # embeddings from 2,000 training rows on (rows of weight 0 do not count), the plain
    # network below; explicit values are kept as given.
    rng = np.random.default_rng(0)
    X = rng.normal(size=(2000, 2))
    y = X[:, 0]
    fast = {"max_epochs": 1, "max_steps": 5, "random_state": 0}
    big = LevyAttentionRegressor(**fast).fit(X, y)
    assert (big.n_layers_, big.value_embedding_) == (1, "periodic")
    assert len(big.net_.module_.encoder) == 1
    assert type(big.net_.module_.value_embedding).__name__ == "PeriodicValueEmbedding"
    weights = np.r_[np.zeros(1), np.ones(1999)]
    small = LevyAttentionRegressor(**fast).fit(X, y, sample_weight=weights)
    assert (small.n_layers_, small.value_embedding_) == (0, "linear")
    assert len(small.net_.module_.encoder) == 0
    fixed = LevyAttentionRegressor(n_layers=2, value_embedding="linear", **fast).fit(X, y)
    assert (fixed.n_layers_, fixed.value_embedding_) == (2, "linear")


def test_periodic_values_fit_a_non_monotone_effect_that_a_linear_embedding_cannot():
    # y = sin(3x): the network without encoder blocks reads each feature through its
    # value embedding alone; periodic features of the value fit the curve, a linear map of
    # the value (through the output layer's layer norm) leaves most of it (R² from sklearn).
    rng = np.random.default_rng(0)
    X = rng.uniform(-2, 2, size=(600, 1))
    y = np.sin(3 * X[:, 0]) + 0.05 * rng.normal(size=600)
    X_test = rng.uniform(-2, 2, size=(300, 1))
    y_test = np.sin(3 * X_test[:, 0])
    scores = {
        embedding: LevyAttentionRegressor(
            n_layers=0, value_embedding=embedding, observation_dropout=0.0, random_state=0
        )
        .fit(X, y)
        .score(X_test, y_test)
        for embedding in ("linear", "periodic")
    }
    assert scores["periodic"] > 0.9 > scores["linear"] + 0.2, scores
