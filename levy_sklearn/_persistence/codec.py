"""A model file's state as typed JSON: one writer/reader pair per type (:func:`_values`): a
net as its specs, a state class through ``to_state``/``from_state`` (each object written once,
then as a ``$ref``), arrays as ``.npy`` members read with ``allow_pickle=False``."""

from __future__ import annotations

import dataclasses
import functools
import io
import math
from typing import Any

import numpy as np
import pandas as pd
import torch

from .archive import TAMPERED, WEIGHTS, refuse, require

# Array kinds a file may hold: bool, integers, floats, complex, datetime, timedelta, text.
# Object ("O") and structured ("V") arrays would need pickle or carry arbitrary layouts.
_ARRAY_KINDS = frozenset("biufcmMU")
_PLAIN = (str, int, float, bool)  # the items of an object array
_TEXT_INDEX = frozenset({"object", "str", "string"})
_DTYPES = {"float32": torch.float32, "float64": torch.float64}
_NET = {"ref", "network", "training", "dtype", "tensors", "optimizer", "history", "variance_scale"}
_SHARED = {"$net": "net", "$state": "obj"}  # tags of objects written once: their refs' prefix


def state_classes() -> dict[str, type]:
    """The package's state classes by the family of declared attributes they make up."""
    from .._covariates import CovariateSpec
    from .._series_training import SeriesSpec
    from ..calibration import LeadCalibration
    from ..conformal import ConformalIntervals

    return {
        "calibration": LeadCalibration,
        "conformal": ConformalIntervals,
        "spec": SeriesSpec,
        "covariates": CovariateSpec,
    }


def _need(ok: Any, problem: str, error: type = ValueError) -> None:
    """Raise ``error(problem)`` unless ``ok``: a reader's ValueError is named by its tag."""
    if not ok:
        raise error(problem)


def _list(value: Any, length: int | None = None) -> list:
    ok = isinstance(value, list) and length in (None, len(value))
    _need(ok, f"expected a list{'' if length is None else f' of {length}'}")
    return value


def _unit(unit: Any) -> str:
    _need(unit in ("s", "ms", "us", "ns"), f"time unit {unit!r} is not one of s, ms, us, ns")
    return unit


def _tz(tz: Any) -> str | None:
    """The time zone's name, checked at save time to be one pandas reads back."""
    try:
        if tz is None or str(pd.Timestamp(0, tz="UTC").tz_convert(str(tz)).tz) == str(tz):
            return None if tz is None else str(tz)
    except (ValueError, TypeError, KeyError):
        pass
    raise TypeError(f"the time zone {tz!r} has no name pandas reads back; use a named zone.")


def _typed(values: Any, kind: str) -> np.ndarray:
    ok = isinstance(values, np.ndarray) and values.dtype.kind == kind
    _need(ok, f"an index needs an array of kind {kind!r}")
    return values


def _freq(index: pd.Index, freq: Any) -> pd.Index:
    return index if freq is None else type(index)(index, freq=str(freq))


def _plain(items: list, error: type = ValueError) -> list:
    ok = all(i is None or type(i) in _PLAIN for i in items)
    _need(ok, "an object array holds only str, int, float, bool or None", error)
    return items


def _objects(r: Reader, shape: list, items: list) -> np.ndarray:
    shape, items = tuple(_list(shape)), _plain(r(_list(items)))
    ok = all(type(n) is int and n >= 0 for n in shape) and math.prod(shape) == len(items)
    _need(ok, f"{len(items)} items do not fill the shape {shape}")
    out = np.empty(len(items), dtype=object)
    out[:] = items
    return out.reshape(shape)


def _index(w: Writer, v: pd.Index) -> dict:
    _need(type(v) is pd.Index, f"a {type(v).__name__} cannot be saved.", TypeError)
    if isinstance(v.dtype, np.dtype) and v.dtype.kind in _ARRAY_KINDS:
        values = w(v.to_numpy())
    else:
        _need(
            str(v.dtype) in _TEXT_INDEX, f"an index of dtype {v.dtype} cannot be saved.", TypeError
        )
        values = w(v.tolist())
    return {"values": values, "dtype": str(v.dtype), "name": w(v.name)}


def _read_index(r: Reader, b: dict) -> pd.Index:
    values, dtype, name = r(b["values"]), b["dtype"], r(b["name"])
    if isinstance(values, np.ndarray):
        _need(
            str(values.dtype) == dtype, f"values of dtype {values.dtype} for an index of {dtype}"
        )
        return pd.Index(values, name=name)
    _need(dtype in _TEXT_INDEX, f"index dtype {dtype!r} is not one a file holds")
    return pd.Index(_list(values), dtype=dtype, name=name)


def _columns(w: Writer, frame: pd.DataFrame) -> list:
    ok = not frame.attrs and all(isinstance(t, np.dtype) for t in frame.dtypes)
    _need(ok, "a frame with attrs or columns of a pandas dtype cannot be saved.", TypeError)
    return [w(frame.iloc[:, i].to_numpy()) for i in range(frame.shape[1])]


def _data(data: list, index: pd.Index) -> list:
    ok = all(isinstance(c, np.ndarray) and c.shape == (len(index),) for c in data)
    _need(ok, "values do not match the index")
    return data


def _frame(r: Reader, b: dict) -> pd.DataFrame:
    index, columns = r.index(b["index"]), r.index(b["columns"])
    data = _data(r(_list(b["data"])), index)
    _need(len(data) == len(columns), "columns do not match the frame's column labels")
    frame = pd.DataFrame(dict(enumerate(data)), index=index)
    frame.columns = columns
    return frame


def _datetimes(r: Reader, b: dict) -> pd.DatetimeIndex:
    index, tz = pd.DatetimeIndex(_typed(r(b["values"]), "M"), name=r(b["name"])), b["tz"]
    return _freq(index if tz is None else index.tz_localize("UTC").tz_convert(str(tz)), b["freq"])


def _periods(r: Reader, b: dict) -> pd.PeriodIndex:
    ordinals, freq, name = _typed(r(b["ordinals"]), "i"), str(b["freq"]), r(b["name"])
    if hasattr(pd.PeriodIndex, "from_ordinals"):
        return pd.PeriodIndex.from_ordinals(ordinals, freq=freq, name=name)
    return pd.PeriodIndex(ordinal=ordinals, freq=freq, name=name)  # pandas < 2.2


def _float(r: Reader, b: str) -> float:
    _need(b in ("nan", "inf", "-inf"), f"{b!r} is not nan, inf or -inf")
    return float(b)


def _scalar(r: Reader, b: str) -> np.generic:
    _need((a := r.array(b)).ndim == 0, "a NumPy scalar must be a 0-d array")
    return a[()]


def _random_state(r: Reader, b: Any) -> np.random.RandomState:
    state = np.random.RandomState()
    state.set_state(r(b))
    return state


@functools.cache
def _values() -> tuple[tuple[str, Any, Any, Any], ...]:
    """Tagged values: (tag, type or test, write(writer, value), read(reader, body)), tried
    in this order when writing (NumPy scalars and enumerations subclass float, int or str,
    and come back as what they were; a subclass comes before its base)."""
    from sktime.forecasting.base import ForecastingHorizon as Horizon

    from ..training import LevyNeuralNet

    try:  # sktime records each column's kind in _y_metadata["feature_kind"]
        from sktime.datatypes._dtypekind import DtypeKind
    except ImportError:  # older sktime used pandas' interchange enumeration
        from pandas.core.interchange.dataframe_protocol import DtypeKind

    def enum(r: Reader, b: list) -> DtypeKind:
        require(_list(b, 2)[0] == "sktime.DtypeKind", f"unknown enumeration {b[0]!r}.")
        return DtypeKind(r(b[1]))

    classes = tuple(state_classes().values())
    # fmt: off
    return (
        ("$net", LevyNeuralNet, lambda w, v: w.net(v), lambda r, b: r.net(b)),
        ("$state", lambda v: type(v) in classes,
            lambda w, v: [type(v).__name__, w.memo[id(v)][0], w(v.to_state())],
            lambda r, b: r.state(b)),
        ("$enum", DtypeKind, lambda w, v: ["sktime.DtypeKind", w(v.value)], enum),
        ("$npscalar", np.generic, lambda w, v: w.array(np.asarray(v)), _scalar),
        ("$float", float, lambda w, v: repr(v), _float),
        ("$tuple", tuple, lambda w, v: w(list(v)), lambda r, b: tuple(r(_list(b)))),
        ("$dict", dict, lambda w, v: [[w(k), w(x)] for k, x in v.items()],
            lambda r, b: {r(k): r(x) for k, x in (_list(p, 2) for p in _list(b))}),
        # scikit-learn keeps column names (feature_names_in_) as an object array of str:
        # its items go into the JSON, one by one, rather than into a pickle.
        ("$objectarray", lambda v: isinstance(v, np.ndarray) and v.dtype == object,
            lambda w, v: [list(v.shape), w(_plain(v.ravel().tolist(), TypeError))],
            lambda r, b: _objects(r, *_list(b, 2))),
        ("$ndarray", np.ndarray, lambda w, v: w.array(v), lambda r, b: r.array(b)),
        ("$randomstate", np.random.RandomState, lambda w, v: w(v.get_state()), _random_state),
        ("$timedelta", pd.Timedelta, lambda w, v: [int(v.asm8.view(np.int64)), v.unit],
            lambda r, b: pd.Timedelta(np.timedelta64(int(_list(b, 2)[0]), _unit(b[1])))),
        ("$multiindex", pd.MultiIndex,
            lambda w, v: {"levels": w(list(v.levels)), "codes": w(list(map(np.asarray, v.codes))),
                          "names": w(list(v.names))},
            lambda r, b: pd.MultiIndex(levels=[r.index(lv) for lv in _list(b["levels"])],
                                       codes=r(_list(b["codes"])), names=r(_list(b["names"])))),
        ("$rangeindex", pd.RangeIndex, lambda w, v: [v.start, v.stop, v.step, w(v.name)],
            lambda r, b: pd.RangeIndex(*map(int, _list(b, 4)[:3]), name=r(b[3]))),
        ("$datetimeindex", pd.DatetimeIndex,
            lambda w, v: {"values": w((v if v.tz is None else v.tz_convert(None)).to_numpy()),
                          "tz": _tz(v.tz), "freq": v.freqstr, "name": w(v.name)}, _datetimes),
        ("$timedeltaindex", pd.TimedeltaIndex,
            lambda w, v: {"values": w(v.to_numpy()), "freq": v.freqstr, "name": w(v.name)},
            lambda r, b: _freq(pd.TimedeltaIndex(_typed(r(b["values"]), "m"), name=r(b["name"])),
                               b["freq"])),
        ("$periodindex", pd.PeriodIndex,
            lambda w, v: {"ordinals": w(np.asarray(v.asi8)), "freq": v.freqstr, "name": w(v.name)},
            _periods),
        ("$index", pd.Index, _index, _read_index),
        ("$dataframe", pd.DataFrame,
            lambda w, v: {"index": w(v.index), "columns": w(v.columns), "data": _columns(w, v)},
            _frame),
        ("$series", pd.Series,
            lambda w, v: {"index": w(v.index), "name": w(v.name),
                          "data": _columns(w, v.to_frame())[0]},
            lambda r, b: pd.Series(_data([r(b["data"])], idx := r.index(b["index"]))[0],
                                   index=idx, name=r(b["name"]))),
        ("$fh", Horizon,
            lambda w, v: {"values": w(v.to_pandas()), "is_relative": bool(v.is_relative),
                          "freq": w(v.freq)},
            lambda r, b: Horizon(r.index(b["values"]), is_relative=bool(b["is_relative"]),
                                 freq=r(b["freq"]))),
    )
    # fmt: on


class Writer:
    """Writes values as tagged JSON, collecting arrays and tensors."""

    def __init__(self) -> None:
        self.arrays: list[bytes] = []
        self.tensors: dict[str, torch.Tensor] = {}
        self.memo: dict[int, tuple[str, Any]] = {}  # id → (reference, object kept alive)

    def values(self, values: dict, what: str = "", shared: Any = ()) -> dict[str, Any]:
        """Each named value written (a net or state object only as one of ``shared``); a
        value it cannot write is a ``TypeError`` naming it."""
        written = {}
        for name, value in values.items():
            try:
                written[name] = self(value, shared=name in shared)
            except TypeError as err:
                raise TypeError(f"{what}{name}: {err}") from None
        return written

    def __call__(self, value: Any, shared: bool = False) -> Any:
        if value is None or type(value) in (bool, int, str):
            return value
        if type(value) is float and math.isfinite(value):
            return value
        if isinstance(value, list):
            return [self(v) for v in value]
        if isinstance(value, dict) and all(type(k) is str and k[:1] != "$" for k in value):
            return {k: self(v) for k, v in value.items()}
        for tag, kind, write, _ in _values():
            if isinstance(value, kind) if isinstance(kind, type) else kind(value):
                if tag in _SHARED:  # a net or state object: once, then as a reference
                    what = f"a {type(value).__name__} is saved only in its family's attributes"
                    _need(shared, what, TypeError)
                    if id(value) in self.memo:
                        return {"$ref": self.memo[id(value)][0]}
                    self.memo[id(value)] = (f"{_SHARED[tag]}{len(self.memo)}", value)
                return {tag: write(self, value)}
        raise TypeError(
            f"a {type(value).__module__}.{type(value).__qualname__} cannot be saved in a "
            "levy-sklearn model file (only data and the package's own state classes can); "
            "use pickle or joblib, from a trusted source only, for such an estimator."
        )

    def array(self, a: np.ndarray) -> str:
        ok = a.dtype.kind in _ARRAY_KINDS and a.dtype.fields is None
        _need(
            ok,
            f"arrays of dtype {a.dtype} cannot be saved; convert them to numbers or text.",
            TypeError,
        )
        buffer = io.BytesIO()
        np.save(buffer, a, allow_pickle=False)
        self.arrays.append(buffer.getvalue())
        return f"arrays/{len(self.arrays) - 1}.npy"

    def net(self, net: Any) -> dict:
        """A net as the specs it was built from, its dtype, weights (by name), optimiser
        settings and history: what rebuilds it, not skorch's attributes."""
        from ..training import LevyNeuralNet

        ref = self.memo[id(net)][0]
        ok = type(net) is LevyNeuralNet and getattr(net, "initialized_", False)
        _need(ok, "only a fitted LevyNeuralNet can be saved; fit it first.", TypeError)
        dtypes = {str(p.dtype)[6:] for p in net.module_.parameters() if p.is_floating_point()}
        ok = len(dtypes) == 1 and dtypes <= set(_DTYPES)
        _need(
            ok, f"the module's dtypes {sorted(dtypes)} are not one of {list(_DTYPES)}.", TypeError
        )
        tensors = {}
        for attr in ("module_", "criterion_"):
            tensors[attr] = list(state := getattr(net, attr).state_dict())
            for name, tensor in state.items():
                # A contiguous copy on the CPU: safetensors refuses tensors sharing memory.
                self.tensors[f"{ref}.{attr}.{name}"] = (
                    tensor.detach().to("cpu", copy=True).contiguous()
                )
        return {
            "ref": ref,
            "network": self(dataclasses.asdict(net.network_spec_)),
            "training": self(dataclasses.asdict(net.training_spec_)),
            "dtype": dtypes.pop(),
            "tensors": tensors,
            # The optimiser's settings (learning rates, the schedule's initial_lr), not its
            # moments: further training resumes from the weights.
            "optimizer": self(net.optimizer_.state_dict()["param_groups"]),
            "history": self(list(net.history)),
            "variance_scale": self(net.variance_scale_),
        }


class Reader:
    """Reads what :class:`Writer` wrote, every tag from its fixed table."""

    def __init__(self, arrays: dict[str, bytes], tensors: dict, device: str | None) -> None:
        self.arrays, self.tensors, self.device = arrays, tensors, device
        self.used_arrays: set[str] = set()
        self.used_tensors: set[str] = set()
        self.objects: dict[str, Any] = {}
        self.name = ""

    def values(self, raw: dict[str, Any], shared: Any = ()) -> dict[str, Any]:
        """Each named value read (a net or state object only as one of ``shared``; a
        refusal of a state object's fields names it)."""
        values = {}
        for name, value in raw.items():
            self.name = name
            values[name] = self(value, shared=name in shared)
        return values

    def __call__(self, raw: Any, shared: bool = False) -> Any:
        if raw is None or isinstance(raw, bool | int | float | str):
            return raw
        if isinstance(raw, list):
            return [self(v) for v in raw]
        require(isinstance(raw, dict), f"unexpected JSON value {raw!r} in the state.")
        tags = [k for k in raw if k.startswith("$")]
        if not tags:
            return {k: self(v) for k, v in raw.items()}
        require(len(raw) == 1, f"a tagged value has other keys besides {tags[0]!r}.")
        tag, body = next(iter(raw.items()))
        if tag in (*_SHARED, "$ref"):
            require(shared, f"{self.name} holds a {tag}, which its declared family cannot.")
        if tag == "$ref":
            ok = isinstance(body, str) and body in self.objects
            require(ok, f"reference {body!r} to an object not defined before it.")
            return self.objects[body]
        read = next((read for t, _, _, read in _values() if t == tag), None)
        if read is None:
            raise refuse(
                f"unknown type tag {tag!r}: an unknown class or function, or a value of a "
                "newer format.",
                "The file may come from a newer levy-sklearn: upgrade to read it.",
            )
        return self.guard(tag, lambda: read(self, body))

    def guard(self, tag: str, read: Any) -> Any:
        try:
            return read()
        except (ValueError, TypeError, KeyError, IndexError, AttributeError) as err:
            if str(err).startswith("Refusing"):  # a refusal from within, already named
                raise
            raise refuse(f"a {tag} value is malformed ({type(err).__name__}: {err}).") from err

    def index(self, raw: Any) -> pd.Index:
        if not isinstance(index := self(raw), pd.Index):
            raise ValueError("expected an index")
        return index

    def array(self, member: Any) -> np.ndarray:
        if not isinstance(member, str) or member not in self.arrays:
            raise refuse(f"the state refers to an array {member!r} the archive lacks.")
        require(member not in self.used_arrays, f"the state refers to the array {member} twice.")
        self.used_arrays.add(member)
        data = self.arrays[member]
        require(data.startswith(b"\x93NUMPY"), f"{member} is not a .npy array.")
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

    def state(self, body: Any) -> Any:
        key, ref, fields = _list(body, 3)
        cls = {c.__name__: c for c in state_classes().values()}.get(key)
        require(cls is not None, f"unknown state class {key!r} for {self.name}.")
        require(isinstance(fields, dict), f"{key} needs its fields by name.")
        fields = self(fields)
        try:
            obj = cls.from_state(fields)
        except (TypeError, ValueError) as err:
            raise refuse(f"{self.name}: {err}", TAMPERED) from None
        self.objects[self.new_ref(ref)] = obj
        return obj

    def check_used(self) -> None:
        """Refuse the arrays and tensors no value refers to."""
        if unexpected := sorted(set(self.arrays) - self.used_arrays):
            raise refuse(f"unexpected members {unexpected[:5]}.")
        if unexpected := sorted(set(self.tensors) - self.used_tensors):
            raise refuse(f"{WEIGHTS} holds unexpected tensors {unexpected[:5]}.")

    def net(self, body: dict) -> Any:
        """Rebuild a net from its specs (:func:`~levy_sklearn.training.make_levy_net`) and
        load its checked weights, optimiser settings and history."""
        from skorch.history import History

        if extra := sorted(set(body) - _NET):
            raise refuse(f"the skorch net's {extra[0]!r} is rebuilt, not read (from its specs).")
        require(set(body) == _NET, f"a skorch net record lacks {sorted(_NET - set(body))}.")
        ref, dtype = self.new_ref(body["ref"]), _DTYPES.get(body["dtype"])
        require(dtype is not None, f"unknown module dtype {body['dtype']!r}.")
        network, training = self(body["network"]), self(body["training"])
        if self.device is not None:
            training["device"] = self.device
        net = _rebuild_net(network, training, dtype)
        components = body["tensors"]
        if not isinstance(components, dict) or set(components) != {"module_", "criterion_"}:
            raise refuse("a skorch net record must list the tensors of module_ and criterion_.")
        for attr, names in components.items():
            self.load_module(getattr(net, attr), f"{ref}.{attr}", _list(names))
        try:
            net.optimizer_.load_state_dict({"state": {}, "param_groups": self(body["optimizer"])})
        except (ValueError, KeyError, TypeError) as err:
            raise refuse(
                f"the optimizer's parameter groups do not fit the network ({err})."
            ) from err
        history, scale = self(body["history"]), self(body["variance_scale"])
        if not all(isinstance(epoch, dict) for epoch in _list(history)):
            raise refuse("a skorch net's history must be a list of epochs.")
        if type(scale) is not float or not 0 < scale < math.inf:
            raise refuse(f"variance_scale_ is {scale!r}, not a positive finite float.", TAMPERED)
        net.history_, net.variance_scale_ = History(history), scale
        self.objects[ref] = net
        return net

    def load_module(self, module: torch.nn.Module, prefix: str, names: list) -> None:
        expected = module.state_dict()
        if set(names) != set(expected) or len(names) != len(expected):
            missing, unexpected = set(expected) - set(names), set(names) - set(expected)
            raise refuse(
                f"the weights of {prefix} do not match the network rebuilt from its specs "
                f"(missing: {sorted(missing)[:5]}, unexpected: {sorted(unexpected)[:5]}).",
                "The file was written for another network shape or is corrupted.",
            )
        for name in names:
            key, target = f"{prefix}.{name}", expected[name]
            if (tensor := self.tensors.get(key)) is None:
                raise refuse(f"weights.safetensors lacks the tensor {key!r}.")
            if tensor.shape != target.shape:
                raise refuse(
                    f"tensor {key!r} has shape {tuple(tensor.shape)} but the network rebuilt "
                    f"from the file's hyperparameters needs {tuple(target.shape)}."
                )
            if tensor.dtype != target.dtype:
                raise refuse(f"tensor {key!r} has dtype {tensor.dtype}, not {target.dtype}.")
            if tensor.is_floating_point() and not bool(torch.isfinite(tensor).all()):
                raise refuse(
                    f"tensor {key!r} holds NaN or infinite values; a trained network never does.",
                    TAMPERED,
                )
            self.used_tensors.add(key)
        # skorch's load_params(use_safetensors=True) loads a state dict just so, but without
        # the checks above (it casts a tensor of another dtype silently).
        module.load_state_dict({name: self.tensors[f"{prefix}.{name}"] for name in names})


def _rebuild_net(network: Any, training: Any, dtype: torch.dtype) -> Any:
    from ..training import NetworkSpec, TrainingSpec, check_device, make_levy_net

    if not isinstance(network, dict) or not isinstance(training, dict):
        raise refuse("a skorch net's specs must be objects.")
    try:
        check_device(training.get("device", "cpu"))
    except ValueError as err:
        raise refuse(
            f"the model was saved on a device this machine lacks ({err})",
            "Pass load(path, device='cpu') (or another device) to load it there.",
        ) from err
    try:
        net = make_levy_net(NetworkSpec(**network), TrainingSpec(**training))
        # Initialising draws random weights (overwritten next) from torch's global
        # generator: leave the caller's generator as it was.
        with torch.random.fork_rng(devices=[]):
            net.initialize()
    except (TypeError, ValueError, AttributeError, RuntimeError) as err:
        raise refuse(f"the skorch net cannot be rebuilt from the file's specs ({err}).") from err
    net.module_.to(dtype)
    return net
