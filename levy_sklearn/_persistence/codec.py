"""A model file's state as typed JSON: one writer/reader pair per type family.

Each fitted attribute is written as the family it is declared with (``_saved_attributes``)
says: a ``"net"`` as the specs it was built from, its weights and its training history; a
state object (``"calibration"``, ``"conformal"``) through its ``to_state``/``from_state``;
everything else (hyperparameters, arrays, numbers, pandas and sktime's bookkeeping) as a
value: plain JSON, or one of the tagged types of :data:`_VALUES`, each a writer next to its
reader. Arrays go to ``arrays/<n>.npy`` (read with ``allow_pickle=False``), weights to one
safetensors member.
"""

from __future__ import annotations

import dataclasses
import enum
import io
import math
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np
import pandas as pd
import torch

from .checks import TAMPERED, refuse, state_classes

PICKLE_PROTOCOL = b"\x80"  # a pickle of protocol 2 or later starts with the PROTO opcode
# Array kinds a file may hold: bool, integers, floats, complex, datetime, timedelta, text.
# Object ("O") and structured ("V") arrays would need pickle or carry arbitrary layouts.
_ARRAY_KINDS = frozenset("biufcmMU")
_PLAIN = (str, int, float, bool)  # the items of an object array
_TEXT_INDEX = frozenset({"object", "str", "string"})
_TORCH_DTYPES = {"float32": torch.float32, "float64": torch.float64}
_NET = frozenset(
    {"ref", "network", "training", "dtype", "tensors", "optimizer", "history", "variance_scale"}
)


def _enums() -> dict[str, type[enum.Enum]]:
    # sktime records each column's kind in _y_metadata["feature_kind"].
    try:
        from sktime.datatypes._dtypekind import DtypeKind
    except ImportError:  # older sktime used pandas' interchange enumeration
        from pandas.core.interchange.dataframe_protocol import DtypeKind
    return {"sktime.DtypeKind": DtypeKind}


def _list(value: Any, length: int | None = None) -> list:
    if not isinstance(value, list) or (length is not None and len(value) != length):
        raise ValueError(f"expected a list{'' if length is None else f' of {length}'}")
    return value


def _unit(unit: Any) -> str:
    if unit not in ("s", "ms", "us", "ns"):
        raise ValueError(f"time unit {unit!r} is not one of s, ms, us, ns")
    return unit


def _tz_name(tz: Any, where: str) -> str | None:
    """The time zone's name, which load gives back to pandas (checked here, at save time)."""
    if tz is None:
        return None
    try:
        same = str(pd.Timestamp(0, tz="UTC").tz_convert(str(tz)).tz) == str(tz)
    except (ValueError, TypeError, KeyError):
        same = False
    if not same:
        raise TypeError(
            f"{where}: the time zone {tz!r} has no name pandas reads back; use a named zone "
            "(e.g. 'Europe/Berlin') or UTC."
        )
    return str(tz)


def _typed(values: Any, kind: str, what: str) -> np.ndarray:
    if not isinstance(values, np.ndarray) or values.dtype.kind != kind:
        raise ValueError(f"{what} needs an array of kind {kind!r}")
    return values


def _freq(index: pd.Index, freq: Any) -> pd.Index:
    return index if freq is None else type(index)(index, freq=str(freq))


def _object_array(r: Reader, body: list) -> np.ndarray:
    shape, items = _list(body, 2)
    shape, items = tuple(_list(shape)), [r.value(i) for i in _list(items)]
    if not all(type(n) is int and n >= 0 for n in shape) or math.prod(shape) != len(items):
        raise ValueError(f"{len(items)} items do not fill the shape {shape}")
    if not all(i is None or type(i) in _PLAIN for i in items):
        raise ValueError("an object array holds only str, int, float, bool or None")
    out = np.empty(len(items), dtype=object)
    out[:] = items
    return out.reshape(shape)


def _periods(ordinals: np.ndarray, freq: str, name: Any) -> pd.PeriodIndex:
    if hasattr(pd.PeriodIndex, "from_ordinals"):
        return pd.PeriodIndex.from_ordinals(ordinals, freq=freq, name=name)
    return pd.PeriodIndex(ordinal=ordinals, freq=freq, name=name)  # pandas < 2.2


def _plain_index(w: Writer, v: pd.Index, at: str) -> dict:
    dtype = str(v.dtype)
    if isinstance(v.dtype, np.dtype) and v.dtype.kind in _ARRAY_KINDS:
        values = w.value(v.to_numpy(), at)
    elif dtype in _TEXT_INDEX:
        values = [w.value(label, f"{at} label") for label in v.tolist()]
    else:
        raise TypeError(f"{at}: an index of dtype {dtype} cannot be saved.")
    return {"values": values, "dtype": dtype, "name": w.value(v.name, at)}


def _read_plain_index(r: Reader, body: dict) -> pd.Index:
    values, dtype, name = r.value(body["values"]), body["dtype"], r.value(body["name"])
    if isinstance(values, np.ndarray):
        if str(values.dtype) != dtype:
            raise ValueError(f"values of dtype {values.dtype} for an index of {dtype}")
        return pd.Index(values, name=name)
    if dtype not in _TEXT_INDEX:
        raise ValueError(f"index dtype {dtype!r} is not one a file holds")
    return pd.Index(_list(values), dtype=dtype, name=name)


def _column(w: Writer, values: pd.Series, at: str) -> Any:
    if not isinstance(values.dtype, np.dtype):
        raise TypeError(
            f"{at}: columns of dtype {values.dtype} cannot be saved; use a NumPy dtype."
        )
    return w.value(values.to_numpy(), at)


def _read_frame(r: Reader, body: dict) -> pd.DataFrame:
    index, columns = r.index(body["index"]), r.index(body["columns"])
    data = [r.value(c) for c in _list(body["data"])]
    if len(data) != len(columns) or any(
        not isinstance(c, np.ndarray) or c.shape != (len(index),) for c in data
    ):
        raise ValueError("columns do not match the frame's index and column labels")
    frame = pd.DataFrame(dict(enumerate(data)), index=index)
    frame.columns = columns
    return frame


def _read_series(r: Reader, body: dict) -> pd.Series:
    index, data = r.index(body["index"]), r.value(body["data"])
    if not isinstance(data, np.ndarray) or data.shape != (len(index),):
        raise ValueError("values do not match the series' index")
    return pd.Series(data, index=index, name=r.value(body["name"]))


def _no_attrs(v: pd.Series | pd.DataFrame, at: str) -> None:
    if v.attrs:
        raise TypeError(f"{at}: {type(v).__name__}.attrs cannot be saved.")


def _is_horizon(v: Any) -> bool:
    from sktime.forecasting.base import ForecastingHorizon

    return isinstance(v, ForecastingHorizon)


def _horizon(r: Reader, body: dict) -> Any:
    from sktime.forecasting.base import ForecastingHorizon

    values, freq = r.index(body["values"]), r.value(body["freq"])
    return ForecastingHorizon(values, is_relative=bool(body["is_relative"]), freq=freq)


def _timestamp(r: Reader, body: list) -> pd.Timestamp:
    value, unit, tz = _list(body, 3)
    moment = pd.Timestamp(np.datetime64(int(value), _unit(unit)))
    return moment if tz is None else moment.tz_localize("UTC").tz_convert(str(tz))


def _float(r: Reader, body: str) -> float:
    if body not in ("nan", "inf", "-inf"):
        raise ValueError(f"{body!r} is not nan, inf or -inf")
    return float(body)


def _items(w: Writer, v: Any, at: str) -> list:
    return [w.value(x, f"{at}[{i}]") for i, x in enumerate(v)]


def _npscalar(r: Reader, body: str) -> np.generic:
    a = r.array(body)
    if a.ndim != 0:
        raise ValueError("a NumPy scalar must be a 0-d array")
    return a[()]


def _random_state(r: Reader, body: Any) -> np.random.RandomState:
    state = np.random.RandomState()
    state.set_state(r.value(body))
    return state


def _naive(v: pd.DatetimeIndex) -> pd.DatetimeIndex:
    return v.tz_convert(None) if v.tz is not None else v


def _datetimes(r: Reader, body: dict) -> pd.DatetimeIndex:
    values = _typed(r.value(body["values"]), "M", "a DatetimeIndex")
    index = pd.DatetimeIndex(values, name=r.value(body["name"]))
    tz = body["tz"]
    return _freq(
        index if tz is None else index.tz_localize("UTC").tz_convert(str(tz)), body["freq"]
    )


def _to_offset(r: Reader, body: str) -> Any:
    from pandas.tseries.frequencies import to_offset

    return to_offset(str(body))


class _Pair(NamedTuple):
    """One tagged type: ``holds(value)`` picks it, ``write(writer, value, where)`` gives its
    JSON body under ``tag``, ``read(reader, body)`` gives the value back."""

    tag: str
    holds: Callable[[Any], bool]
    write: Callable[[Any, Any, str], Any]
    read: Callable[[Any, Any], Any]


def _is(*types: type) -> Callable[[Any], bool]:
    return lambda v: type(v) in types


# Tagged values, tried in this order when writing (exact types: NumPy scalars and
# enumerations subclass float, int or str, and come back as what they were).
_VALUES = (
    _Pair("$float", _is(float), lambda w, v, at: repr(v), _float),
    _Pair("$tuple", _is(tuple), _items, lambda r, b: tuple(r.value(_list(b)))),
    _Pair(
        "$dict",
        _is(dict),
        lambda w, v, at: [
            [w.value(k, f"{at} key"), w.value(x, f"{at}[{k!r}]")] for k, x in v.items()
        ],
        lambda r, b: {r.value(k): r.value(x) for k, x in (_list(p, 2) for p in _list(b))},
    ),
    _Pair(
        "$enum",
        lambda v: isinstance(v, enum.Enum) and type(v) in _enums().values(),
        lambda w, v, at: [{c: k for k, c in _enums().items()}[type(v)], w.value(v.value, at)],
        lambda r, b: r.enum(*_list(b, 2)),
    ),
    # scikit-learn keeps column names (feature_names_in_) as an object array of str: its
    # items go into the JSON, one by one, rather than into a pickle.
    _Pair(
        "$objectarray",
        lambda v: isinstance(v, np.ndarray) and v.dtype == object,
        lambda w, v, at: [list(v.shape), [w.item(i, at) for i in v.ravel().tolist()]],
        _object_array,
    ),
    _Pair(
        "$ndarray",
        lambda v: isinstance(v, np.ndarray),
        lambda w, v, at: w.array(v, at),
        lambda r, b: r.array(b),
    ),
    _Pair(
        "$npscalar",
        lambda v: isinstance(v, np.generic),
        lambda w, v, at: w.array(np.asarray(v), at),
        _npscalar,
    ),
    _Pair(
        "$randomstate",
        lambda v: isinstance(v, np.random.RandomState),
        lambda w, v, at: w.value(v.get_state(), at),
        _random_state,
    ),
    _Pair("$nat", lambda v: v is pd.NaT, lambda w, v, at: None, lambda r, b: pd.NaT),
    _Pair(
        "$timestamp",
        lambda v: isinstance(v, pd.Timestamp),
        lambda w, v, at: [
            int((v.tz_convert(None) if v.tz is not None else v).asm8.view(np.int64)),
            v.unit,
            _tz_name(v.tz, at),
        ],
        _timestamp,
    ),
    _Pair(
        "$timedelta",
        lambda v: isinstance(v, pd.Timedelta),
        lambda w, v, at: [int(v.asm8.view(np.int64)), v.unit],
        lambda r, b: pd.Timedelta(np.timedelta64(int(_list(b, 2)[0]), _unit(b[1]))),
    ),
    _Pair(
        "$period",
        lambda v: isinstance(v, pd.Period),
        lambda w, v, at: [int(v.ordinal), v.freqstr],
        lambda r, b: pd.Period(ordinal=int(_list(b, 2)[0]), freq=str(b[1])),
    ),
    _Pair(
        "$offset", lambda v: isinstance(v, pd.DateOffset), lambda w, v, at: v.freqstr, _to_offset
    ),
    _Pair(
        "$multiindex",
        _is(pd.MultiIndex),
        lambda w, v, at: {
            "levels": _items(w, v.levels, at),
            "codes": [w.value(np.asarray(c), at) for c in v.codes],
            "names": _items(w, v.names, at),
        },
        lambda r, b: pd.MultiIndex(
            levels=[r.index(lv) for lv in _list(b["levels"])],
            codes=[r.value(c) for c in _list(b["codes"])],
            names=[r.value(n) for n in _list(b["names"])],
        ),
    ),
    _Pair(
        "$rangeindex",
        _is(pd.RangeIndex),
        lambda w, v, at: [v.start, v.stop, v.step, w.value(v.name, at)],
        lambda r, b: pd.RangeIndex(*map(int, _list(b, 4)[:3]), name=r.value(b[3])),
    ),
    _Pair(
        "$datetimeindex",
        _is(pd.DatetimeIndex),
        lambda w, v, at: {
            "values": w.value(_naive(v).to_numpy(), at),
            "tz": _tz_name(v.tz, at),
            "freq": v.freqstr,
            "name": w.value(v.name, at),
        },
        _datetimes,
    ),
    _Pair(
        "$timedeltaindex",
        _is(pd.TimedeltaIndex),
        lambda w, v, at: {
            "values": w.value(v.to_numpy(), at),
            "freq": v.freqstr,
            "name": w.value(v.name, at),
        },
        lambda r, b: _freq(
            pd.TimedeltaIndex(
                _typed(r.value(b["values"]), "m", "a TimedeltaIndex"), name=r.value(b["name"])
            ),
            b["freq"],
        ),
    ),
    _Pair(
        "$periodindex",
        _is(pd.PeriodIndex),
        lambda w, v, at: {
            "ordinals": w.value(np.asarray(v.asi8), at),
            "freq": v.freqstr,
            "name": w.value(v.name, at),
        },
        lambda r, b: _periods(
            _typed(r.value(b["ordinals"]), "i", "a PeriodIndex"),
            str(b["freq"]),
            r.value(b["name"]),
        ),
    ),
    _Pair("$index", _is(pd.Index), _plain_index, _read_plain_index),
    _Pair(
        "$dataframe",
        _is(pd.DataFrame),
        lambda w, v, at: (
            _no_attrs(v, at)
            or {
                "index": w.value(v.index, f"{at}.index"),
                "columns": w.value(v.columns, f"{at}.columns"),
                "data": [_column(w, v.iloc[:, i], at) for i in range(v.shape[1])],
            }
        ),
        _read_frame,
    ),
    _Pair(
        "$series",
        _is(pd.Series),
        lambda w, v, at: (
            _no_attrs(v, at)
            or {
                "index": w.value(v.index, f"{at}.index"),
                "name": w.value(v.name, f"{at}.name"),
                "data": _column(w, v, at),
            }
        ),
        _read_series,
    ),
    _Pair(
        "$fh",
        _is_horizon,
        lambda w, v, at: {
            "values": w.value(v.to_pandas(), at),
            "is_relative": bool(v.is_relative),
            "freq": w.value(v.freq, f"{at}.freq"),
        },
        _horizon,
    ),
)
_READ = {pair.tag: pair.read for pair in _VALUES}


class Writer:
    """Writes attributes and values as tagged JSON, collecting arrays and tensors."""

    def __init__(self) -> None:
        self.arrays: list[bytes] = []
        self.tensors: dict[str, torch.Tensor] = {}
        self.memo: dict[int, tuple[str, Any]] = {}  # id → (reference, object kept alive)

    def attribute(self, family: str, value: Any, where: str) -> Any:
        if value is None or not (family == "net" or family in state_classes()):
            return self.value(value, where)
        if id(value) in self.memo:  # the same net or state object twice: a reference
            return {"$ref": self.memo[id(value)][0]}
        self.memo[id(value)] = (
            ref := f"{'net' if family == 'net' else 'obj'}{len(self.memo)}",
            value,
        )
        if family == "net":
            return {"$net": self.net(value, ref, where)}
        if type(value) is not state_classes()[family]:
            raise TypeError(
                f"{where} is a {type(value).__name__}, not a {state_classes()[family].__name__}."
            )
        fields = {n: self.value(v, f"{where}.{n}") for n, v in value.to_state().items()}
        return {"$state": [type(value).__name__, ref, fields]}

    def value(self, value: Any, where: str) -> Any:
        if value is None or type(value) in (bool, int, str):
            return value
        if type(value) is float and math.isfinite(value):
            return value
        if type(value) is list:
            return _items(self, value, where)
        if type(value) is dict and all(
            isinstance(k, str) and not k.startswith("$") for k in value
        ):
            return {k: self.value(v, f"{where}[{k!r}]") for k, v in value.items()}
        for pair in _VALUES:
            if pair.holds(value):
                return {pair.tag: pair.write(self, value, where)}
        raise TypeError(
            f"{where}: a {type(value).__module__}.{type(value).__qualname__} cannot be saved "
            "in a levy-sklearn model file (only data and the package's own state classes "
            "can); use pickle or joblib, from a trusted source only, for such an estimator."
        )

    def item(self, item: Any, where: str) -> Any:
        if not (item is None or type(item) in _PLAIN):
            raise TypeError(
                f"{where}: an object array can be saved only if it holds str, int, float, "
                "bool or None."
            )
        return self.value(item, where)

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

    def net(self, net: Any, ref: str, where: str) -> dict:
        """A net as the specs it was built from, its dtype, weights (by name), optimiser
        settings and history: what rebuilds it, not skorch's attributes."""
        from ..training import LevyNeuralNet

        if type(net) is not LevyNeuralNet or not getattr(net, "initialized_", False):
            raise TypeError(f"{where}: only a fitted LevyNeuralNet can be saved; fit it first.")
        dtypes = {p.dtype for p in net.module_.parameters() if p.is_floating_point()}
        names = {v: k for k, v in _TORCH_DTYPES.items()}
        if len(dtypes) != 1 or next(iter(dtypes)) not in names:
            raise TypeError(f"{where}: the module mixes dtypes {sorted(map(str, dtypes))}.")
        tensors = {}
        for attr in ("module_", "criterion_"):
            state = getattr(net, attr).state_dict()
            for name, tensor in state.items():
                # A copy on the CPU: safetensors refuses tensors that share memory.
                self.tensors[f"{ref}.{attr}.{name}"] = (
                    tensor.detach().to("cpu", copy=True).contiguous()
                )
            tensors[attr] = list(state)
        return {
            "ref": ref,
            "network": self.value(dataclasses.asdict(net.network_spec_), f"{where} network"),
            "training": self.value(dataclasses.asdict(net.training_spec_), f"{where} training"),
            "dtype": names[next(iter(dtypes))],
            "tensors": tensors,
            # The optimiser's settings (learning rates, the schedule's initial_lr), not its
            # moments: further training resumes from the weights.
            "optimizer": self.value(net.optimizer_.state_dict()["param_groups"], where),
            "history": self.value(list(net.history), f"{where}.history"),
            "variance_scale": self.value(net.variance_scale_, f"{where}.variance_scale_"),
        }


class Reader:
    """Reads what :class:`Writer` wrote, every tag from its fixed table."""

    def __init__(self, arrays: dict[str, bytes], tensors: dict, device: str | None) -> None:
        self.arrays, self.tensors, self.device = arrays, tensors, device
        self.used_arrays: set[str] = set()
        self.used_tensors: set[str] = set()
        self.objects: dict[str, Any] = {}

    def attribute(self, family: str, raw: Any, where: str) -> Any:
        tag = next(iter(raw)) if isinstance(raw, dict) and len(raw) == 1 else None
        if tag == "$ref" and (family == "net" or family in state_classes()):
            if raw[tag] not in self.objects:
                raise refuse(f"reference {raw[tag]!r} to an object not defined before it.")
            return self.objects[raw[tag]]
        if (family, tag) == ("net", "$net"):
            return self.guard(tag, lambda: self.net(raw[tag]))
        if family in state_classes() and tag == "$state":
            return self.guard(tag, lambda: self.state(state_classes()[family], raw[tag], where))
        return self.value(raw)

    def value(self, raw: Any) -> Any:
        if raw is None or isinstance(raw, bool | int | float | str):
            return raw
        if isinstance(raw, list):
            return [self.value(v) for v in raw]
        if not isinstance(raw, dict):
            raise refuse(f"unexpected JSON value {raw!r} in the state.")
        tags = [k for k in raw if k.startswith("$")]
        if not tags:
            return {k: self.value(v) for k, v in raw.items()}
        if len(raw) != 1:
            raise refuse(f"a tagged value has other keys besides {tags[0]!r}.")
        tag, body = next(iter(raw.items()))
        if tag not in _READ:
            raise refuse(
                f"unknown type tag {tag!r}: an unknown class or function, or a value of a "
                "newer format.",
                "The file may come from a newer levy-sklearn: upgrade to read it.",
            )
        return self.guard(tag, lambda: _READ[tag](self, body))

    def guard(self, tag: str, read: Callable[[], Any]) -> Any:
        try:
            return read()
        except ValueError as err:
            if str(err).startswith("Refusing"):
                raise
            raise refuse(f"a {tag} value is malformed ({err}).") from err
        except (TypeError, KeyError, IndexError, AttributeError) as err:
            raise refuse(f"a {tag} value is malformed ({type(err).__name__}: {err}).") from err

    def index(self, raw: Any) -> pd.Index:
        index = self.value(raw)
        if not isinstance(index, pd.Index):
            raise ValueError("expected an index")
        return index

    def enum(self, key: Any, raw: Any) -> enum.Enum:
        if key not in _enums():
            raise refuse(f"unknown enumeration {key!r}.")
        return _enums()[key](self.value(raw))

    def array(self, member: Any) -> np.ndarray:
        if not isinstance(member, str) or member not in self.arrays:
            raise refuse(f"the state refers to an array {member!r} the archive lacks.")
        if member in self.used_arrays:
            raise refuse(f"the state refers to the array {member} twice.")
        self.used_arrays.add(member)
        data = self.arrays[member]
        if data.startswith(PICKLE_PROTOCOL):
            raise refuse(f"{member} is a pickle payload, not a .npy array.")
        if not data.startswith(b"\x93NUMPY"):
            raise refuse(f"{member} is not a .npy array.")
        try:
            a = np.lib.format.read_array(io.BytesIO(data), allow_pickle=False)
        except ValueError as err:
            raise refuse(
                f"{member} is not a plain .npy array ({err}); object arrays would need pickle."
            ) from err
        if a.dtype.kind not in _ARRAY_KINDS or a.dtype.fields is not None:
            raise refuse(f"{member} has dtype {a.dtype}, which a model file never holds.")
        return a

    def new_ref(self, ref: Any) -> str:
        if not isinstance(ref, str) or ref in self.objects:
            raise refuse(f"object reference {ref!r} is not new.")
        return ref

    def state(self, cls: type, body: list, where: str) -> Any:
        key, ref, fields = _list(body, 3)
        if key != cls.__name__:
            raise refuse(f"unknown state class {key!r} for {where}.")
        if not isinstance(fields, dict):
            raise refuse(f"{key} needs its fields by name.")
        ref = self.new_ref(ref)
        try:
            obj = cls.from_state({n: self.value(v) for n, v in fields.items()})
        except (TypeError, ValueError) as err:
            if str(err).startswith("Refusing"):
                raise
            raise refuse(f"{where}: {err}", TAMPERED) from None
        self.objects[ref] = obj
        return obj

    def net(self, body: dict) -> Any:
        """Rebuild a net from its specs (:func:`~levy_sklearn.training.make_levy_net`) and
        load its checked weights, optimiser settings and history."""
        from skorch.history import History

        if not isinstance(body, dict) or set(body) - _NET:
            extra = sorted(set(body) - _NET) if isinstance(body, dict) else ["record"]
            raise refuse(f"the skorch net's {extra[0]!r} is rebuilt, not read (from the net's specs).")
        if set(body) != _NET:
            raise refuse(f"a skorch net record lacks {sorted(_NET - set(body))}.")
        ref = self.new_ref(body["ref"])
        dtype = _TORCH_DTYPES.get(body["dtype"])
        if dtype is None:
            raise refuse(f"unknown module dtype {body['dtype']!r}.")
        network, training = self.value(body["network"]), self.value(body["training"])
        if not isinstance(network, dict) or not isinstance(training, dict):
            raise refuse("a skorch net's specs must be objects.")
        if self.device is not None:
            training["device"] = self.device
        net = _rebuild_net(network, training, dtype)
        components = body["tensors"]
        if not isinstance(components, dict) or set(components) != {"module_", "criterion_"}:
            raise refuse("a skorch net record must list the tensors of module_ and criterion_.")
        for attr, names in components.items():
            self.load_module(getattr(net, attr), f"{ref}.{attr}", _list(names))
        try:
            groups = self.value(body["optimizer"])
            net.optimizer_.load_state_dict({"state": {}, "param_groups": groups})
        except (ValueError, KeyError, TypeError) as err:
            raise refuse(
                f"the optimizer's parameter groups do not fit the network ({err})."
            ) from err
        history, scale = self.value(body["history"]), self.value(body["variance_scale"])
        if not isinstance(history, list) or not all(isinstance(e, dict) for e in history):
            raise refuse("a skorch net's history must be a list of epochs.")
        if type(scale) is not float or not 0 < scale < math.inf:
            raise refuse(f"variance_scale_ is {scale!r}, not a positive finite float.", TAMPERED)
        net.history_, net.variance_scale_ = History(history), scale
        self.objects[ref] = net
        return net

    def load_module(self, module: torch.nn.Module, prefix: str, names: list) -> None:
        expected = module.state_dict()
        if set(names) != set(expected) or len(names) != len(expected):
            missing = sorted(set(expected) - set(names))
            unexpected = sorted(set(names) - set(expected))
            raise refuse(
                f"the weights of {prefix} do not match the network rebuilt from its "
                f"specs (missing: {missing[:5]}, unexpected: {unexpected[:5]}).",
                "The file was written for another network shape or is corrupted.",
            )
        loaded = {}
        for name in names:
            key = f"{prefix}.{name}"
            if key not in self.tensors:
                raise refuse(f"weights.safetensors lacks the tensor {key!r}.")
            tensor, target = self.tensors[key], expected[name]
            if tensor.shape != target.shape:
                raise refuse(
                    f"tensor {key!r} has shape {tuple(tensor.shape)} but the network rebuilt "
                    f"from the file's hyperparameters needs {tuple(target.shape)}."
                )
            if tensor.dtype != target.dtype:
                raise refuse(f"tensor {key!r} has dtype {tensor.dtype}, not {target.dtype}.")
            if tensor.is_floating_point() and not bool(torch.isfinite(tensor).all()):
                raise refuse(
                    f"tensor {key!r} holds NaN or infinite values; a trained network never "
                    "does, so the file is corrupted or was tampered with."
                )
            self.used_tensors.add(key)
            loaded[name] = tensor
        # skorch's load_params(use_safetensors=True) would load_state_dict these too, but
        # without the checks above (a tensor of another dtype is cast silently).
        module.load_state_dict(loaded, strict=True)


def _rebuild_net(network: dict, training: dict, dtype: torch.dtype) -> Any:
    from ..training import NetworkSpec, TrainingSpec, check_device, make_levy_net

    try:
        check_device(training.get("device", "cpu"))
    except ValueError as err:
        raise refuse(
            f"the model was saved on a device this machine lacks ({err})",
            "Pass load(path, device='cpu') (or another device) to load it there.",
        ) from err
    try:
        net = make_levy_net(NetworkSpec(**network), TrainingSpec(**training))
        # Initialising draws random weights (overwritten next) from torch's global generator:
        # leave the caller's generator as it was.
        with torch.random.fork_rng(devices=[]):
            net.initialize()
    except (TypeError, ValueError, AttributeError, RuntimeError) as err:
        raise refuse(f"the skorch net cannot be rebuilt from the file's specs ({err}).") from err
    net.module_.to(dtype)
    return net
