"""Scoring on a Dask cluster: many rows with the regressor, many series with the forecaster.

A fitted estimator is shipped to the workers and applied to pieces of the data there; Dask
schedules the pieces. Rows and series are scored independently and inference runs in float64,
so the results are what the estimator returns in-process, to float64 rounding (rows or
windows batched differently can change the last bits; measured below 1e-12 relative).

* :func:`predict_blocks`: any prediction method of a fitted estimator (e.g.
  ``predict(X, return_std=True)`` or ``predict_interval``) over the row blocks of a
  ``dask.array``, lazily. For plain ``predict``, ``dask_ml.wrappers.ParallelPostFit`` does
  the same.
* :func:`predict_panel`: forecasts of every series of a panel by a fitted
  :class:`~levy_sklearn.forecaster.LevyForecaster`, partitioned by series over the workers of
  a ``distributed`` client.

Each worker process should run torch with one thread (its Dask threads already fill the
cores): ``distributed``'s nanny sets ``OMP_NUM_THREADS=1`` in every worker it starts (its
``distributed.nanny.pre-spawn-environ`` setting), for ``LocalCluster`` and ``dask worker``
alike. On a multi-machine cluster, connect with ``Client("tcp://scheduler:8786")`` and make the
same calls; every worker needs levy-sklearn installed (the estimators are pickled, not their
code). Both helpers need ``dask[distributed]``.
"""

from __future__ import annotations

import copy
import functools
import importlib
from collections.abc import Callable
from numbers import Integral
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

if TYPE_CHECKING:
    import dask.array
    import distributed

    from .forecaster import LevyForecaster

__all__ = ["predict_blocks", "predict_panel"]

# Forecaster methods predict_panel runs: those that return one DataFrame row per
# (series, forecast time).
_PANEL_METHODS = ("predict", "predict_interval", "predict_quantiles", "predict_var")
# Partitions per worker thread when npartitions is not given: enough to balance the load
# when series differ in length, few enough that each partition's fixed cost stays small.
_PARTITIONS_PER_THREAD = 4


def _import_dask(module: str) -> Any:
    try:
        return importlib.import_module(module)
    except ImportError as err:
        raise ImportError(
            f"levy_sklearn.scaleout needs {module.split('.')[0]!r}: "
            'pip install "dask[distributed]"'
        ) from err


def _method(estimator: Any, method: str, allowed: tuple[str, ...] | None = None) -> Callable:
    if allowed is not None and method not in allowed:
        raise ValueError(f"method={method!r} must be one of {allowed}.")
    func = getattr(estimator, method, None)
    if not callable(func):
        raise ValueError(f"method={method!r} is not a method of {type(estimator).__name__}.")
    return func


def predict_blocks(
    estimator: Any, X: dask.array.Array | np.ndarray, method: str = "predict", /, **kwargs: Any
) -> dask.array.Array | tuple[dask.array.Array, ...] | np.ndarray | tuple[np.ndarray, ...]:
    """Apply a fitted estimator's prediction method to every row block of a Dask array.

    ``getattr(estimator, method)(block, **kwargs)`` runs on each block of rows, on the workers
    of the active ``distributed`` client (or Dask's local scheduler); the estimator travels
    inside the task graph, as with ``dask_ml.wrappers.ParallelPostFit``, which covers plain
    ``predict`` but passes no keyword arguments. Outputs with a row axis first are
    supported: arrays (``predict``, ``predict_interval``) and tuples of arrays
    (``predict(X, return_std=True)``). For the deterministic methods the result equals the
    in-process one to float64 rounding (rows do not interact and inference runs in float64;
    blocks batched differently can change the last bits); ``sample_y`` draws each block with
    the same ``random_state``.

    Parameters
    ----------
    estimator : fitted estimator
        For example a fitted :class:`~levy_sklearn.regressor.LevyAttentionRegressor`.
    X : dask.array.Array of shape (n_samples, n_features), or ndarray
        Rows to predict, chunked along the rows (column chunks are merged). A NumPy array is
        predicted in-process and returned as the method returns it.
    method : str, default="predict"
        Name of the method, e.g. ``"predict"`` or ``"predict_interval"``. Positional only,
        like ``estimator`` and ``X``, so that a ``method`` keyword goes to the method:
        ``predict_blocks(reg, X, "predict_interval", coverage=0.9, method="conformal")``
        (it clashed with this one's own).
    **kwargs
        Passed to the method, e.g. ``return_std=True`` or ``coverage=[0.5, 0.9]``.

    Returns
    -------
    dask.array.Array or tuple of dask.array.Array
        Lazy, chunked like ``X`` along the rows; a tuple where the method returns one (its
        arrays share one computation per block).

    Examples
    --------
    >>> import dask.array as da
    >>> import numpy as np
    >>> from levy_sklearn.regressor import LevyAttentionRegressor
    >>> from levy_sklearn.scaleout import predict_blocks
    >>> X = np.random.default_rng(0).normal(size=(1000, 3))
    >>> reg = LevyAttentionRegressor(max_epochs=2, random_state=0).fit(X[:100], X[:100, 0])
    >>> X_dask = da.from_array(X, chunks=(250, 3))
    >>> mean, std = predict_blocks(reg, X_dask, return_std=True)
    >>> mean.chunks[0], std.shape
    ((250, 250, 250, 250), (1000,))
    >>> local = reg.predict(X, return_std=True)[1]  # equal up to float64 rounding
    >>> bool(np.allclose(std.compute(), local, rtol=1e-12, atol=1e-12))
    True
    >>> predict_blocks(reg, X_dask, "predict_interval", coverage=[0.5, 0.9]).shape
    (1000, 2, 2)
    """
    predict = functools.partial(_method(estimator, method), **kwargs)
    da = _import_dask("dask.array")
    if not isinstance(X, da.Array):
        return predict(X)
    if X.ndim != 2:
        raise ValueError(f"X must be a 2-d dask array (rows, features), got {X.ndim} dimensions.")
    X = X.rechunk({1: -1})
    # One row of zeros (as dask-ml's wrappers use) shows the output's layout in-process.
    sample = predict(np.zeros((1, X.shape[1]), dtype=X.dtype))
    parts = sample if isinstance(sample, tuple) else (sample,)
    if not all(isinstance(p, np.ndarray) and p.ndim >= 1 and len(p) == 1 for p in parts):
        raise ValueError(
            f"method={method!r} must return an array, or a tuple of arrays, with one row per "
            f"row of X; {type(estimator).__name__}.{method} returned {type(sample).__name__}."
        )
    if any(p.shape != parts[0].shape for p in parts):
        raise ValueError(f"method={method!r} returned arrays of different shapes.")
    if not isinstance(sample, tuple):
        return da.map_blocks(
            predict,
            X,
            dtype=sample.dtype,
            chunks=(X.chunks[0], *sample.shape[1:]),
            **_axes(sample.ndim),
        )
    # A tuple (e.g. mean and std): one task per block computes all its arrays, stacked along
    # a last axis, and each output is a lazy slice of it.
    stacked = da.map_blocks(
        _stacked,
        X,
        predict=predict,
        dtype=np.result_type(*parts),
        chunks=(X.chunks[0], *parts[0].shape[1:], len(parts)),
        **_axes(parts[0].ndim + 1),
    )
    return tuple(stacked[..., i] for i in range(len(parts)))


def _axes(ndim: int) -> dict[str, Any]:
    """``map_blocks`` arguments for an output of ``ndim`` axes from ``(rows, features)``."""
    if ndim == 1:
        return {"drop_axis": 1}
    return {"new_axis": list(range(2, ndim))} if ndim > 2 else {}


def _stacked(block: np.ndarray, predict: Callable) -> np.ndarray:
    return np.stack(predict(block), axis=-1)


def predict_panel(
    forecaster: LevyForecaster,
    y: pd.DataFrame,
    fh: Any = None,
    method: str = "predict",
    *,
    client: distributed.Client | None = None,
    npartitions: int | None = None,
    **kwargs: Any,
) -> pd.DataFrame:
    """Forecast every series of a panel on a Dask cluster, partitioned by series.

    Each series of ``y`` is forecast from its own history in ``y`` by the fitted
    ``forecaster``: its network, time unit, scaling and conformal calibration stay as they
    are, and the series only serve as context (no training). This is what
    ``forecaster.update(y, update_params=False)`` followed by
    ``forecaster.<method>(fh, **kwargs)`` returns for the series of ``y``, without changing
    ``forecaster``: the series may be new (e.g. after ``pretrain`` and ``fit`` on a sample
    of the panel), and a series the forecaster already holds is extended by its rows in
    ``y``. The forecaster is scattered to every worker once; ``y`` is cut into
    ``npartitions`` groups of whole series, and each group is forecast on a worker by a copy
    of the forecaster, through its public ``update`` and ``method``. That copy also forecasts
    the series the forecaster was fitted on (their rows are dropped), so fit it on a small
    panel, e.g. ``pretrain`` on a large sample and ``fit`` on a few series, and this cost
    stays small.

    Parameters
    ----------
    forecaster : LevyForecaster
        Fitted on a panel (or a hierarchical frame) with the same index levels and columns
        as ``y``.
    y : pd.DataFrame
        Panel in sktime's ``pd-multiindex`` format (index ``(instance, ..., time)``), in the
        client's memory.
    fh : int, list, pd.Index or ForecastingHorizon, optional
        Forecast times, as for ``forecaster.predict``; a relative ``fh`` counts from each
        series' own last time point.
    method : {"predict", "predict_interval", "predict_quantiles", "predict_var"}, \
default="predict"
        The forecaster method to run.
    client : distributed.Client, optional
        The cluster's client; the current one (``distributed.get_client()``) when omitted.
    npartitions : int, optional
        Number of groups of series (tasks); four per worker thread when omitted. More
        partitions lower each worker's peak memory.
    **kwargs
        Passed to the method, e.g. ``coverage=0.9`` or ``alpha=[0.1, 0.9]``.

    Returns
    -------
    pd.DataFrame
        The method's frame for the series of ``y``, in the order they first appear in ``y``.

    Examples
    --------
    >>> import numpy as np
    >>> import pandas as pd
    >>> from distributed import Client
    >>> from levy_sklearn.forecaster import LevyForecaster
    >>> from levy_sklearn.scaleout import predict_panel
    >>> def panel(n_series, first=0, length=30):
    ...     t = np.arange(length)
    ...     index = pd.MultiIndex.from_product([range(first, first + n_series), t])
    ...     phases = np.random.default_rng(first).uniform(0, 6, (n_series, 1))
    ...     return pd.DataFrame({"y": np.sin(t / 3 + phases).ravel()}, index=index)
    >>> forecaster = LevyForecaster(context_length=12, max_horizon=4, max_epochs=2,
    ...                             random_state=0).fit(panel(5))
    >>> new = panel(40, first=100)  # 40 series the forecaster has not seen
    >>> with Client(processes=False, n_workers=2, dashboard_address=None) as client:
    ...     y_pred = predict_panel(forecaster, new, fh=[1, 2], client=client)
    ...     intervals = predict_panel(forecaster, new, fh=[1, 2], method="predict_interval",
    ...                               coverage=0.9, client=client)
    >>> y_pred.shape, intervals.shape
    ((80, 1), (80, 2))
    >>> import copy
    >>> local = copy.deepcopy(forecaster).update(new, update_params=False)
    >>> in_process = local.predict(fh=[1, 2]).loc[100:]  # the new series
    >>> bool(np.allclose(y_pred, in_process, rtol=1e-12, atol=1e-12))
    True
    """
    _method(forecaster, method, _PANEL_METHODS)
    forecaster.check_is_fitted()
    _import_dask("distributed")
    from distributed import get_client

    if not isinstance(y, pd.DataFrame) or not isinstance(y.index, pd.MultiIndex):
        raise ValueError(
            "y must be a panel: a DataFrame with a (instance, ..., time) MultiIndex, as "
            "sktime's pd-multiindex format. Forecast a single series with "
            f"forecaster.{method}(fh) in-process."
        )
    if y.empty:
        raise ValueError("y is empty: pass the histories of the series to forecast.")
    fitted_levels = len(forecaster.index_names_)
    if fitted_levels != y.index.nlevels:
        raise ValueError(
            f"y has {y.index.nlevels} index levels but the forecaster was fitted on "
            f"{fitted_levels}; fit it (or pretrain, then fit it) on a panel indexed like y."
        )
    if client is None:
        try:
            client = get_client()
        except ValueError as err:
            raise ValueError(
                "predict_panel needs a Dask client: start one first, e.g. Client() for a "
                "local cluster or Client('tcp://scheduler:8786'), or pass client=."
            ) from err
    instances = y.index.droplevel(-1)
    codes, uniques = pd.factorize(instances)
    if npartitions is None:
        npartitions = _PARTITIONS_PER_THREAD * sum(client.nthreads().values())
    if isinstance(npartitions, bool) or not isinstance(npartitions, Integral) or npartitions < 1:
        raise ValueError(f"npartitions={npartitions!r} must be a positive integer.")
    npartitions = min(int(npartitions), len(uniques))
    # Contiguous groups of whole series, in their order of first appearance.
    group = codes * npartitions // len(uniques)
    parts = [part for _, part in y.groupby(group, sort=True)]
    # Fresh keys on every call (hash=False): a key shared with an earlier call's data may be
    # released by that call's clean-up after this call scattered it ("lost dependencies").
    model = client.scatter(forecaster, broadcast=True, hash=False)
    futures = client.map(
        _forecast_partition,
        client.scatter(parts, hash=False),
        model=model,
        fh=fh,
        method=method,
        kwargs=kwargs,
    )
    return pd.concat(client.gather(futures))


def _forecast_partition(
    part: pd.DataFrame, model: LevyForecaster, fh: Any, method: str, kwargs: dict
) -> pd.DataFrame:
    """The forecasts of the series of ``part``: a copy of the forecaster takes them as
    context (the worker's copy stays as shipped), forecasts, and keeps their rows."""
    forecaster = copy.deepcopy(model)
    forecaster.update(part, update_params=False)
    out = getattr(forecaster, method)(fh, **kwargs)
    # Rows of part's series (the forecaster's own come first), in their order in part.
    position = part.index.droplevel(-1).unique().get_indexer(out.index.droplevel(-1))
    mine = np.flatnonzero(position >= 0)
    return out.iloc[mine[np.argsort(position[mine], kind="stable")]]
