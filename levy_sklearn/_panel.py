"""The ``y`` a forecaster is given: split into series, checked, columns matched by name.

sktime's input checks run first; these refuse what they let through but would corrupt a
forecast (repeated time points, ``±inf``, values beyond float range, columns reordered after
``pretrain``) and turn what they would answer obscurely into a brief error that names the
fix.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

from .validation import check_magnitude, refuse_repeated_columns


def instances(y: pd.DataFrame, name: str = "y") -> list[tuple[tuple | None, pd.DataFrame]]:
    """Split a Series/Panel/Hierarchical frame into ``(instance key, time-indexed frame)``,
    refusing what sktime's checks let through but would corrupt a forecast.

    The key is ``None`` for a single series and otherwise always a tuple with one value per
    instance level, whatever the pandas version: ``groupby(level=[0])`` yields scalar keys on
    pandas 2.x (with a FutureWarning) and 1-tuples on pandas 3, and ``(*key, t)`` unpacked a
    scalar string key letter by letter. Here one instance level is grouped by a scalar level
    (scalar keys on every version) and wrapped, several by a list (tuple keys on every
    version); the output index, ``update`` and error messages all use these keys. Errors
    call the frame ``name``.
    """
    if not isinstance(y.index, pd.MultiIndex):
        series = [(None, y.sort_index())]
    else:
        levels = list(range(y.index.nlevels - 1))
        if len(levels) == 1:
            groups = (((key,), frame) for key, frame in y.groupby(level=0, sort=False))
        else:
            groups = ((tuple(key), frame) for key, frame in y.groupby(level=levels, sort=False))
        series = [(key, frame.droplevel(levels).sort_index()) for key, frame in groups]
    for key, frame in series:
        where = name if key is None else f"series {key!r} of {name}"
        if frame.index.has_duplicates:
            first = frame.index[frame.index.duplicated()][0]
            raise ValueError(
                f"{where} has more than one row at time {first}. Combine rows that share a "
                "time point first, e.g. y.groupby(level=-1).mean() for a single series."
            )
        values = frame.to_numpy(dtype=np.float64)
        if np.isinf(values).any():
            raise ValueError(
                f"{where} contains ±inf. Replace it by NaN (LevyForecaster reads NaN as 'not "
                "observed') or by a finite value, e.g. y.replace([np.inf, -np.inf], np.nan)."
            )
        check_magnitude(values, where)
    return series


def key_order(keys: list) -> list[int]:
    """The positions of ``keys`` (instance keys, see :func:`instances`) in sorted order, so
    that what is trained on a panel's series (its windows, its folds of held-out series)
    does not depend on the order the panel's rows came in; keys of mixed types, which cannot
    be sorted, keep their order."""
    try:
        return sorted(range(len(keys)), key=keys.__getitem__)
    except TypeError:
        return list(range(len(keys)))


def in_key_order(
    series: list[tuple[tuple | None, pd.DataFrame]],
) -> list[tuple[tuple | None, pd.DataFrame]]:
    """``series`` (from :func:`instances`) in the order of their keys (:func:`key_order`)."""
    return [series[i] for i in key_order([key for key, _ in series])]


# What answers a channel with no observed value.
_NO_DATA = {
    False: "the network's prior alone",
    True: "the pretraining population's mean and spread",
}


def warn_unobserved(y: pd.DataFrame, what: str, pretrained: bool = False) -> None:
    """Refuse ``y`` without rows, and warn, naming them, about columns with no observed
    value: the network answers them from its prior alone (after ``pretrain``, the population
    does: see :func:`~levy_sklearn._series_forecasts.series_forecasts`), which is a number,
    not a forecast from data."""
    if y.empty:  # after pretrain nothing else stops it, and predict failed in an IndexError
        raise ValueError(
            f"{what} has no rows: pass the history to forecast from (at least one observation)."
        )
    observed = np.isfinite(y.to_numpy(dtype=np.float64))
    seen = None
    if isinstance(y.index, pd.MultiIndex):
        cells = pd.DataFrame(observed, index=y.index.droplevel(-1), columns=y.columns)
        seen = cells.groupby(cells.index, sort=False).any()
    warn_unseen(list(y.columns), observed.any(axis=0), seen, what, pretrained)


def warn_unseen(
    columns: list,
    observed: np.ndarray,
    seen: pd.DataFrame | None,
    what: str,
    pretrained: bool = False,
) -> None:
    """The warnings of :func:`warn_unobserved` from what was observed: whether each of
    ``columns`` holds an observed value (``observed``) and, for a panel, whether each series
    (``seen``'s rows) did in each column (``None``: a single series). A panel read partition
    by partition (:mod:`levy_sklearn.cohorts`) is never one frame, and warns the same."""
    if seen is not None:
        if not seen.any(axis=1).all():
            warnings.warn(
                f"Series {list(seen.index[~seen.any(axis=1)])[:5]} of {what} have no observed "
                f"value (all NaN): they are forecast from {_NO_DATA[pretrained]}, not from data.",
                UserWarning,
                stacklevel=5,
            )
        # After pretrain a series' channel it never showed is the population's, as above.
        lacking = seen.any(axis=1) & ~seen.loc[:, seen.any(axis=0)].all(axis=1)
        if pretrained and lacking.any():
            warnings.warn(
                f"Series {list(seen.index[lacking])[:5]} of {what} have no observed value in "
                f"some column(s) that other series have: those are forecast from "
                f"{_NO_DATA[True]} until they are observed (update).",
                UserWarning,
                stacklevel=5,
            )
    empty = [c for c, seen in zip(columns, observed, strict=True) if not seen]
    if not empty:
        return
    if pretrained:  # the pretrained channels must all be there: dropping is no option
        advice = "until they are observed (update)."
    else:
        advice = (
            f"not from data. Drop them, e.g. y.drop(columns={empty!r}), unless they are "
            "observed later (update)."
        )
    warnings.warn(
        f"Column(s) {empty} of {what} have no observed value (all NaN): they are forecast "
        f"from {_NO_DATA[pretrained]}, {advice}",
        UserWarning,
        stacklevel=5,
    )


def sktime_ready(y: object) -> object:
    """``y`` with object or text columns of numbers as floats, or a brief error for what sktime's
    input checks (they run before ``_fit``) would answer obscurely: an object column of
    numbers gets "categorical features", a time index out of order a dump of the whole
    index, repeated column names an AttributeError, float times "Unsupported input data
    type"."""
    if not isinstance(y, (pd.Series, pd.DataFrame)):
        return y
    frame = y.to_frame() if isinstance(y, pd.Series) else y
    refuse_repeated_columns(frame, "y", "channels are matched by name")
    # Scalar cells only: sktime's nested panels hold a series per cell (object dtype too).
    objects = [
        c
        for c in frame.columns
        if (frame[c].dtype == object or pd.api.types.is_string_dtype(frame[c].dtype))
        and frame[c].map(np.isscalar).all()
    ]
    if objects:
        frame = frame.copy()
        for c in objects:
            try:
                frame[c] = pd.to_numeric(frame[c]).astype(np.float64)
            except (ValueError, TypeError) as err:
                raise TypeError(
                    f"Column {c!r} of y holds values that are not numbers ({err}): "
                    "categorical or text series cannot be forecast; LevyForecaster "
                    "forecasts numeric series, so convert or drop the column."
                ) from None
        y = frame.iloc[:, 0].rename(y.name) if isinstance(y, pd.Series) else frame
    index = y.index
    times = index.get_level_values(-1) if isinstance(index, pd.MultiIndex) else index
    if pd.api.types.is_float_dtype(times.dtype):
        raise TypeError(
            "y's time index holds floats, which sktime's forecasters do not take. Give times "
            "as time spans, e.g. pd.to_timedelta(t, unit='min') (the package's loaders: "
            "time_as='timedelta'), or as integers."
        )
    if isinstance(index, pd.MultiIndex):
        # A scalar level for one instance level: pandas 2.x warns on iterating a groupby
        # by a length-1 list (its keys become tuples in pandas 3).
        instance_levels = list(range(index.nlevels - 1))
        keys = pd.Series(range(len(index)), index=index).groupby(
            level=instance_levels[0] if len(instance_levels) == 1 else instance_levels,
            sort=False,
        )
        ordered = all(times[g.to_numpy()].is_monotonic_increasing for _, g in keys)
    else:
        ordered = times.is_monotonic_increasing
    if not ordered:
        raise ValueError("y's time index is not sorted; sort it first: y = y.sort_index().")
    return y


def in_order(
    y: pd.DataFrame, columns: list, what: str, by_position_if_renamed: bool = False
) -> pd.DataFrame:
    """``y`` with its columns in the order of ``columns``, matched by name.

    Channels are the network's inputs by position, so a series whose columns come in
    another order must be reordered by name, never read by position (its forecasts would
    land under the wrong names); a missing or unknown name is refused. A single column is
    taken whatever its name (there is nothing to mix up). With ``by_position_if_renamed``,
    columns sharing no name with ``columns`` (e.g. a panel pretrained with names, a subject
    with pandas' default 0, 1, …) are taken by position, with a warning naming the pairing:
    there is no name to match, and sktime's pretrain contract fits such data. A single
    column comes back under the name in ``columns``: it is the same channel, and the frames
    of one series must agree on its name to be joined."""
    given = list(y.columns)
    if given == columns:
        return y
    if len(given) == 1 and len(columns) == 1:
        return y.set_axis(columns, axis=1)
    missing = [c for c in columns if c not in given]
    unknown = [c for c in given if c not in columns]
    duplicated = len(set(given)) != len(given)
    renamed = len(given) == len(columns) == len(missing) and not duplicated
    if by_position_if_renamed and renamed:
        pairs = ", ".join(f"{g!r} as {c!r}" for g, c in zip(given, columns, strict=True))
        warnings.warn(
            f"{what} shares no column name with the channels the forecaster knows "
            f"{columns}; its columns are taken by position ({pairs}). Name the columns "
            "like those to have them matched by name.",
            UserWarning,
            stacklevel=4,
        )
        return y
    if missing or unknown or duplicated:
        # A channel the series never observes is an all-NaN column (not observed), which
        # every front-end reads; dropping it would shift the channels the network knows.
        fixes = []
        if missing:
            fixes.append(
                "add a channel this series never observes as an all-NaN column "
                f"(y[{missing[0]!r}] = np.nan)"
            )
        if unknown:
            fixes.append(f"drop or rename {unknown}")
        fixes.append(f"then pass exactly these columns, y[{columns!r}]")
        raise ValueError(
            f"{what} has columns {given} but the forecaster knows {columns} (missing: "
            f"{missing}, unknown: {unknown}); channels are matched by name: "
            + ", ".join(fixes)
            + "."
        )
    return y[columns]
