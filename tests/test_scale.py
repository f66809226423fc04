"""Scale-out on existing engines (issue 7): the ``device`` parameter through skorch, chunked
prediction, multi-GPU training through skorch's Accelerate integration (smoke-tested on
CPU), and ``GridSearchCV`` on a Dask distributed cluster through joblib's dask backend."""

import joblib
import numpy as np
import pandas as pd
import pytest
import torch
from conftest import TINY_REG
from sklearn.model_selection import GridSearchCV

from levy_sklearn import regressor as regressor_module
from levy_sklearn.forecaster import LevyForecaster
from levy_sklearn.regressor import LevyAttentionRegressor
from levy_sklearn.tokens import tokens_from_rows
from levy_sklearn.training import (
    LevyNeuralNet,
    NetworkSpec,
    TrainingSpec,
    fit_levy_net,
    make_levy_net,
)

torch.set_num_threads(1)

GPU = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")


def table(n=200, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    X[rng.random(X.shape) < 0.2] = np.nan
    return X, np.nansum(X * [1.0, -1.0, 0.5], axis=1) + 0.1 * rng.normal(size=n)


def hourly(n=60):
    values = np.sin(np.arange(n) / 3)
    return pd.Series(values, index=pd.date_range("2021-01-01", periods=n, freq="h"))


# ---------------------------------------------------------------- device


def test_device_auto_is_resolved_for_skorch_and_left_as_given():
    expected = "cuda" if torch.cuda.is_available() else "cpu"
    X, y = table()
    reg = LevyAttentionRegressor(**TINY_REG, device="auto").fit(X, y)
    assert reg.net_.device == expected
    assert next(reg.net_.module_.parameters()).device.type == expected
    assert reg.get_params()["device"] == "auto"  # a hyperparameter is never rewritten
    f = LevyForecaster(
        d_model=8, n_heads=2, max_epochs=1, context_length=8, max_horizon=4, device="auto"
    ).fit(hourly())
    assert f.net_.device == expected
    assert np.isfinite(f.predict(fh=[1, 2]).to_numpy()).all()


@GPU
def test_cuda_fit_matches_cpu_fit_closely():
    # Not bitwise (GPU kernels round differently), but the same model.
    X, y = table()
    cpu = LevyAttentionRegressor(**TINY_REG).fit(X, y).predict(X, return_std=True)
    gpu_model = LevyAttentionRegressor(**TINY_REG, device="cuda").fit(X, y)
    assert next(gpu_model.net_.module_.parameters()).is_cuda
    gpu = gpu_model.predict(X, return_std=True)
    np.testing.assert_allclose(gpu[0], cpu[0], rtol=1e-3, atol=1e-3)
    np.testing.assert_allclose(gpu[1], cpu[1], rtol=1e-3, atol=1e-3)


# ---------------------------------------------------------------- chunked prediction


def test_prediction_in_chunks_equals_prediction_in_one_go(monkeypatch):
    X, y = table()
    reg = LevyAttentionRegressor(**TINY_REG).fit(X, y)
    whole = reg.predict_uncertainty(X)
    monkeypatch.setattr(regressor_module, "_PREDICT_CHUNK", 7)  # 29 chunks, a ragged last one
    chunked = reg.predict_uncertainty(X)
    for key in whole:
        np.testing.assert_allclose(chunked[key], whole[key], rtol=1e-12, atol=1e-12)


# ---------------------------------------------------------------- Accelerate


def test_accelerate_mixin_trains_the_levy_net_on_cpu(tmp_path):
    """Smoke test of the documented multi-GPU recipe: an ``AccelerateMixin`` subclass of
    :class:`LevyNeuralNet`, built from :func:`make_levy_net`'s parameters, on the CPU (the
    same code runs data-parallel on GPUs under ``accelerate launch``)."""
    accelerate = pytest.importorskip("accelerate")
    from skorch.hf import AccelerateMixin

    class AcceleratedLevyNet(AccelerateMixin, LevyNeuralNet):
        """LevyNeuralNet trained through Hugging Face Accelerate."""

    X, y = table()
    tokens = tokens_from_rows((X - np.nanmean(X, 0)) / np.nanstd(X, 0))
    target = ((y - y.mean()) / y.std())[:, None].astype(np.float32)
    network = NetworkSpec(
        n_channels=3, n_targets=1, d_model=8, n_heads=2, n_windowed_heads=0, n_layers=1,
        attention="levy", dropout=0.0,
    )  # fmt: skip
    training = TrainingSpec(
        loss="crps", lr=1e-2, weight_decay=0.0, epochs=5, batch_size=32,
        validation_fraction=0.0, patience=None, device="cpu", seed=0, verbose=0,
    )  # fmt: skip
    template = make_levy_net(network, training)
    net = AcceleratedLevyNet(
        **{**template.get_params(deep=False), "device": None},  # accelerate places the model
        accelerator=accelerate.Accelerator(cpu=True),
    )
    net = fit_levy_net(net, tokens, target, 0)
    losses = net.history[:, "train_loss"]
    assert len(losses) == 5 and losses[-1] < losses[0]
    out = net.predict_moments(tokens)
    assert out.mean.shape == (200, 1) and np.isfinite(out.mean).all()
    assert (out.variance > 0).all()
    # What multi-GPU training hands on: parameters, loaded into a plain net for inference.
    net.save_params(f_params=tmp_path / "params.pt")
    plain = make_levy_net(network, training).initialize()
    plain.module_.double()
    plain.load_params(f_params=tmp_path / "params.pt")
    np.testing.assert_array_equal(plain.predict_moments(tokens).mean, out.mean)


# ---------------------------------------------------------------- Dask


def test_grid_search_on_a_dask_cluster_matches_the_local_run():
    distributed = pytest.importorskip("distributed")
    X, y = table(160, seed=1)
    grid = {"d_model": [8, 16], "lr": [5e-3, 2e-2]}

    def search(n_jobs):
        return GridSearchCV(LevyAttentionRegressor(**TINY_REG), grid, cv=2, n_jobs=n_jobs).fit(
            X, y
        )

    local = search(n_jobs=1)
    # Two workers in threads of this process (quick to start): fits run concurrently there
    # and must still match the sequential run, although torch's generator is process-wide.
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None
        ) as cluster,
        distributed.Client(cluster) as client,
        distributed.get_task_stream(client) as tasks,
        joblib.parallel_backend("dask"),
    ):
        remote = search(n_jobs=-1)
    # The fits ran as tasks on the cluster (joblib batches them, so their number varies).
    assert tasks.data and all(task["worker"].startswith("inproc://") for task in tasks.data)
    assert remote.best_params_ == local.best_params_
    np.testing.assert_array_equal(
        remote.cv_results_["mean_test_score"], local.cv_results_["mean_test_score"]
    )
    np.testing.assert_array_equal(remote.predict(X), local.predict(X))
