"""Save and load fitted estimators as plain data: no pickle, no code from the file.

A model file is a zip archive of JSON, NumPy arrays and safetensors; the FAQ ("Saving and
loading models") lists its members and what a load refuses, always with a ``ValueError``
that says what is wrong.
"""

from __future__ import annotations

import os
from typing import IO, Any

from ._persistence import FORMAT_VERSION as _FORMAT_VERSION
from ._persistence import load as load_estimator
from ._persistence import save as save_estimator

__all__ = ["FORMAT_VERSION", "load", "load_from_path", "save"]

#: Version of the file format written by :func:`save`: :func:`load` reads every version up
#: to this one (older ones through a migration) and refuses newer ones.
FORMAT_VERSION = _FORMAT_VERSION


def save(estimator: Any, path: str | os.PathLike | IO[bytes]) -> None:
    """Save an estimator, fitted or not, to a single model file: the same model twice gives
    the same bytes.

    Parameters
    ----------
    estimator : LevyAttentionRegressor or LevyForecaster
        The estimator (fitted, pretrained, or neither).
    path : str, path-like or binary file object
        Where to write; a path atomically. The suffix ``.levy.zip`` is a convention.

    Raises
    ------
    TypeError
        If the estimator is of another class, or holds an attribute the format cannot
        encode (named); nothing is written then.
    ValueError
        If a hyperparameter of the network's shape (``d_model``, ...) differs from the
        fitted network's.
    IsADirectoryError, FileNotFoundError
        If ``path`` is a folder, or its folder does not exist.

    Examples
    --------
    >>> import numpy as np
    >>> import tempfile, pathlib
    >>> from levy_sklearn.regressor import LevyAttentionRegressor
    >>> from levy_sklearn.serialization import load, save
    >>> X = np.random.default_rng(0).normal(size=(40, 2))
    >>> reg = LevyAttentionRegressor(d_model=8, n_heads=2, max_epochs=1, random_state=0)
    >>> reg = reg.fit(X, X[:, 0])
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "model.levy.zip"
    >>> save(reg, path)
    >>> bool(np.array_equal(load(path).predict(X), reg.predict(X)))
    True
    """
    save_estimator(estimator, path)


def load(path: str | os.PathLike | IO[bytes], *, device: str | None = None) -> Any:
    """Load an estimator saved by :func:`save`, without unpickling or running its code: each
    network is rebuilt from its specs and takes the weights only if they fit it.

    Parameters
    ----------
    path : str, path-like or binary file object
        A file written by :func:`save`.
    device : str, optional
        Load onto this device instead of the saved one (e.g. ``"cpu"`` for a model trained on
        a GPU); ``None`` keeps the saved device.

    Returns
    -------
    LevyAttentionRegressor or LevyForecaster
        The estimator as saved: its predictions are bitwise those of the saved one.

    Raises
    ------
    FileNotFoundError, OSError
        When the file cannot be read (as :func:`open` raises them).
    ValueError
        When the file is not a complete model file, holds a pickle, unexpected members,
        types or hyperparameters, weights that do not fit the rebuilt network, or comes from
        a newer format version; the message says which.

    Examples
    --------
    >>> import io
    >>> import numpy as np
    >>> from levy_sklearn.regressor import LevyAttentionRegressor
    >>> from levy_sklearn.serialization import load, save
    >>> X = np.random.default_rng(0).normal(size=(40, 2))
    >>> reg = LevyAttentionRegressor(d_model=8, n_heads=2, max_epochs=1, random_state=0)
    >>> reg = reg.fit(X, X[:, 0])
    >>> buffer = io.BytesIO()
    >>> save(reg, buffer)
    >>> same = load(io.BytesIO(buffer.getvalue()))
    >>> bool(np.array_equal(same.predict(X), reg.predict(X)))
    True
    >>> load(io.BytesIO(b"not a model"))
    Traceback (most recent call last):
    ...
    ValueError: Refusing to load the model file: it is not a complete zip archive ...
    """
    from .forecaster import LevyForecaster
    from .regressor import LevyAttentionRegressor

    classes = {c.__name__: c for c in (LevyAttentionRegressor, LevyForecaster)}
    return load_estimator(path, classes, device)


#: sktime's name for :func:`load`.
load_from_path = load
