"""Fixed-seed outputs of both front-ends, stored so that a refactor provably keeps behaviour.

For a fixed ``random_state`` every prediction must stay bitwise equal in the environment the
outputs were written in (library versions and processor are stored with them), equal to 1e-12
relative with other library versions on the same processor, and to 1e-4 on another processor:
training runs in float32, whose kernels round differently per instruction set and processor,
and a few hundred training steps carry that into the last six digits (up to 1.5e-5 relative
between an AMD EPYC with AVX2 and an Intel Xeon with AVX512, same library versions). A change
of behaviour moves them by far more: the regressor's ``lr`` raised from 5e-3 to 5.001e-3 moves
its means by up to 1.3e-3.

Regenerate (only for an intended change of behaviour, or to record the processor) with
``python tests/test_regression_outputs.py``, and say in the commit message which outputs moved
and by how much.
"""

import platform
from importlib.metadata import version
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch
from sktime.datasets import load_airline

from levy_sklearn.forecaster import LevyForecaster
from levy_sklearn.regressor import LevyAttentionRegressor

pytestmark = pytest.mark.filterwarnings(
    "ignore:The default of config ``remember_data``:FutureWarning"
)

STORED = Path(__file__).parent / "data" / "regression_outputs.npz"


def _table() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    X = rng.normal(size=(120, 3))
    y = X @ [1.0, -2.0, 0.5] + 0.3 * rng.normal(size=120)
    X[rng.random(X.shape) < 0.15] = np.nan
    return X, y


def _irregular() -> pd.Series:
    rng = np.random.default_rng(1)
    t = np.cumsum(rng.uniform(0.4, 1.6, 90))
    index = pd.DatetimeIndex(pd.Timestamp("2021-03-01") + pd.to_timedelta(t, unit="h"))
    y = pd.Series(10 + np.sin(2 * np.pi * t / 12) + 0.1 * rng.normal(size=90), index=index)
    y.iloc[rng.random(90) < 0.1] = np.nan
    return y


# Another processor's float32 kernels round differently (see the module docstring).
OTHER_PROCESSOR = dict(rtol=1e-4, atol=1e-6)


def _regressor(**params) -> LevyAttentionRegressor:
    X, y = _table()
    return (
        LevyAttentionRegressor(
            d_model=16, n_heads=4, n_windowed_heads=1, n_layers=1, max_epochs=3, random_state=0
        )
        .set_params(**params)
        .fit(X[:80], y[:80])
    )


def _outputs() -> dict[str, np.ndarray]:
    out = {}
    X, y = _table()
    for attention in ("levy", "softmax"):
        reg = _regressor(attention=attention)
        u = reg.predict_uncertainty(X[80:])
        for key in ("mean", "std", "evidence", "disagreement"):
            out[f"reg_{attention}_{key}"] = u[key]
        reg.conformalize(X[80:110], y[80:110])
        out[f"reg_{attention}_conformal"] = reg.predict_interval(X[110:], method="conformal")
        out[f"reg_{attention}_gaussian"] = reg.predict_interval(X[110:])
    for i, params in enumerate(LevyForecaster.get_test_params()):
        for name, series in (("airline", load_airline()), ("irregular", _irregular())):
            f = LevyForecaster(**params, random_state=0).fit(series)
            fh = [1, 2, 3] if name == "airline" else pd.to_timedelta([1, 2, 5], unit="h")
            if name == "irregular":
                fh = series.index[-1] + fh
            out[f"fc{i}_{name}_pred"] = f.predict(fh=fh).to_numpy()
            out[f"fc{i}_{name}_var"] = f.predict_var(fh=fh).to_numpy()
            out[f"fc{i}_{name}_interval"] = f.predict_interval(fh=fh, coverage=0.8).to_numpy()
    return out


def _environment() -> np.ndarray:
    """The versions whose arithmetic the stored outputs depend on."""
    return np.array([f"{n} {version(n)}" for n in ("torch", "numpy", "pandas", "scipy")])


def _processor() -> np.ndarray:
    """The processor's model and the instruction set torch's CPU kernels use."""
    model = platform.processor()
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists():  # platform.processor() is often empty on Linux
        names = [ln for ln in cpuinfo.read_text().splitlines() if ln.startswith("model name")]
        model = names[0].split(":", 1)[1].strip() if names else model
    return np.array([platform.machine(), model, torch.backends.cpu.get_cpu_capability()])


def test_fixed_seed_outputs_are_bitwise_unchanged():
    stored = np.load(STORED)
    outputs = _outputs()
    assert sorted(outputs) == sorted(k for k in stored.files if not k.startswith("_"))
    same_processor = np.array_equal(stored["_processor"], _processor())
    same_environment = same_processor and np.array_equal(stored["_environment"], _environment())
    for key, value in outputs.items():
        if same_environment:
            np.testing.assert_array_equal(value, stored[key], err_msg=key)
        elif same_processor:
            # Other releases of numpy/pandas/torch may round differently in the last bit
            # (seen: 2e-16 with numpy 1.24 and pandas 2.0): bitwise only where they match.
            np.testing.assert_allclose(value, stored[key], rtol=1e-12, atol=0, err_msg=key)
        else:  # float32 training on another processor (see the module docstring)
            np.testing.assert_allclose(value, stored[key], err_msg=key, **OTHER_PROCESSOR)


def test_other_processor_tolerance_still_sees_a_small_change_of_behaviour():
    # A learning rate 0.02 % higher must fail the check that another processor gets, or that
    # check could not tell a change of behaviour from rounding.
    stored = np.load(STORED)["reg_levy_mean"]
    changed = _regressor(lr=5.001e-3).predict_uncertainty(_table()[0][80:])["mean"]
    assert not np.allclose(changed, stored, **OTHER_PROCESSOR)


if __name__ == "__main__":
    np.savez_compressed(STORED, _environment=_environment(), _processor=_processor(), **_outputs())
