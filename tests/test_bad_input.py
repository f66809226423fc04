"""Bad input to both front-ends: a clear error naming the problem and the fix, or a documented
finite answer (issue 7). Each case is one test or one parametrised row.

Answered with a documented value instead of an error:

* regressor: 1 sample, 1 feature, all-NaN rows and columns (a NaN cell is "not observed"),
  constant ``y``, magnitudes of 1e12 and 1e-12 (scale-equivariant), a coverage list with
  duplicates (one identical interval per entry);
* forecaster: ``NaN`` in ``y`` (not observed), an all-NaN channel, constant ``y``,
  magnitudes of 1e12 and 1e-12, tz-aware timestamps (kept on the forecasts), ``fh`` in the
  past or in-sample (forecast from what was observed strictly before each time), a series
  shorter than the look-back, a panel with a one-observation series, ``TimedeltaIndex``
  series with ``Timedelta`` (or integer) ``fh``.
"""

import copy
import warnings

import numpy as np
import pandas as pd
import pytest
import torch
from conftest import TINY_FC, TINY_REG
from sklearn.exceptions import NotFittedError
from sklearn.utils.validation import check_is_fitted
from sktime.exceptions import NotFittedError as SktimeNotFittedError
from sktime.forecasting.base import ForecastingHorizon

from levy_sklearn.forecaster import LevyForecaster
from levy_sklearn.regressor import LevyAttentionRegressor
from levy_sklearn.training import LevyNeuralNet

torch.set_num_threads(1)


def table(n=60, p=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    return X, X @ np.linspace(1.0, -0.5, p) + 0.1 * rng.normal(size=n)


def hourly(n=48, seed=0, start="2021-01-01"):
    rng = np.random.default_rng(seed)
    values = np.sin(np.arange(n) / 3) + 0.1 * rng.normal(size=n)
    return pd.Series(values, index=pd.date_range(start, periods=n, freq="h"), name="y")


def interrupt_training_at_step(monkeypatch, step):
    """Make the ``step``-th optimiser step raise KeyboardInterrupt (as Ctrl-C would)."""
    original = LevyNeuralNet.train_step
    calls = {"n": 0}

    def train_step(self, *args, **kwargs):
        calls["n"] += 1
        if calls["n"] == step:
            raise KeyboardInterrupt
        return original(self, *args, **kwargs)

    monkeypatch.setattr(LevyNeuralNet, "train_step", train_step)


@pytest.fixture(scope="module")
def reg():
    X, y = table()
    return LevyAttentionRegressor(**TINY_REG).fit(X, y), X


@pytest.fixture(scope="module")
def fc():
    return LevyForecaster(**TINY_FC).fit(hourly())


# ================================================================ regressor: errors


@pytest.mark.parametrize(
    ("X", "y", "message"),
    [
        (np.empty((0, 3)), np.empty(0), "0 sample"),
        (np.array([[1.0, np.inf]] * 5), np.arange(5.0), "infinity.*replace it by NaN"),
        (np.array([["a", "b"]] * 5, dtype=object), np.arange(5.0), "must be numeric.*Encoder"),
        (np.ones((5, 2)) + 1j, np.arange(5.0), "Complex data not supported.*separate real"),
        (np.ones((5, 2)), [0.0, 1.0, np.nan, 3.0, 4.0], "y contains NaN.*drop the rows"),
        (np.ones((5, 2)), [0.0, 1.0, np.inf, 3.0, 4.0], "y contains infinity.*finite"),
        (np.ones((5, 2)), np.arange(4.0), "inconsistent numbers of samples"),
        (np.ones((5, 2)), np.arange(5.0) * 1e200, r"beyond ±1e\+150.*rescale y"),
    ],
    ids=["empty", "inf", "strings", "complex", "nan-y", "inf-y", "length", "huge-y"],
)
def test_regressor_fit_rejects_bad_data_with_the_fix(X, y, message):
    with pytest.raises(ValueError, match=message):
        LevyAttentionRegressor(**TINY_REG).fit(X, y)


@pytest.mark.parametrize(
    "y",
    [
        [None, 1.0, 2.0, 3.0, 4.0],
        np.array([1.0, None, 2.0, 3.0, 4.0], dtype=object),
        pd.Series([None] * 5, dtype=object),
    ],
    ids=["list", "object-array", "all-none-series"],
)
def test_regressor_none_in_y_is_a_missing_target_not_a_row_fitted_on_nan(y):
    # scikit-learn checks an object y before converting it: None passed, was fitted on as
    # NaN (an all-None y fitted and predicted).
    with pytest.raises(ValueError, match="y contains NaN.*drop the rows whose y is NaN or None"):
        LevyAttentionRegressor(**TINY_REG).fit(np.ones((5, 2)), y)


# (pd.NA in an object y: scikit-learn < 1.6 fails inside its own check, before the hint.)
@pytest.mark.parametrize("where", ["X-object", "X-string"])
def test_regressor_pandas_na_in_text_columns_names_the_dtype_fix(where):
    X = pd.DataFrame({"a": np.arange(6.0), "b": np.arange(6.0) ** 2})
    y = np.arange(6.0)
    if where == "X-object":
        X = X.astype(object)
        X.iloc[0, 1] = pd.NA
    else:
        X["c"] = pd.array(["1.0", None] * 3, dtype="string")
    # pandas' TypeError before ("float() argument must be ... not 'NAType'").
    with pytest.raises(TypeError, match=r"pd\.NA in a column of dtype object.*Float64"):
        LevyAttentionRegressor(**TINY_REG).fit(X, y)


def test_regressor_complex_error_does_not_print_the_array():
    with pytest.raises(ValueError) as err:
        LevyAttentionRegressor(**TINY_REG).fit(np.ones((50, 2)) + 1j, np.arange(50.0))
    assert "\n" not in str(err.value)


def test_regressor_predict_rejects_bad_rows_with_the_fix(reg):
    model, X = reg
    with pytest.raises(ValueError, match="X has 2 features, but .* expecting 3"):
        model.predict(X[:, :2])
    with pytest.raises(ValueError, match="infinity.*replace it by NaN"):
        model.predict(np.where(np.eye(3, dtype=bool), -np.inf, X[:3]))
    with pytest.raises(ValueError, match="must be numeric"):
        model.predict(np.array([["1", "x", "2"]], dtype=object))
    with pytest.raises(ValueError, match="0 sample"):
        model.predict(np.empty((0, 3)))


def test_regressor_dates_in_X_are_refused_not_read_as_ticks_since_1970():
    # They were cast to microseconds (or nanoseconds) since 1970: the same instants predicted
    # 9.12 in one unit and 7.69 in the other.
    days = pd.date_range("2020", periods=60, freq="D")
    for X in (
        pd.DataFrame({"dose": np.arange(60.0), "when": days.as_unit("us")}),
        pd.DataFrame({"stay": days - days[0]}),
        days.to_numpy().reshape(-1, 1),
    ):
        with pytest.raises(ValueError, match="dates or durations; convert them to numbers"):
            LevyAttentionRegressor(**TINY_REG).fit(X, np.arange(60.0))


def test_regressor_dates_at_predict_are_refused(reg):
    model, X = reg
    with pytest.raises(ValueError, match=r"X holds dates or durations"):
        model.predict(np.arange(3).astype("datetime64[D]").reshape(1, 3))


def test_regressor_numbers_as_text_in_y_are_read_as_numbers():
    # numpy's ufunc error from inside the target scaling before
    X, y = table()
    as_text = LevyAttentionRegressor(**TINY_REG).fit(X, y.astype(str))
    as_numbers = LevyAttentionRegressor(**TINY_REG).fit(X, y.astype(str).astype(float))
    np.testing.assert_array_equal(as_text.predict(X[:5]), as_numbers.predict(X[:5]))
    with pytest.raises(ValueError, match="could not convert string to float"):
        LevyAttentionRegressor(**TINY_REG).fit(X, np.where(y > 0, "high", "1.0"))


def test_a_training_that_ends_worse_than_the_trivial_forecast_warns():
    # lr=1 gives means of 24,000-32,000 for a y in [25, 341] and σ 1e6 while the loss stays
    # finite, so only a comparison with the trivial forecast (y's mean with y's spread) can
    # tell.
    X, y = table(200, seed=3)
    y = 100 + 50 * y
    with pytest.warns(UserWarning, match=r"Training ended with a loss of .* worse than .*lr=1\b"):
        diverged = LevyAttentionRegressor(lr=1.0, max_epochs=3, random_state=0).fit(X, y)
    assert diverged.score(X, y) < 0  # worse than y's mean indeed
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert LevyAttentionRegressor(random_state=0).fit(X, y).score(X, y) > 0.5


@pytest.mark.parametrize("model", ["regressor", "forecaster"])
def test_numpy_integers_and_an_empty_training_split_are_read_or_named(model):
    if model == "regressor":
        data, make = table(200), LevyAttentionRegressor
        fit = lambda m: m.fit(*data)  # noqa: E731
    else:
        data, make = hourly(), LevyForecaster
        fit = lambda m: m.fit(data)  # noqa: E731
    params = {**(TINY_REG if model == "regressor" else TINY_FC)}
    fit(make(**{**params, "batch_size": np.int64(32)}))  # torch's loader refused it
    # Every row held out: named here, before scikit-learn's "the resulting train set will
    # be empty" (or a fit without validation).
    with pytest.raises(ValueError, match=r"validation_fraction=0.999 holds out every one"):
        fit(make(**{**params, "validation_fraction": 0.999}))


def test_regressor_diverged_training_is_an_error_naming_lr_not_nan_forecasts():
    # lr=0.5 diverges: unchecked, the NLL would return NaN predictions (and save a model
    # that cannot be loaded), and with CRPS torch's Normal would fail printing a page of
    # tensor.
    X, y = table(200, seed=3)
    for params in ({"lr": 10.0}, {"lr": 10.0, "loss": "nll"}):
        model = LevyAttentionRegressor(**{**TINY_REG, "max_epochs": 10, **params})
        with pytest.raises(
            FloatingPointError, match=r"Training diverged.*lr=10, weight_decay=.*Lower lr"
        ):
            model.fit(X, 1e3 * y)
        with pytest.raises(NotFittedError):
            model.predict(X)


def test_regressor_unseen_column_names_at_predict_are_named():
    X, y = table()
    frame = pd.DataFrame(X, columns=["age", "bmi", "bp"])
    model = LevyAttentionRegressor(**{**TINY_REG, "max_epochs": 1}).fit(frame, y)
    renamed = frame.rename(columns={"bmi": "weight"})
    with pytest.raises(ValueError, match=r"(?s)unseen at fit time:\n- weight.*missing:\n- bmi"):
        model.predict(renamed)


@pytest.mark.parametrize("coverage", [0, 1, 0.0, 1.0, 1.5, -0.1, [0.5, 1.0], []])
def test_regressor_coverage_outside_the_open_unit_interval(reg, coverage):
    model, X = reg
    with pytest.raises(ValueError, match="strictly between 0 and 1"):
        model.predict_interval(X[:2], coverage=coverage)


@pytest.mark.parametrize(
    "call",
    [
        lambda m, X: m.predict(X),
        lambda m, X: m.predict_interval(X),
        lambda m, X: m.predict_uncertainty(X),
        lambda m, X: m.sample_y(X),
        lambda m, X: m.conformalize(X, X[:, 0]),
    ],
    ids=["predict", "predict_interval", "predict_uncertainty", "sample_y", "conformalize"],
)
def test_regressor_use_before_fit_is_not_fitted_error(call):
    with pytest.raises(NotFittedError, match="not fitted yet"):
        call(LevyAttentionRegressor(), np.ones((2, 3)))


@pytest.mark.parametrize(
    ("device", "message"),
    [
        ("tpu9", "device='tpu9' is not a device torch knows; use 'cpu', 'cuda'"),
        ("fpga", "device='fpga' is not supported; use 'cpu'"),
        ("", "device='' is not a device torch knows"),
    ],
)
def test_regressor_unknown_device_is_rejected_at_fit(device, message):
    X, y = table(n=20)
    with pytest.raises(ValueError, match=message):
        LevyAttentionRegressor(**{**TINY_REG, "device": device}).fit(X, y)


@pytest.mark.skipif(torch.cuda.is_available(), reason="a GPU is present")
def test_regressor_cuda_without_a_gpu_says_so():
    X, y = table(n=20)
    with pytest.raises(ValueError, match="torch sees no CUDA device.*device='cpu', or 'auto'"):
        LevyAttentionRegressor(**{**TINY_REG, "device": "cuda"}).fit(X, y)


def test_regressor_interrupted_fit_leaves_it_unfitted_not_half_updated(reg, monkeypatch):
    _, X = reg
    X2, y2 = table(n=80, p=3, seed=1)
    model = LevyAttentionRegressor(**TINY_REG).fit(X2[:, :2], y2)  # an earlier, other fit
    interrupt_training_at_step(monkeypatch, 3)
    with pytest.raises(KeyboardInterrupt):
        model.fit(X2, y2)
    with pytest.raises(NotFittedError):
        check_is_fitted(model)
    with pytest.raises(NotFittedError):
        model.predict(X2)
    monkeypatch.undo()
    # Nothing of the interrupted (or the earlier) fit leaks into the next one.
    again = model.fit(X2, y2).predict(X2, return_std=True)
    fresh = LevyAttentionRegressor(**TINY_REG).fit(X2, y2).predict(X2, return_std=True)
    np.testing.assert_array_equal(again[0], fresh[0])
    np.testing.assert_array_equal(again[1], fresh[1])


def test_early_stopping_is_not_mistaken_for_an_interrupt():
    # skorch's EarlyStopping stops training by raising KeyboardInterrupt as well.
    X, y = table(n=200)
    params = {**TINY_REG, "validation_fraction": 0.3, "patience": 1, "max_epochs": 60}
    model = LevyAttentionRegressor(**params).fit(X, y)
    assert len(model.net_.history) < 60
    assert np.isfinite(model.predict(X)).all()


# ================================================================ regressor: documented answers


def test_regressor_one_sample_one_feature_and_constant_y_give_finite_answers():
    X, y = table()
    one_row = LevyAttentionRegressor(**TINY_REG).fit(X[:1], y[:1])
    mean, std = one_row.predict(X[:5], return_std=True)
    assert np.isfinite(mean).all() and (std > 0).all() and np.isfinite(std).all()
    # No spread to scale by: its magnitude where below 1 (see target_scaling), else 1.
    np.testing.assert_array_equal(one_row.y_scale_, [min(abs(y[0]), 1.0)])

    one_col = LevyAttentionRegressor(**TINY_REG).fit(X[:, :1], y)
    mean, std = one_col.predict(X[:5, :1], return_std=True)
    assert np.isfinite(mean).all() and (std > 0).all()

    # 60 rows in batches of 64 make one gradient step per epoch: give the fresh network
    # enough steps to move its output to the constant (and its noise head, which starts at
    # softplus(0) ≈ 0.69 of var(y), down from there).
    constant = LevyAttentionRegressor(**{**TINY_REG, "max_epochs": 40}).fit(
        X, np.full(len(X), 7.0)
    )
    mean, std = constant.predict(X, return_std=True)
    # Standardised targets are all zero: the answer is the constant, with a small σ.
    np.testing.assert_allclose(mean, 7.0, atol=0.2)
    assert np.isfinite(std).all() and (std > 0).all() and std.max() < 0.5


def test_regressor_all_nan_rows_and_columns_are_unobserved_not_errors(reg):
    model, X = reg
    mean, std = model.predict(np.full((2, 3), np.nan), return_std=True)
    assert np.isfinite(mean).all() and (std > 0).all() and np.isfinite(std).all()
    # Nothing observed: one prior answer, to float64 rounding (rows at different places in
    # a batch may take different vectorised kernels: 3e-17 apart on an AMD EPYC).
    np.testing.assert_allclose(mean[0], mean[1], rtol=1e-12)
    np.testing.assert_allclose(std[0], std[1], rtol=1e-12)

    X_fit, y = table(n=60)
    X_fit[:, 1] = np.nan  # a column never observed in fit
    X_fit[::7] = np.nan  # and some rows with nothing observed
    gappy = LevyAttentionRegressor(**TINY_REG).fit(X_fit, y)
    np.testing.assert_array_equal(gappy.x_mean_[1], 0.0)
    np.testing.assert_array_equal(gappy.x_scale_[1], 1.0)
    mean, std = gappy.predict(X, return_std=True)
    assert np.isfinite(mean).all() and (std > 0).all()


@pytest.mark.parametrize(("x_scale", "y_scale"), [(1e12, 1e12), (1e-12, 1e-12), (1e300, 1e100)])
def test_regressor_extreme_magnitudes_are_scale_equivariant(x_scale, y_scale):
    # Columns and targets are standardised in fit: scaling X by a and y by b must scale mean
    # and σ by b and change nothing else (up to float32 rounding of the standardised tokens).
    X, y = table()
    base = LevyAttentionRegressor(**TINY_REG).fit(X, y).predict(X, return_std=True)
    big = LevyAttentionRegressor(**TINY_REG).fit(X * x_scale, y * y_scale)
    mean, std = big.predict(X * x_scale, return_std=True)
    np.testing.assert_allclose(mean / y_scale, base[0], rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(std / y_scale, base[1], rtol=1e-4)


def test_regressor_outlier_beyond_float32_range_saturates_instead_of_nan(reg):
    model, X = reg
    rows = np.repeat(X[:1], 4, axis=0)
    rows[:, 0] = [1e30, 1e39, -1e300, 1e300]  # standardised beyond float32's 3.4e38
    mean, std = model.predict(rows, return_std=True)
    assert np.isfinite(mean).all() and np.isfinite(std).all() and (std > 0).all()


def test_regressor_duplicate_coverages_give_one_identical_interval_each(reg):
    model, X = reg
    bounds = model.predict_interval(X[:4], coverage=[0.9, 0.5, 0.9])
    assert bounds.shape == (4, 2, 3)
    np.testing.assert_array_equal(bounds[..., 0], bounds[..., 2])
    np.testing.assert_array_equal(bounds[..., 0], model.predict_interval(X[:4], coverage=0.9))


# ================================================================ forecaster: errors


@pytest.mark.parametrize(
    ("y", "error", "message"),
    [
        (hourly().iloc[:0], ValueError, "y has no rows: pass the history"),
        (hourly().iloc[:1], ValueError, "No training window could be cut.*longer series"),
        (hourly() * np.nan, ValueError, "No training window could be cut"),
        (hourly().replace(hourly().iloc[5], np.inf), ValueError, r"±inf.*Replace it by NaN"),
        (hourly() * 1e200, ValueError, r"beyond ±1e\+150.*rescale y"),
        (pd.Series(["a"] * 10, index=hourly(10).index), TypeError, "Column 0 of y holds"),
        (hourly() + 1j, TypeError, "complex128"),
        (hourly().iloc[::-1], ValueError, r"not sorted; sort it first: y = y.sort_index\(\)"),
        (pd.concat([hourly(), hourly().iloc[[7]]]).sort_index(), ValueError, "more than one row"),
        # sktime's "Unsupported input data type" before (the loaders' time_as="float")
        (pd.Series(np.ones(10), index=np.arange(10) / 3), TypeError, "time index holds floats"),
    ],
    ids=[
        "empty",
        "one-obs",
        "all-nan",
        "inf",
        "huge",
        "strings",
        "complex",
        "unsorted",
        "duplicates",
        "float-times",
    ],
)
def test_forecaster_fit_rejects_bad_series_with_the_fix(y, error, message):
    with pytest.raises(error, match=message):
        LevyForecaster(**TINY_FC).fit(y)


def test_forecaster_duplicates_inside_one_panel_series_are_named():
    a = hourly()
    panel = pd.concat({"a": a, "b": pd.concat([a.iloc[:5], a.iloc[[2]]]).sort_index()})
    with pytest.raises(ValueError, match=r"series \('b',\) of y has more than one row at time"):
        LevyForecaster(**TINY_FC).fit(panel.to_frame("y"))


def test_forecaster_integer_fh_on_irregular_data_asks_for_times():
    rng = np.random.default_rng(2)
    y = hourly(60).iloc[np.sort(rng.choice(60, 40, replace=False))]
    f = LevyForecaster(**TINY_FC).fit(y)
    with pytest.raises(ValueError, match="Integer steps in fh are ambiguous.*time spans"):
        f.predict(fh=[1, 2])


def test_forecaster_update_with_other_columns_is_rejected():
    y = pd.DataFrame({"hr": hourly(), "temp": hourly(seed=1)})
    f = LevyForecaster(**TINY_FC).fit(y.iloc[:40])
    cutoff, before = f.cutoff, f.predict(fh=[1])
    later = y.iloc[40:].rename(columns={"temp": "spo2"})
    with pytest.raises(ValueError, match=r"update's y has columns \['hr', 'spo2'\] but"):
        f.update(later, update_params=False)
    # Unchanged (sktime moved the cutoff before the refusal: fh=1 was fit's fh=9) and usable.
    assert f.cutoff.equals(cutoff)
    pd.testing.assert_frame_equal(f.predict(fh=[1]), before)
    f.update(y.iloc[40:], update_params=False)
    assert not f.predict(fh=[1]).equals(before)


@pytest.mark.parametrize(
    ("index", "message"),
    [
        (pd.RangeIndex(40, 44), "update's y has integer times but the forecaster was fitted on "),
        (pd.date_range("2021-01-02 16:00", periods=4, freq="h", tz="UTC"), "zone UTC but fit"),
        (pd.period_range("2021-01-03", periods=4, freq="D"), "periods of frequency 'D' but"),
    ],
)
def test_forecaster_update_in_another_kind_of_time_is_refused_and_changes_nothing(index, message):
    # Before, pandas' own error came from deep inside (int and Timestamp not comparable),
    # after sktime had moved the cutoff: later forecasts carried labels of the wrong kind.
    y = hourly(44)
    f = LevyForecaster(**TINY_FC).fit(y.iloc[:40])
    cutoff, before = f.cutoff, f.predict(fh=[1])
    with pytest.raises(ValueError, match=message):
        f.update(pd.Series(y.iloc[40:].to_numpy(), index=index, name=y.name), update_params=False)
    assert f.cutoff.equals(cutoff)
    pd.testing.assert_series_equal(f.predict(fh=[1]), before)


def test_forecaster_update_in_another_layout_is_refused_and_changes_nothing():
    # A series updated with a one-series panel (or a panel with a plain frame) would be
    # joined under a new key, and every later predict would fail deep inside.
    y = hourly(44).to_frame()
    as_panel = pd.concat({"a": y.iloc[40:]}, names=["patient", "time"])
    single = LevyForecaster(**TINY_FC).fit(y.iloc[:40])
    panel = LevyForecaster(**TINY_FC).fit(pd.concat({"a": y.iloc[:40]}, names=["patient", "time"]))
    for f, later, words in [
        (single, as_panel, "a panel with 1 instance level.* but fit's y was a single series"),
        (panel, y.iloc[40:], "a single series but fit's y was a panel"),
    ]:
        before = f.predict(fh=[1])
        with pytest.raises(ValueError, match=rf"update's y is {words}"):
            f.update(later, update_params=False)
        pd.testing.assert_frame_equal(f.predict(fh=[1]), before)


def test_forecaster_update_of_one_column_under_another_name_is_the_same_channel():
    # Before, the renamed column became a second channel and every later predict raised
    # torch's "index out of range" (an unnamed series updated with a named one).
    y = hourly(44)
    named = LevyForecaster(**TINY_FC).fit(y.iloc[:40]).update(y.iloc[40:], update_params=False)
    f = LevyForecaster(**TINY_FC).fit(y.iloc[:40].rename(None))
    f.update(y.iloc[40:].rename("heart rate"), update_params=False)
    np.testing.assert_array_equal(f.predict(fh=[1, 2]), named.predict(fh=[1, 2]))


@pytest.mark.parametrize(
    ("coverage", "message"),
    [
        (0, "strictly between 0 and 1"),
        (1, "strictly between 0 and 1"),
        (1.5, "strictly between 0 and 1"),
        ([0.5, 1], "strictly between 0 and 1"),
        ([0.9, 0.9], "unique"),
        # sktime's own check raised TypeError from inside it on these three
        (True, "must be a float or a list"),
        ("0.9", "must be a float or a list"),
        ([0.5, True], "must be a float or a list"),
    ],
)
def test_forecaster_bad_coverage_is_named(fc, coverage, message):
    with pytest.raises(ValueError, match=message):
        fc.predict_interval(fh=[1], coverage=coverage)


@pytest.mark.parametrize(
    ("alpha", "message"),
    [
        (0, "alpha must be strictly between 0 and 1"),
        ([0.2, 0.2], "unique"),
        ("0.9", "alpha must be a float or a list"),
    ],
)
def test_forecaster_bad_quantile_levels_are_named(fc, alpha, message):
    with pytest.raises(ValueError, match=message):
        fc.predict_quantiles(fh=[1], alpha=alpha)


def test_forecaster_use_before_fit_is_not_fitted_error():
    f = LevyForecaster(**TINY_FC)
    for call in (f.predict, f.predict_interval, f.predict_var, f.predict_quantiles):
        with pytest.raises(SktimeNotFittedError, match="not been fitted"):
            call(fh=[1])


def test_forecaster_unknown_device_is_rejected_at_fit():
    with pytest.raises(ValueError, match="device='gpu' is not a device torch knows"):
        LevyForecaster(**{**TINY_FC, "device": "gpu"}).fit(hourly())


def test_forecaster_interrupted_fit_and_pretrain_leave_no_half_state(monkeypatch):
    y = hourly()
    panel = pd.concat({"a": y, "b": hourly(seed=3)}).to_frame("y")
    interrupt_training_at_step(monkeypatch, 2)
    f = LevyForecaster(**TINY_FC)
    with pytest.raises(KeyboardInterrupt):
        f.fit(y)
    assert f.state == "new"
    with pytest.raises(SktimeNotFittedError):
        f.predict(fh=[1])
    monkeypatch.undo()
    interrupt_training_at_step(monkeypatch, 2)
    with pytest.raises(KeyboardInterrupt):
        f.pretrain(panel)
    assert f.state == "new"
    assert not [name for name in vars(f) if name.startswith("pretrained_")]
    monkeypatch.undo()

    # An interrupted pretrain *update* keeps the earlier pretrained network untouched.
    f.pretrain(panel)
    before = f.clone().fit(y).predict_var(fh=[1, 2])
    interrupt_training_at_step(monkeypatch, 2)
    with pytest.raises(KeyboardInterrupt):
        f.pretrain(panel)
    monkeypatch.undo()
    assert f.state == "pretrained"
    pd.testing.assert_frame_equal(f.fit(y).predict_var(fh=[1, 2]), before)


# ================================================================ forecaster: documented answers


def test_forecaster_nan_cells_constant_and_all_nan_channel_give_finite_answers():
    y = pd.DataFrame({"a": hourly(), "b": np.nan})  # channel b never observed
    y.iloc[::5, 0] = np.nan
    f = LevyForecaster(**TINY_FC).fit(y)
    mean, var = f.predict(fh=[1, 2, 3]), f.predict_var(fh=[1, 2, 3])
    assert np.isfinite(mean.to_numpy()).all() and (var.to_numpy() > 0).all()

    flat = LevyForecaster(**TINY_FC).fit(hourly() * 0 + 5.0)
    mean, var = flat.predict(fh=[1, 4]), flat.predict_var(fh=[1, 4])
    np.testing.assert_allclose(mean, 5.0, atol=0.05)
    assert np.isfinite(var.to_numpy()).all() and (var.to_numpy() > 0).all()


@pytest.mark.parametrize("scale", [1e12, 1e-12])
def test_forecaster_extreme_magnitudes_are_scale_equivariant(fc, scale):
    big = LevyForecaster(**TINY_FC).fit(hourly() * scale)
    fh = [1, 2, 6]
    np.testing.assert_allclose(big.predict(fh=fh) / scale, fc.predict(fh=fh), rtol=1e-4)
    np.testing.assert_allclose(big.predict_var(fh=fh) / scale**2, fc.predict_var(fh=fh), rtol=1e-3)


def test_forecaster_tz_aware_timestamps_are_kept_and_mean_the_same_instants(fc):
    y = hourly()
    local = y.tz_localize("UTC").tz_convert("Europe/Paris")
    f = LevyForecaster(**TINY_FC).fit(local)
    pred = f.predict(fh=[1, 2])
    assert str(pred.index.tz) == "Europe/Paris"
    assert pred.index[0] == local.index[-1] + pd.Timedelta(hours=1)
    # The same instants as the naive-UTC series: the same forecasts.
    np.testing.assert_allclose(pred.to_numpy(), fc.predict(fh=[1, 2]).to_numpy(), rtol=1e-6)


def test_forecaster_past_and_in_sample_fh_use_only_earlier_observations():
    y = hourly(60)
    f = LevyForecaster(**TINY_FC).fit(y.iloc[:40])
    changed = y.copy()
    changed.iloc[45:] += 10.0  # what happens at and after the in-sample time must not matter
    fh = ForecastingHorizon(y.index[[45, 50]], is_relative=False)
    preds = []
    for later in (y.iloc[40:], changed.iloc[40:]):
        g = copy.deepcopy(f)
        g.update(later, update_params=False)
        preds.append(g.predict(fh=fh))
        assert list(g.predict(fh=[-3, 0]).index) == list(y.index[[56, 59]])
    pd.testing.assert_series_equal(preds[0].iloc[:1], preds[1].iloc[:1])
    assert preds[0].iloc[1] != preds[1].iloc[1]  # at t50 the context already differs


def test_forecaster_series_shorter_than_look_back_and_one_observation_panel_member():
    short = LevyForecaster(**{**TINY_FC, "context_length": 30}).fit(hourly(6))
    assert np.isfinite(short.predict(fh=[1, 2]).to_numpy()).all()
    assert (short.predict_var(fh=[1, 2]).to_numpy() > 0).all()

    panel = pd.concat({"long": hourly(), "single": hourly(1, seed=4)}).to_frame("y")
    f = LevyForecaster(**TINY_FC).fit(panel)
    var = f.predict_var(fh=[1, 2])
    assert set(var.index.get_level_values(0)) == {"long", "single"}
    assert np.isfinite(f.predict(fh=[1, 2]).to_numpy()).all() and (var.to_numpy() > 0).all()


def test_forecaster_timedelta_index_with_timedelta_fh_is_cutoff_plus_span(fc):
    y = hourly()
    elapsed = y.set_axis(y.index - y.index[0])  # a TimedeltaIndex (time since admission)
    f = LevyForecaster(**TINY_FC).fit(elapsed)
    spans = pd.to_timedelta([1, 2.5, 6], unit="h")
    for fh in (spans, ForecastingHorizon(spans, is_relative=True)):
        pred = f.predict(fh=fh)
        pd.testing.assert_index_equal(pred.index, pd.TimedeltaIndex(elapsed.index[-1] + spans))
        assert f.predict_interval(fh=fh, coverage=[0.5, 0.9]).index.equals(pred.index)
        assert f.predict_quantiles(fh=fh, alpha=[0.1]).index.equals(pred.index)
    # Only time differences matter: the same series on a DatetimeIndex forecasts the same.
    np.testing.assert_allclose(
        f.predict(fh=spans).to_numpy(),
        fc.predict(fh=ForecastingHorizon(spans, is_relative=True)).to_numpy(),
        rtol=1e-6,
    )
    np.testing.assert_allclose(f.predict(fh=[1, 2]), fc.predict(fh=[1, 2]), rtol=1e-6)


# ----------------------------------------------- rough edges found as a new user (issue 29)


def test_forecaster_warns_about_a_column_never_observed():
    y = pd.DataFrame({"hr": hourly(), "temp": np.nan})
    with pytest.warns(UserWarning, match=r"Column\(s\) \['temp'\] of y have no observed value"):
        LevyForecaster(**TINY_FC).fit(y)
    panel = pd.concat({"a": y, "b": y}, names=["patient", "time"])
    with pytest.warns(UserWarning, match=r"\['temp'\] of the pretraining panel have no"):
        LevyForecaster(**TINY_FC).pretrain(panel)


def test_regressor_warns_about_a_feature_never_observed():
    X, y = table()
    X[:, 1] = np.nan
    with pytest.warns(UserWarning, match=r"Feature\(s\) \[1\] of X have no observed value"):
        LevyAttentionRegressor(**TINY_REG).fit(X, y)
    frame = pd.DataFrame(X, columns=["age", "dose", "weight"])
    with pytest.warns(UserWarning, match=r"Feature\(s\) \['dose'\] of X"):
        LevyAttentionRegressor(**TINY_REG).fit(frame, y)


def test_forecaster_timedelta_fh_on_a_period_index_is_named():
    y = pd.Series(np.arange(30.0), index=pd.period_range("2000-01", periods=30, freq="M"))
    f = LevyForecaster(**TINY_FC).fit(y)
    with pytest.raises(ValueError, match=r"Timedelta\) but y has a PeriodIndex \(freq M\)"):
        f.predict(fh=pd.to_timedelta([1], unit="D"))


@pytest.mark.parametrize(
    ("index", "fh", "message"),
    [
        # A quarter's ordinal read as a month's forecast 1967-01 under the label 1961Q1.
        (
            pd.period_range("2000-01", periods=30, freq="M"),
            pd.PeriodIndex(["2003Q1"], freq="Q"),
            r"fh holds periods of frequency 'Q-DEC' but y has periods of frequency 'M'",
        ),
        (
            pd.period_range("2000-01", periods=30, freq="M"),
            pd.DatetimeIndex(["2002-09-01"]),
            r"fh holds timestamps but y has periods of frequency 'M'",
        ),
        (
            pd.date_range("2000-01-01", periods=30, freq="D"),
            ForecastingHorizon(pd.PeriodIndex(["2000-02-01"], freq="D"), is_relative=False),
            r"fh holds periods of frequency 'D' but y has timestamps; pass timestamps",
        ),
        (
            pd.date_range("2000-01-01", periods=30, freq="D"),
            ForecastingHorizon(pd.Index([31]), is_relative=False),
            r"fh holds integer times but y has timestamps",
        ),
        (
            pd.RangeIndex(30),
            pd.DatetimeIndex(["2000-02-01"]),
            r"fh holds timestamps but y has integer times; pass index values",
        ),
        (
            pd.RangeIndex(30),
            pd.to_timedelta([1], unit="D"),
            r"fh holds time spans \(Timedelta\) but y has an integer index",
        ),
        (
            pd.to_timedelta(np.arange(30), unit="h"),
            pd.DatetimeIndex(["2000-02-01"]),
            r"fh holds timestamps but y has time spans",
        ),
    ],
)
def test_forecaster_refuses_fh_in_another_kind_of_time(index, fh, message):
    # Before, the raw values of such an fh (ordinals, epoch seconds, integers) were read on
    # y's axis: a forecast for another time under the label asked for, or the prior's.
    f = LevyForecaster(**TINY_FC).fit(pd.Series(np.sin(np.arange(30.0) / 3), index=index))
    with pytest.raises(ValueError, match=message):
        f.predict(fh=fh)
    assert f.predict(fh=[1]).notna().all()


def test_forecaster_reads_an_object_column_of_numbers_and_names_one_of_text():
    y = hourly()
    numbers = LevyForecaster(**TINY_FC).fit(y.astype(object)).predict(fh=[1, 2])
    floats = LevyForecaster(**TINY_FC).fit(y).predict(fh=[1, 2])
    pd.testing.assert_series_equal(numbers, floats)
    text = y.astype(object)
    text.iloc[3] = "n/a"
    with pytest.raises(TypeError, match="Column 'y' of y holds values that are not numbers"):
        LevyForecaster(**TINY_FC).fit(text)


def test_forecaster_fitted_after_pretrain_on_other_spacing_warns():
    # Hourly pretraining, daily data: one observation per context and flat forecasts.
    panel = pd.concat({k: hourly(seed=k) for k in range(6)}, names=["subject", "time"])
    f = LevyForecaster(**TINY_FC).pretrain(panel.to_frame())
    daily = hourly().set_axis(pd.date_range("2021-01-01", periods=48, freq="D"))
    with pytest.warns(UserWarning, match=r"spaced 1 days 00:00:00 apart .* 0.0417 times"):
        f.fit(daily)
    # Irregular visits weeks apart are no sampling rate (Quinidine's patients, whose panel
    # spacing is days): no warning; nor for one observation, with no spacing at all.
    visits = pd.to_datetime("2021-01-01") + pd.to_timedelta([0, 3, 30, 34, 90, 95], unit="D")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        f.fit(hourly(seed=9))
        f.fit(hourly(seed=9).iloc[:1])
        f.fit(pd.Series(np.sin(np.arange(6.0)), index=visits, name="y"))  # at the panel's level


@pytest.mark.parametrize(
    ("param", "words"),
    [("context_length", "contexts hold one observation"), ("max_horizon", "next observation")],
)
def test_forecaster_spans_shorter_than_one_sampling_step_warn(param, words):
    # Half an hour on hourly data: a context of one observation at most.
    y = hourly(n=200)
    with pytest.warns(UserWarning, match=rf"{param} spans 0.5 time units.*{words}"):
        try:
            LevyForecaster(**{**TINY_FC, param: "30min"}).fit(y)
        except ValueError as error:  # no target within half a step: no training window
            assert param == "max_horizon" and "No training window" in str(error)


def test_forecaster_warns_about_a_series_never_observed():
    # An all-NaN column is named, and so is an all-NaN series of a panel.
    y = hourly().to_frame()
    panel = pd.concat({"a": y, "b": y * np.nan, "c": y}, names=["patient", "time"])
    with pytest.warns(UserWarning, match=r"Series \['b'\] of y have no observed value"):
        LevyForecaster(**TINY_FC).fit(panel)


def test_forecaster_after_pretrain_warns_about_a_series_lacking_a_channel():
    # After pretrain, a series without a channel the others have is forecast by the
    # population, which the user should know. Without pretrain the network forecasts it
    # from the series' other channel: no warning.
    def two(seed):
        return pd.concat([hourly(seed=seed), hourly(seed=seed + 50)], axis=1, keys=["hr", "bp"])

    panel = pd.concat({k: two(k) for k in range(6)}, names=["subject", "time"])
    new = pd.concat({"a": two(7), "b": two(8).assign(bp=np.nan)}, names=["subject", "time"])
    pretrained = LevyForecaster(**TINY_FC).pretrain(panel)
    with pytest.warns(UserWarning, match=r"Series \['b'\] of y have no observed value in some"):
        pretrained.fit(new)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        LevyForecaster(**TINY_FC).fit(new)
    assert not [w for w in caught if "in some column" in str(w.message)]


@pytest.mark.parametrize("constant", [1e-6, -3e-4])
def test_a_constant_target_is_predicted_in_its_own_magnitude(constant):
    # Scaled by 1, the network's ~1e-3 would come back in data units: 1e-6 predicted as
    # -2e-3 with σ 1.5e-2 by the regressor, as 4.7e-4 by the forecaster.
    X = np.random.default_rng(0).normal(size=(60, 3))
    mean, std = (
        LevyAttentionRegressor(**TINY_REG)
        .fit(X, np.full(60, constant))
        .predict(X[:5], return_std=True)
    )
    # Within the tiny net's error in its own magnitude (it was 1e3 times the constant).
    assert np.all(np.abs(mean - constant) < 0.5 * abs(constant))
    assert np.all(std < abs(constant))
    y = pd.Series(constant, index=pd.period_range("2000-01", periods=40, freq="M"))
    forecast = LevyForecaster(**TINY_FC).fit(y).predict(fh=[1, 2, 3])
    assert np.all(np.abs(forecast - constant) < 0.5 * abs(constant))


def test_forecaster_repeated_column_names_are_named():
    y = pd.concat([hourly(), hourly(seed=1)], axis=1, keys=["hr", "hr"])
    with pytest.raises(ValueError, match=r"more than one column named \['hr'\]"):
        LevyForecaster(**TINY_FC).fit(y)  # was sktime's AttributeError ('dtype')


def test_forecaster_unsorted_index_gets_a_short_message():
    y = hourly().sample(frac=1.0, random_state=0)
    with pytest.raises(ValueError, match=r"not sorted; sort it first") as err:
        LevyForecaster(**TINY_FC).fit(y)
    assert len(str(err.value)) < 200  # sktime's message printed the whole index (3.6 KB)
    panel = pd.concat({"a": hourly(), "b": hourly(seed=1)}, names=["patient", "time"])
    with pytest.raises(ValueError, match="not sorted"):
        LevyForecaster(**TINY_FC).fit(panel.iloc[::-1])


def test_forecaster_warns_when_fh_is_before_the_first_observation():
    y = hourly()
    f = LevyForecaster(**TINY_FC).fit(y)
    with pytest.warns(UserWarning, match="at or before the first observation of y"):
        f.predict(fh=pd.DatetimeIndex([y.index[0] - pd.Timedelta(1, "D")]))
    # At the first observation itself only earlier ones are context: none.
    with pytest.warns(UserWarning, match="at or before the first observation of y"):
        f.predict(fh=pd.DatetimeIndex([y.index[0]]))


def test_forecaster_missing_channel_after_pretrain_names_the_all_nan_fix_which_works():
    y = pd.DataFrame({"hr": hourly(), "temp": hourly(seed=1)})
    panel = pd.concat({k: y for k in "abcde"}, names=["patient", "time"])
    f = LevyForecaster(**TINY_FC).pretrain(panel)
    with pytest.raises(
        ValueError, match=r"missing: \['temp'\].*all-NaN column \(y\['temp'\] = np.nan\)"
    ):
        f.fit(y[["hr"]])
    # The fix it names: the channel is then forecast at the pretraining population's level.
    new = y[["hr"]].copy()
    new["temp"] = np.nan
    with pytest.warns(UserWarning, match=r"\['temp'\] of y have no .*population's mean"):
        forecast = f.fit(new).predict(fh=[1, 2])
    assert list(forecast.columns) == ["hr", "temp"]
    assert np.isfinite(forecast.to_numpy()).all()


def test_forecaster_unobserved_channel_after_pretrain_is_not_told_to_drop_it():
    # After pretrain every pretrained channel must be given, so the warning cannot say "drop".
    y = pd.DataFrame({"hr": hourly(), "temp": hourly(seed=1)})
    panel = pd.concat({k: y for k in "abcde"}, names=["patient", "time"])
    f = LevyForecaster(**TINY_FC).pretrain(panel)
    with pytest.warns(UserWarning, match=r"\['temp'\] of y have no .*population's mean") as record:
        f.fit(y.assign(temp=np.nan))
    assert not any("Drop them" in str(w.message) for w in record)


def test_a_panel_raises_no_pandas_future_warning_from_the_package():
    # pandas 2.x warned on every panel fit (a groupby by a length-1 list of levels): seen
    # by the competitions benchmark on pandas 2.3.
    import warnings
    from pathlib import Path

    import levy_sklearn

    idx = pd.MultiIndex.from_product([["a", "b"], pd.period_range("2000", periods=30, freq="Q")])
    panel = pd.DataFrame({"y": np.sin(np.arange(60.0))}, index=idx)
    package = str(Path(levy_sklearn.__file__).parent)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        LevyForecaster(**TINY_FC).fit(panel).predict(fh=[1, 2])
    ours = [w for w in caught if w.category is FutureWarning and w.filename.startswith(package)]
    assert not ours, [str(w.message) for w in ours]


def test_forecaster_season_of_one_unit_is_none_and_a_shorter_than_two_is_refused():
    # sktime's sp=1 means "no season"; it used to fit Fourier terms at the sampling period
    # (constant at every sample) and change the forecasts. 1.5 units cannot be seen at all.
    y = hourly()
    none = LevyForecaster(**TINY_FC, seasonal_period=None).fit(y)
    one = LevyForecaster(**TINY_FC, seasonal_period=1).fit(y)
    assert one.seasonal_period_ is None
    np.testing.assert_array_equal(one.predict(fh=[1, 2]), none.predict(fh=[1, 2]))
    with pytest.raises(ValueError, match=r"shorter than two.*seasonal_period=None"):
        LevyForecaster(**TINY_FC, seasonal_period="90min").fit(y)
    with pytest.raises(ValueError, match=r"shorter than two"):  # not "no season" unsaid
        LevyForecaster(**TINY_FC, seasonal_period="30min").fit(y)


def test_forecaster_season_longer_than_half_the_context_warns():
    # TINY_FC's context is 8 hours: a daily season cannot be removed, and the user is told
    with pytest.warns(UserWarning, match="fewer than 2 seasonal periods of 24") as record:
        LevyForecaster(**TINY_FC, seasonal_period="1D").fit(hourly())
    assert record[0].filename == __file__


def test_forecaster_ar_order_beyond_the_context_is_capped_with_a_warning():
    y = hourly()
    # TINY_FC's context is 8 hours: at most 9 lags (lag 0 included)
    with pytest.warns(UserWarning, match="ar_order=100 reaches further back") as record:
        capped = LevyForecaster(**TINY_FC, ar_order=100).fit(y)
    assert record[0].filename == __file__  # points at the user's fit
    at_most = LevyForecaster(**TINY_FC, ar_order=9).fit(y)
    assert capped.ar_order_ == at_most.ar_order_ == 9
    np.testing.assert_array_equal(capped.predict(fh=[1]), at_most.predict(fh=[1]))


def test_forecaster_diverged_training_is_an_error_naming_lr():
    from sktime.datasets import load_airline

    f = LevyForecaster(**{**TINY_FC, "max_epochs": 10, "lr": 10.0})
    with pytest.raises(FloatingPointError, match=r"Training diverged.*Lower lr"):
        f.fit(load_airline())
    assert not f.is_fitted


def test_a_net_with_non_finite_weights_is_refused(reg):
    net = copy.deepcopy(reg[0].net_)
    net.check_finite()  # a trained net passes
    with torch.no_grad():
        next(net.module_.parameters())[0] = np.nan
    with pytest.raises(FloatingPointError, match="weights are no longer finite"):
        net.check_finite()


def test_forecaster_infinite_span_is_named():
    with pytest.raises(ValueError, match="max_horizon=inf must be positive and finite"):
        LevyForecaster(**{**TINY_FC, "max_horizon": np.inf}).fit(hourly())


def test_forecaster_timedelta_fh_that_looks_like_index_times_warns():
    # On a TimedeltaIndex a Timedelta fh counts from the cutoff (sktime's convention): the
    # next sampling times passed themselves would be forecast a whole cutoff later.
    y = hourly()
    y.index = y.index - y.index[0]
    f = LevyForecaster(**TINY_FC).fit(y)
    next_times = y.index[-1] + pd.to_timedelta([1, 2], unit="h")
    with pytest.warns(UserWarning, match=r"counts from the cutoff.*fh=times - y.index\[-1\]"):
        f.predict(fh=next_times)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        relative = f.predict(fh=next_times - y.index[-1])
    assert relative.index.equals(next_times)


def test_forecaster_late_observation_keeps_the_cutoff():
    # sktime moved the cutoff back to a back-dated row's time, and every relative forecast
    # with it (labelled two hours in the past), though the history is merged.
    y = hourly()
    f = LevyForecaster(**TINY_FC).fit(y.drop(y.index[30]))
    f.update(y.iloc[[30]], update_params=False)
    assert f.cutoff[0] == y.index[-1]
    assert f.predict(fh=[1]).index[0] == y.index[-1] + pd.Timedelta("1h")


def test_forecaster_empty_history_is_refused_after_pretrain():
    panel = pd.concat({k: hourly(seed=k).to_frame() for k in range(3)})
    f = LevyForecaster(**{**TINY_FC, "calibration_folds": 1}).pretrain(panel)
    with pytest.raises(ValueError, match="y has no rows"):  # an IndexError at predict before
        f.fit(hourly().to_frame().iloc[:0])


def test_pretraining_does_not_depend_on_the_order_of_the_panels_series():
    panel = pd.concat({k: hourly(seed=k).to_frame() for k in range(6)})
    backwards = pd.concat({k: hourly(seed=k).to_frame() for k in reversed(range(6))})
    new = hourly(seed=9).to_frame()
    a = LevyForecaster(**TINY_FC).pretrain(panel).fit(new)
    b = LevyForecaster(**TINY_FC).pretrain(backwards).fit(new)
    pd.testing.assert_frame_equal(a.predict_interval(fh=[1, 2]), b.predict_interval(fh=[1, 2]))


def test_a_new_series_far_outside_the_pretraining_panel_warns():
    # Zero-shot forecasts are pulled towards the pretraining panel's level where that
    # forecast its held-out subjects better: a series ten standard deviations away gets
    # 90 % intervals covering 0.08, so it is warned about.
    panel = pd.concat({k: hourly(seed=k).to_frame() for k in range(6)})
    f = LevyForecaster(**TINY_FC).pretrain(panel)
    with pytest.warns(UserWarning, match="standard deviations of the pretraining panel"):
        f.fit(hourly(seed=9).to_frame() + 100)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        f.fit(hourly(seed=9).to_frame())


def test_a_sparse_channel_far_outside_the_pretraining_panel_is_named():
    # A channel observed three times is the one the pull towards the pretraining panel's
    # level moves furthest: it is judged like any other, against the panel's pooled
    # standard deviation (about 0.70 here), and named.
    def subject(seed):
        return pd.DataFrame({"a": hourly(seed=seed), "b": hourly(seed=seed + 50) + 1})

    panel = pd.concat({k: subject(k) for k in range(6)})
    f = LevyForecaster(**TINY_FC).pretrain(panel)
    new = subject(9)
    new.iloc[np.r_[0:20, 21:30, 31:47], 1] = np.nan  # "b" observed 3 times
    new["b"] += 3.0  # about 4 pooled standard deviations above the panel's mean
    with pytest.warns(UserWarning, match=r"'b' by [\d.]+ \(from 3 observations\)") as record:
        f.fit(new)
    far = [str(w.message) for w in record if "pretraining panel" in str(w.message)]
    assert len(far) == 1 and "'a'" not in far[0]
    new["b"] -= 3.0  # a sparse channel drawn like the panel's is not flagged
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        f.fit(new)


def test_regressor_repeated_column_names_are_named():
    # Named here, before scikit-learn's validation fails inside narwhals ("DuplicateError").
    X = pd.DataFrame(np.random.default_rng(0).normal(size=(30, 3)), columns=["a", "a", "b"])
    with pytest.raises(ValueError, match=r"X has more than one column named \['a'\]"):
        LevyAttentionRegressor(**TINY_REG).fit(X, X["b"])
    reg = LevyAttentionRegressor(**TINY_REG).fit(X.set_axis(["a", "c", "b"], axis=1), X["b"])
    with pytest.raises(ValueError, match=r"X has more than one column named \['a'\]"):
        reg.predict(X)


def test_forecaster_fh_beyond_pandas_nanosecond_range_is_named():
    # A daily series forecast 1e6 steps ahead: named here, not pandas' OutOfBoundsDatetime.
    y = pd.Series(np.sin(np.arange(60) / 3), index=pd.date_range("2021", periods=60, freq="D"))
    f = LevyForecaster(**TINY_FC).fit(y)
    with pytest.raises(ValueError, match=r"fh reaches beyond the nanosecond range"):
        f.predict(fh=[10**6])
