"""Observation tokens: the one format both front-ends speak to the network in.

:class:`~levy_sklearn.network.LevyNet` reads a dict of padded arrays (``n`` samples, ``L``
token slots, ``Q`` queries)::

    times           (n, L) float32   token times, in scaled time units
    channels        (n, L) int64     token channel ids
    values          (n, L) float32   token values (standardised by the front-end)
    mask            (n, L) bool      True = observed token, False = padding
    query_times     (n, Q) float32   times at which to predict
    query_channels  (n, Q) int64     which target / channel to predict

A missing value is an absent token (``mask`` False), never an imputed one.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = ["TOKEN_KEYS", "tokens_from_rows", "tokens_from_events"]

#: Keys of a token dict (each an array with one row per sample): observation ``times``,
#: ``channels``, ``values`` and padding ``mask``, then the ``query_times`` and
#: ``query_channels`` of the predictions asked for.
TOKEN_KEYS = ("times", "channels", "values", "mask", "query_times", "query_channels")


# Token values are float32. A standardised value beyond its range (an outlier some 1e38
# standard deviations out, where the network has long saturated) is clipped to the range
# instead of overflowing to inf, which would turn the prediction into NaN.
_FLOAT32_MAX = float(np.finfo(np.float32).max)


def _float32_values(values: np.ndarray) -> np.ndarray:
    return np.clip(values, -_FLOAT32_MAX, _FLOAT32_MAX).astype(np.float32)


def _queries(n: int, query_times: np.ndarray | None, n_targets: int) -> dict[str, np.ndarray]:
    if query_times is None:
        query_times = np.zeros((n, n_targets))
    return {
        "query_times": np.asarray(query_times, dtype=np.float32),
        "query_channels": np.broadcast_to(np.arange(n_targets), (n, n_targets)).copy(),
    }


def tokens_from_rows(
    X: np.ndarray,
    n_targets: int = 1,
    feature_times: np.ndarray | None = None,
    query_times: np.ndarray | None = None,
) -> dict[str, np.ndarray]:
    """One token per observed (non-NaN) cell of a table; channel = column.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
        Feature table; ``NaN`` marks a feature that was not observed in that row.
    n_targets : int, default=1
        Number of queries per row (one per target, all at ``query_times``).
    feature_times : ndarray of shape (n_features,), optional
        Time of each column (e.g. ``-lag`` for a row of lags), so a row becomes a
        continuous-time window; all zeros by default.
    query_times : ndarray of shape (n_samples, n_targets), optional
        Time of each query; zeros by default.

    Returns
    -------
    dict of ndarray
        The token arrays described in the module docstring, ``L = n_features``.

    Examples
    --------
    >>> import numpy as np
    >>> from levy_sklearn.tokens import tokens_from_rows
    >>> tok = tokens_from_rows(np.array([[1.0, np.nan], [3.0, 4.0]]))
    >>> tok["mask"]
    array([[ True, False],
           [ True,  True]])
    >>> tok["channels"].tolist(), tok["query_channels"].tolist()
    ([[0, 1], [0, 1]], [[0], [0]])
    """
    X = np.asarray(X, dtype=np.float64)
    n, p = X.shape
    times = np.zeros(p) if feature_times is None else np.asarray(feature_times, dtype=float)
    mask = ~np.isnan(X)
    return {
        "times": np.broadcast_to(times, (n, p)).astype(np.float32),
        "channels": np.broadcast_to(np.arange(p), (n, p)).copy(),
        "values": _float32_values(np.where(mask, X, 0.0)),
        "mask": mask,
        **_queries(n, query_times, n_targets),
    }


def tokens_from_events(
    events: Sequence[tuple[np.ndarray, np.ndarray, np.ndarray]],
    query_times: np.ndarray,
    query_channels: np.ndarray,
    max_tokens: int | None = None,
) -> dict[str, np.ndarray]:
    """Pad variable-length event lists ``(times, channels, values)`` into token arrays.

    Parameters
    ----------
    events : sequence of (times, channels, values)
        One triple of equally long 1-d arrays per sample: the observations in its window.
        Non-finite values are dropped (missing = no token).
    query_times : ndarray of shape (n_samples, Q)
        Times to predict at, per sample.
    query_channels : ndarray of shape (n_samples, Q)
        Channel to predict, per query.
    max_tokens : int, optional
        Keep at most this many tokens per sample, the latest in time.

    Returns
    -------
    dict of ndarray
        The token arrays described in the module docstring, ``L`` = the longest window
        (at least 1, so a sample with no observation is all padding).

    Examples
    --------
    >>> import numpy as np
    >>> from levy_sklearn.tokens import tokens_from_events
    >>> ev = [(np.array([-2.0, -1.0]), np.array([0, 1]), np.array([0.5, np.nan])),
    ...       (np.array([]), np.array([], dtype=int), np.array([]))]
    >>> tok = tokens_from_events(ev, np.ones((2, 1)), np.zeros((2, 1), dtype=int))
    >>> tok["mask"].tolist(), tok["times"][0].tolist()
    ([[True], [False]], [-2.0])
    """
    kept = []
    for t, c, v in events:
        t, c, v = np.asarray(t, float), np.asarray(c, np.int64), np.asarray(v, float)
        ok = np.isfinite(v) & np.isfinite(t)
        t, c, v = t[ok], c[ok], v[ok]
        if max_tokens is not None and t.size > max_tokens:
            latest = np.argsort(t, kind="stable")[-max_tokens:]
            t, c, v = t[latest], c[latest], v[latest]
        kept.append((t, c, v))
    n = len(kept)
    width = max([1, *(t.size for t, _, _ in kept)])
    out = {
        "times": np.zeros((n, width), np.float32),
        "channels": np.zeros((n, width), np.int64),
        "values": np.zeros((n, width), np.float32),
        "mask": np.zeros((n, width), bool),
    }
    for i, (t, c, v) in enumerate(kept):
        out["times"][i, : t.size] = t
        out["channels"][i, : t.size] = c
        out["values"][i, : t.size] = _float32_values(v)
        out["mask"][i, : t.size] = True
    out["query_times"] = np.asarray(query_times, dtype=np.float32)
    out["query_channels"] = np.asarray(query_channels, dtype=np.int64)
    return out


def take_tokens(tokens: dict[str, np.ndarray], index: np.ndarray) -> dict[str, np.ndarray]:
    """Rows ``index`` of every token array.

    Parameters
    ----------
    tokens : dict of ndarray
        Token arrays with one row per sample (keys :data:`TOKEN_KEYS`).
    index : ndarray
        Row indices or a boolean row mask.

    Returns
    -------
    dict of ndarray
        The same keys, the selected rows.

    Examples
    --------
    >>> import numpy as np
    >>> from levy_sklearn.tokens import take_tokens, tokens_from_rows
    >>> take_tokens(tokens_from_rows(np.ones((3, 2))), np.array([0, 2]))["values"].shape
    (2, 2)
    """
    return {key: value[index] for key, value in tokens.items()}
