"""Model files without pickle (issue 31): levy_sklearn.serialization.save / load.

* Round trips are bitwise, in a fresh process, for the regressor (with conformal
  calibration and the noise head) and the forecaster (a series, a panel, pretrain → zero-shot
  fit, pretrained only); ``update`` and further fits work after a load.
* Saving one model twice gives the same bytes; the committed v1 fixtures still load.
* Malformed and malicious files are refused with a ``ValueError`` naming the problem, and a
  pickle that would write a marker file never runs, wherever it sits in the archive.
"""

from __future__ import annotations

import copy
import io
import json
import os
import pickle
import pickletools
import subprocess
import sys
import warnings
import zipfile
from pathlib import Path

import joblib
import numpy as np
import pandas as pd
import pytest
import torch
from conftest import TINY_FC, TINY_REG
from safetensors.torch import load as load_tensors
from safetensors.torch import save as save_tensors

import levy_sklearn
from levy_sklearn.forecaster import PRETRAINING_PARAMS, RETUNABLE_PARAMS, LevyForecaster
from levy_sklearn.regressor import LevyAttentionRegressor
from levy_sklearn.serialization import FORMAT_VERSION, load, load_from_path, save

torch.set_num_threads(1)

DATA = Path(__file__).parent / "data"
REPO = Path(levy_sklearn.__file__).resolve().parents[1]
REG = {**TINY_REG, "max_epochs": 2}
FC = {**TINY_FC, "max_epochs": 2, "windows_per_series": 20, "calibration_fraction": 0.3}
FH = pd.to_timedelta([1, 2, 5], unit="h")
COVERAGES = [0.5, 0.8, 0.95]
ALPHAS = [0.05, 0.25, 0.5, 0.9]


def table(n=80, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    y = X @ [1.0, -1.0, 0.5] + 0.2 * rng.normal(size=n)
    X[rng.random(X.shape) < 0.2] = np.nan
    return X, y


def series(n=60, seed=0, name="hr"):
    rng = np.random.default_rng(seed)
    t = np.cumsum(rng.uniform(0.5, 1.5, n))
    index = pd.DatetimeIndex(pd.Timestamp("2023-05-01") + pd.to_timedelta(t, unit="h"))
    return pd.Series(np.sin(t / 3) + 0.1 * rng.normal(size=n), index=index, name=name)


def panel(n_series=5):
    frames = {f"s{i}": series(50, seed=i).to_frame("hr") for i in range(n_series)}
    frames = {k: f.assign(bp=np.cos(np.arange(len(f)) / 5.0)) for k, f in frames.items()}
    return pd.concat(frames, names=["id", "time"])


# ---------------------------------------------------------------- fitted models


@pytest.fixture(scope="module")
def regressor():
    X, y = table()
    reg = LevyAttentionRegressor(**REG).fit(X[:50], y[:50])
    return reg.conformalize(X[50:], y[50:])


@pytest.fixture(scope="module")
def forecasters():
    single = LevyForecaster(**FC).fit(series(), fh=FH)
    y = panel()
    global_ = LevyForecaster(**{**FC, "calibration_fraction": 0.0}).fit(y, fh=FH)
    pretrained = LevyForecaster(**{**FC, "calibration_fraction": 0.0}).pretrain(y)
    pretrained_only = copy.deepcopy(pretrained)
    zero_shot = pretrained.fit(panel(1).droplevel(0), fh=FH)
    return {
        "series": single,
        "panel": global_,
        "zero_shot": zero_shot,
        "pretrained_only": pretrained_only,
    }


def regressor_outputs(reg):
    X, _ = table(30, seed=5)
    mean, std = reg.predict(X, return_std=True)
    u = reg.predict_uncertainty(X)
    return {
        "mean": mean,
        "std": std,
        "interval": reg.predict_interval(X, coverage=COVERAGES),
        "conformal": reg.predict_interval(X, coverage=[0.5, 0.9], method="conformal"),
        "noise": u.noise_variance,
        "evidence": u.evidence_per_head,
        # Drawn under the package's one seed rule (an int random_state is the torch seed).
        "samples": reg.sample_y(X, n_samples=3),
    }


def _frame_arrays(name, frame):
    frame = pd.DataFrame(frame)
    out = {name: frame.to_numpy(dtype=np.float64)}
    out[name + "_index"] = np.array([str(i) for i in frame.index], dtype=str)
    out[name + "_columns"] = np.array([str(c) for c in frame.columns], dtype=str)
    return out


def forecaster_outputs(f):
    dist = f.predict_proba()
    frames = {
        "predict": f.predict(),
        "var": f.predict_var(),
        "interval": f.predict_interval(coverage=COVERAGES),
        "quantiles": f.predict_quantiles(alpha=ALPHAS),
        "proba_mean": dist.mean(),
        "proba_var": dist.var(),
    }
    out = {}
    for name, frame in frames.items():
        out.update(_frame_arrays(name, frame))
    return out


def same_frame(a, b):
    pd.testing.assert_frame_equal(pd.DataFrame(a), pd.DataFrame(b), check_exact=True)


def assert_same(a, b):
    assert sorted(a) == sorted(b)
    for key in a:
        np.testing.assert_array_equal(a[key], b[key], err_msg=key, strict=True)


# The fresh process: loads every model file in a folder and writes its outputs, with the
# same output functions (this file's source is executed there, bar the tests).
FRESH = """
import sys, numpy as np, torch
from pathlib import Path
torch.set_num_threads(1)
sys.path.insert(0, {tests!r})
import test_serialization as t
from levy_sklearn.serialization import load
for path in sorted(Path({folder!r}).glob("*.levy.zip")):
    model = load(path)
    outputs = t.regressor_outputs(model) if path.name.startswith("reg") else (
        t.forecaster_outputs(model))
    np.savez(path.with_suffix(".npz"), **outputs)
"""


def test_round_trip_is_bitwise_in_a_fresh_process(regressor, forecasters, tmp_path):
    expected = {"reg.levy.zip": regressor_outputs(regressor)}
    save(regressor, tmp_path / "reg.levy.zip")
    for name in ("series", "panel", "zero_shot"):
        expected[f"fc_{name}.levy.zip"] = forecaster_outputs(forecasters[name])
        save(forecasters[name], tmp_path / f"fc_{name}.levy.zip")
    code = FRESH.format(tests=str(Path(__file__).parent), folder=str(tmp_path))
    env = {**os.environ, "PYTHONPATH": str(REPO), "OMP_NUM_THREADS": "1"}
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-3000:]
    for name, outputs in expected.items():
        with np.load(tmp_path / name.replace(".zip", ".npz")) as fresh:
            assert_same(outputs, dict(fresh))


def test_loaded_forecaster_keeps_every_attribute(forecasters, tmp_path):
    for name, f in forecasters.items():
        save(f, tmp_path / "f.levy.zip")
        again = load_from_path(tmp_path / "f.levy.zip")
        assert sorted(vars(again)) == sorted(vars(f)), name
        # The zero-shot forecaster's network is its pretrained one: still one object.
        if name == "zero_shot":
            assert again.net_ is again.pretrained_net_
            assert again.calibration_ is again.pretrained_calibration_
        assert again.is_fitted == f.is_fitted
        for key in ("_cutoff", "_y_metadata", "_converter_store_y", "_feature_names"):
            if hasattr(f, key):
                assert repr(getattr(again, key)) == repr(getattr(f, key)), (name, key)
        if hasattr(f, "_series"):
            assert list(again._series) == list(f._series)
            for key, frame in f._series.items():
                pd.testing.assert_frame_equal(again._series[key], frame, check_exact=True)
        assert again.get_params() == f.get_params()


def test_a_calibration_with_samples_ahead_and_history_groups_round_trips(forecasters, tmp_path):
    from levy_sklearn.calibration import fit_forecasts

    rng = np.random.default_rng(0)
    n = 3_000
    errors, ahead = rng.standard_t(4, n), rng.choice([1.0, 2.0, 5.0], n)
    f = copy.deepcopy(forecasters["series"])
    f.calibration_ = fit_forecasts(
        errors * ahead,
        np.zeros(n),
        np.ones(n),
        np.zeros(n, int),
        rng.uniform(0, 5, n),
        1,
        ahead=ahead,
        history=rng.integers(1, 30, n).astype(float),
    )
    assert f.calibration_.n_groups == 9  # 3 samples-ahead groups × 3 history groups
    assert f.calibration_.growth.max() < 0.5  # errors that do not grow: not the default 1
    save(f, tmp_path / "f.levy.zip")
    again = load_from_path(tmp_path / "f.levy.zip").calibration_
    names = ("quantiles", "second_moment", "edges", "centres", "ahead_edges", "history_edges")
    for name in (*names, "growth"):
        np.testing.assert_array_equal(getattr(again, name), getattr(f.calibration_, name))
    assert_same(forecaster_outputs(f), forecaster_outputs(load_from_path(tmp_path / "f.levy.zip")))


def test_update_and_fit_after_load(forecasters, regressor, tmp_path):
    f = forecasters["series"]
    save(f, tmp_path / "f.levy.zip")
    loaded = load(tmp_path / "f.levy.zip")
    new = series(70)[-10:]
    a = copy.deepcopy(f).update(new)
    b = loaded.update(new)
    same_frame(a.predict(), b.predict())
    same_frame(a.predict_var(), b.predict_var())

    # A pretrained forecaster shipped before any fit: a fit after the load is the same fit.
    shipped = forecasters["pretrained_only"]
    save(shipped, tmp_path / "p.levy.zip")
    y = panel(6).loc["s5"]  # a new subject
    a = copy.deepcopy(shipped).fit(y, fh=FH)
    b = load(tmp_path / "p.levy.zip").fit(y, fh=FH)
    same_frame(a.predict_var(), b.predict_var())

    # The regressor continues training from the loaded weights (fresh AdamW moments).
    save(regressor, tmp_path / "r.levy.zip")
    more = load(tmp_path / "r.levy.zip").set_params(warm_start=True)
    X, y = table(40, seed=3)
    assert more.fit(X, y).predict(X).shape == (40,)
    assert len(more.net_.history) == len(regressor.net_.history) + REG["max_epochs"]


REGULAR = {
    "monthly periods": pd.Series(
        np.sin(np.arange(48) / 4), index=pd.period_range("2000-01", periods=48, freq="M")
    ),
    "hourly, time zone": pd.DataFrame(
        {"a": np.cos(np.arange(48) / 5), "b": np.arange(48.0) / 10},
        index=pd.date_range("2024-03-01", periods=48, freq="h", tz="Europe/Berlin"),
    ),
    "integer steps": pd.Series(np.sin(np.arange(40) / 4), name="z"),
}


@pytest.mark.parametrize("case", list(REGULAR))
def test_regular_indexes_and_remembered_data_round_trip(case, tmp_path):
    y = REGULAR[case]
    f = LevyForecaster(**{**TINY_FC, "max_epochs": 1}).set_config(remember_data=True)
    f.fit(y, fh=[1, 2, 3])
    assert hasattr(f, "_y")  # sktime's own copy of the data, kept with remember_data
    save(f, tmp_path / "f.levy.zip")
    again = load(tmp_path / "f.levy.zip")
    assert repr(again._cutoff) == repr(f._cutoff)
    assert repr(again._fh) == repr(f._fh)
    same_frame(again._y, f._y)
    assert_same(forecaster_outputs(again), forecaster_outputs(f))
    # update (which extends the index by the cutoff's frequency) after the load
    step = 1 if case == "integer steps" else y.index.freq
    new = y.iloc[-2:].copy()
    new.index = y.index[-2:] + 2 * step
    same_frame(copy.deepcopy(f).update(new).predict(), again.update(new).predict())


def test_regressor_options_round_trip(tmp_path):
    """Early stopping on a validation split, σ calibrated for loss="mse" (the net's
    variance_scale_), an encoder block, periodic value embeddings, feature times, two
    targets, sample weights and DataFrame column names."""
    X, y = table(120)
    X = pd.DataFrame(X, columns=["age", "bmi", "bp"])
    Y = np.column_stack([y, -2 * y])
    reg = LevyAttentionRegressor(
        **{**REG, "max_epochs": 4},
        validation_fraction=0.2,
        patience=1,
        dropout=0.1,
        loss="mse",
        n_layers=1,
        value_embedding="periodic",
        feature_times=[-2.0, -1.0, 0.0],
    )
    reg.fit(X, Y, sample_weight=np.linspace(0.5, 2.0, len(X)))
    assert reg.net_.variance_scale_ != 1.0
    save(reg, tmp_path / "r.levy.zip")
    again = load(tmp_path / "r.levy.zip")
    assert list(again.feature_names_in_) == ["age", "bmi", "bp"]
    assert again.feature_names_in_.dtype == object
    assert again.net_.variance_scale_ == reg.net_.variance_scale_
    callbacks = dict(again.net_.callbacks)
    assert callbacks["early_stopping"].patience == 1
    assert again.net_.train_split.cv == 0.2
    assert_same(regressor_outputs_no_conformal(reg, X), regressor_outputs_no_conformal(again, X))


def regressor_outputs_no_conformal(reg, X):
    mean, std = reg.predict(X, return_std=True)
    return {"mean": mean, "std": std, "interval": reg.predict_interval(X, coverage=COVERAGES)}


def _on_device(state, device):
    """Set the estimator's and every net's device in a decoded state.json."""
    state["params"]["device"] = device

    def walk(node):
        if isinstance(node, dict):
            if "$net" in node:
                node["$net"]["training"]["device"] = device
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(state["attributes"])


@pytest.mark.skipif(torch.cuda.is_available(), reason="needs a machine without CUDA")
def test_a_gpu_model_loads_on_the_cpu(regressor_file):
    on_gpu = _edit_state(regressor_file, lambda state: _on_device(state, "cuda"))
    with pytest.raises(ValueError, match="device='cpu'"):
        load(io.BytesIO(on_gpu))
    reg = load(io.BytesIO(on_gpu), device="cpu")
    assert reg.device == "cpu" and reg.net_.device == "cpu"
    assert_same(regressor_outputs(reg), regressor_outputs(load(io.BytesIO(regressor_file))))


def test_unfitted_and_random_state_round_trip(tmp_path):
    reg = LevyAttentionRegressor(d_model=8, random_state=np.random.RandomState(3))
    save(reg, tmp_path / "u.levy.zip")
    again = load(tmp_path / "u.levy.zip")
    assert not hasattr(again, "net_")
    assert again.d_model == 8
    assert again.random_state.randint(1000) == np.random.RandomState(3).randint(1000)


def test_same_model_twice_gives_identical_bytes(regressor, forecasters, tmp_path):
    for i, model in enumerate([regressor, forecasters["zero_shot"]]):
        a, b = tmp_path / f"a{i}.levy.zip", tmp_path / f"b{i}.levy.zip"
        save(model, a)
        save(model, b)
        assert a.read_bytes() == b.read_bytes()
        c = tmp_path / f"c{i}.levy.zip"
        save(load(a), c)  # and a loaded model saves back to the same bytes
        assert c.read_bytes() == a.read_bytes()
        infos = zipfile.ZipFile(a).infolist()
        assert {info.date_time for info in infos} == {(1980, 1, 1, 0, 0, 0)}


def test_file_holds_only_data(regressor):
    buffer = io.BytesIO()
    save(regressor, buffer)
    archive = zipfile.ZipFile(io.BytesIO(buffer.getvalue()))
    names = archive.namelist()
    assert names[:3] == ["manifest.json", "state.json", "weights.safetensors"]
    assert all(n.startswith("arrays/") and n.endswith(".npy") for n in names[3:])
    manifest = json.loads(archive.read("manifest.json"))
    assert manifest["format_version"] == FORMAT_VERSION
    assert manifest["estimator"] == "LevyAttentionRegressor"
    assert {"levy-sklearn", "torch", "numpy", "safetensors"} <= set(manifest["written_by"])
    weights = load_tensors(archive.read("weights.safetensors"))
    state = regressor.net_.module_.state_dict()
    assert {k.split(".module_.", 1)[-1] for k in weights if ".module_." in k} == set(state)


def test_a_net_is_saved_as_the_specs_it_was_built_from(regressor, tmp_path):
    from dataclasses import asdict

    save(regressor, tmp_path / "r.levy.zip")
    text = zipfile.ZipFile(tmp_path / "r.levy.zip").read("state.json").decode()
    net = json.loads(text)["attributes"]["net_"]["$net"]
    # Specs, history and optimiser settings: no skorch parameter, class or function by name.
    assert asdict(regressor.net_.network_spec_) == net["network"]
    assert set(net) == {"ref", "network", "training", "dtype", "tensors", "optimizer",
                        "history", "variance_scale"}  # fmt: skip
    assert "$symbol" not in text and "$object" not in text
    again = load(tmp_path / "r.levy.zip").net_
    assert again.training_spec_ == regressor.net_.training_spec_
    assert again.network_spec_ == regressor.net_.network_spec_
    # A net of format 2 (skorch's parameters) is migrated to the specs it was built from.
    old = load(DATA / "regressor_v2.levy.zip").net_
    assert (old.network_spec_.n_channels, old.network_spec_.d_model) == (3, 8)
    assert (old.training_spec_.recipe, old.training_spec_.lr) == ("rows", 0.005)


@pytest.mark.parametrize("params", [[], {"lr": 0.1}, {"train_split": 1}])
def test_a_malformed_format_2_net_is_refused_by_name(params):
    old = (DATA / "regressor_v2.levy.zip").read_bytes()
    bad = _edit_state(old, _set(["attributes", "net_", "$net", "params"], params))
    with pytest.raises(ValueError, match="the format-2 net record of net_ is malformed"):
        load(io.BytesIO(bad))


def test_save_refuses_a_network_that_its_hyperparameters_do_not_describe(regressor, tmp_path):
    reshaped = copy.deepcopy(regressor).set_params(d_model=16)
    with pytest.raises(ValueError, match="d_model=16, but net_ was built with d_model=8"):
        save(reshaped, tmp_path / "reshaped.levy.zip")
    assert not (tmp_path / "reshaped.levy.zip").exists()


def test_save_refuses_what_it_cannot_encode(regressor, tmp_path):
    odd = copy.deepcopy(regressor)
    odd.extra_ = object()
    with pytest.raises(TypeError, match="extra_"):
        save(odd, tmp_path / "odd.levy.zip")
    assert not (tmp_path / "odd.levy.zip").exists()
    with pytest.raises(TypeError, match="LevyAttentionRegressor or a LevyForecaster"):
        save(torch.nn.Linear(2, 1), tmp_path / "x.levy.zip")


# ---------------------------------------------------------------- pickle and joblib


@pytest.mark.parametrize("via", ["pickle", "joblib"])
def test_pickle_and_joblib_still_round_trip(regressor, forecasters, tmp_path, via):
    for model, outputs in [
        (regressor, regressor_outputs),
        (forecasters["zero_shot"], forecaster_outputs),
    ]:
        buffer = io.BytesIO()
        save(model, buffer)
        loaded = load(io.BytesIO(buffer.getvalue()))
        if via == "pickle":
            again = pickle.loads(pickle.dumps(loaded))
        else:
            joblib.dump(loaded, tmp_path / "m.joblib")
            again = joblib.load(tmp_path / "m.joblib")
        assert_same(outputs(model), outputs(again))


def test_skops_status_matches_the_faq(regressor, forecasters):
    """docs/faq.rst says skops.io cannot dump either estimator; revisit it if this fails."""
    sio = pytest.importorskip("skops.io")
    for model in (regressor, forecasters["series"]):
        with pytest.raises((RuntimeError, TypeError)):
            sio.dumps(model)


# ---------------------------------------------------------------- compatibility fixtures


@pytest.mark.parametrize("version", [1, 2, 3, 4])
@pytest.mark.parametrize("name", ["regressor", "forecaster"])
def test_committed_v1_fixtures_load(name, version):
    model = load(DATA / f"{name}_v{version}.levy.zip")
    outputs = regressor_outputs(model) if name == "regressor" else forecaster_outputs(model)
    with np.load(DATA / f"{name}_v{version}_expected.npz") as expected:
        expected = dict(expected)
    assert sorted(outputs) == sorted(expected)
    for key, value in outputs.items():
        if value.dtype.kind in "US":
            np.testing.assert_array_equal(value, expected[key], err_msg=key)
        else:
            # Bitwise on the machine that wrote them; another BLAS may differ in the last bits.
            np.testing.assert_allclose(value, expected[key], rtol=1e-9, atol=0, err_msg=key)


def test_a_v1_calibration_is_migrated_once_at_load_and_saved_in_its_schema(tmp_path):
    # The v1 forecaster fixture's calibrations hold the first four tables only: loaded, every
    # table is explicit, as its absence meant (no centres, the network's mean, no pull).
    model = load(DATA / "forecaster_v1.levy.zip")
    for cal in (model.calibration_, model.pretrained_calibration_):
        assert cal.centres.size == 0 and not cal.has_unseen
        assert (cal.mean_weight == 1).all() and (cal.level_weight == 0).all()
    save(model, tmp_path / "again.levy.zip")
    state = json.loads(zipfile.ZipFile(tmp_path / "again.levy.zip").read("state.json"))
    assert state["attributes"]["calibration_"]["$state"][2]["schema"] == 2
    assert_same(forecaster_outputs(model), forecaster_outputs(load(tmp_path / "again.levy.zip")))


@pytest.mark.parametrize("version", [1, 2, 3])
def test_an_older_forecaster_file_gets_its_series_spec_whole_once_at_load(version, tmp_path):
    # Formats 1 to 3 held the fitted spec as eight attributes (format 1 without the time
    # origin, then the epoch) and read four of its fields from the hyperparameters.
    path = DATA / f"forecaster_v{version}.levy.zip"
    old = json.loads(zipfile.ZipFile(path).read("state.json"))
    model = load(path)
    spec = model.spec_
    assert spec.axis.kind == old["attributes"]["time_kind_"] == model.time_kind_
    assert model.time_unit_ == pd.Timedelta(old["attributes"]["time_unit_"]["$timedelta"][0])
    assert model.time_origin_ == old["attributes"].get("time_origin_", 0)
    assert (model.context_span_, model.horizon_span_) == (8.0, 4.0)
    assert model.seasonal_period_ is None and model.max_targets_ == 16 and spec.lags == 0
    params = old["params"]
    assert (spec.normalization, spec.max_tokens, spec.windows_per_series) == (
        params["normalization"],
        params["max_tokens"],
        params["windows_per_series"],
    )
    assert spec.observation_dropout == float(params["observation_dropout"])
    save(model, tmp_path / "again.levy.zip")
    state = json.loads(zipfile.ZipFile(tmp_path / "again.levy.zip").read("state.json"))
    assert state["attributes"]["spec_"]["$state"][0] == "SeriesSpec"
    assert not {"time_unit_", "time_kind_", "_ar_lags"} & set(state["attributes"])
    assert_same(forecaster_outputs(model), forecaster_outputs(load(tmp_path / "again.levy.zip")))


# ---------------------------------------------------------------- refusals


def _members(data: bytes) -> dict[str, bytes]:
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        return {info.filename: archive.read(info) for info in archive.infolist()}


def _archive(members: dict[str, bytes] | list[tuple[str, bytes]]) -> bytes:
    items = members.items() if isinstance(members, dict) else members
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, data in items:
            archive.writestr(name, data)
    return buffer.getvalue()


def _edit_state(data: bytes, edit) -> bytes:
    members = _members(data)
    state = json.loads(members["state.json"])
    edit(state)
    members["state.json"] = json.dumps(state).encode()
    return _archive(members)


def _edit_manifest(data: bytes, **changes) -> bytes:
    members = _members(data)
    manifest = {**json.loads(members["manifest.json"]), **changes}
    members["manifest.json"] = json.dumps(manifest).encode()
    return _archive(members)


def _edit_tensors(data: bytes, edit) -> bytes:
    members = _members(data)
    tensors = dict(load_tensors(members["weights.safetensors"]))
    edit(tensors)
    members["weights.safetensors"] = save_tensors(tensors)
    return _archive(members)


def _first_array(state: dict) -> str:
    return state["attributes"]["x_mean_"]["$ndarray"]


def _replace_array(data: bytes, payload: bytes) -> bytes:
    members = _members(data)
    members[_first_array(json.loads(members["state.json"]))] = payload
    return _archive(members)


def _with_attribute_array(name: str, change):
    """A corruption replacing the array of fitted attribute ``name`` by ``change(array)``."""

    def corrupt(data: bytes) -> bytes:
        members = _members(data)
        member = json.loads(members["state.json"])["attributes"][name]["$ndarray"]
        buffer = io.BytesIO()
        np.save(buffer, change(np.load(io.BytesIO(members[member]))), allow_pickle=False)
        members[member] = buffer.getvalue()
        return _archive(members)

    return corrupt


def _object_npy() -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, np.array([{"a": 1}], dtype=object), allow_pickle=True)
    return buffer.getvalue()


def _weight_key(tensors: dict) -> str:
    return next(k for k in sorted(tensors) if k.endswith("readout_weight"))


def _set(path: list, value):
    def edit(state):
        node = state
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = value

    return edit


def _del(path: list):
    def edit(state):
        node = state
        for key in path[:-1]:
            node = node[key]
        del node[path[-1]]

    return edit


def _retype_tensor(tensors):
    key = _weight_key(tensors)
    tensors[key] = tensors[key].float()


def _nan_tensor(tensors):
    key = _weight_key(tensors)
    tensors[key] = torch.full_like(tensors[key], float("nan"))


def _reshape_tensor(tensors):
    key = _weight_key(tensors)
    tensors[key] = torch.zeros(tensors[key].shape[0] + 1, *tensors[key].shape[1:]).double()


def _duplicate_member(data: bytes) -> bytes:
    members = list(_members(data).items())
    with warnings.catch_warnings():  # zipfile warns about the duplicate it is asked to write
        warnings.simplefilter("ignore", UserWarning)
        return _archive(members + [members[1]])


def _extra_array(data: bytes) -> bytes:
    members = _members(data)
    buffer = io.BytesIO()
    np.save(buffer, np.zeros(2))
    members["arrays/999.npy"] = buffer.getvalue()
    return _archive(members)


NET = ["attributes", "net_", "$net"]
REFUSALS = {
    "not a zip": (lambda d: b"hello, world" * 10, "not a complete zip archive"),
    "truncated": (lambda d: d[: len(d) // 2], "not a complete zip archive"),
    "whole file a pickle": (
        lambda d: pickle.dumps({"weights": [1.0]}),
        "it is a pickle",
    ),
    "unexpected member": (
        lambda d: _archive({**_members(d), "model.pkl": b"\x80\x04N."}),
        "unexpected members",
    ),
    "missing member": (
        lambda d: _archive({k: v for k, v in _members(d).items() if k != "weights.safetensors"}),
        "lacks",
    ),
    "duplicate member": (_duplicate_member, "duplicate member names"),
    "member named like an array": (
        lambda d: _archive({**_members(d), "arrays/0.npy.pkl": b"\x80\x04N."}),
        "unexpected members",
    ),
    "unreferenced array": (_extra_array, "unexpected members"),
    "state is a pickle": (
        lambda d: _archive({**_members(d), "state.json": pickle.dumps({"params": {}})}),
        "pickle payload",
    ),
    "object .npy": (lambda d: _replace_array(d, _object_npy()), "object arrays"),
    "array is a pickle": (lambda d: _replace_array(d, pickle.dumps([1.0])), "pickle payload"),
    "weights are a pickle": (
        lambda d: _archive({**_members(d), "weights.safetensors": pickle.dumps({})}),
        "pickle payload",
    ),
    "weights not safetensors": (
        lambda d: _archive({**_members(d), "weights.safetensors": b"{}"}),
        "not a valid safetensors",
    ),
    "newer format": (
        lambda d: _edit_manifest(d, format_version=FORMAT_VERSION + 1),
        "upgrade levy-sklearn",
    ),
    "not our format": (lambda d: _edit_manifest(d, format="something else"), "does not describe"),
    "unknown class": (
        lambda d: _edit_manifest(d, estimator="sklearn.linear_model.LinearRegression"),
        "unknown estimator class",
    ),
    "unknown tag": (
        lambda d: _edit_state(d, _set(["attributes", "x_mean_"], {"$pickle": "gASVAA=="})),
        "unknown type tag",
    ),
    "unknown symbol": (
        lambda d: _edit_state(d, _set([*NET, "training", "loss"], {"$symbol": "os.system"})),
        "unknown class or function",
    ),
    "hyperparameter of the wrong type": (
        lambda d: _edit_state(d, _set(["params", "max_epochs"], "10")),
        "hyperparameters are not valid.*max_epochs='10'",
    ),
    "missing hyperparameter": (
        lambda d: _edit_state(d, _del(["params", "d_model"])),
        "schema mismatch",
    ),
    "unknown hyperparameter": (
        lambda d: _edit_state(d, _set(["params", "evil"], 1)),
        "schema mismatch",
    ),
    "wrong attribute type": (
        lambda d: _edit_state(d, _set(["attributes", "x_mean_"], "0.0")),
        "schema mismatch: x_mean_",
    ),
    "missing fitted attribute": (
        lambda d: _edit_state(d, _del(["attributes", "y_scale_"])),
        "schema mismatch",
    ),
    "undeclared attribute": (
        lambda d: _edit_state(d, _set(["attributes", "extra_"], 1)),
        "'extra_' is not an attribute LevyAttentionRegressor saves",
    ),
    "shadows a method": (
        lambda d: _edit_state(d, _set(["attributes", "predict"], 1)),
        "would shadow",
    ),
    "hyperparameter differs from the network": (
        lambda d: _edit_state(d, _set(["params", "d_model"], 16)),
        "d_model=16, but net_ was built with d_model=8",
    ),
    "resolved layer count differs from the network": (
        lambda d: _edit_state(d, _set(["attributes", "n_layers_"], 1)),
        "n_layers=1, but net_ was built with n_layers=0",
    ),
    "network shape differs": (
        lambda d: _edit_state(d, _set([*NET, "network", "d_model"], 16)),
        "network rebuilt",
    ),
    "net attribute replaces its module": (
        lambda d: _edit_state(d, _set([*NET, "module_"], 1)),
        "is rebuilt, not read",
    ),
    "net in an attribute of another family": (
        lambda d: _edit_state(
            d, lambda s: s["attributes"].update(time_scale_=s["attributes"]["net_"])
        ),
        r"time_scale_ holds a \$net, which its declared family cannot",
    ),
    "reference in an attribute of another family": (
        lambda d: _edit_state(d, _set(["attributes", "x_mean_"], {"$ref": "net0"})),
        r"x_mean_ holds a \$ref",
    ),
    "deeply nested JSON": (
        lambda d: _archive({**_members(d), "state.json": b"[" * 100_000 + b"]" * 100_000}),
        "nested too deeply",
    ),
    "tensor shape": (lambda d: _edit_tensors(d, _reshape_tensor), "has shape"),
    "tensor dtype": (lambda d: _edit_tensors(d, _retype_tensor), "has dtype"),
    "NaN tensor": (lambda d: _edit_tensors(d, _nan_tensor), "NaN or infinite"),
    # these loaded and predicted inf, or treated a feature as unobserved, or failed in numpy
    "infinite target scale": (
        _with_attribute_array("y_scale_", lambda a: a * np.inf),
        "y_scale_ must hold positive finite floats",
    ),
    "zero feature scale": (
        _with_attribute_array("x_scale_", lambda a: a * 0),
        "x_scale_ must hold positive finite floats",
    ),
    "NaN feature mean": (
        _with_attribute_array("x_mean_", lambda a: a * np.nan),
        "x_mean_ must hold finite floats",
    ),
    "text feature mean": (
        _with_attribute_array("x_mean_", lambda a: a.astype(str)),
        "x_mean_ must hold finite floats",
    ),
    "extra tensor": (
        lambda d: _edit_tensors(d, lambda t: t.update(extra=torch.zeros(1))),
        "unexpected tensors",
    ),
    # unchecked, these would load and predict by broadcasting
    "feature scale of another shape": (
        _with_attribute_array("x_scale_", lambda a: a[:1]),
        r"x_scale_ is \(1,\), where the network and the data need \(3,\)",
    ),
    "target mean of another shape": (
        _with_attribute_array("y_mean_", lambda a: np.repeat(a, 2)),
        r"y_mean_ is \(2,\), where the network and the data need \(1,\)",
    ),
    "target count": (
        lambda d: _edit_state(d, _set(["attributes", "n_targets_"], 2)),
        "n_targets_ is 2, where the network and the data need 1",
    ),
    "sktime's class reference in a regressor file": (
        lambda d: _archive({**_members(d), "_metadata": CLASS_REFERENCE}),
        "_metadata belongs in forecaster files",
    ),
    "JSON NaN": (
        lambda d: _archive({**_members(d), "state.json": b'{"params": NaN}'}),
        "not JSON",
    ),
    "duplicate JSON keys": (
        lambda d: _archive(
            {**_members(d), "manifest.json": b'{"format": "a", "format": "levy-sklearn model"}'}
        ),
        "duplicate keys",
    ),
}


def _calibration_array(field: str, change):
    """A corruption replacing the forecaster calibration's table ``field``."""

    def corrupt(data: bytes) -> bytes:
        members = _members(data)
        fields = json.loads(members["state.json"])["attributes"]["calibration_"]["$state"][2]
        member = fields[field]["$ndarray"]
        buffer = io.BytesIO()
        np.save(buffer, change(np.load(io.BytesIO(members[member]))), allow_pickle=False)
        members[member] = buffer.getvalue()
        return _archive(members)

    return corrupt


FORECASTER_REFUSALS = {
    "class reference replaced by a pickle": (
        lambda d: _archive({**_members(d), "_metadata": pickle.dumps(dict)}),
        "_metadata is not the reference to LevyForecaster",
    ),
    "forecaster width edited": (
        lambda d: _edit_state(d, _set(["params", "d_model"], 16)),
        "d_model=16, but net_ was built with d_model=8",
    ),
    "class reference missing": (
        lambda d: _archive({k: v for k, v in _members(d).items() if k != "_metadata"}),
        r"lacks \['_metadata'\]",
    ),
    # unchecked, each would load: intervals off by up to 3.6, NaN, or a negative predict_var
    "series scale of another shape": (
        _with_attribute_array("series_scale_", lambda a: a[:, :1]),
        r"series_scale_ is \(5, 1\), where the network and the data need \(5, 2\)",
    ),
    "channel mean of another shape": (
        _with_attribute_array("channel_mean_", lambda a: a[:1]),
        r"channel_mean_ is \(1,\)",
    ),
    "channel count": (
        lambda d: _edit_state(d, _set(["attributes", "n_channels_"], 1)),
        "n_channels_ is 1, where the network and the data need 2",
    ),
    "NaN quantiles": (
        _calibration_array("quantiles", lambda a: a * np.nan),
        "calibration_: quantiles holds NaN",
    ),
    "negated quantiles": (
        _calibration_array("quantiles", lambda a: -a),
        "calibration_: quantiles must rise from 0",
    ),
    "negative second moment": (
        _calibration_array("second_moment", lambda a: -a),
        "calibration_: second_moment must be positive",
    ),
    "quantiles of fewer levels": (
        _calibration_array("quantiles", lambda a: a[..., :1]),
        r"calibration_: quantiles has shape \(2, \d+, 1\)",
    ),
    "calibration with an unknown table": (
        lambda d: _edit_state(
            d, _set(["attributes", "calibration_", "$state", 2, "evil"], {"$float": "nan"})
        ),
        r"calibration_: unknown tables \['evil'\]",
    ),
    "NaN time unit": (
        lambda d: _edit_state(
            d, _set(["attributes", "spec_", "$state", 2, "unit"], {"$float": "nan"})
        ),
        "spec_: the series spec's unit is nan",
    ),
    "negative context span": (
        lambda d: _edit_state(
            d, _set(["attributes", "spec_", "$state", 2, "context_span"], {"$float": "-inf"})
        ),
        "spec_: the series spec's context_span is -inf",
    ),
}


@pytest.mark.parametrize("case", list(FORECASTER_REFUSALS))
def test_malformed_forecaster_files_are_refused(forecasters, case, tmp_path):
    buffer = io.BytesIO()
    save(forecasters["panel"], buffer)
    assert isinstance(load(io.BytesIO(buffer.getvalue())), LevyForecaster)
    corrupt, message = FORECASTER_REFUSALS[case]
    path = tmp_path / "bad.levy.zip"
    path.write_bytes(corrupt(buffer.getvalue()))
    with pytest.raises(ValueError, match=message):
        load(path)


@pytest.fixture(scope="module")
def regressor_file(regressor):
    buffer = io.BytesIO()
    save(regressor, buffer)
    return buffer.getvalue()


@pytest.mark.parametrize("case", list(REFUSALS))
def test_malformed_files_are_refused(regressor_file, case, tmp_path):
    corrupt, message = REFUSALS[case]
    path = tmp_path / "bad.levy.zip"
    path.write_bytes(corrupt(regressor_file))
    with pytest.raises(ValueError, match=message):
        load(path)


def test_the_unmodified_file_loads(regressor_file):
    assert isinstance(load(io.BytesIO(regressor_file)), LevyAttentionRegressor)


class _Marker:
    """A pickle that creates a file when unpickled (calls ``open(path, "w")``)."""

    def __init__(self, path: str) -> None:
        self.path = path

    def __reduce__(self):
        return (open, (self.path, "w"))


def test_a_malicious_pickle_never_runs(regressor_file, tmp_path):
    marker = tmp_path / "pwned"
    payload = pickle.dumps(_Marker(str(marker)))
    npy = io.BytesIO()
    np.save(npy, np.array([_Marker(str(marker))], dtype=object), allow_pickle=True)
    members = _members(regressor_file)
    array = _first_array(json.loads(members["state.json"]))
    files = {
        "the whole file": payload,
        "state.json": _archive({**members, "state.json": payload}),
        "manifest.json": _archive({**members, "manifest.json": payload}),
        "weights": _archive({**members, "weights.safetensors": payload}),
        "an array member": _archive({**members, array: payload}),
        "an object .npy": _archive({**members, array: npy.getvalue()}),
        "an extra member": _archive({**members, "model.pkl": payload}),
        "sktime's _metadata": _archive({**members, "_metadata": payload}),
        "a zip of only a pickle": _archive({"model.pkl": payload}),
    }
    for where, data in files.items():
        with pytest.raises(ValueError):
            load(io.BytesIO(data))
        assert not marker.exists(), where
    # The payload is live: unpickling it does create the marker.
    pickle.loads(payload).close()
    assert marker.exists()


def test_a_missing_file_raises_file_not_found(tmp_path):
    # It was a ValueError, which a script's `except FileNotFoundError` did not catch.
    with pytest.raises(FileNotFoundError):
        load(tmp_path / "no such model.levy.zip")


def test_save_to_a_folder_or_into_a_missing_folder_names_the_path(regressor, tmp_path):
    # The atomic write's errors named its temporary file ('.../tmpw93vbns4.tmp').
    with pytest.raises(IsADirectoryError, match=r"is a folder; pass a file path"):
        save(regressor, tmp_path)
    with pytest.raises(FileNotFoundError, match=r"folder '.*no such folder' does not exist"):
        save(regressor, tmp_path / "no such folder" / "model.levy.zip")
    assert list(tmp_path.iterdir()) == []


# ---------------------------------------------------------------- sktime's save and load

# The one pickle in a forecaster file: sktime.base.load unpickles _metadata to find the class.
CLASS_REFERENCE = b"clevy_sklearn.forecaster\nLevyForecaster\n."


def test_sktime_save_and_load_round_trip_bitwise_without_pickling_the_estimator(
    forecasters, tmp_path
):
    from sktime.base import load as sktime_load

    f = forecasters["zero_shot"]
    expected = forecaster_outputs(f)
    f.save(str(tmp_path / "by_name")).close()  # sktime's convention: the name without .zip
    f.save(tmp_path / "by_path.levy.zip").close()  # a Path is the file itself
    assert sorted(p.name for p in tmp_path.iterdir()) == ["by_name.zip", "by_path.levy.zip"]
    loaded = [
        sktime_load(str(tmp_path / "by_name")),
        sktime_load(tmp_path / "by_path.levy.zip"),
        sktime_load(f.save()),  # in memory: (class, bytes)
        load(tmp_path / "by_name.zip"),
    ]
    for again in loaded:
        assert type(again) is LevyForecaster
        assert_same(expected, forecaster_outputs(again))
    with zipfile.ZipFile(tmp_path / "by_name.zip") as archive:
        members = {info.filename: archive.read(info) for info in archive.infolist()}
    assert "_obj" not in members
    assert members.pop("_metadata") == CLASS_REFERENCE
    ops = [op.name for op, _, _ in pickletools.genops(CLASS_REFERENCE)]
    assert ops == ["GLOBAL", "STOP"]  # a class by name: no data, no call
    assert not any(data.startswith(b"\x80") for data in members.values())
    assert (tmp_path / "by_name.zip").read_bytes() == f.save()[1]


def test_sktime_load_reads_a_file_of_levy_sklearn_serialization(forecasters, tmp_path):
    from sktime.base import load as sktime_load

    path = tmp_path / "model.levy.zip"
    save(forecasters["series"], path)
    again = sktime_load(path)
    assert_same(forecaster_outputs(forecasters["series"]), forecaster_outputs(again))
    # and the committed file of format 2, as every later version must
    assert_same(
        forecaster_outputs(load(DATA / "forecaster_v2.levy.zip")),
        forecaster_outputs(sktime_load(DATA / "forecaster_v2.levy.zip")),
    )


def test_sktime_pickle_files_are_refused_by_name(tmp_path):
    path = tmp_path / "old.zip"
    path.write_bytes(_archive({"_metadata": pickle.dumps(dict), "_obj": pickle.dumps({})}))
    with pytest.raises(ValueError, match=r"holds a pickle of the estimator.*read\('_obj'\)"):
        LevyForecaster.load_from_path(path)
    with pytest.raises(ValueError, match="serialization_format='json' is not one of"):
        LevyForecaster().save(str(tmp_path / "x"), serialization_format="json")


def test_sktime_load_and_save_keep_to_the_forecaster_class(regressor_file, tmp_path):
    (tmp_path / "reg.zip").write_bytes(regressor_file)
    with pytest.raises(ValueError, match="holds a LevyAttentionRegressor, not a LevyForecaster"):
        LevyForecaster.load_from_path(tmp_path / "reg.zip")
    with pytest.raises(ValueError, match="holds a LevyAttentionRegressor"):
        LevyForecaster.load_from_serial(regressor_file)

    class Subclass(LevyForecaster):
        pass

    with pytest.raises(TypeError, match="not a .*Subclass"):
        Subclass(d_model=8).save()


def test_every_forecaster_parameter_is_either_retunable_or_shapes_the_pretraining():
    names = set(LevyForecaster.get_param_names())
    assert PRETRAINING_PARAMS | RETUNABLE_PARAMS == names
    assert not PRETRAINING_PARAMS & RETUNABLE_PARAMS


def test_retunable_parameters_keep_a_loaded_pretraining(forecasters, tmp_path):
    y = panel(1).droplevel(0)
    save(forecasters["pretrained_only"], tmp_path / "shared.levy.zip")
    shared = load(tmp_path / "shared.levy.zip")
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)  # no "set_params reset" warning
        shared.set_params(verbose=0, calibration_fraction=0.3)
    assert shared.state == "pretrained"
    # The reference: the same settings before pretrain (calibration_fraction acts at fit).
    reference = LevyForecaster(**FC).pretrain(panel()).fit(y, fh=FH)
    assert_same(forecaster_outputs(reference), forecaster_outputs(shared.fit(y, fh=FH)))
    # A parameter the network is built from still resets it, with a warning.
    with pytest.warns(UserWarning, match="set_params reset this forecaster"):
        shared.set_params(d_model=16)
    assert shared.state == "new" and not hasattr(shared, "pretrained_net_")
