"""Model files: the zip archive (:mod:`.archive`), the codec of the declared state
(:mod:`.codec`) and the checks of what is loaded (:mod:`.checks`). The estimators' classes
are passed in: nothing here imports a front-end."""

from __future__ import annotations

import io
import os
import zipfile
from pathlib import Path
from typing import IO, Any

from . import archive
from .checks import (
    TAMPERED,
    architecture_mismatch,
    check_fitted,
    check_schema,
    param_names,
    refuse,
    require,
)
from .codec import Reader, Writer

FORMAT_VERSION = archive.FORMAT_VERSION
Source = str | os.PathLike | IO[bytes]


def save(estimator: Any, path: Source) -> None:
    """Write ``estimator`` (one of :data:`archive.CLASSES`) and its declared state to ``path``."""
    cls = type(estimator)
    key = cls.__name__
    if archive.CLASSES.get(key) != cls.__module__:
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
    if problem := architecture_mismatch(params, attributes):
        raise ValueError(
            f"Cannot save: {problem} Set the hyperparameter back, or fit again with it."
        )
    w = Writer()
    state = {
        "params": {n: w.attribute("value", v, f"hyperparameter {n}") for n, v in params.items()},
        "attributes": {
            n: w.attribute(cls._saved_attributes[n][0], v, n) for n, v in attributes.items()
        },
    }
    archive.write(key, state, w, path)


def load(path: Source, classes: dict[str, type], device: str | None = None) -> Any:
    """The estimator of a model file, of one of ``classes`` (by name), checked."""
    key, version, state, tensors, arrays = archive.read(path)
    require(key in classes, f"the model file holds a {key}, not a {' or a '.join(classes)}.")
    cls = classes[key]
    state = archive.migrate(cls, version, state)
    check_schema(cls, state)
    if device is not None:
        from ..training import check_device

        device = check_device(device)  # a ValueError naming the fix, before any work
    reader = Reader(arrays, tensors, device)
    params = {n: reader(v) for n, v in state["params"].items()}
    attributes = {
        n: reader.attribute(cls._saved_attributes[n][0], v, n)
        for n, v in state["attributes"].items()
    }
    check_fitted(cls, attributes)
    if problem := architecture_mismatch(params, attributes):
        raise refuse(problem, TAMPERED)
    if reader.used_arrays != set(arrays):
        raise refuse(f"unexpected members {sorted(set(arrays) - reader.used_arrays)[:5]}.")
    if reader.used_tensors != set(tensors):
        unexpected = sorted(set(tensors) - reader.used_tensors)
        raise refuse(f"{archive.WEIGHTS} holds unexpected tensors {unexpected[:5]}.")
    try:
        estimator = cls(**(params if device is None else params | {"device": device}))
        # fit checks hyperparameters and a loaded model is not fitted again: check them here.
        estimator._check_params()
    except (TypeError, ValueError) as err:
        raise refuse(f"the hyperparameters are not valid for {cls.__name__} ({err}).") from err
    estimator.__dict__.update(attributes)
    return estimator


def sktime_save(estimator: Any, path: Any, serialization_format: str) -> Any:
    """sktime's ``save``: ``(class, bytes)`` for ``None``; a string is a name to which sktime
    adds ``.zip``, a path the file itself (returned opened, as sktime does)."""
    if serialization_format not in ("pickle", "cloudpickle"):
        raise ValueError(
            f"serialization_format={serialization_format!r} is not one of sktime's "
            "'pickle' or 'cloudpickle' (either writes the same model file, no pickle)."
        )
    if path is None:
        buffer = io.BytesIO()
        save(estimator, buffer)
        return type(estimator), buffer.getvalue()
    if not isinstance(path, str | os.PathLike):
        raise TypeError(f"path must be None, a str or a Path, not {type(path).__name__}.")
    path = Path(path + ".zip") if isinstance(path, str) else Path(path)
    save(estimator, path)
    return zipfile.ZipFile(path)


def sktime_load(cls: type, serial: Any, in_memory: bool) -> Any:
    """sktime's ``load_from_path`` (a path) or ``load_from_serial`` (``save()``'s bytes)."""
    if in_memory and not isinstance(serial, bytes):
        raise TypeError(f"serial must be the bytes save() returns, not a {type(serial)}.")
    return load(io.BytesIO(serial) if in_memory else serial, {cls.__name__: cls})
