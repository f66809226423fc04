"""Scoring on a Dask cluster of worker *processes* (levy_sklearn.scaleout): the regressor in
dask-ml's ``ParallelPostFit`` and through ``predict_blocks``, the forecaster through
``predict_panel``, each against the same estimator's in-process answer."""

import copy

import numpy as np
import pandas as pd
import pytest
from conftest import TINY_FC, TINY_REG

from levy_sklearn.datasets import make_irregular_vitals
from levy_sklearn.forecaster import LevyForecaster
from levy_sklearn.regressor import LevyAttentionRegressor
from levy_sklearn.scaleout import predict_blocks, predict_panel

da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")
ParallelPostFit = pytest.importorskip("dask_ml.wrappers").ParallelPostFit


@pytest.fixture(scope="module")
def client():
    """Two worker processes of one thread each: the estimators travel pickled."""
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        yield client


@pytest.fixture(scope="module")
def regressor_data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(3000, 4))
    X[rng.random(X.shape) < 0.2] = np.nan
    Y = np.stack([np.nansum(X, axis=1), np.nansum(X**2, axis=1)], axis=1)
    reg = LevyAttentionRegressor(**TINY_REG).fit(X[:300], Y[:300, 0])
    multi = LevyAttentionRegressor(**TINY_REG).fit(X[:300], Y[:300])
    return X, reg, multi


def ran_on_both_workers(client, tasks):
    return {task["worker"] for task in tasks.data} == set(client.nthreads())


def test_workers_run_torch_with_one_thread(client):
    # distributed's nanny sets OMP_NUM_THREADS=1 in the worker processes it starts.
    import torch

    assert set(client.run(torch.get_num_threads).values()) == {1}


def assert_equal_to_rounding(actual, expected):
    """Equal up to float64 rounding: BLAS sums in an order that depends on how many rows a
    call holds, so a block of rows can differ from the whole array in the last bits."""
    np.testing.assert_allclose(actual, expected, rtol=1e-12, atol=1e-12)


def test_regressor_in_parallel_post_fit_equals_in_process(client, regressor_data):
    X, reg, _ = regressor_data
    X_dask = da.from_array(X, chunks=(500, 2))  # column chunks are merged by dask-ml
    with distributed.get_task_stream(client) as tasks:
        remote = ParallelPostFit(estimator=reg).predict(X_dask).compute()
    assert ran_on_both_workers(client, tasks)
    assert_equal_to_rounding(remote, reg.predict(X))

    # ParallelPostFit.fit fits in-process (on a NumPy sample), as a pipeline step would.
    wrapped = ParallelPostFit(estimator=LevyAttentionRegressor(**TINY_REG))
    wrapped.fit(X[:300], np.nansum(X[:300], axis=1))
    assert_equal_to_rounding(wrapped.predict(X_dask).compute(), reg.predict(X))


def test_predict_blocks_equals_in_process(client, regressor_data):
    X, reg, multi = regressor_data
    X_dask = da.from_array(X, chunks=(700, 4))
    with distributed.get_task_stream(client) as tasks:
        mean, std = predict_blocks(reg, X_dask, return_std=True)
        mean, std = da.compute(mean, std)
    assert ran_on_both_workers(client, tasks)
    expected = reg.predict(X, return_std=True)
    assert_equal_to_rounding(mean, expected[0])
    assert_equal_to_rounding(std, expected[1])
    for estimator, kwargs in [
        (reg, {"coverage": 0.8}),
        (multi, {"coverage": [0.5, 0.9]}),  # (rows, 2, targets, coverages)
    ]:
        remote = predict_blocks(estimator, X_dask, "predict_interval", **kwargs)
        local = estimator.predict_interval(X, **kwargs)
        assert remote.shape == local.shape
        assert_equal_to_rounding(remote.compute(), local)
    # A NumPy array is predicted in-process.
    assert_equal_to_rounding(predict_blocks(multi, X), multi.predict(X))
    # The method's own ``method`` keyword reaches it (it clashed with predict_blocks' own).
    conformal = copy.deepcopy(reg).conformalize(X[300:600], np.nansum(X[300:600], axis=1))
    kwargs = {"coverage": 0.8, "method": "conformal"}
    remote = predict_blocks(conformal, X_dask, "predict_interval", **kwargs).compute()
    assert_equal_to_rounding(remote, conformal.predict_interval(X, **kwargs))


@pytest.fixture(scope="module")
def vitals():
    """A forecaster fitted on a few patients, and a panel of irregular series of others."""
    panel = make_irregular_vitals(n_patients=40, duration=12.0, random_state=0)
    patients = panel.index.get_level_values(0)
    fitted = LevyForecaster(
        **{**TINY_FC, "context_length": "3h", "max_horizon": "1h", "calibration_fraction": 0.3}
    ).fit(panel[patients < 6])
    return fitted, panel[patients >= 6], panel[patients < 6]


@pytest.mark.parametrize(
    ("method", "kwargs"),
    [
        ("predict", {}),
        ("predict_interval", {"coverage": [0.5, 0.9]}),
        ("predict_quantiles", {"alpha": [0.1, 0.5]}),
        ("predict_var", {}),
    ],
)
def test_predict_panel_equals_update_then_predict_in_process(client, vitals, method, kwargs):
    forecaster, new, _ = vitals
    fh = pd.to_timedelta([20, 60, 90], unit="min")  # 90 min: beyond max_horizon
    with distributed.get_task_stream(client) as tasks:
        remote = predict_panel(forecaster, new, fh, method, client=client, npartitions=5, **kwargs)
    assert ran_on_both_workers(client, tasks) and len(tasks.data) == 5
    local = copy.deepcopy(forecaster).update(new, update_params=False)
    expected = getattr(local, method)(fh, **kwargs)
    expected = expected[expected.index.get_level_values(0) >= 6]
    pd.testing.assert_index_equal(remote.index, expected.index)
    pd.testing.assert_index_equal(remote.columns, expected.columns)
    # float64 inference: equal up to rounding (windows are batched differently).
    np.testing.assert_allclose(remote.to_numpy(), expected.to_numpy(), rtol=1e-12, atol=1e-12)


@pytest.mark.usefixtures("client")  # predict_panel finds the current client itself
def test_predict_panel_keeps_the_order_of_y_and_extends_known_series(vitals):
    forecaster, new, fitted_panel = vitals
    # Later observations of patient 2 (a fitted series) among the new ones, series shuffled.
    later = fitted_panel.loc[[2]].iloc[-5:]
    later.index = later.index.set_levels(later.index.levels[1] + pd.Timedelta("1h"), level=1)
    series = [later, *(frame for _, frame in new.groupby(level=0))]
    y = pd.concat([series[i] for i in np.random.default_rng(0).permutation(len(series))])
    fh = pd.to_timedelta([30, 60], unit="min")
    remote = predict_panel(forecaster, y, fh)  # the current client, the default npartitions
    order = list(dict.fromkeys(y.index.get_level_values(0)))
    assert list(dict.fromkeys(remote.index.get_level_values(0))) == order
    local = copy.deepcopy(forecaster).update(y, update_params=False).predict(fh)
    assert local.loc[[2]].index.equals(remote.loc[[2]].index)  # after the later rows
    np.testing.assert_allclose(
        remote.to_numpy(), local.loc[order].to_numpy(), rtol=1e-12, atol=1e-12
    )


def test_predict_panel_called_again_on_the_same_data(client, vitals):
    # Data scattered under one key by two calls: the first call's clean-up must not drop it
    # from under the second (it did, "lost dependencies", with content-hashed keys).
    forecaster, new, _ = vitals
    small = new[new.index.get_level_values(0) < 12]
    fh = pd.to_timedelta([30], unit="min")
    first = predict_panel(forecaster, small, fh, client=client, npartitions=6)
    for _ in range(5):
        again = predict_panel(forecaster, small, fh, client=client, npartitions=6)
        pd.testing.assert_frame_equal(again, first)


def test_scaleout_bad_input(client, vitals, regressor_data):
    forecaster, new, _ = vitals
    with pytest.raises(ValueError, match="method='predict_proba' must be one of"):
        predict_panel(forecaster, new, [1], "predict_proba", client=client)
    with pytest.raises(ValueError, match="y must be a panel"):
        predict_panel(forecaster, new.loc[6], [1], client=client)
    with pytest.raises(ValueError, match="y is empty"):
        predict_panel(forecaster, new.iloc[:0], [1], client=client)
    with pytest.raises(ValueError, match="npartitions=0 must be a positive integer"):
        predict_panel(forecaster, new, [1], client=client, npartitions=0)
    single = LevyForecaster(**TINY_FC).fit(new.loc[6])
    with pytest.raises(ValueError, match="fitted on 1; fit it .* on a panel indexed like y"):
        predict_panel(single, new, [1], client=client)
    X, reg, _ = regressor_data
    with pytest.raises(ValueError, match="method='predict_uncertainty' must return an array"):
        predict_blocks(reg, da.from_array(X), "predict_uncertainty")
    with pytest.raises(ValueError, match="method='transform' is not a method"):
        predict_blocks(reg, da.from_array(X), "transform")
    with pytest.raises(ValueError, match="X must be a 2-d dask array"):
        predict_blocks(reg, da.from_array(X[:, 0]))
