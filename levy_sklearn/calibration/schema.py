"""The schema of a calibration table: its levels, its fields, its version, the migration of
older states and the rules a table must meet to be read.

A table's state (:meth:`~levy_sklearn.calibration.LeadCalibration.to_state`) is a dict of its
fields and ``"schema"``, the version below. :func:`migrate` brings a state of any earlier
version to this one, once, at load; the table itself then holds every field explicitly.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import numpy as np
from scipy.stats import norm

# The coverage levels at which conformal quantiles are stored; other levels interpolate the
# ratio to the Normal quantile between them (and keep it beyond the ends).
LEVELS = np.concatenate([np.arange(1, 100) / 100, [0.995, 0.999]])
# The Normal's half-widths (in σ) at LEVELS: the identity calibration, and what stored
# quantiles are read against between, beyond and above the levels their scores resolve.
NORMAL_AT_LEVELS = norm.ppf(0.5 + LEVELS / 2)

# Version 1: the fields below but ``schema``, all after the first four optional (missing or
# None: the meaning :func:`_from_v1` writes out). Version 2: every field, explicit.
SCHEMA = 2
FIELDS = (
    "quantiles",
    "second_moment",
    "edges",
    "n_scores",
    "centres",
    "mean_weight",
    "level_weight",
    "ahead_edges",
    "growth",
    "unseen_quantiles",
    "unseen_second_moment",
    "history_edges",
)


def _from_v1(state: dict) -> dict:
    """A version-1 state with each missing or ``None`` table written out as what its
    absence meant: no centres (each bin's factor holds across the bin), the network's
    forecast as it is (mean weight 1), no pull to the population (level weight 0), one
    samples-ahead and one history group per channel, variance growing like a random walk's
    beyond the horizon (growth 1), and no calibration of channels a subject never showed."""
    shape = np.shape(state["quantiles"]) + (0, 0)
    rows, bins = shape[0], shape[1]
    absent = {
        "centres": np.empty(0),
        "mean_weight": np.ones((rows, bins)),
        "level_weight": np.zeros((rows, bins)),
        "ahead_edges": np.empty(0),
        "growth": np.ones(rows),
        "unseen_quantiles": np.empty((0, LEVELS.size)),
        "unseen_second_moment": np.empty(0),
        "history_edges": np.empty(0),
    }
    return {name: absent[name] if state.get(name) is None else state[name] for name in FIELDS}


_MIGRATIONS: dict[int, Callable[[dict], dict]] = {1: _from_v1}


def migrate(state: Mapping) -> dict:
    """The fields of a table from its ``state`` of any schema version up to :data:`SCHEMA`.

    Parameters
    ----------
    state : mapping
        Field name to array, and ``"schema"`` (absent: version 1).

    Returns
    -------
    dict
        Every name of :data:`FIELDS` to its table.

    Raises
    ------
    ValueError
        If the state comes from a newer schema, or lacks or adds fields.

    Examples
    --------
    >>> import numpy as np
    >>> from levy_sklearn.calibration.schema import LEVELS, migrate
    >>> old = {"quantiles": np.ones((2, 1, LEVELS.size)), "second_moment": np.ones((2, 1)),
    ...        "edges": np.empty(0), "n_scores": np.zeros((2, 1))}
    >>> migrate(old)["mean_weight"]  # a table saved before mean weights: the network's mean
    array([[1.],
           [1.]])
    """
    state = dict(state)
    version = state.pop("schema", 1)
    if type(version) is not int or not 1 <= version <= SCHEMA:
        raise ValueError(
            f"the calibration's schema is {version!r}, not one of 1 to {SCHEMA} that this "
            "levy-sklearn reads; a newer levy-sklearn wrote it: upgrade to load it."
        )
    required = FIELDS if version == SCHEMA else FIELDS[:4]
    missing, unknown = set(required) - set(state), set(state) - set(FIELDS)
    if missing or unknown:
        problems = [f"unknown tables {sorted(unknown)}"] if unknown else []
        problems += [f"tables {sorted(missing)} missing"] if missing else []
        raise ValueError(
            f"{'; '.join(problems)} (a calibration of schema {version} holds "
            f"{sorted(required)}, and may hold {sorted(set(FIELDS) - set(required))})."
        )
    for step in range(version, SCHEMA):
        state = _MIGRATIONS[step](state)
    return state


def validate(table: Mapping[str, np.ndarray], n_channels: int) -> None:
    """Raise a ``ValueError`` naming the first of a table's fields that a calibration of
    ``n_channels`` channels cannot hold, as a fit writes them: shapes that agree, finite
    values, non-negative factors rising with the level, a positive second moment, sorted
    edges and centres, a growth share in ``[0, 1]``, and the unseen tables both or neither.
    A table edited by hand in a model file gave NaN or negative variances.

    Parameters
    ----------
    table : mapping
        Every name of :data:`FIELDS` to its array.
    n_channels : int
        Channels of the forecaster the calibration belongs to.

    Examples
    --------
    >>> import numpy as np
    >>> from levy_sklearn.calibration.schema import LEVELS, migrate, validate
    >>> table = migrate({"quantiles": -np.ones((1, 1, LEVELS.size)),
    ...                  "second_moment": np.ones((1, 1)), "edges": np.empty(0),
    ...                  "n_scores": np.zeros((1, 1))})
    >>> validate(table, 1)
    Traceback (most recent call last):
    ...
    ValueError: quantiles must rise from 0.
    """
    ahead, history = table["ahead_edges"], table["history_edges"]
    n_groups = (ahead.size + 1) * (history.size + 1)
    rows, q = n_channels * n_groups, table["quantiles"]
    if q.ndim != 3 or q.shape[0] != rows or q.shape[1] < 1 or q.shape[2] != LEVELS.size:
        raise ValueError(
            f"quantiles has {q.shape[0] if q.ndim else 0} rows, not {rows} ({n_channels} "
            f"channels × {n_groups} groups)."
            if q.ndim and q.shape[0] != rows
            else f"quantiles has shape {q.shape}, not ({rows}, bins, {LEVELS.size})."
        )
    bins = q.shape[1]
    # Each table's shapes, the first as a fit writes it; no centres, or no unseen tables,
    # are the other.
    shapes = {
        "second_moment": [(rows, bins)],
        "n_scores": [(rows, bins)],
        "edges": [(bins - 1,)],
        "centres": [(bins,), (0,)],
        "mean_weight": [(rows, bins)],
        "level_weight": [(rows, bins)],
        "growth": [(rows,)],
        "unseen_quantiles": [(n_channels, LEVELS.size), (0, LEVELS.size)],
        "unseen_second_moment": [(n_channels,), (0,)],
    }
    for name, allowed in shapes.items():
        if table[name].shape not in allowed:
            raise ValueError(f"{name} has shape {table[name].shape}, not {allowed[0]}.")
    for name in ("quantiles", "ahead_edges", "history_edges", *shapes):
        if not np.isfinite(table[name]).all():
            raise ValueError(f"{name} holds NaN or infinite values.")
    growth, unseen = table["growth"], table["unseen_quantiles"]
    rules = [
        ("quantiles", (q >= 0).all() and (np.diff(q, axis=2) >= 0).all(), "rise from 0"),
        ("second_moment", (table["second_moment"] > 0).all(), "be positive"),
        ("growth", ((growth >= 0) & (growth <= 1)).all(), "lie in [0, 1]"),
        ("edges", (np.diff(table["edges"]) >= 0).all(), "be sorted"),
        ("centres", (np.diff(table["centres"]) >= 0).all(), "be sorted"),
        ("ahead_edges", (np.diff(ahead) > 0).all(), "be sorted"),
        ("history_edges", (np.diff(history) > 0).all(), "be sorted"),
        ("unseen_quantiles", (unseen >= 0).all() and (np.diff(unseen) >= 0).all(), "rise from 0"),
        ("unseen_second_moment", (table["unseen_second_moment"] > 0).all(), "be positive"),
        (
            "unseen_quantiles",
            unseen.shape[0] == table["unseen_second_moment"].size,
            "come with unseen_second_moment",
        ),
    ]
    for name, ok, must in rules:
        if not ok:
            raise ValueError(f"{name} must {must}.")
