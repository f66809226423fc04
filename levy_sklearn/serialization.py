"""Save and load fitted estimators as plain data: no pickle, no code from the file.

A model file is a zip archive with fixed members (see the FAQ):

``manifest.json``
    The format and its version (:data:`FORMAT_VERSION`), the estimator class by name from a
    fixed list, and the versions of levy-sklearn and its dependencies that wrote it.
``state.json``
    Every hyperparameter, and every fitted attribute the estimator declares with its type
    family in ``_saved_attributes``, as typed JSON: a skorch net as the specs
    (:class:`~levy_sklearn.training.NetworkSpec`, :class:`~levy_sklearn.training.TrainingSpec`)
    it was built from and its history; a state class (the lead calibration, the conformal
    intervals) through its ``to_state`` and ``from_state``; any other value as JSON or one
    of a fixed table of tagged types (arrays, pandas indexes and frames, time stamps and
    spans, sktime's forecasting horizon).
``arrays/<n>.npy``
    The arrays the state refers to, read with ``allow_pickle=False``.
``weights.safetensors``
    Every net's weights. Each net is rebuilt from its specs by
    :func:`~levy_sklearn.training.make_levy_net` and takes them only if every tensor has
    the name, shape and dtype it expects, and finite values.
``_metadata`` (forecaster files only)
    The fixed bytes ``clevy_sklearn.forecaster\nLevyForecaster\n.``, which
    ``sktime.base.load`` unpickles to find the class that reads the file: a reference to the
    class (no data, no call), which :func:`load` compares as bytes and never unpickles.

Anything else (an unknown member, tag, class or hyperparameter, a pickle, a truncated
archive, a newer format) is refused with a ``ValueError`` that says what is wrong.
"""

from __future__ import annotations

import os
from typing import IO, Any

from ._persistence import archive
from ._persistence.checks import (
    TAMPERED,
    architecture_mismatch,
    check_fitted,
    check_schema,
    param_names,
    refuse,
)
from ._persistence.codec import Reader, Writer

__all__ = ["FORMAT_VERSION", "load", "load_from_path", "save"]

#: Version of the file format written by :func:`save`: :func:`load` reads every version up
#: to this one (older ones through a migration) and refuses newer ones.
FORMAT_VERSION = archive.FORMAT_VERSION


def save(estimator: Any, path: str | os.PathLike | IO[bytes]) -> None:
    """Save an estimator, fitted or not, to a single model file (a zip archive).

    The file holds every hyperparameter and declared fitted attribute as typed JSON and
    NumPy arrays, the network weights as safetensors, and the versions that wrote it; see
    the module docstring and the FAQ. Saving the same model twice gives byte-identical files.

    Parameters
    ----------
    estimator : LevyAttentionRegressor or LevyForecaster
        The estimator (fitted, pretrained, or neither).
    path : str, path-like or binary file object
        Where to write. A path is written atomically (a temporary file in the same folder,
        then renamed). The suffix ``.levy.zip`` is a convention, not a requirement.

    Raises
    ------
    TypeError
        If the estimator is of another class, or holds an attribute the format cannot
        encode (the message names it); nothing is written then.
    ValueError
        If a hyperparameter of the network's shape (``d_model``, ``n_heads``, ...) was set
        after the fit and differs from the fitted network's (a file of it would be refused).
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
    cls = type(estimator)
    key = next((k for k, c in archive.estimator_classes().items() if c is cls), None)
    if key is None:
        raise TypeError(
            f"save takes a LevyAttentionRegressor or a LevyForecaster, not a "
            f"{cls.__qualname__} (subclasses included: the file names its class from a "
            "fixed list)."
        )
    attributes = dict(vars(estimator))
    params = {name: attributes.pop(name) for name in param_names(cls) if name in attributes}
    undeclared = sorted(set(attributes) - set(cls._saved_attributes))
    if undeclared:
        raise TypeError(
            f"attribute {undeclared[0]} of the {key} is not among the fitted state it "
            f"declares ({key}._saved_attributes), so a model file cannot hold it; declare "
            "it there with its type family."
        )
    problem = architecture_mismatch(params, attributes)
    if problem:
        raise ValueError(
            f"Cannot save: {problem} Set the hyperparameter back, or fit again with it."
        )
    writer = Writer()
    state = {
        "params": {
            n: writer.attribute("value", v, f"hyperparameter {n}") for n, v in params.items()
        },
        "attributes": {
            n: writer.attribute(cls._saved_attributes[n][0], v, n) for n, v in attributes.items()
        },
    }
    archive.write(key, state, writer, path)


def load(path: str | os.PathLike | IO[bytes], *, device: str | None = None) -> Any:
    """Load an estimator saved by :func:`save`, without unpickling or running its code.

    The estimator class and every type the file can name come from fixed tables, arrays are
    read with ``allow_pickle=False`` and weights from safetensors; each net is rebuilt from
    its specs and takes the weights only if they fit it.

    Parameters
    ----------
    path : str, path-like or binary file object
        A file written by :func:`save`.
    device : str, optional
        Load onto this device instead of the one the model was saved with (its ``device``
        hyperparameter and its networks'): e.g. ``"cpu"`` for a model trained on a GPU and
        scored on a machine without one. ``None`` keeps the saved device.

    Returns
    -------
    LevyAttentionRegressor or LevyForecaster
        The estimator, in the state it was saved in: its predictions are bitwise those of
        the saved one.

    Raises
    ------
    FileNotFoundError, OSError
        When the file cannot be read (as :func:`open` raises them).
    ValueError
        When the file is not a complete model file, holds a pickle, unexpected members,
        types, classes or hyperparameters, tensors whose shape or dtype does not match the
        rebuilt network, non-finite weights, or comes from a newer format version; the
        message says which.

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
    cls, state, tensors, arrays = archive.read(path)
    check_schema(cls, state)
    net_device = None
    if device is not None:
        from .training import check_device

        net_device = check_device(device)  # a ValueError naming the fix, before any work
    reader = Reader(arrays, tensors, net_device)
    params = {n: reader(v) for n, v in state["params"].items()}
    attributes = {
        n: reader.attribute(cls._saved_attributes[n][0], v, n)
        for n, v in state["attributes"].items()
    }
    check_fitted(cls, attributes)
    problem = architecture_mismatch(params, attributes)
    if problem:
        raise refuse(problem, TAMPERED)
    if reader.used_arrays != set(arrays):
        raise refuse(f"unexpected members {sorted(set(arrays) - reader.used_arrays)[:5]}.")
    if reader.used_tensors != set(tensors):
        unexpected = sorted(set(tensors) - reader.used_tensors)
        raise refuse(f"{archive.WEIGHTS} holds unexpected tensors {unexpected[:5]}.")
    try:
        estimator = cls(**(params if device is None else params | {"device": device}))
        # fit checks hyperparameters, a loaded model is not fitted again: check them here
        # (a max_epochs of "10" loaded, and failed at the first warm fit or update).
        estimator._check_params()
    except (TypeError, ValueError) as err:
        raise refuse(f"the hyperparameters are not valid for {cls.__name__} ({err}).") from err
    estimator.__dict__.update(attributes)
    return estimator


#: sktime's name for :func:`load`.
load_from_path = load
