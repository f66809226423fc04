"""One hyperparameter contract for both front-ends (issue 13): the same ValueError, naming the
parameter as the user typed it, at fit; the same random_state semantics."""

import numpy as np
import pytest
from conftest import TINY_FC, TINY_REG
from sktime.datasets import load_airline

from levy_sklearn.forecaster import LevyForecaster
from levy_sklearn.regressor import LevyAttentionRegressor

pytestmark = pytest.mark.filterwarnings(
    "ignore:The default of config ``remember_data``:FutureWarning"
)


def table():
    X = np.random.default_rng(0).normal(size=(40, 3))
    return X, X @ [1.0, -1.0, 0.5]


def fit(estimator):
    if isinstance(estimator, LevyForecaster):
        return estimator.fit(load_airline())
    return estimator.fit(*table())


def predictions(estimator):
    if isinstance(estimator, LevyForecaster):
        return estimator.predict(fh=[1, 2, 3]).to_numpy()
    return estimator.predict(table()[0][:5])


FRONT_ENDS = {
    "regressor": (LevyAttentionRegressor, TINY_REG),
    "forecaster": (LevyForecaster, TINY_FC),
}


@pytest.mark.parametrize("front_end", FRONT_ENDS)
@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"n_heads": 0}, r"n_heads=0 must be an int in the range \[1, inf\)"),
        ({"max_epochs": 0}, r"max_epochs=0 must be an int in the range \[1, inf\)"),
        ({"d_model": 30, "n_heads": 4}, "d_model=30 must be a multiple of n_heads=4"),
        ({"n_windowed_heads": 3}, "n_windowed_heads=3 must be an int between 0 and n_heads=2"),
        ({"random_state": "seed"}, "random_state='seed' must be an int in the range"),
        ({"dropout": 1.0}, r"dropout=1.0 must be a float in the range \[0.0, 1.0\)"),
        ({"lr": 0}, r"lr=0 must be a float in the range \(0.0, inf\)"),
        ({"batch_size": 2.5}, "batch_size=2.5 must be an int"),
    ],
)
def test_bad_hyperparameters_raise_at_fit_naming_the_parameter(front_end, params, message):
    cls, tiny = FRONT_ENDS[front_end]
    with pytest.raises(ValueError, match=message) as err:
        fit(cls(**{**tiny, **params}))
    assert "embed_dim" not in str(err.value) and "num_heads" not in str(err.value)


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"normalization": "robust"}, "normalization='robust' must be a str among"),
        ({"calibration_fraction": 1.0}, "calibration_fraction=1.0 must be a float"),
        ({"max_tokens": 0}, "max_tokens=0 must be an int"),
        ({"refit_on_update": "no"}, "refit_on_update='no' must be an instance of 'bool'"),
    ],
)
def test_forecaster_own_hyperparameters_are_checked(params, message):
    with pytest.raises(ValueError, match=message):
        fit(LevyForecaster(**{**TINY_FC, **params}))


@pytest.mark.parametrize("front_end", FRONT_ENDS)
def test_every_bad_value_is_named_at_once(front_end):
    cls, tiny = FRONT_ENDS[front_end]
    with pytest.raises(ValueError, match="n_heads=0 .*; max_epochs=0 "):
        fit(cls(**{**tiny, "n_heads": 0, "max_epochs": 0}))


@pytest.mark.parametrize("front_end", FRONT_ENDS)
def test_hyperparameters_are_keyword_only(front_end):
    cls, _ = FRONT_ENDS[front_end]
    with pytest.raises(TypeError):
        cls(16)


@pytest.mark.parametrize("front_end", FRONT_ENDS)
def test_random_state_instance_is_reproducible(front_end):
    cls, tiny = FRONT_ENDS[front_end]
    a = predictions(fit(cls(**{**tiny, "random_state": np.random.RandomState(3)})))
    b = predictions(fit(cls(**{**tiny, "random_state": np.random.RandomState(3)})))
    np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("front_end", FRONT_ENDS)
def test_random_state_none_draws_a_fresh_seed(front_end):
    cls, tiny = FRONT_ENDS[front_end]
    a = predictions(fit(cls(**{**tiny, "random_state": None})))
    b = predictions(fit(cls(**{**tiny, "random_state": None})))
    assert not np.array_equal(a, b)


def test_forecaster_random_state_none_follows_numpy_global_seed():
    # None draws from NumPy's global generator (the scikit-learn convention), so seeding it
    # reproduces the fit; the global state is put back afterwards.
    state = np.random.get_state()  # noqa: NPY002
    try:
        fits = []
        for _ in range(2):
            np.random.seed(5)  # noqa: NPY002 - the global generator is what is tested
            fits.append(predictions(fit(LevyForecaster(**{**TINY_FC, "random_state": None}))))
    finally:
        np.random.set_state(state)  # noqa: NPY002
    np.testing.assert_array_equal(*fits)


@pytest.mark.parametrize("front_end", FRONT_ENDS)
@pytest.mark.parametrize(
    ("name", "kind"),
    [
        *((name, "an int") for name in ("n_heads", "max_epochs", "batch_size", "patience")),
        # lr=True would train at a rate of 1 (absurd forecasts).
        *((name, "a float") for name in ("lr", "dropout", "weight_decay", "observation_dropout")),
    ],
)
def test_booleans_are_not_numeric_hyperparameters(front_end, name, kind):
    # True is an Integral (and a Real) to Python and to scikit-learn's Interval, not a number.
    cls, tiny = FRONT_ENDS[front_end]
    with pytest.raises(ValueError, match=rf"{name}=True must be {kind} in the range"):
        fit(cls(**{**tiny, name: True}))


def test_booleans_are_not_calibration_settings():
    for name in ("calibration_fraction", "calibration_folds"):
        with pytest.raises(ValueError, match=rf"{name}=True must be"):
            fit(LevyForecaster(**{**TINY_FC, name: True}))
