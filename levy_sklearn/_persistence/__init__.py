"""Model files: the zip archive (:mod:`.archive`), the codec of values (:mod:`.codec`) and,
here, the estimator's declared state and its checks. The estimators' classes are passed in:
nothing here imports a front-end."""

from __future__ import annotations

import io
import os
import zipfile
from pathlib import Path
from typing import IO, Any

import numpy as np
import pandas as pd

from . import archive
from .archive import TAMPERED, refuse, require
from .codec import Reader, Writer, state_classes

FORMAT_VERSION = archive.FORMAT_VERSION
Source = str | os.PathLike | IO[bytes]
# Hyperparameters of the network's shape, under the same name in its NetworkSpec.
_ARCHITECTURE = ("d_model", "n_heads", "n_windowed_heads", "n_layers", "attention", "dropout")


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
    params = {name: attributes.pop(name) for name in _param_names(cls) if name in attributes}
    if undeclared := sorted(set(attributes) - set(cls._saved_attributes)):
        raise TypeError(
            f"attribute {undeclared[0]} of the {key} is not among the fitted state it "
            f"declares ({key}._saved_attributes), so a model file cannot hold it; declare "
            "it there with its type family."
        )
    if problem := _architecture_mismatch(params, attributes):
        raise ValueError(
            f"Cannot save: {problem} Set the hyperparameter back, or fit again with it."
        )
    writer = Writer()
    state = {
        "params": writer.values(params, "hyperparameter "),
        "attributes": writer.values(attributes, shared=_shared(cls)),
    }
    archive.write(key, state, writer, path)


def load(path: Source, classes: dict[str, type], device: str | None = None) -> Any:
    """The estimator of a model file, of one of ``classes`` (by name), checked."""
    key, version, state, tensors, arrays = archive.read(path)
    require(key in classes, f"the model file holds a {key}, not a {' or a '.join(classes)}.")
    cls = classes[key]
    state = archive.migrate(cls, version, state)
    _check_schema(cls, state)
    if device is not None:
        from ..training import check_device

        device = check_device(device)  # a ValueError naming the fix, before any work
    reader = Reader(arrays, tensors, device)
    params = reader.values(state["params"])
    attributes = reader.values(state["attributes"], _shared(cls))
    _check_fitted(cls, attributes)
    if problem := _architecture_mismatch(params, attributes):
        raise refuse(problem, TAMPERED)
    reader.check_used()
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


def _param_names(cls: type) -> list[str]:
    # scikit-base (sktime) names it get_param_names, scikit-learn _get_param_names.
    return list((getattr(cls, "get_param_names", None) or cls._get_param_names)())


def _shared(cls: type) -> set[str]:
    """The attributes that hold a net or a state object: written once, then referenced."""
    families = {"net", *state_classes()}
    return {name for name, (family, *_) in cls._saved_attributes.items() if family in families}


def _families() -> dict[str, tuple[tuple[type, ...], Any, str]]:
    """Each type family of declared attributes: its types, and a test of a value with what
    it requires (the standardisation multiplies every prediction: a NaN, inf or text there
    would come back as NaN, inf or numpy's error at predict, as non-finite weights would)."""
    from .._time_axis import is_positive_span  # here: it imports sktime
    from ..training import LevyNeuralNet

    def floats(a: np.ndarray) -> bool:
        return a.dtype.kind == "f" and bool(np.isfinite(a).all())

    def scales(a: np.ndarray) -> bool:
        return floats(a) and bool((a > 0).all())

    anything = ((object,), None, "")  # a resolved setting whose type follows the data
    return {
        **{family: ((cls,), None, "") for family, cls in state_classes().items()},
        "net": ((LevyNeuralNet,), None, ""),
        "floats": ((np.ndarray,), floats, "hold finite floats"),
        "scales": ((np.ndarray,), scales, "hold positive finite floats"),
        "names": ((np.ndarray,), None, ""),
        "int": ((int,), None, ""),
        "number": ((int, float), None, ""),
        "bool": ((bool,), None, ""),
        "text": ((str,), None, ""),
        "span": ((pd.Timedelta, int, float), is_positive_span, "be a positive span"),
        "index": ((pd.Index, type(None)), None, ""),
        "frames": ((dict,), None, ""),
        "value": anything,
        "sktime": anything,  # sktime's own
    }


def _check_schema(cls: type, state: Any) -> None:
    """The state's hyperparameters are the class's, its attributes ones it declares."""
    key = cls.__name__
    if not isinstance(state, dict) or set(state) != {"params", "attributes"}:
        raise refuse("state.json must hold exactly 'params' and 'attributes'.")
    params, attributes = state["params"], state["attributes"]
    if not isinstance(params, dict) or not isinstance(attributes, dict):
        raise refuse("state.json: 'params' and 'attributes' must be objects.")
    names = set(_param_names(cls))
    if set(params) != names:
        raise refuse(
            f"schema mismatch: the hyperparameters of {key} are not those in the file "
            f"(missing: {sorted(names - set(params))}, unknown: {sorted(set(params) - names)}).",
            "The file was written by another levy-sklearn version without a migration.",
        )
    for name in attributes:
        require(name not in names, f"{name!r} is both a hyperparameter and an attribute.")
        existing = getattr(cls, name, None)
        shadows = callable(existing) or isinstance(existing, property)
        require(not shadows, f"attribute {name!r} would shadow {cls.__name__}.{name}.")
        if name not in cls._saved_attributes:
            raise refuse(f"{name!r} is not an attribute {key} saves ({key}._saved_attributes).")


def _check_fitted(cls: type, attributes: dict) -> None:
    """Each attribute of its declared family and shape (one of another shape would broadcast
    into wrong numbers at predict), every required one there once fitted."""
    key, declared, families = cls.__name__, cls._saved_attributes, _families()
    if "net_" in attributes:
        missing = [
            n for n, (_, required, _) in declared.items() if required and n not in attributes
        ]
        if missing:
            raise refuse(f"schema mismatch: a fitted {key} needs {missing}, which the file lacks.")
    for name, value in attributes.items():
        types, test, what = families[declared[name][0]]
        if not isinstance(value, types):
            raise refuse(
                f"schema mismatch: {name} is a {type(value).__name__}, but {key} needs "
                f"{' or '.join(t.__name__ for t in types)}."
            )
        if test is not None and not test(value):
            raise refuse(f"{name} must {what}, as a fit writes it.", TAMPERED)
    for name, value in attributes.items():
        family, _, shape = declared[name]
        net = attributes.get(f"{'pretrained_' * name.startswith('pretrained_')}net_")
        if shape is None or net is None:
            continue
        spec = net.network_spec_
        dims = {"n": spec.n_channels, "q": spec.n_targets, "s": len(attributes.get("_series", ()))}
        if family == "calibration":  # the calibration checks its tables for n channels
            try:
                value.check(dims[shape])
            except ValueError as error:
                raise refuse(f"{name}: {error}", TAMPERED) from None
            continue
        want = dims[shape] if isinstance(shape, str) else tuple(dims[d] for d in shape)
        got = value if isinstance(shape, str) else np.shape(value)
        if got != want:
            raise refuse(f"{name} is {got}, where the network and the data need {want}.", TAMPERED)
    if attributes.get("_y_1d") and attributes.get("n_targets_", 1) != 1:
        raise refuse(f"_y_1d is true for {attributes.get('n_targets_')} targets.", TAMPERED)


def _architecture_mismatch(params: dict, attributes: dict) -> str | None:
    """Where a hyperparameter of the network's shape differs from the spec its net was
    built from, so that ``get_params`` describes the network; the weights are checked
    against that spec's network."""
    for attr in ("net_", "pretrained_net_"):
        spec = getattr(attributes.get(attr), "network_spec_", None)
        for name in _ARCHITECTURE if spec is not None else ():
            value = params.get(name)
            if value == "auto":  # resolved at fit: the regressor's n_layers_
                value = attributes.get(f"{name}_", value)
            built = getattr(spec, name)
            if value != "auto" and value != built:
                return f"{name}={value!r}, but {attr} was built with {name}={built!r}."
    return None
