"""Determinism and persistence of both front-ends (issue 7).

* The same ``random_state`` gives bitwise-identical predictions across two fits on CPU,
  whatever torch's global generator holds (dropout, validation split and conformal
  calibration included).
* pickle and joblib round trips, and skorch's ``save_params``/``load_params``, give
  bitwise-identical predictions.
"""

import copy
import pickle

import joblib
import numpy as np
import pandas as pd
import pytest
import torch

from levy_sklearn.forecaster import LevyForecaster
from levy_sklearn.regressor import LevyAttentionRegressor

torch.set_num_threads(1)

# Every source of randomness on: dropout, a seeded validation split with early stopping.
REG = {
    "d_model": 8,
    "n_heads": 2,
    "n_layers": 1,
    "dropout": 0.1,
    "validation_fraction": 0.2,
    "patience": 2,
    "max_epochs": 4,
    "random_state": 0,
}
# Dropout (default 0.1) and a conformal calibration split.
FC = {
    "d_model": 8,
    "n_heads": 2,
    "n_windowed_heads": 1,
    "max_epochs": 3,
    "context_length": 12,
    "max_horizon": 4,
    "windows_per_series": 40,
    "calibration_fraction": 0.3,
    "random_state": 0,
}
FH = pd.to_timedelta([1, 2, 5], unit="h")


def table(n=120, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    y = X @ [1.0, -1.0, 0.5] + 0.2 * rng.normal(size=n)
    X[rng.random(X.shape) < 0.2] = np.nan
    return X, y


def series(n=80, seed=0):
    rng = np.random.default_rng(seed)
    t = np.cumsum(rng.uniform(0.5, 1.5, n))
    index = pd.DatetimeIndex(pd.Timestamp("2023-05-01") + pd.to_timedelta(t, unit="h"))
    return pd.Series(np.sin(t / 3) + 0.1 * rng.normal(size=n), index=index, name="hr")


def regressor_outputs(model, X):
    mean, std = model.predict(X, return_std=True)
    return [mean, std, model.predict_interval(X, coverage=[0.5, 0.9])]


def forecaster_outputs(model):
    return [
        model.predict(fh=FH),
        model.predict_var(fh=FH),
        model.predict_interval(fh=FH, coverage=[0.5, 0.9]),
    ]


def assert_identical(a, b):
    for x, y in zip(a, b, strict=True):
        if isinstance(x, np.ndarray):
            np.testing.assert_array_equal(x, y)
        else:
            pd.testing.assert_frame_equal(pd.DataFrame(x), pd.DataFrame(y), check_exact=True)


def round_trip(model, via, path):
    """Save ``model`` to ``path`` with pickle or joblib and load it back."""
    if via == "pickle":
        path.write_bytes(pickle.dumps(model))
        return pickle.loads(path.read_bytes())
    joblib.dump(model, path)
    return joblib.load(path)


@pytest.fixture(scope="module")
def fitted_regressor():
    X, y = table()
    return LevyAttentionRegressor(**REG).fit(X, y), X, y


@pytest.fixture(scope="module")
def fitted_forecaster():
    return LevyForecaster(**FC).fit(series())


# ---------------------------------------------------------------- determinism


def test_regressor_same_random_state_is_bitwise_reproducible(fitted_regressor):
    model, X, y = fitted_regressor
    torch.manual_seed(123)  # torch's global generator must not matter
    again = LevyAttentionRegressor(**REG).fit(X, y)
    assert_identical(regressor_outputs(model, X), regressor_outputs(again, X))
    other = LevyAttentionRegressor(**{**REG, "random_state": 1}).fit(X, y)
    assert not np.array_equal(model.predict(X), other.predict(X))


def test_forecaster_same_random_state_is_bitwise_reproducible(fitted_forecaster):
    torch.manual_seed(321)
    again = LevyForecaster(**FC).fit(series())
    assert again.calibration_.n_scores.sum() > 0
    assert_identical(forecaster_outputs(fitted_forecaster), forecaster_outputs(again))
    other = LevyForecaster(**{**FC, "random_state": 1}).fit(series())
    assert not fitted_forecaster.predict(fh=FH).equals(other.predict(fh=FH))


def test_forecaster_pretrain_then_fit_is_bitwise_reproducible():
    panel = pd.concat({f"s{i}": series(60, seed=i) for i in range(3)}).to_frame("hr")
    params = {**FC, "calibration_fraction": 0.0}
    a = LevyForecaster(**params).pretrain(panel).fit(series(seed=9))
    b = LevyForecaster(**params).pretrain(panel).fit(series(seed=9))
    assert_identical(forecaster_outputs(a), forecaster_outputs(b))


# ---------------------------------------------------------------- persistence


@pytest.mark.parametrize("via", ["pickle", "joblib"])
def test_regressor_round_trip_predicts_identically(fitted_regressor, tmp_path, via):
    model, X, _ = fitted_regressor
    model = copy.deepcopy(model).conformalize(*table(60, seed=5))
    back = round_trip(model, via, tmp_path / "model.bin")
    assert_identical(regressor_outputs(model, X), regressor_outputs(back, X))
    np.testing.assert_array_equal(
        model.predict_interval(X, method="conformal"), back.predict_interval(X, method="conformal")
    )


@pytest.mark.parametrize("via", ["pickle", "joblib"])
def test_forecaster_round_trip_predicts_identically_and_keeps_updating(
    fitted_forecaster, tmp_path, via
):
    back = round_trip(fitted_forecaster, via, tmp_path / "forecaster.bin")
    assert_identical(forecaster_outputs(fitted_forecaster), forecaster_outputs(back))
    # The restored forecaster carries on: new observations extend its context.
    later = series(90).iloc[80:]
    original = copy.deepcopy(fitted_forecaster)
    original.update(later, update_params=False)
    back.update(later, update_params=False)
    assert_identical(forecaster_outputs(original), forecaster_outputs(back))


def test_regressor_skorch_save_and_load_params_restore_the_network(fitted_regressor, tmp_path):
    model, X, y = fitted_regressor
    model.net_.save_params(f_params=tmp_path / "params.pt")
    # Same hyperparameters and data (so the same scaling), other initial weights.
    other = LevyAttentionRegressor(**{**REG, "random_state": 1}).fit(X, y)
    assert not np.array_equal(other.predict(X), model.predict(X))
    other.net_.load_params(f_params=tmp_path / "params.pt")
    assert_identical(regressor_outputs(model, X), regressor_outputs(other, X))


def test_forecaster_skorch_save_and_load_params_restore_the_network(tmp_path):
    params = {**FC, "calibration_fraction": 0.0}
    model = LevyForecaster(**params).fit(series())
    model.net_.save_params(f_params=tmp_path / "params.pt")
    other = LevyForecaster(**{**params, "random_state": 1}).fit(series())
    assert not other.predict(fh=FH).equals(model.predict(fh=FH))
    other.net_.load_params(f_params=tmp_path / "params.pt")
    assert_identical(forecaster_outputs(model), forecaster_outputs(other))
