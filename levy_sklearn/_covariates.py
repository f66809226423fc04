"""Covariates (sktime's exogenous ``X``) of the forecaster: what is known, and when.

``X``'s columns are observation channels of their own (see
:class:`~levy_sklearn.windows.InputSeries`): observed, never forecast. Which columns are
known ahead (plans, calendars, weather forecasts) is the forecaster's ``known_ahead``; a
column constant within every series is a static trait. :class:`CovariateSpec` holds what a
fit decided about them (names, roles, standardisation); the functions below split ``X``
by series, check it and turn it into the windows' inputs.
:class:`~levy_sklearn.forecaster.LevyForecaster` calls them from its sktime methods.
"""

from __future__ import annotations

import numbers
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ._panel import instances
from ._time_axis import TimeAxis, describe_kind, index_kind
from .validation import column_scaling
from .windows import InputSeries


@dataclass(frozen=True)
class CovariateSpec:
    """What a fit decided about ``X``'s columns.

    Parameters
    ----------
    columns : list
        ``X``'s columns, network channels ``n_channels_, n_channels_ + 1, …`` in this order.
    known : list of bool
        Per column, whether it is known ahead (its values after a cutoff are read).
    static : list of bool
        Per column, whether it is a static trait (constant within every fitted series).
    mean, scale : ndarray of shape (n_columns,)
        The per-column standardisation (over every series of the fit or pretraining).
    target_units : bool, default=False
        Whether the time-varying columns are read in the target's window units (see
        :meth:`fit`): their ``mean`` is then 0, and every window divides their values by
        its scale of ``y`` (:class:`~levy_sklearn.windows.InputSeries`'
        ``in_target_units``).

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from levy_sklearn._covariates import CovariateSpec
    >>> X = pd.DataFrame({"dose": [1.0, np.nan, 3.0], "weight": [70.0, 70.0, 70.0]})
    >>> spec = CovariateSpec.fit([X], known_ahead=["dose"])
    >>> spec.known, spec.static
    ([True, False], [False, True])
    >>> CovariateSpec.from_state(spec.to_state()) == spec
    True
    """

    columns: list
    known: list
    static: list
    mean: np.ndarray
    scale: np.ndarray
    target_units: bool = False

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, CovariateSpec):
            return NotImplemented
        mine, theirs = self.to_state(), other.to_state()
        return set(mine) == set(theirs) and all(
            np.array_equal(mine[name], theirs[name]) for name in mine
        )

    __hash__ = None  # type: ignore[assignment]

    @classmethod
    def fit(
        cls,
        frames: Sequence[pd.DataFrame],
        known_ahead: None | str | Sequence,
        target_units: bool = False,
    ) -> CovariateSpec:
        """The spec of the ``X`` ``frames`` of a fit's series (one per series, time-indexed)
        under ``known_ahead`` (``None``, ``"all"`` or a list of column names). With
        ``target_units``, the time-varying columns are divided by their standard deviation
        only, so that 0 (no infusion, no dose) stays 0 in every window once divided by its
        scale of ``y``; static traits are standardised either way."""
        columns = list(frames[0].columns)
        known = known_columns(known_ahead, columns)
        values = [frame.to_numpy(dtype=np.float64) for frame in frames]
        observed = np.zeros(len(columns), bool)
        constant = np.ones(len(columns), bool)
        for v in values:
            finite = np.isfinite(v)
            observed |= finite.any(axis=0)
            for k in range(len(columns)):
                constant[k] &= np.unique(v[finite[:, k], k]).size <= 1
        mean, scale = column_scaling(np.concatenate(values).reshape(-1, len(columns)))
        static = (observed & constant).tolist()
        if target_units:
            mean = np.where(static, mean, 0.0)
        return cls(columns, [c in known for c in columns], static, mean, scale, target_units)

    def to_state(self) -> dict[str, Any]:
        """The spec's fields for a model file (``target_units`` only where set: a spec
        without it writes the five fields a format-5 file holds)."""
        state = {
            "columns": list(self.columns),
            "known": list(self.known),
            "static": list(self.static),
            "mean": np.asarray(self.mean, dtype=np.float64),
            "scale": np.asarray(self.scale, dtype=np.float64),
        }
        return state | ({"target_units": True} if self.target_units else {})

    @classmethod
    def from_state(cls, state: dict[str, Any]) -> CovariateSpec:
        """The spec of :meth:`to_state`'s fields, checked: a ``ValueError`` names what no fit
        writes."""
        names = {"columns", "known", "static", "mean", "scale"}
        if not isinstance(state, dict) or set(state) - {"target_units"} != names:
            raise ValueError(f"a covariate spec holds {sorted(names)} (and target_units).")
        n = len(state["columns"]) if isinstance(state["columns"], list) else -1
        ok = (
            n >= 1
            and all(isinstance(c, str | numbers.Integral) for c in state["columns"])
            and all(
                isinstance(state[f], list)
                and len(state[f]) == n
                and all(isinstance(b, bool) for b in state[f])
                for f in ("known", "static")
            )
            and all(
                isinstance(state[f], np.ndarray)
                and state[f].shape == (n,)
                and state[f].dtype.kind == "f"
                and np.isfinite(state[f]).all()
                for f in ("mean", "scale")
            )
            and (state["scale"] > 0).all()
            and isinstance(state.get("target_units", False), bool)
        )
        if not ok:
            raise ValueError("the covariate spec's fields are not those a fit writes.")
        return cls(**state)

    def inputs(
        self, axis: TimeAxis, frames: Sequence[pd.DataFrame | None], n_rows: int = 0
    ) -> list[InputSeries]:
        """The windows' inputs of each series' ``X`` frame (``None``: nothing observed), in
        time units of ``axis``, standardised; a static trait's value is its last observed
        one."""
        known = np.array(self.known, bool)
        out = []
        for frame in frames:
            if frame is None:
                frame = pd.DataFrame(columns=self.columns, dtype=np.float64)
            values = (frame.to_numpy(dtype=np.float64) - self.mean) / self.scale
            values = values.reshape(len(frame), len(self.columns))
            static = np.full(len(self.columns), np.nan)
            for k in np.flatnonzero(self.static):
                seen = values[np.isfinite(values[:, k]), k]
                static[k] = seen[-1] if seen.size else np.nan
            times = axis.times(frame.index) if len(frame) else np.empty(0)
            out.append(InputSeries(times, values, known, static, self.target_units))
        return out


def known_columns(known_ahead: None | str | Sequence, columns: list) -> list:
    """The columns ``known_ahead`` names (``None``: none; ``"all"``: every one), refusing a
    name ``X`` lacks.

    Examples
    --------
    >>> from levy_sklearn._covariates import known_columns
    >>> known_columns("all", ["dose", "meal"]), known_columns(None, ["dose"])
    (['dose', 'meal'], [])
    """
    if known_ahead is None:
        return []
    if isinstance(known_ahead, str):
        if known_ahead != "all":
            raise ValueError(
                f"known_ahead={known_ahead!r} must be None, 'all' or a list of X's column "
                f"names (X has {columns}); pass known_ahead=[{known_ahead!r}] for one column."
            )
        return list(columns)
    known = list(known_ahead)
    unknown = [c for c in known if c not in columns]
    if unknown:
        raise ValueError(
            f"known_ahead names {unknown}, which X lacks (X has columns {columns}); name "
            "columns of X, or add them to X."
        )
    return [c for c in columns if c in known]


def split_covariates(
    X: pd.DataFrame, keys: Sequence[Hashable], kind: str, tz: object, what: str
) -> dict[Hashable, pd.DataFrame]:
    """``X`` split by series (its instance levels must be ``y``'s, for series ``keys``), each
    frame sorted by time; refused when its times are of another kind or time zone than
    ``y``'s (``kind``, ``tz``) or name a series ``y`` lacks."""
    frames = dict(instances(X, what))
    unknown = [key for key in frames if key not in keys]
    if unknown:
        raise ValueError(
            f"{what} holds series {unknown[:3]} that y lacks; pass X for y's series only."
        )
    for frame in frames.values():
        given = index_kind(frame.index) if len(frame) else kind
        if given != kind:
            raise ValueError(
                f"{what} has {describe_kind(given)} but y has {describe_kind(kind)}; index X "
                "on the same kind of time as y (its own time points may differ from y's)."
            )
        zone = getattr(frame.index, "tz", None)
        if len(frame) and str(zone) != str(tz):
            raise ValueError(
                f"{what} is in time zone {zone} but y is in {tz}; convert X's index to "
                "y's time zone first."
            )
    return frames


def check_columns(X: pd.DataFrame, columns: list, what: str) -> pd.DataFrame:
    """``X`` with fit's ``columns`` in fit's order, refusing other columns."""
    given = list(X.columns)
    missing = [c for c in columns if c not in given]
    unknown = [c for c in given if c not in columns]
    if missing or unknown or len(set(given)) != len(given):
        raise ValueError(
            f"{what} has columns {given} but the forecaster was fitted with X of columns "
            f"{columns} (missing: {missing}, unknown: {unknown}); pass X with exactly "
            "fit's columns (a column not observed is all NaN)."
        )
    return X[columns]


def with_plan(
    stored: pd.DataFrame | None, plan: pd.DataFrame | None, end: object
) -> pd.DataFrame | None:
    """A series' ``X`` as a forecast from ``end`` (its last time point) reads it: the
    ``stored`` rows (of fit and update) up to ``end``, and after it the ``plan`` given to
    predict (replacing what was stored after ``end``), or the stored rows without one."""
    if plan is None:
        return stored
    if stored is None:
        return plan[plan.index > end]
    return pd.concat([stored[stored.index <= end], plan[plan.index > end]])


def check_known_ahead(
    spec: CovariateSpec,
    inputs: Sequence[InputSeries],
    keys: Sequence[Hashable],
    ends: Sequence[float],
    firsts: Sequence[object],
    horizon: float,
) -> None:
    """Refuse a forecast after a series' end (time ``ends[i]`` in units; its first forecast
    time ``firsts[i]``, ``None`` for none) whose known-ahead column has no value in the
    ``horizon`` the windows read after the end: the network was trained with the plan in
    view, and a forecast without it would be a forecast under "nothing planned"."""
    for inp, key, end, first in zip(inputs, keys, ends, firsts, strict=True):
        if first is None:
            continue
        ahead = (inp.times > end) & (inp.times <= end + horizon)
        planned = np.isfinite(inp.values[ahead]).any(axis=0)
        for k, column in enumerate(spec.columns):
            if spec.known[k] and not spec.static[k] and not planned[k]:
                where = "" if key is None else f" of series {key!r}"
                raise ValueError(
                    f"known-ahead column {column!r} of X{where} has no value after the "
                    f"cutoff within max_horizon, which the first forecast time {first} needs; "
                    "pass its plan in predict's X (X=...), or leave it out of known_ahead."
                )
