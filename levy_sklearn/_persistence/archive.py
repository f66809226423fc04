"""The model file's zip archive: its fixed members, manifest, format versions, migrations, and
the one error of a file that is not loaded (:func:`refuse`)."""

from __future__ import annotations

import io
import json
import os
import platform
import re
import tempfile
import zipfile
from collections.abc import Callable
from importlib import metadata
from pathlib import Path
from typing import IO, Any

# The format version save writes (levy_sklearn.serialization.FORMAT_VERSION).
FORMAT_VERSION = 6
FORMAT = "levy-sklearn model"
MANIFEST, STATE, WEIGHTS = "manifest.json", "state.json", "weights.safetensors"
# sktime.base.load(path) runs pickle.loads on this member and calls load_from_path of the
# class it names: a class reference by module and name (protocol 0's GLOBAL, then STOP).
SKTIME_METADATA = "_metadata"
CLASS_REFERENCES = {"LevyForecaster": b"clevy_sklearn.forecaster\nLevyForecaster\n."}
# The estimator classes a file may name, by name: the module that defines each.
CLASSES = {
    "LevyAttentionRegressor": "levy_sklearn.regressor",
    "LevyForecaster": "levy_sklearn.forecaster",
}
PICKLE_PROTOCOL = b"\x80"  # a pickle of protocol 2 or later starts with the PROTO opcode
_ARRAY = re.compile(r"arrays/(0|[1-9][0-9]{0,8})\.npy")
_PARTS = ("params", "attributes")  # of state.json
_DATE_TIME = (1980, 1, 1, 0, 0, 0)  # every entry's: one model saved twice, the same bytes
# Versions recorded in the manifest (informative: loading does not depend on them).
_DEPENDENCIES = ("numpy", "pandas", "torch", "scikit-learn", "skorch", "sktime", "safetensors")
TAMPERED = "The file is corrupted or was tampered with."


def refuse(problem: str, fix: str = "") -> ValueError:
    """The one error of a file that is not loaded: what is wrong, then the fix."""
    return ValueError(f"Refusing to load the model file: {problem}" + (f" {fix}" if fix else ""))


def require(ok: Any, problem: str, fix: str = "") -> None:
    """Refuse the file (:func:`refuse`) unless ``ok``."""
    if not ok:
        raise refuse(problem, fix)


def _calibration_folds_default(cls: type, state: dict) -> dict:
    """Format 1 predates ``calibration_folds``: its forecasters load with the default."""
    if cls.__name__ == "LevyForecaster":
        default = cls.get_param_defaults()["calibration_folds"]
        state["params"].setdefault("calibration_folds", default)
    return state


def _net_specs(cls: type, state: dict) -> dict:
    """Formats 1 and 2 wrote a net's skorch parameters; format 3 the specs it is built from
    (read off the parameters ``make_levy_net`` set), its history and variance scale."""
    for name, raw in state["attributes"].items():
        if isinstance(raw, dict) and isinstance(net := raw.get("$net"), dict):
            try:
                p, kept = net["params"], net["attributes"]
                split = p["train_split"] and p["train_split"]["$object"][1]
                stop = dict(c["$tuple"] for c in p["callbacks"]).get("early_stopping")
                lags = dict(g["$tuple"] for g in p["optimizer__param_groups"]).get("lags.*")
                training = {
                    "loss": p["criterion__loss"], "lr": p["lr"], "epochs": p["max_epochs"],
                    "weight_decay": p["optimizer__weight_decay"], "batch_size": p["batch_size"],
                    "validation_fraction": split["cv"] if split else 0.0,
                    "patience": stop["$object"][1]["patience"] if stop else None,
                    "device": p["device"], "seed": split["random_state"] if split else None,
                    "verbose": p["verbose"], "lags_lr": lags["lr"] / p["lr"] if lags else 1.0,
                    "recipe": "rows" if isinstance(p["module__rate"], list) else "windows",
                }  # fmt: skip
                network = {k[8:]: v for k, v in p.items() if k.startswith("module__")}
                del network["rate"]  # the recipe's
                state["attributes"][name] = {"$net": {
                    **{k: net[k] for k in ("ref", "dtype", "tensors", "optimizer")},
                    "network": network, "training": training,
                    "history": kept["history_"]["$history"],
                    "variance_scale": kept.get("variance_scale_", 1.0),
                }}  # fmt: skip
            except (LookupError, TypeError, ValueError, AttributeError, ArithmeticError) as err:
                raise refuse(f"the format-2 net record of {name} is malformed ({err!r}).") from err
    return state


# A fitted forecaster's series spec (spec_, format 4) held as attributes and hyperparameters
# by formats 1 to 3: the spec's field of each.
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


def _spec_whole(cls: type, state: dict) -> dict:
    """Formats 1 to 3 held a fitted forecaster's series spec as eight attributes and read
    four of its fields from the hyperparameters at predict; format 4 holds it whole
    (``spec_``, a ``SeriesSpec`` state)."""
    attributes = state["attributes"]
    if cls.__name__ != "LevyForecaster" or "time_unit_" not in attributes:
        return state  # a regressor, or a forecaster not fitted
    fields = {
        new: attributes.pop(old) for old, new in _SPEC_ATTRIBUTES.items() if old in attributes
    }
    fields.setdefault("origin", 0)  # format 1 measured times from the Unix epoch
    fields |= {name: state["params"][name] for name in _SPEC_PARAMS if name in state["params"]}
    if type(fields.get("observation_dropout")) is int:  # the spec holds it as a float
        fields["observation_dropout"] = float(fields["observation_dropout"])
    attributes["spec_"] = {"$state": ["SeriesSpec", "spec_", fields]}
    return state


def _known_ahead_default(cls: type, state: dict) -> dict:
    """Format 4 predates covariates (``known_ahead``): its forecasters, fitted without
    ``X``, load with the default."""
    if cls.__name__ == "LevyForecaster":
        state["params"].setdefault("known_ahead", cls.get_param_defaults()["known_ahead"])
    return state


def _level_and_input_defaults(cls: type, state: dict) -> dict:
    """Format 5 predates ``level_gain`` and ``input_scaling``: its forecasters load with the
    defaults, which are what they were fitted with."""
    if cls.__name__ == "LevyForecaster":
        defaults = cls.get_param_defaults()
        for name in ("level_gain", "input_scaling"):
            state["params"].setdefault(name, defaults[name])
    return state


#: {version: function turning that version's state (of the estimator named) into the next
#: version's}. Format 2 added the _metadata member of forecaster files, format 3 wrote nets
#: as their specs, format 4 a fitted forecaster's series spec whole, format 5 covariates,
#: format 6 the level gain and the inputs' scaling.
MIGRATIONS: dict[int, Callable[[type, dict], dict]] = {
    1: _calibration_folds_default,
    2: _net_specs,
    3: _spec_whole,
    4: _known_ahead_default,
    5: _level_and_input_defaults,
}


def migrate(cls: type, version: int, state: Any) -> Any:
    """A state of format ``version`` as the current format's (a malformed one as it is, for
    the schema check to refuse)."""
    for step in range(version, FORMAT_VERSION):
        if isinstance(state, dict) and all(isinstance(state.get(k), dict) for k in _PARTS):
            state = MIGRATIONS[step](cls, state)
    return state


def versions() -> dict[str, str]:
    from .. import __version__

    found = {"python": platform.python_version(), "levy-sklearn": __version__}
    return found | {name: metadata.version(name) for name in _DEPENDENCIES}


def _json(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=True, separators=(",", ":"), allow_nan=False).encode()


def write(key: str, state: dict, writer: Any, path: str | os.PathLike | IO[bytes]) -> None:
    """The model file of a state (and the arrays and tensors its writer collected) to
    ``path``, a path atomically; stored entries of one fixed date, so the same bytes."""
    from safetensors.torch import save as save_tensors

    manifest = {"format": FORMAT, "format_version": FORMAT_VERSION, "estimator": key}
    members = [
        (MANIFEST, _json(manifest | {"written_by": versions()})),
        (STATE, _json(state)),
        # One member for every net's tensors, written by safetensors itself (skorch's
        # save_params(use_safetensors=True) writes one file per module of one net).
        (WEIGHTS, save_tensors(writer.tensors)),
        *((f"arrays/{i}.npy", data) for i, data in enumerate(writer.arrays)),
        *([(SKTIME_METADATA, CLASS_REFERENCES[key])] if key in CLASS_REFERENCES else []),
    ]
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, data in members:
            info = zipfile.ZipInfo(name, date_time=_DATE_TIME)
            info.create_system, info.external_attr = 3, 0o644 << 16  # the same on every OS
            archive.writestr(info, data)  # stored: weights barely compress
    if hasattr(path, "write"):
        path.write(buffer.getvalue())
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
            out.write(buffer.getvalue())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def strict_json(data: bytes, member: str) -> Any:
    def no_duplicates(pairs: list[tuple[str, Any]]) -> dict:
        require(len({k for k, _ in pairs}) == len(pairs), f"{member} has duplicate keys.")
        return dict(pairs)

    def no_constant(name: str) -> None:
        raise refuse(f"{member} holds {name}, which is not JSON.")

    try:
        return json.loads(
            data.decode("utf-8"), object_pairs_hook=no_duplicates, parse_constant=no_constant
        )
    except (UnicodeDecodeError, json.JSONDecodeError) as err:
        raise refuse(f"{member} is not valid JSON ({err}).", "The file is corrupted.") from err
    except RecursionError as err:
        raise refuse(f"{member} is nested too deeply to be a model's state.") from err


def read(path: str | os.PathLike | IO[bytes]) -> tuple[str, int, Any, dict, dict[str, bytes]]:
    """The estimator class's name, format version, state, tensors and arrays of a model
    file, checked: member names and CRCs, the manifest, sktime's class reference, JSON and
    safetensors."""
    from safetensors import SafetensorError
    from safetensors.torch import load as load_tensors

    # A missing or unreadable file raises its OSError (FileNotFoundError, PermissionError),
    # as open(), pickle and joblib do: a script's ``except FileNotFoundError`` must see it.
    data = path.read() if hasattr(path, "read") else Path(path).read_bytes()
    if data.startswith(PICKLE_PROTOCOL):
        raise refuse(
            "it is a pickle, not a levy-sklearn model file (loading a pickle can run code).",
            "Load it with pickle or joblib only if you trust its source.",
        )
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            members = _members(archive)
    except zipfile.BadZipFile as err:
        raise refuse(
            f"it is not a complete zip archive ({err}): truncated, corrupted, or not a "
            "levy-sklearn model file.",
            "Copy the file again, or save the model again with levy_sklearn.serialization.save.",
        ) from err
    except (EOFError, OSError, RuntimeError, NotImplementedError) as err:
        raise refuse(f"the archive cannot be read ({err}): truncated or corrupted.") from err
    key, version = _manifest(strict_json(members[MANIFEST], MANIFEST))
    expected = CLASS_REFERENCES.get(key) if version >= 2 else None
    reference = members.get(SKTIME_METADATA)
    if reference != expected and expected is None:
        raise refuse(f"{SKTIME_METADATA} belongs in forecaster files of format 2 or later.")
    if reference != expected and reference is None:
        raise refuse(f"the archive lacks {[SKTIME_METADATA]}.", "The file is incomplete.")
    if reference != expected:  # compared as bytes, never unpickled
        raise refuse(
            f"{SKTIME_METADATA} is not the reference to {key} that save writes (a pickle "
            "there could run code when sktime.base.load reads the file).",
            TAMPERED,
        )
    state = strict_json(members[STATE], STATE)
    try:
        tensors = load_tensors(members[WEIGHTS])
    except (SafetensorError, ValueError, RuntimeError) as err:
        raise refuse(f"{WEIGHTS} is not a valid safetensors file ({err}).") from err
    arrays = {name: data for name, data in members.items() if _ARRAY.fullmatch(name)}
    return key, version, state, tensors, arrays


def _members(archive: zipfile.ZipFile) -> dict[str, bytes]:
    infos = archive.infolist()
    names = [info.filename for info in infos]
    require(len(set(names)) == len(names), "the archive has duplicate member names.")
    if "_obj" in names and MANIFEST not in names:
        raise refuse(
            "it holds a pickle of the estimator (sktime's own save format), which "
            "levy-sklearn does not unpickle. If you trust its source, read it with "
            "pickle.loads(zipfile.ZipFile(path).read('_obj')) and save it again: the "
            "forecaster's save writes a file without pickle."
        )
    fixed = (MANIFEST, STATE, WEIGHTS, SKTIME_METADATA)
    unexpected = [n for n in names if n not in fixed and not _ARRAY.fullmatch(n)]
    if unexpected:
        raise refuse(
            f"unexpected members {unexpected[:5]} in the archive.",
            f"A model file holds only {MANIFEST}, {STATE}, {WEIGHTS}, arrays/<n>.npy and "
            f"(a forecaster's) {SKTIME_METADATA}.",
        )
    missing = [n for n in (MANIFEST, STATE, WEIGHTS) if n not in names]
    require(not missing, f"the archive lacks {missing}.", "The file is incomplete.")
    for info in infos:
        if info.flag_bits & 0x1 or info.compress_type not in (zipfile.ZIP_STORED, 8):
            raise refuse(f"{info.filename} is encrypted or of an unsupported compression.")
    members = {info.filename: archive.read(info) for info in infos}
    # sktime's class reference is compared as bytes; nothing else may be a pickle.
    for name, data in members.items():
        if data.startswith(PICKLE_PROTOCOL) and name != SKTIME_METADATA:
            raise refuse(f"{name} is a pickle payload, which could run code when loaded.")
    return members


def _manifest(manifest: Any) -> tuple[str, int]:
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise refuse(f"{MANIFEST} does not describe a levy-sklearn model file.")
    version = manifest.get("format_version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise refuse(f"format_version {version!r} is not a positive integer.")
    if version > FORMAT_VERSION:
        written = manifest.get("written_by", {}).get("levy-sklearn", "a newer version")
        raise refuse(
            f"it has format version {version}, newer than the {FORMAT_VERSION} this "
            "levy-sklearn reads.",
            f"It was written by levy-sklearn {written}: upgrade levy-sklearn to load it.",
        )
    key = manifest.get("estimator")
    if key not in CLASSES:
        raise refuse(f"unknown estimator class {key!r}; a file holds one of {sorted(CLASSES)}.")
    return key, version
