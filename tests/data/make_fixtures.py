"""Write the committed compatibility fixtures of the model-file format (issue 31).

Run from the repository root, with this version of levy-sklearn::

    OMP_NUM_THREADS=1 python tests/data/make_fixtures.py

It writes ``regressor_v<N>.levy.zip`` and ``forecaster_v<N>.levy.zip`` (tiny models, ``N``
the current format version) next to this script, with ``*_expected.npz``: their outputs,
which ``tests/test_serialization.py`` compares every later version's load of the same files
against. Never regenerate the files of an earlier version: a new format version adds its
own and keeps these (a format change needs a migration, not a broken file).
"""

import sys
from pathlib import Path

import numpy as np
import torch

from levy_sklearn.forecaster import LevyForecaster
from levy_sklearn.regressor import LevyAttentionRegressor
from levy_sklearn.serialization import FORMAT_VERSION, load, save

HERE = Path(__file__).resolve().parent


def main() -> None:
    # The models and outputs of tests/test_serialization.py (imported here, not at the top,
    # so that pytest's --doctest-modules can import this file without side effects).
    sys.path.insert(0, str(HERE.parent))
    import test_serialization as t

    torch.set_num_threads(1)
    X, y = t.table()
    reg = LevyAttentionRegressor(**t.REG).fit(X[:50], y[:50]).conformalize(X[50:], y[50:])
    # Pretrained on a panel, then fitted zero-shot on a new series, its own calibration on
    # top: the pretrained network and calibration, a fitted series and sktime's state.
    fc = LevyForecaster(**t.FC).pretrain(t.panel()).fit(t.panel(1).droplevel(0), fh=t.FH)
    for name, model, outputs in [
        ("regressor", reg, t.regressor_outputs),
        ("forecaster", fc, t.forecaster_outputs),
    ]:
        path = HERE / f"{name}_v{FORMAT_VERSION}.levy.zip"
        save(model, path)
        expected = outputs(load(path))
        np.savez(HERE / f"{name}_v{FORMAT_VERSION}_expected.npz", **expected)
        print(f"{path.name}: {path.stat().st_size} bytes, {len(expected)} outputs")


if __name__ == "__main__":
    main()
