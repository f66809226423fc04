"""What a model file's state must be beyond its JSON: the checks of the loaded values."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

TAMPERED = "The file is corrupted or was tampered with."
# Hyperparameters of the network's shape, under the same name in its NetworkSpec.
_ARCHITECTURE = ("d_model", "n_heads", "n_windowed_heads", "n_layers", "attention", "dropout")


def refuse(problem: str, fix: str = "") -> ValueError:
    """The one error of a file that is not loaded: what is wrong, then the fix."""
    return ValueError(f"Refusing to load the model file: {problem}" + (f" {fix}" if fix else ""))


def require(ok: Any, problem: str, fix: str = "") -> None:
    """Refuse the file (:func:`refuse`) unless ``ok``."""
    if not ok:
        raise refuse(problem, fix)


def state_classes() -> dict[str, type]:
    """The package's state classes by the family that declares them."""
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


def _families() -> dict[str, tuple[type, ...]]:
    """The types of each family of fitted attributes an estimator declares in
    ``_saved_attributes`` (``floats`` and ``scales`` are also checked for their values)."""
    from ..training import LevyNeuralNet

    anything = (object,)  # a resolved setting whose type follows the data; sktime's own
    return {
        **{family: (cls,) for family, cls in state_classes().items()},
        "net": (LevyNeuralNet,),
        **dict.fromkeys(("floats", "scales", "names"), (np.ndarray,)),
        "int": (int,),
        "number": (int, float),
        "bool": (bool,),
        "text": (str,),
        "span": (pd.Timedelta, int, float),
        "index": (pd.Index, type(None)),
        "frames": (dict,),
        "value": anything,
        "sktime": anything,
    }


def param_names(cls: type) -> list[str]:
    # scikit-base (sktime) names it get_param_names, scikit-learn _get_param_names.
    return list((getattr(cls, "get_param_names", None) or cls._get_param_names)())


def check_schema(cls: type, state: Any) -> None:
    """The state's hyperparameters are the class's, its attributes ones it declares."""
    key = cls.__name__
    if not isinstance(state, dict) or set(state) != {"params", "attributes"}:
        raise refuse("state.json must hold exactly 'params' and 'attributes'.")
    params, attributes = state["params"], state["attributes"]
    if not isinstance(params, dict) or not isinstance(attributes, dict):
        raise refuse("state.json: 'params' and 'attributes' must be objects.")
    names = set(param_names(cls))
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


def check_fitted(cls: type, attributes: dict) -> None:
    """Each attribute of its declared family, every required one there once fitted, and
    the standardisation, calibration and time unit as a fit writes them."""
    key, declared, families = cls.__name__, cls._saved_attributes, _families()
    if "net_" in attributes:
        missing = [n for n, (_, required) in declared.items() if required and n not in attributes]
        if missing:
            raise refuse(f"schema mismatch: a fitted {key} needs {missing}, which the file lacks.")
    for name, value in attributes.items():
        family = declared[name][0]
        if not isinstance(value, families[family]):
            raise refuse(
                f"schema mismatch: {name} is a {type(value).__name__}, but {key} needs "
                f"{' or '.join(t.__name__ for t in families[family])}."
            )
        # The standardisation multiplies every prediction: a NaN, inf or text there would
        # come back as NaN, inf or numpy's error at predict, as non-finite weights would.
        if family in ("floats", "scales") and not (
            value.dtype.kind == "f"
            and np.isfinite(value).all()
            and (family == "floats" or (value > 0).all())
        ):
            what = "positive finite" if family == "scales" else "finite"
            raise refuse(f"{name} must hold {what} floats, as a fit writes it.", TAMPERED)
    if key == "LevyAttentionRegressor" and "net_" in attributes:
        _check_regressor(attributes)
    if key == "LevyForecaster":
        _check_forecaster(attributes)


def _check_shapes(attributes: dict, expected: dict[str, tuple | int]) -> None:
    """Each present attribute's shape (an int attribute's value) as ``expected``: a fit
    writes them so, and an edited one loaded and predicted wrong numbers silently."""
    for name, want in expected.items():
        if name in attributes:
            value = attributes[name]
            got = value if isinstance(want, int) else np.shape(value)
            if got != want:
                raise refuse(
                    f"{name} is {got}, where the network and the data need {want}.", TAMPERED
                )


def _check_regressor(attributes: dict) -> None:
    n, spec = attributes["n_features_in_"], attributes["net_"].network_spec_
    if spec.n_channels != n or attributes["x_mean_"].shape != (n,):
        raise refuse(
            f"schema mismatch: n_features_in_={n} does not match the network or the "
            "standardisation."
        )
    q = spec.n_targets
    expected = {"x_scale_": (n,), "feature_times_": (n,), "n_targets_": q}
    _check_shapes(attributes, expected | {"y_mean_": (q,), "y_scale_": (q,)})
    if attributes["_y_1d"] and q != 1:
        raise refuse(f"_y_1d is true for a network of {q} targets.", TAMPERED)


def _check_forecaster(attributes: dict) -> None:
    """The standardisation, calibration and time unit (and the pretrained ones) as a fit
    writes them, for the network's number of channels."""
    from .._time_axis import is_positive_span  # here: it imports sktime

    for prefix in ("", "pretrained_"):
        net = attributes.get(f"{prefix}net_")
        if net is None:
            continue
        n = net.network_spec_.n_targets  # y's channels; X's are inputs after them
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
                raise refuse(f"{prefix}calibration_: {error}", TAMPERED) from None
        # The fitted one is spec_'s, checked by SeriesSpec.from_state.
        unit = attributes.get(f"{prefix}time_unit_")
        if unit is not None and not is_positive_span(unit):
            raise refuse(f"{prefix}time_unit_ is {unit!r}, not a positive span.", TAMPERED)


def architecture_mismatch(params: dict, attributes: dict) -> str | None:
    """Where a hyperparameter of the network's shape differs from the spec its net was
    built from (a ``d_model`` edited 32 → 16 loaded, and ``get_params`` said 16 of a
    32-wide network); the weights are checked against that spec's network."""
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
