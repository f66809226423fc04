"""Save and load fitted estimators as plain data: no pickle, no code from the file.

A model file is a zip archive with fixed members:

``manifest.json``
    The file format and its version (:data:`FORMAT_VERSION`), the estimator class by name
    from a fixed list (``"LevyAttentionRegressor"``, ``"LevyForecaster"``) and the versions of
    levy-sklearn and its dependencies that wrote it.
``state.json``
    Every hyperparameter and every fitted attribute, each one the estimator declares with
    its type family in ``_saved_attributes`` (an undeclared one is refused), as typed JSON: a
    small tagged encoding of numbers, strings, lists, tuples, dicts, ``None``, NumPy arrays,
    pandas indexes, frames, timestamps and time deltas, sktime forecasting horizons and the
    package's own small state classes (:class:`~levy_sklearn.calibration.LeadCalibration`,
    :class:`~levy_sklearn.conformal.ConformalIntervals`, the forecaster's resolved
    ``SeriesSpec``), each from a fixed registry and
    written and read only through its ``to_state`` and ``from_state``.
``arrays/<n>.npy``
    The NumPy arrays the state refers to, read with ``allow_pickle=False``.
``weights.safetensors``
    The state dict of every trained torch module, in the safetensors format (tensors and a
    JSON header, no code path). The skorch nets are rebuilt from their hyperparameters and
    get these weights, checked name by name for shape, dtype and finiteness.
``_metadata`` (forecaster files only)
    The fixed text ``clevy_sklearn.forecaster\nLevyForecaster\n.``: sktime's
    ``sktime.base.load`` unpickles this member to learn the class whose ``load_from_path``
    reads the file, so it must be a pickle; it is the smallest one, a reference to the class
    (the ``GLOBAL`` and ``STOP`` opcodes: no data, no call). :func:`load` compares it with
    these bytes and never unpickles it.

Loading never unpickles and never imports a name taken from the file: every class and
function a file can refer to is a key of a fixed table in this module. Anything else (an
unknown member, tag, class, hyperparameter, a pickle payload, a truncated archive, a file
from a newer format) is refused with a ``ValueError`` that says what is wrong.
"""

from __future__ import annotations

import enum
import io
import json
import math
import os
import platform
import re
import tempfile
import zipfile
from collections.abc import Callable
from importlib import metadata
from pathlib import Path
from typing import IO, Any

import numpy as np
import pandas as pd
import torch

__all__ = ["FORMAT_VERSION", "load", "load_from_path", "save"]

#: Version of the file format written by :func:`save`. :func:`load` reads every version up
#: to this one (older ones through a migration) and refuses newer ones.
FORMAT_VERSION = 3
_FORMAT = "levy-sklearn model"
_MANIFEST = "manifest.json"
_STATE = "state.json"
_WEIGHTS = "weights.safetensors"
# sktime.base.load(path) runs pickle.loads on this member and calls load_from_path of the
# class it names: a class reference by module and name (protocol 0's GLOBAL, then STOP).
_SKTIME_METADATA = "_metadata"
_CLASS_REFERENCES = {"LevyForecaster": b"clevy_sklearn.forecaster\nLevyForecaster\n."}
_ARRAY = re.compile(r"arrays/(0|[1-9][0-9]{0,8})\.npy")
# A fixed timestamp for every zip entry, so that saving one model twice gives the same bytes.
_DATE_TIME = (1980, 1, 1, 0, 0, 0)
_PICKLE_PROTOCOL = b"\x80"  # a pickle of protocol 2 or later starts with the PROTO opcode
# Hyperparameters added since format 1 was fixed: a file without them was written before
# they existed and loads with their default (calibration_folds changes how a later pretrain
# trains). The state classes' own tables default likewise, in their from_state.
_ADDED_SINCE_V1 = {"LevyForecaster": {"calibration_folds"}}


# Array kinds a file may hold: bool, integers, floats, complex, datetime, timedelta, text.
# Object ("O") and structured ("V") arrays would need pickle or carry arbitrary layouts.
_ARRAY_KINDS = frozenset("biufcmMU")
# Versions recorded in the manifest (informative: loading does not depend on them).
_DEPENDENCIES = (
    "levy-sklearn",
    "numpy",
    "pandas",
    "torch",
    "scikit-learn",
    "skorch",
    "sktime",
    "safetensors",
)
# A fitted forecaster's series spec (spec_, format 3) held as attributes and hyperparameters
# by formats 1 and 2: the spec's field of each.
_SPEC_ATTRIBUTES = {
    "time_kind_": "kind",
    "time_unit_": "unit",
    "time_origin_": "origin",
    "context_span_": "context_span",
    "horizon_span_": "horizon_span",
    "seasonal_period_": "seasonal_period",
    "max_targets_": "max_targets",
    "_ar_lags": "lags",
}
_SPEC_PARAMS = ("normalization", "max_tokens", "windows_per_series", "observation_dropout")


def _spec_whole(state: Any) -> Any:
    """Format 2's state as format 3's: a fitted forecaster's eight attributes of its series
    spec and the four hyperparameters it read at predict, as the one ``spec_``."""
    attributes = state.get("attributes") if isinstance(state, dict) else None
    if not isinstance(attributes, dict) or "time_unit_" not in attributes:
        return state  # a regressor, or a forecaster not fitted
    fields = {
        field: attributes.pop(name)
        for name, field in _SPEC_ATTRIBUTES.items()
        if name in attributes
    }
    fields.setdefault("origin", 0)  # files saved before it measured times from the epoch
    params = state.get("params")
    if isinstance(params, dict):
        fields |= {name: params[name] for name in _SPEC_PARAMS if name in params}
    # The spec held a float: a whole observation_dropout reads back as the float it was.
    if isinstance(fields.get("observation_dropout"), int):
        fields["observation_dropout"] = float(fields["observation_dropout"])
    attributes["spec_"] = {"$state": ["SeriesSpec", "spec_", fields]}
    return state


# Migrations from older format versions: {version: function turning that version's state
# into the next version's}. Format 2 added the _metadata member of forecaster files (the
# state is version 1's); format 3 holds a fitted forecaster's series spec whole.
_MIGRATIONS: dict[int, Callable[[dict], dict]] = {1: lambda state: state, 2: _spec_whole}


def _estimator_classes() -> dict[str, type]:
    # The package's public estimators by name, through its lazy attributes
    # (levy_sklearn.__getattr__): importing this module imports no front-end (nor sktime),
    # and the estimators' own save and load methods, which call this module, stay below it.
    from . import LevyAttentionRegressor, LevyForecaster

    return {"LevyAttentionRegressor": LevyAttentionRegressor, "LevyForecaster": LevyForecaster}


def _symbols() -> dict[str, Any]:
    """Classes and functions a skorch net's hyperparameters may name, by fixed key."""
    from skorch.callbacks import EarlyStopping
    from skorch.dataset import ValidSplit
    from torch.utils.data import DataLoader
    from torch.utils.data._utils.collate import default_convert

    from .network import LevyNet
    from .training import (
        BaseLRScheduler,
        EpochTable,
        FitProgressBar,
        GaussianScore,
        TokenDataset,
    )

    return {
        "levy_sklearn.LevyNet": LevyNet,
        "levy_sklearn.GaussianScore": GaussianScore,
        "levy_sklearn.TokenDataset": TokenDataset,
        "levy_sklearn.BaseLRScheduler": BaseLRScheduler,
        "levy_sklearn.FitProgressBar": FitProgressBar,
        "levy_sklearn.EpochTable": EpochTable,
        "torch.optim.AdamW": torch.optim.AdamW,
        "torch.utils.data.DataLoader": DataLoader,
        "torch.default_convert": default_convert,
        "skorch.EarlyStopping": EarlyStopping,
        "skorch.ValidSplit": ValidSplit,
        "builtins.print": print,
    }


# Symbols above that are objects rebuilt from their ``get_params`` (callbacks, splits).
_PARAMETRISED = (
    "levy_sklearn.BaseLRScheduler",
    "levy_sklearn.FitProgressBar",
    "skorch.EarlyStopping",
    "skorch.ValidSplit",
)


def _enums() -> dict[str, type[enum.Enum]]:
    # sktime records each column's kind in _y_metadata["feature_kind"].
    try:
        from sktime.datatypes._dtypekind import DtypeKind
    except ImportError:  # older sktime used pandas' interchange enumeration
        from pandas.core.interchange.dataframe_protocol import DtypeKind
    return {"sktime.DtypeKind": DtypeKind}


def _state_classes() -> dict[str, type]:
    """Small state classes of the package, each saved through its ``to_state`` and read
    through its ``from_state`` (which checks what it reads), by fixed key."""
    from ._series_training import SeriesSpec
    from .calibration import LeadCalibration
    from .conformal import ConformalIntervals

    return {
        "LeadCalibration": LeadCalibration,
        "ConformalIntervals": ConformalIntervals,
        "SeriesSpec": SeriesSpec,
    }


# Attributes of a skorch net that ``initialize()`` rebuilds from its hyperparameters.
_NET_REBUILT = frozenset(
    {
        "initialized_",
        "virtual_params_",
        "init_context_",
        "callbacks_",
        "prefixes_",
        "cuda_dependent_attributes_",
        "_modules",
        "module_",
        "_criteria",
        "criterion_",
        "_optimizers",
        "optimizer_",
        "_params_to_validate",
    }
)
_TORCH_DTYPES = {"float32": torch.float32, "float64": torch.float64}
# Items of the object arrays a file may hold.
_PLAIN = (str, int, float, bool)
_STRING_INDEX_DTYPES = frozenset({"object", "str", "string"})


def _versions() -> dict[str, str]:
    from . import __version__

    versions = {"python": platform.python_version(), "levy-sklearn": __version__}
    for name in _DEPENDENCIES[1:]:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = "unknown"
    return versions


# ---------------------------------------------------------------------------------- writing
class _Writer:
    """Encodes Python values as tagged JSON, collecting arrays and tensors on the side."""

    def __init__(self) -> None:
        self.arrays: list[bytes] = []
        self.tensors: dict[str, torch.Tensor] = {}
        self.memo: dict[int, tuple[str, Any]] = {}  # id → (reference, object kept alive)
        self.symbols = {id(v): k for k, v in _symbols().items()}
        self.enums = {v: k for k, v in _enums().items()}
        self.state_classes = {cls: key for key, cls in _state_classes().items()}

    def array(self, a: np.ndarray, where: str) -> str:
        if a.dtype.kind not in _ARRAY_KINDS or a.dtype.fields is not None:
            raise TypeError(
                f"{where}: arrays of dtype {a.dtype} cannot be saved (an object array would "
                "need pickle); convert it to a numeric or text array."
            )
        buffer = io.BytesIO()
        np.save(buffer, a, allow_pickle=False)
        self.arrays.append(buffer.getvalue())
        return f"arrays/{len(self.arrays) - 1}.npy"

    def encode(self, value: Any, where: str) -> Any:
        """Tagged JSON of ``value``; ``where`` names it in errors."""
        from skorch.history import History

        from .training import LevyNeuralNet

        # Exact types: NumPy scalars and enumerations subclass float, int or str, and must
        # come back as what they were.
        if value is None or type(value) in (bool, int, str):
            return value
        if type(value) is float:
            return value if math.isfinite(value) else {"$float": repr(value)}
        if isinstance(value, enum.Enum) and type(value) in self.enums:
            return {"$enum": [self.enums[type(value)], self.encode(value.value, where)]}
        if isinstance(value, History):
            return {"$history": [self.encode(v, f"{where}[{i}]") for i, v in enumerate(value)]}
        if isinstance(value, list):
            return [self.encode(v, f"{where}[{i}]") for i, v in enumerate(value)]
        if isinstance(value, tuple):
            return {"$tuple": [self.encode(v, f"{where}[{i}]") for i, v in enumerate(value)]}
        if isinstance(value, set | frozenset):
            items = [self.encode(v, f"{where} item") for v in value]
            return {"$set": sorted(items, key=lambda e: json.dumps(e, sort_keys=True))}
        if isinstance(value, dict):
            return self.encode_dict(value, where)
        if isinstance(value, np.ndarray) and value.dtype == object:
            # scikit-learn keeps column names (feature_names_in_) as an object array of
            # str: its items go into the JSON, one by one, rather than into a pickle.
            items = value.ravel().tolist()
            if not all(item is None or type(item) in _PLAIN for item in items):
                raise TypeError(
                    f"{where}: an object array can be saved only if it holds str, int, float, "
                    "bool or None."
                )
            return {"$objectarray": [list(value.shape), [self.encode(i, where) for i in items]]}
        if isinstance(value, np.ndarray):
            return {"$ndarray": self.array(value, where)}
        if isinstance(value, np.generic):
            return {"$npscalar": self.array(np.asarray(value), where)}
        if id(value) in self.memo:  # the same net or state object twice: a reference
            return {"$ref": self.memo[id(value)][0]}
        if isinstance(value, LevyNeuralNet) and type(value) is LevyNeuralNet:
            return self.encode_net(value, where)
        if type(value) in self.state_classes:
            return self.encode_state_object(value, where)
        if id(value) in self.symbols:
            return {"$symbol": self.symbols[id(value)]}
        key = self.symbols.get(id(type(value)))
        if key in _PARAMETRISED:
            params = value.get_params(deep=False) if hasattr(value, "get_params") else None
            if params is None:  # skorch's ValidSplit has no get_params
                params = {k: v for k, v in vars(value).items() if not k.endswith("_")}
            return {"$object": [key, self.encode_dict(params, f"{where} parameters")]}
        if isinstance(value, np.random.RandomState):
            return {"$randomstate": self.encode(value.get_state(), where)}
        return self.encode_pandas(value, where)

    def encode_dict(self, value: dict, where: str) -> dict:
        if all(isinstance(k, str) and not k.startswith("$") for k in value):
            return {k: self.encode(v, f"{where}[{k!r}]") for k, v in value.items()}
        return {
            "$dict": [
                [self.encode(k, f"{where} key"), self.encode(v, f"{where}[{k!r}]")]
                for k, v in value.items()
            ]
        }

    def encode_state_object(self, value: Any, where: str) -> dict:
        key = self.state_classes[type(value)]
        ref = f"obj{len(self.memo)}"
        self.memo[id(value)] = (ref, value)
        fields = {n: self.encode(v, f"{where}.{n}") for n, v in value.to_state().items()}
        return {"$state": [key, ref, fields]}

    def encode_net(self, net: Any, where: str) -> dict:
        ref = f"net{len(self.memo)}"
        self.memo[id(net)] = (ref, net)
        params = {k: v for k, v in net.get_params(deep=False).items() if not k.startswith("_")}
        extra = {k: v for k, v in vars(net).items() if k not in params and k not in _NET_REBUILT}
        if not getattr(net, "initialized_", False):
            raise TypeError(f"{where}: the skorch net is not initialised; fit it first.")
        dtypes = {p.dtype for p in net.module_.parameters() if p.is_floating_point()}
        names = {v: k for k, v in _TORCH_DTYPES.items()}
        if len(dtypes) != 1 or next(iter(dtypes)) not in names:
            raise TypeError(f"{where}: the module mixes dtypes {sorted(map(str, dtypes))}.")
        components = {}
        for attr in ("module_", "criterion_"):
            keys = []
            for name, tensor in getattr(net, attr).state_dict().items():
                key = f"{ref}.{attr}.{name}"
                # A copy on the CPU: safetensors refuses tensors that share memory.
                self.tensors[key] = tensor.detach().to("cpu", copy=True).contiguous()
                keys.append(name)
            components[attr] = keys
        return {
            "$net": {
                "class": "LevyNeuralNet",
                "ref": ref,
                "params": self.encode_dict(params, f"{where} parameters"),
                "attributes": self.encode_dict(extra, where),
                "dtype": names[next(iter(dtypes))],
                "tensors": components,
                # The optimiser's hyperparameters (learning rates, the scheduler's
                # initial_lr), not its moments: further training resumes from the weights.
                "optimizer": self.encode(
                    net.optimizer_.state_dict()["param_groups"], f"{where}.optimizer_"
                ),
            }
        }

    def encode_index(self, index: pd.Index, where: str) -> dict:
        name = self.encode(index.name, f"{where}.name")
        if isinstance(index, pd.MultiIndex):
            return {
                "$multiindex": {
                    "levels": [self.encode_index(lv, where) for lv in index.levels],
                    "codes": [self.encode(np.asarray(c), where) for c in index.codes],
                    "names": [self.encode(n, f"{where}.names") for n in index.names],
                }
            }
        if isinstance(index, pd.RangeIndex):
            return {"$rangeindex": [index.start, index.stop, index.step, name]}
        if isinstance(index, pd.DatetimeIndex):
            naive = index.tz_convert(None) if index.tz is not None else index
            return {
                "$datetimeindex": {
                    "values": self.encode(naive.to_numpy(), where),
                    "tz": _tz_name(index.tz, where),
                    "freq": index.freqstr,
                    "name": name,
                }
            }
        if isinstance(index, pd.TimedeltaIndex):
            return {
                "$timedeltaindex": {
                    "values": self.encode(index.to_numpy(), where),
                    "freq": index.freqstr,
                    "name": name,
                }
            }
        if isinstance(index, pd.PeriodIndex):
            return {
                "$periodindex": {
                    "ordinals": self.encode(np.asarray(index.asi8), where),
                    "freq": index.freqstr,
                    "name": name,
                }
            }
        if type(index) is pd.Index:
            dtype = str(index.dtype)
            if isinstance(index.dtype, np.dtype) and index.dtype.kind in _ARRAY_KINDS:
                values = self.encode(index.to_numpy(), where)
            elif dtype in _STRING_INDEX_DTYPES:
                values = [self.encode(v, f"{where} label") for v in index.tolist()]
            else:
                raise TypeError(f"{where}: an index of dtype {dtype} cannot be saved.")
            return {"$index": {"values": values, "dtype": dtype, "name": name}}
        raise TypeError(f"{where}: a {type(index).__name__} cannot be saved.")

    def column(self, values: pd.Series, where: str) -> Any:
        if not isinstance(values.dtype, np.dtype):
            raise TypeError(
                f"{where}: columns of dtype {values.dtype} cannot be saved; use a NumPy dtype."
            )
        return self.encode(values.to_numpy(), where)

    def encode_pandas(self, value: Any, where: str) -> Any:
        from sktime.forecasting.base import ForecastingHorizon

        if isinstance(value, pd.Index):
            return self.encode_index(value, where)
        if isinstance(value, pd.DataFrame) and type(value) is pd.DataFrame:
            if value.attrs:
                raise TypeError(f"{where}: DataFrame.attrs cannot be saved.")
            columns = [self.column(value.iloc[:, i], where) for i in range(value.shape[1])]
            return {
                "$dataframe": {
                    "index": self.encode_index(value.index, f"{where}.index"),
                    "columns": self.encode_index(value.columns, f"{where}.columns"),
                    "data": columns,
                }
            }
        if isinstance(value, pd.Series) and type(value) is pd.Series:
            if value.attrs:
                raise TypeError(f"{where}: Series.attrs cannot be saved.")
            return {
                "$series": {
                    "index": self.encode_index(value.index, f"{where}.index"),
                    "name": self.encode(value.name, f"{where}.name"),
                    "data": self.column(value, where),
                }
            }
        if value is pd.NaT:
            return {"$nat": None}
        if isinstance(value, pd.Timestamp):
            tz = _tz_name(value.tz, where)
            moment = value.tz_convert(None) if tz is not None else value
            return {"$timestamp": [int(moment.asm8.view(np.int64)), value.unit, tz]}
        if isinstance(value, pd.Timedelta):
            return {"$timedelta": [int(value.asm8.view(np.int64)), value.unit]}
        if isinstance(value, pd.Period):
            return {"$period": [int(value.ordinal), value.freqstr]}
        if isinstance(value, pd.DateOffset):
            return {"$offset": value.freqstr}
        if isinstance(value, ForecastingHorizon):
            return {
                "$fh": {
                    "values": self.encode_index(value.to_pandas(), where),
                    "is_relative": bool(value.is_relative),
                    "freq": self.encode(value.freq, f"{where}.freq"),
                }
            }
        raise TypeError(
            f"{where}: a {type(value).__module__}.{type(value).__qualname__} cannot be saved "
            "in a levy-sklearn model file (only data and the package's own state classes "
            "can); use pickle or joblib, from a trusted source only, for such an estimator."
        )


def _tz_name(tz: Any, where: str) -> str | None:
    """The time zone's name, which load gives back to pandas (checked here, at save time)."""
    if tz is None:
        return None
    name = str(tz)
    try:
        same = str(pd.Timestamp(0, tz="UTC").tz_convert(name).tz) == name
    except (ValueError, TypeError, KeyError):
        same = False
    if not same:
        raise TypeError(
            f"{where}: the time zone {tz!r} has no name pandas reads back; use a named zone "
            "(e.g. 'Europe/Berlin') or UTC."
        )
    return name


def _zip_info(name: str) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(name, date_time=_DATE_TIME)
    info.compress_type = zipfile.ZIP_STORED  # weights barely compress; storing is fastest
    info.create_system = 3  # the same bytes on every platform
    info.external_attr = 0o644 << 16
    return info


def _param_names(cls: type) -> list[str]:
    # scikit-base (sktime) names it get_param_names, scikit-learn _get_param_names.
    getter = getattr(cls, "get_param_names", None) or cls._get_param_names
    return list(getter())


def _state_of(estimator: Any) -> tuple[str, dict]:
    classes = _estimator_classes()
    key = next((k for k, cls in classes.items() if type(estimator) is cls), None)
    if key is None:
        raise TypeError(
            f"save takes a LevyAttentionRegressor or a LevyForecaster, not a "
            f"{type(estimator).__qualname__} (subclasses included: the file names its class "
            "from a fixed list)."
        )
    names = _param_names(type(estimator))
    attributes = dict(vars(estimator))
    params = {name: attributes.pop(name) for name in names if name in attributes}
    undeclared = sorted(set(attributes) - set(type(estimator)._saved_attributes))
    if undeclared:
        raise TypeError(
            f"attribute {undeclared[0]} of the {key} is not among the fitted state it "
            f"declares ({key}._saved_attributes), so a model file cannot hold it; declare "
            "it there with its type family."
        )
    return key, {"params": params, "attributes": attributes}


def save(estimator: Any, path: str | os.PathLike | IO[bytes]) -> None:
    """Save an estimator, fitted or not, to a single model file (a zip archive).

    The file holds every hyperparameter and fitted attribute as typed JSON and NumPy arrays,
    the network weights as safetensors, and the versions that wrote it; see the module
    docstring and the FAQ. Saving the same model twice gives byte-identical files.

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

    See Also
    --------
    load : Read the file back.

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
    from safetensors.torch import save as save_tensors

    key, state = _state_of(estimator)
    problem = _architecture_mismatch(state["params"], state["attributes"])
    if problem:
        raise ValueError(
            f"Cannot save: {problem} Set the hyperparameter back, or fit again with it."
        )
    writer = _Writer()
    encoded = {
        "params": writer.encode_dict(state["params"], "hyperparameter"),
        "attributes": writer.encode_dict(state["attributes"], "attribute"),
    }
    manifest = {
        "format": _FORMAT,
        "format_version": FORMAT_VERSION,
        "estimator": key,
        "written_by": _versions(),
    }
    members = [
        (_MANIFEST, _json_bytes(manifest)),
        (_STATE, _json_bytes(encoded)),
        (_WEIGHTS, save_tensors(writer.tensors)),
    ]
    members += [(f"arrays/{i}.npy", data) for i, data in enumerate(writer.arrays)]
    if key in _CLASS_REFERENCES:
        members.append((_SKTIME_METADATA, _CLASS_REFERENCES[key]))
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, data in members:
            archive.writestr(_zip_info(name), data)
    data = buffer.getvalue()
    if hasattr(path, "write"):
        path.write(data)
        return
    path = Path(path)
    # Checked here: the atomic write's errors would name its temporary file instead.
    if path.is_dir():
        raise IsADirectoryError(
            f"{str(path)!r} is a folder; pass a file path, e.g. {str(path / 'model.levy.zip')!r}."
        )
    if not path.parent.is_dir():
        raise FileNotFoundError(
            f"The folder {str(path.parent)!r} does not exist; create it first, e.g. "
            "Path(path).parent.mkdir(parents=True)."
        )
    handle, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _json_bytes(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=True, separators=(",", ":"), allow_nan=False).encode()


# ---------------------------------------------------------------------------------- reading
def _refuse(problem: str, fix: str = "") -> ValueError:
    return ValueError(f"Refusing to load the model file: {problem}" + (f" {fix}" if fix else ""))


def _strict_json(data: bytes, member: str) -> Any:
    if data.startswith(_PICKLE_PROTOCOL):
        raise _refuse(
            f"{member} is a pickle payload, which could run code when loaded.",
            "levy-sklearn files hold JSON there; load pickles only from sources you trust.",
        )

    def no_duplicates(pairs: list[tuple[str, Any]]) -> dict:
        keys = [k for k, _ in pairs]
        if len(set(keys)) != len(keys):
            raise _refuse(f"{member} has duplicate keys.")
        return dict(pairs)

    def no_constant(name: str) -> None:
        raise _refuse(f"{member} holds {name}, which is not JSON.")

    try:
        return json.loads(
            data.decode("utf-8"), object_pairs_hook=no_duplicates, parse_constant=no_constant
        )
    except (UnicodeDecodeError, json.JSONDecodeError) as err:
        raise _refuse(f"{member} is not valid JSON ({err}).", "The file is corrupted.") from err
    except RecursionError as err:
        raise _refuse(f"{member} is nested too deeply to be a model's state.") from err


class _PandasTags:
    """Decoders of the pandas and sktime values (a part of :class:`_Reader`)."""

    decode: Callable[[Any], Any]

    def tag_index(self, body: Any) -> pd.Index:
        return _decode_index(self, body, "$index")

    def tag_multiindex(self, body: Any) -> pd.Index:
        return _decode_index(self, body, "$multiindex")

    def tag_rangeindex(self, body: Any) -> pd.Index:
        return _decode_index(self, body, "$rangeindex")

    def tag_datetimeindex(self, body: Any) -> pd.Index:
        return _decode_index(self, body, "$datetimeindex")

    def tag_timedeltaindex(self, body: Any) -> pd.Index:
        return _decode_index(self, body, "$timedeltaindex")

    def tag_periodindex(self, body: Any) -> pd.Index:
        return _decode_index(self, body, "$periodindex")

    def tag_dataframe(self, body: dict) -> pd.DataFrame:
        index = _decode_index(self, *_tagged(body["index"]))
        columns = _decode_index(self, *_tagged(body["columns"]))
        data = [self.decode(c) for c in _list(body["data"])]
        if len(data) != len(columns) or any(
            not isinstance(c, np.ndarray) or c.shape != (len(index),) for c in data
        ):
            raise ValueError("columns do not match the frame's index and column labels")
        frame = pd.DataFrame(dict(enumerate(data)), index=index)
        frame.columns = columns
        return frame

    def tag_series(self, body: dict) -> pd.Series:
        index = _decode_index(self, *_tagged(body["index"]))
        data = self.decode(body["data"])
        if not isinstance(data, np.ndarray) or data.shape != (len(index),):
            raise ValueError("values do not match the series' index")
        return pd.Series(data, index=index, name=self.decode(body["name"]))

    def tag_timestamp(self, body: list) -> pd.Timestamp:
        value, unit, tz = _list(body, 3)
        moment = pd.Timestamp(np.datetime64(int(value), _time_unit(unit)))
        return moment if tz is None else moment.tz_localize("UTC").tz_convert(str(tz))

    def tag_timedelta(self, body: list) -> pd.Timedelta:
        value, unit = _list(body, 2)
        return pd.Timedelta(np.timedelta64(int(value), _time_unit(unit)))

    def tag_period(self, body: list) -> pd.Period:
        ordinal, freq = _list(body, 2)
        return pd.Period(ordinal=int(ordinal), freq=str(freq))

    def tag_offset(self, body: str) -> Any:
        from pandas.tseries.frequencies import to_offset

        return to_offset(str(body))

    def tag_nat(self, body: Any) -> Any:
        return pd.NaT

    def tag_fh(self, body: dict) -> Any:
        from sktime.forecasting.base import ForecastingHorizon

        values = _decode_index(self, *_tagged(body["values"]))
        freq = self.decode(body["freq"])
        return ForecastingHorizon(values, is_relative=bool(body["is_relative"]), freq=freq)


class _Reader(_PandasTags):
    """Decodes the tagged JSON of :class:`_Writer` against the fixed registries."""

    def __init__(
        self,
        arrays: dict[str, bytes],
        tensors: dict[str, torch.Tensor],
        device: str | None = None,
    ) -> None:
        self.arrays = arrays
        self.tensors = tensors
        self.device = device  # overrides the nets' saved device
        self.used_arrays: set[str] = set()
        self.used_tensors: set[str] = set()
        self.objects: dict[str, Any] = {}
        self.where = "the state"  # the attribute being decoded, named in refusals
        self.symbols = _symbols()
        self.enums = _enums()
        self.state_classes = _state_classes()

    def array(self, member: Any) -> np.ndarray:
        if not isinstance(member, str) or member not in self.arrays:
            raise _refuse(f"the state refers to an array {member!r} the archive lacks.")
        if member in self.used_arrays:
            raise _refuse(f"the state refers to the array {member} twice.")
        self.used_arrays.add(member)
        data = self.arrays[member]
        if data.startswith(_PICKLE_PROTOCOL):
            raise _refuse(f"{member} is a pickle payload, not a .npy array.")
        if not data.startswith(b"\x93NUMPY"):
            raise _refuse(f"{member} is not a .npy array.")
        try:
            a = np.lib.format.read_array(io.BytesIO(data), allow_pickle=False)
        except ValueError as err:
            raise _refuse(
                f"{member} is not a plain .npy array ({err}); object arrays would need pickle."
            ) from err
        if a.dtype.kind not in _ARRAY_KINDS or a.dtype.fields is not None:
            raise _refuse(f"{member} has dtype {a.dtype}, which a model file never holds.")
        return a

    def decode(self, value: Any) -> Any:
        if value is None or isinstance(value, bool | int | float | str):
            return value
        if isinstance(value, list):
            return [self.decode(v) for v in value]
        if not isinstance(value, dict):
            raise _refuse(f"unexpected JSON value {value!r} in the state.")
        tags = [k for k in value if k.startswith("$")]
        if not tags:
            return {k: self.decode(v) for k, v in value.items()}
        if len(value) != 1:
            raise _refuse(f"a tagged value has other keys besides {tags[0]!r}.")
        tag, body = next(iter(value.items()))
        method = getattr(self, "tag_" + tag[1:], None) if tag[1:].isidentifier() else None
        if method is None:
            raise _refuse(
                f"unknown type tag {tag!r} in the state.",
                "The file may come from a newer levy-sklearn: upgrade to read it.",
            )
        try:
            return method(body)
        except ValueError as err:
            if str(err).startswith("Refusing"):
                raise
            raise _refuse(f"a {tag} value is malformed ({err}).") from err
        except (TypeError, KeyError, IndexError, AttributeError) as err:
            raise _refuse(f"a {tag} value is malformed ({type(err).__name__}: {err}).") from err

    def tag_float(self, body: str) -> float:
        if body not in ("nan", "inf", "-inf"):
            raise ValueError(f"{body!r} is not nan, inf or -inf")
        return float(body)

    def tag_tuple(self, body: list) -> tuple:
        return tuple(self.decode(_list(body)))

    def tag_set(self, body: list) -> set:
        return set(self.decode(_list(body)))

    def tag_history(self, body: list) -> Any:
        from skorch.history import History

        return History(self.decode(_list(body)))

    def tag_dict(self, body: list) -> dict:
        out = {}
        for pair in _list(body):
            k, v = _list(pair, 2)
            out[self.decode(k)] = self.decode(v)
        return out

    def tag_enum(self, body: list) -> enum.Enum:
        key, raw = _list(body, 2)
        if key not in self.enums:
            raise _refuse(f"unknown enumeration {key!r}.")
        return self.enums[key](self.decode(raw))

    def tag_ndarray(self, body: str) -> np.ndarray:
        return self.array(body)

    def tag_objectarray(self, body: list) -> np.ndarray:
        shape, items = _list(body, 2)
        shape = tuple(_list(shape))
        items = [self.decode(i) for i in _list(items)]
        if not all(type(n) is int and n >= 0 for n in shape) or math.prod(shape) != len(items):
            raise ValueError(f"{len(items)} items do not fill the shape {shape}")
        if not all(i is None or type(i) in _PLAIN for i in items):
            raise ValueError("an object array holds only str, int, float, bool or None")
        out = np.empty(len(items), dtype=object)
        out[:] = items
        return out.reshape(shape)

    def tag_npscalar(self, body: str) -> np.generic:
        a = self.array(body)
        if a.ndim != 0:
            raise ValueError("a NumPy scalar must be a 0-d array")
        return a[()]

    def tag_ref(self, body: str) -> Any:
        if body not in self.objects:
            raise _refuse(f"reference {body!r} to an object not defined before it.")
        return self.objects[body]

    def tag_symbol(self, body: str) -> Any:
        if body not in self.symbols or body in _PARAMETRISED:
            raise _refuse(f"unknown class or function {body!r}.")
        return self.symbols[body]

    def tag_object(self, body: list) -> Any:
        key, params = _list(body, 2)
        if key not in _PARAMETRISED:
            raise _refuse(f"unknown class {key!r}.")
        params = self.decode(params)
        if not isinstance(params, dict) or not all(isinstance(k, str) for k in params):
            raise ValueError("parameters must be a dict of names")
        return self.symbols[key](**params)

    def tag_randomstate(self, body: Any) -> np.random.RandomState:
        state = np.random.RandomState()
        state.set_state(self.decode(body))
        return state

    def tag_state(self, body: list) -> Any:
        key, ref, fields = _list(body, 3)
        if key not in self.state_classes:
            raise _refuse(f"unknown state class {key!r}.")
        if not isinstance(fields, dict):
            raise _refuse(f"{key} needs its fields by name.")
        try:
            obj = self.state_classes[key].from_state(
                {n: self.decode(v) for n, v in fields.items()}
            )
        except (TypeError, ValueError) as err:
            if str(err).startswith("Refusing"):
                raise
            raise _refuse(f"{self.where}: {err}", _TAMPERED) from None
        self.objects[_new_ref(ref, self.objects)] = obj
        return obj

    def tag_net(self, body: dict) -> Any:
        if not isinstance(body, dict) or set(body) != {
            "class",
            "ref",
            "params",
            "attributes",
            "dtype",
            "tensors",
            "optimizer",
        }:
            raise _refuse("a skorch net record has unexpected fields.")
        if body["class"] != "LevyNeuralNet":
            raise _refuse(f"unknown net class {body['class']!r}.")
        ref = _new_ref(body["ref"], self.objects)
        dtype = _TORCH_DTYPES.get(body["dtype"])
        if dtype is None:
            raise _refuse(f"unknown module dtype {body['dtype']!r}.")
        params = self.decode(body["params"])
        attributes = self.decode(body["attributes"])
        if not isinstance(params, dict) or not isinstance(attributes, dict):
            raise _refuse("a skorch net record's parameters must be dicts.")
        if self.device is not None:
            params["device"] = self.device
        net = _rebuild_net(params, dtype)
        components = body["tensors"]
        if not isinstance(components, dict) or set(components) != {"module_", "criterion_"}:
            raise _refuse("a skorch net record must list the tensors of module_ and criterion_.")
        for attr, names in components.items():
            self.load_module(getattr(net, attr), ref, attr, _list(names))
        groups = self.decode(body["optimizer"])
        try:
            net.optimizer_.load_state_dict({"state": {}, "param_groups": groups})
        except (ValueError, KeyError, TypeError) as err:
            raise _refuse(
                f"the optimizer's parameter groups do not fit the network ({err})."
            ) from err
        for name, value in attributes.items():
            _check_attribute_name(type(net), name)
            if name in _NET_REBUILT or name in params:
                raise _refuse(f"the skorch net attribute {name!r} is rebuilt, not read.")
            setattr(net, name, value)
        self.objects[ref] = net
        return net

    def load_module(self, module: torch.nn.Module, ref: str, attr: str, names: list) -> None:
        expected = module.state_dict()
        if set(names) != set(expected) or len(names) != len(expected):
            missing = sorted(set(expected) - set(names))
            unexpected = sorted(set(names) - set(expected))
            raise _refuse(
                f"the weights of {ref}.{attr} do not match the network rebuilt from its "
                f"hyperparameters (missing: {missing[:5]}, unexpected: {unexpected[:5]}).",
                "The file was written for another network shape or is corrupted.",
            )
        loaded = {}
        for name in names:
            key = f"{ref}.{attr}.{name}"
            if key not in self.tensors:
                raise _refuse(f"{_WEIGHTS} lacks the tensor {key!r}.")
            tensor, target = self.tensors[key], expected[name]
            if tensor.shape != target.shape:
                raise _refuse(
                    f"tensor {key!r} has shape {tuple(tensor.shape)} but the network rebuilt "
                    f"from the file's hyperparameters needs {tuple(target.shape)}."
                )
            if tensor.dtype != target.dtype:
                raise _refuse(f"tensor {key!r} has dtype {tensor.dtype}, not {target.dtype}.")
            if tensor.is_floating_point() and not bool(torch.isfinite(tensor).all()):
                raise _refuse(
                    f"tensor {key!r} holds NaN or infinite values; a trained network never "
                    "does, so the file is corrupted or was tampered with."
                )
            self.used_tensors.add(key)
            loaded[name] = tensor
        module.load_state_dict(loaded, strict=True)


def _list(value: Any, length: int | None = None) -> list:
    if not isinstance(value, list) or (length is not None and len(value) != length):
        raise ValueError(f"expected a list{'' if length is None else f' of {length}'}")
    return value


def _new_ref(ref: Any, objects: dict) -> str:
    if not isinstance(ref, str) or ref in objects:
        raise _refuse(f"object reference {ref!r} is not new.")
    return ref


def _check_attribute_name(cls: type, name: Any) -> None:
    """Refuse names that are not plain attributes (or would shadow a method or property)."""
    if not isinstance(name, str) or not name.isidentifier() or name.startswith("__"):
        raise _refuse(f"{name!r} is not a valid attribute name.")
    existing = getattr(cls, name, None)
    if callable(existing) or isinstance(existing, property):
        raise _refuse(f"attribute {name!r} would shadow {cls.__name__}.{name}.")


def _rebuild_net(params: dict, dtype: torch.dtype) -> Any:
    from .training import LevyNeuralNet, check_device

    for name in params:
        if not isinstance(name, str) or not name.isidentifier():
            raise _refuse(f"{name!r} is not a skorch net parameter.")
    try:
        check_device(params.get("device", "cpu"))
    except ValueError as err:
        raise _refuse(
            f"the model was saved on a device this machine lacks ({err})",
            "Pass load(path, device='cpu') (or another device) to load it there.",
        ) from err
    try:
        net = LevyNeuralNet(**params)
        # Initialising draws random weights (overwritten next) from torch's global generator:
        # leave the caller's generator as it was.
        with torch.random.fork_rng(devices=[]):
            net.initialize()
    except (TypeError, ValueError, AttributeError, RuntimeError) as err:
        raise _refuse(
            f"the skorch net cannot be rebuilt from the file's parameters ({err})."
        ) from err
    net.module_.to(dtype)
    return net


def _decode_index(reader: _Reader, body: Any, tag: str) -> pd.Index:
    if tag == "$multiindex":
        return pd.MultiIndex(
            levels=[_decode_index(reader, *_tagged(lv)) for lv in _list(body["levels"])],
            codes=[reader.decode(c) for c in _list(body["codes"])],
            names=[reader.decode(n) for n in _list(body["names"])],
        )
    if tag == "$rangeindex":
        start, stop, step, name = _list(body, 4)
        return pd.RangeIndex(int(start), int(stop), int(step), name=reader.decode(name))
    if tag == "$datetimeindex":
        values = reader.decode(body["values"])
        if not isinstance(values, np.ndarray) or values.dtype.kind != "M":
            raise ValueError("a DatetimeIndex needs datetime64 values")
        index = pd.DatetimeIndex(values, name=reader.decode(body["name"]))
        if body["tz"] is not None:
            index = index.tz_localize("UTC").tz_convert(str(body["tz"]))
        return _with_freq(index, body["freq"])
    if tag == "$timedeltaindex":
        values = reader.decode(body["values"])
        if not isinstance(values, np.ndarray) or values.dtype.kind != "m":
            raise ValueError("a TimedeltaIndex needs timedelta64 values")
        index = pd.TimedeltaIndex(values, name=reader.decode(body["name"]))
        return _with_freq(index, body["freq"])
    if tag == "$periodindex":
        ordinals = reader.decode(body["ordinals"])
        if not isinstance(ordinals, np.ndarray) or ordinals.dtype.kind != "i":
            raise ValueError("a PeriodIndex needs integer ordinals")
        name, freq = reader.decode(body["name"]), str(body["freq"])
        if hasattr(pd.PeriodIndex, "from_ordinals"):
            return pd.PeriodIndex.from_ordinals(ordinals, freq=freq, name=name)
        return pd.PeriodIndex(ordinal=ordinals, freq=freq, name=name)  # pandas < 2.2
    if tag == "$index":
        dtype = body["dtype"]
        values = reader.decode(body["values"])
        if isinstance(values, np.ndarray):
            if str(values.dtype) != dtype:
                raise ValueError(f"values of dtype {values.dtype} for an index of {dtype}")
            return pd.Index(values, name=reader.decode(body["name"]))
        if dtype not in _STRING_INDEX_DTYPES:
            raise ValueError(f"index dtype {dtype!r} is not one a file holds")
        return pd.Index(_list(values), dtype=dtype, name=reader.decode(body["name"]))
    raise _refuse(f"{tag} is not an index.")


def _with_freq(index: pd.Index, freq: Any) -> pd.Index:
    if freq is None:
        return index
    return type(index)(index, freq=str(freq))


def _tagged(value: Any) -> tuple[Any, str]:
    if not isinstance(value, dict) or len(value) != 1:
        raise ValueError("expected a tagged value")
    tag, body = next(iter(value.items()))
    return body, tag


def _time_unit(unit: Any) -> str:
    if unit not in ("s", "ms", "us", "ns"):
        raise ValueError(f"time unit {unit!r} is not one of s, ms, us, ns")
    return unit


def _open_archive(path: str | os.PathLike | IO[bytes]) -> dict[str, bytes]:
    """The members of the archive, read and checked (names, CRCs, no duplicates)."""
    # A missing or unreadable file raises its OSError (FileNotFoundError, PermissionError),
    # as open(), pickle and joblib do: a script's ``except FileNotFoundError`` must see it.
    data = path.read() if hasattr(path, "read") else Path(path).read_bytes()
    if data.startswith(_PICKLE_PROTOCOL):
        raise _refuse(
            "it is a pickle, not a levy-sklearn model file (loading a pickle can run code).",
            "Load it with pickle or joblib only if you trust its source.",
        )
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            infos = archive.infolist()
            names = [info.filename for info in infos]
            if len(set(names)) != len(names):
                raise _refuse("the archive has duplicate member names.")
            fixed = (_MANIFEST, _STATE, _WEIGHTS, _SKTIME_METADATA)
            unexpected = [n for n in names if n not in fixed and not _ARRAY.fullmatch(n)]
            if unexpected:
                raise _refuse(
                    f"unexpected members {unexpected[:5]} in the archive.",
                    f"A model file holds only {_MANIFEST}, {_STATE}, {_WEIGHTS}, "
                    f"arrays/<n>.npy and (a forecaster's) {_SKTIME_METADATA}.",
                )
            missing = [n for n in (_MANIFEST, _STATE, _WEIGHTS) if n not in names]
            if missing:
                raise _refuse(f"the archive lacks {missing}.", "The file is incomplete.")
            for info in infos:
                if info.flag_bits & 0x1:
                    raise _refuse(f"{info.filename} is encrypted.")
                if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
                    raise _refuse(f"{info.filename} uses an unsupported compression.")
            return {info.filename: archive.read(info) for info in infos}
    except zipfile.BadZipFile as err:
        raise _refuse(
            f"it is not a complete zip archive ({err}): truncated, corrupted, or not a "
            "levy-sklearn model file.",
            "Copy the file again, or save the model again with levy_sklearn.serialization.save.",
        ) from err
    except (EOFError, OSError, RuntimeError, NotImplementedError) as err:
        raise _refuse(f"the archive cannot be read ({err}): truncated or corrupted.") from err


def _read_manifest(data: bytes) -> tuple[str, int]:
    manifest = _strict_json(data, _MANIFEST)
    if not isinstance(manifest, dict) or manifest.get("format") != _FORMAT:
        raise _refuse(f"{_MANIFEST} does not describe a levy-sklearn model file.")
    version = manifest.get("format_version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise _refuse(f"format_version {version!r} is not a positive integer.")
    if version > FORMAT_VERSION:
        written = manifest.get("written_by", {}).get("levy-sklearn", "a newer version")
        raise _refuse(
            f"it has format version {version}, newer than the {FORMAT_VERSION} this "
            f"levy-sklearn reads.",
            f"It was written by levy-sklearn {written}: upgrade levy-sklearn to load it.",
        )
    key = manifest.get("estimator")
    if key not in _estimator_classes():
        raise _refuse(
            f"unknown estimator class {key!r}.",
            f"A model file holds one of {sorted(_estimator_classes())}.",
        )
    return key, version


def _check_class_reference(key: str, version: int, data: bytes | None) -> None:
    """The _metadata member: exactly the class reference of ``key`` (compared as bytes,
    never unpickled) where format 2 writes one, else absent."""
    expected = _CLASS_REFERENCES.get(key) if version >= 2 else None
    if data == expected:
        return
    if expected is None:
        raise _refuse(f"{_SKTIME_METADATA} belongs in forecaster files of format 2 or later.")
    if data is None:
        raise _refuse(f"the archive lacks {[_SKTIME_METADATA]}.", "The file is incomplete.")
    raise _refuse(
        f"{_SKTIME_METADATA} is not the reference to {key} that save writes (a pickle "
        "there could run code when sktime.base.load reads the file).",
        _TAMPERED,
    )


def _families() -> dict[str, tuple[type, ...]]:
    """The types of each family of fitted attributes an estimator declares in
    ``_saved_attributes`` (``floats`` and ``scales`` are also checked for their values)."""
    from ._series_training import SeriesSpec
    from .calibration import LeadCalibration
    from .conformal import ConformalIntervals
    from .training import LevyNeuralNet

    anything = (object,)
    return {
        "net": (LevyNeuralNet,),
        "spec": (SeriesSpec,),
        "calibration": (LeadCalibration,),
        "conformal": (ConformalIntervals,),
        "floats": (np.ndarray,),
        "scales": (np.ndarray,),
        "names": (np.ndarray,),
        "int": (int,),
        "number": (int, float),
        "bool": (bool,),
        "text": (str,),
        "span": (pd.Timedelta, int, float),
        "index": (pd.Index, type(None)),
        "frames": (dict,),
        "value": anything,  # a resolved setting whose type follows the data (a step, a span)
        "sktime": anything,  # sktime's bookkeeping, as sktime keeps it
    }


def _names_match(key: str, expected: set[str], present: object) -> bool:
    """Whether a file's names (``present``) are the ``expected`` ones of ``key``, those
    added since format 1 optional."""
    return expected - _ADDED_SINCE_V1.get(key, set()) <= set(present) <= expected


def _check_schema(key: str, cls: type, state: Any) -> None:
    if not isinstance(state, dict) or set(state) != {"params", "attributes"}:
        raise _refuse(f"{_STATE} must hold exactly 'params' and 'attributes'.")
    params, attributes = state["params"], state["attributes"]
    if not isinstance(params, dict) or not isinstance(attributes, dict):
        raise _refuse(f"{_STATE}: 'params' and 'attributes' must be objects.")
    names = set(_param_names(cls))
    if not _names_match(key, names, params):
        raise _refuse(
            f"schema mismatch: the hyperparameters of {key} are not those in the file "
            f"(missing: {sorted(names - set(params))}, unknown: {sorted(set(params) - names)}).",
            "The file was written by another levy-sklearn version without a migration.",
        )
    for name in attributes:
        if name in names:
            raise _refuse(f"{name!r} is both a hyperparameter and an attribute.")
        _check_attribute_name(cls, name)
        if name not in cls._saved_attributes:
            raise _refuse(f"{name!r} is not an attribute {key} saves ({key}._saved_attributes).")


def _check_fitted(key: str, attributes: dict) -> None:
    declared = _estimator_classes()[key]._saved_attributes
    fitted = "net_" in attributes
    if fitted:
        missing = [name for name, (_, required) in declared.items() if required]
        missing = [name for name in missing if name not in attributes]
        if missing:
            raise _refuse(
                f"schema mismatch: a fitted {key} needs {missing}, which the file lacks."
            )
    families = _families()
    for name, value in attributes.items():
        family = declared[name][0]
        allowed = families[family]
        if not isinstance(value, allowed):
            raise _refuse(
                f"schema mismatch: {name} is a {type(value).__name__}, but {key} needs "
                f"{' or '.join(t.__name__ for t in allowed)}."
            )
        # The standardisation multiplies every prediction: a NaN, inf or text there would
        # come back as NaN, inf or numpy's error at predict, as non-finite weights would.
        if family in ("floats", "scales") and not (
            value.dtype.kind == "f"
            and np.isfinite(value).all()
            and (family == "floats" or (value > 0).all())
        ):
            what = "positive finite" if family == "scales" else "finite"
            raise _refuse(
                f"{name} must hold {what} floats, as a fit writes it; the file is corrupted "
                "or was tampered with."
            )
    if key == "LevyAttentionRegressor" and fitted:
        n = attributes["n_features_in_"]
        if attributes["net_"].module__n_channels != n or attributes["x_mean_"].shape != (n,):
            raise _refuse(
                f"schema mismatch: n_features_in_={n} does not match the network or the "
                "standardisation."
            )
        n_targets = attributes["net_"].module__n_targets
        expected = {"x_scale_": (n,), "feature_times_": (n,), "n_targets_": n_targets}
        _check_shapes(attributes, expected | {"y_mean_": (n_targets,), "y_scale_": (n_targets,)})
        if attributes["_y_1d"] and n_targets != 1:
            raise _refuse(f"_y_1d is true for a network of {n_targets} targets.", _TAMPERED)
    if key == "LevyForecaster":
        _check_forecaster_state(attributes)


_TAMPERED = "The file is corrupted or was tampered with."


def _check_shapes(attributes: dict, expected: dict[str, tuple | int]) -> None:
    """Each present attribute's shape (an int attribute's value) as ``expected``: a fit
    writes them so, and an edited one loaded and predicted wrong numbers silently."""
    for name, want in expected.items():
        if name not in attributes:
            continue
        value = attributes[name]
        got = value if isinstance(want, int) else np.shape(value)
        if got != want:
            raise _refuse(
                f"{name} is {got}, where the network and the data need {want}.", _TAMPERED
            )


def _check_forecaster_state(attributes: dict) -> None:
    """A forecaster's standardisation, calibration and time unit (and the pretrained ones)
    as a fit writes them, for the network's number of channels (the fitted time unit is
    checked by :meth:`~levy_sklearn._series_training.SeriesSpec.from_state`)."""
    from ._time_axis import is_positive_span

    for prefix in ("", "pretrained_"):
        net = attributes.get(f"{prefix}net_")
        if net is None:
            continue
        n = net.module__n_channels
        expected = {f"{prefix}channel_mean_": (n,), f"{prefix}channel_scale_": (n,)}
        expected[f"{prefix}n_channels_"] = n
        if not prefix:
            n_series = len(attributes["_series"])
            expected |= {"series_mean_": (n_series, n), "series_scale_": (n_series, n)}
        _check_shapes(attributes, expected)
        calibration = attributes.get(f"{prefix}calibration_")
        if calibration is not None:
            try:
                calibration.check(n)
            except ValueError as error:
                raise _refuse(f"{prefix}calibration_: {error}", _TAMPERED) from None
        unit = attributes.get(f"{prefix}time_unit_")
        if unit is not None and not is_positive_span(unit):
            raise _refuse(f"{prefix}time_unit_ is {unit!r}, not a positive span.", _TAMPERED)


# Hyperparameters each network is built with, under the same name (module__<name>).
_ARCHITECTURE = ("d_model", "n_heads", "n_windowed_heads", "n_layers", "attention", "dropout")


def _architecture_mismatch(params: dict, attributes: dict) -> str | None:
    """Where a hyperparameter of the network's shape differs from the network's own (a
    ``d_model`` edited 32 → 16 loaded, and ``get_params`` said 16 of a 32-wide network)."""
    from .training import LevyNeuralNet

    for attr in ("net_", "pretrained_net_"):
        net = attributes.get(attr)
        if not isinstance(net, LevyNeuralNet):
            continue
        for name in _ARCHITECTURE:
            value = params.get(name)
            if value == "auto":  # resolved at fit: the regressor's n_layers_
                value = attributes.get(f"{name}_", value)
            built = getattr(net, f"module__{name}", value)
            if value != "auto" and value != built:
                return f"{name}={value!r}, but {attr} was built with {name}={built!r}."
    return None


def load(path: str | os.PathLike | IO[bytes], *, device: str | None = None) -> Any:
    """Load an estimator saved by :func:`save`, without unpickling or running its code.

    Every class the file can name comes from a fixed table in this module, arrays are read
    with ``allow_pickle=False`` and weights from safetensors; each is checked against the
    network rebuilt from the file's hyperparameters.

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

    See Also
    --------
    save : Write a model file.

    Notes
    -----
    The optimiser's state (AdamW's moments) is not saved: a loaded model predicts exactly as
    the saved one, and ``update``, ``warm_start=True`` and ``pretrain`` continue training
    from its weights with fresh moments.

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
    from safetensors import SafetensorError
    from safetensors.torch import load as load_tensors

    members = _open_archive(path)
    key, version = _read_manifest(members[_MANIFEST])
    _check_class_reference(key, version, members.get(_SKTIME_METADATA))
    state = _strict_json(members[_STATE], _STATE)
    for step in range(version, FORMAT_VERSION):
        state = _MIGRATIONS[step](state)
    cls = _estimator_classes()[key]
    _check_schema(key, cls, state)
    weights = members[_WEIGHTS]
    if weights.startswith(_PICKLE_PROTOCOL):
        raise _refuse(f"{_WEIGHTS} is a pickle payload, not safetensors.")
    try:
        tensors = load_tensors(weights)
    except (SafetensorError, ValueError, RuntimeError) as err:
        raise _refuse(f"{_WEIGHTS} is not a valid safetensors file ({err}).") from err
    arrays = {n: d for n, d in members.items() if _ARRAY.fullmatch(n)}
    net_device = None
    if device is not None:
        from .training import check_device

        net_device = check_device(device)  # a ValueError naming the fix, before any work
    reader = _Reader(arrays, tensors, net_device)
    params = reader.decode(state["params"])
    attributes = {}
    for name, value in state["attributes"].items():
        reader.where = name
        attributes[name] = reader.decode(value)
    _check_fitted(key, attributes)
    problem = _architecture_mismatch(params, attributes)
    if problem:
        raise _refuse(problem, _TAMPERED)
    if reader.used_arrays != set(arrays):
        raise _refuse(f"unexpected members {sorted(set(arrays) - reader.used_arrays)[:5]}.")
    if reader.used_tensors != set(tensors):
        unexpected = sorted(set(tensors) - reader.used_tensors)
        raise _refuse(f"{_WEIGHTS} holds unexpected tensors {unexpected[:5]}.")
    try:
        if device is not None:
            params["device"] = device
        estimator = cls(**params)
        # fit checks hyperparameters, a loaded model is not fitted again: check them here
        # (a max_epochs of "10" loaded, and failed at the first warm fit or update).
        estimator._check_params()
    except (TypeError, ValueError) as err:
        raise _refuse(f"the hyperparameters are not valid for {key} ({err}).") from err
    estimator.__dict__.update(attributes)
    return estimator


#: sktime's name for :func:`load`.
load_from_path = load
