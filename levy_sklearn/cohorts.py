"""Cohorts from disk: a panel stored as partitioned parquet, or a Dask DataFrame, for
:meth:`~levy_sklearn.forecaster.LevyForecaster.pretrain`.

A :class:`Cohort` names the columns of a long table (one row per subject and time point)
that ``pretrain`` reads as ``y``. It is read partition by partition (a parquet file, a Dask
partition), never as one pandas frame: each partition is split into its subjects' series and
checked there (see :func:`~levy_sklearn._panel.instances`), so the pretraining keeps the
subjects' series and the arrays it trains on, not the table. The series are those of the
equivalent in-memory panel, so pretraining on a cohort gives the network and forecasts of
pretraining on that panel, bitwise (the same seed).

Reading parquet needs ``pyarrow``, a Dask DataFrame ``dask[dataframe]``: neither is a
dependency of levy-sklearn (``pip install "levy-sklearn[cohorts]"`` installs both).
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Hashable, Iterator
from typing import Any

import numpy as np
import pandas as pd

from ._panel import in_key_order, in_order, instances, sktime_ready, warn_unseen
from ._time_axis import describe_kind, index_kind

# read_series is the forecaster's reader of a Cohort, not a user's entry point.
__all__ = ["Cohort"]

_SPLIT_FIX = (
    "write every subject's rows into one partition: partition the parquet dataset by the "
    "subject or a column derived from it (pyarrow.parquet.write_to_dataset(table, path, "
    "partition_cols=[...])), or shuffle a Dask DataFrame by it (ddf.shuffle({subject!r}) "
    "or ddf.set_index({subject!r}))"
)


def _import(module: str, pip: str) -> Any:
    try:
        return importlib.import_module(module)
    except ImportError as err:
        raise ImportError(
            f"Reading a cohort of this kind needs {module.split('.')[0]!r}: pip install {pip} "
            '(or pip install "levy-sklearn[cohorts]").'
        ) from err


class Cohort:
    """A panel stored as partitioned parquet, or held in a Dask DataFrame, that
    :meth:`LevyForecaster.pretrain <levy_sklearn.forecaster.LevyForecaster.pretrain>` reads
    partition by partition as ``y``.

    The data is a long table: one row per subject and time point, a column naming the
    subject, one holding the time and one per channel (``NaN``: not observed), each subject's
    rows in one partition. ``pretrain(Cohort(...))`` trains on exactly the series of the
    in-memory panel ``table.set_index([subject, time])[columns]``, without building that
    frame: each partition is read, split into its subjects' series and dropped.

    Parameters
    ----------
    data : str, os.PathLike, pyarrow.dataset.Dataset or dask.dataframe.DataFrame
        A folder (or file) of parquet, read with
        ``pyarrow.dataset.dataset(data, partitioning="hive")`` (partition columns in the
        folder names, such as ``subject_group=3``, are read as columns), a pyarrow dataset,
        or a Dask DataFrame (its partitions, ``to_delayed()``, computed one at a time).
        A subject column or time column held as the frame's index is read as a column.
    subject : str
        The column naming the subject of each row (the panel's instance level).
    time : str
        The column holding each row's time: timestamps, time spans or integers, of one type
        in every partition.
    columns : list of str or None, default=None
        The channels, in the network's order; ``None``: every other column of the first
        partition (hive partition columns other than ``subject`` aside).

    See Also
    --------
    levy_sklearn.forecaster.LevyForecaster.pretrain : what reads a cohort.

    Notes
    -----
    Every partition is checked where it is read, and an error names it (the file, or the
    Dask partition's number) with the fix: a missing subject, time or channel column, a time
    column of another type than the first partition's, a subject whose rows sit in two
    partitions, repeated time points, text values; a cohort without rows is refused.
    ``fit``, ``update`` and ``predict`` take series in memory, not a cohort.

    Examples
    --------
    >>> import tempfile, warnings
    >>> import pyarrow as pa, pyarrow.parquet as pq
    >>> from levy_sklearn.cohorts import Cohort
    >>> from levy_sklearn.datasets import make_irregular_vitals
    >>> from levy_sklearn.forecaster import LevyForecaster
    >>> table = make_irregular_vitals(8, random_state=0).reset_index()
    >>> table["ward"] = table["patient"] % 2  # two partitions, whole patients in each
    >>> path = tempfile.mkdtemp()
    >>> pq.write_to_dataset(pa.Table.from_pandas(table), path, partition_cols=["ward"])
    >>> cohort = Cohort(path, subject="patient", time="time", columns=["ch0", "ch1", "ch2"])
    >>> forecaster = LevyForecaster(max_epochs=1, d_model=8, n_heads=2, windows_per_series=16,
    ...                             calibration_folds=1, random_state=0)
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     forecaster = forecaster.pretrain(cohort)
    >>> forecaster.state, forecaster.pretrained_columns_
    ('pretrained', ['ch0', 'ch1', 'ch2'])
    """

    def __init__(
        self,
        data: str | os.PathLike | Any,
        *,
        subject: str,
        time: str,
        columns: list[str] | None = None,
    ) -> None:
        self.data = data
        self.subject = subject
        self.time = time
        self.columns = columns

    def __repr__(self) -> str:
        return (
            f"Cohort({self.data!r}, subject={self.subject!r}, time={self.time!r}, "
            f"columns={self.columns!r})"
        )

    def _partitions(self) -> Iterator[tuple[str, pd.DataFrame]]:
        """Each partition as ``(name, frame)``, read one at a time: the frame's columns are
        the table's (a named index read as columns); the name, ``"file <path>"`` or
        ``"partition <i> of the Dask DataFrame"``, says where it came from."""
        data = self.data
        module = type(data).__module__.split(".")[0]
        if module == "dask":
            for i, part in enumerate(data.to_delayed()):
                yield f"partition {i} of the Dask DataFrame", _flat(part.compute())
            return
        if isinstance(data, str | os.PathLike):
            pds = _import("pyarrow.dataset", "pyarrow")
            data = pds.dataset(os.fspath(data), format="parquet", partitioning="hive")
        elif module == "pyarrow":
            pds = _import("pyarrow.dataset", "pyarrow")
        else:
            raise TypeError(
                f"Cohort reads a folder of parquet, a pyarrow dataset or a Dask DataFrame, not "
                f"{type(data).__name__}; pass a panel in memory to pretrain directly, e.g. "
                "pretrain(frame.set_index([subject, time]))."
            )
        pa = _import("pyarrow", "pyarrow")
        for fragment in data.get_fragments():
            # Each file on its own types: read on the dataset's schema, a file of integer
            # times would be cast silently to the first file's timestamps.
            frame = _flat(fragment.to_table(schema=fragment.physical_schema).to_pandas())
            keys = pds.get_partition_keys(fragment.partition_expression)
            if self.subject in keys and self.subject not in frame.columns:
                frame[self.subject] = keys[self.subject]
            yield f"file {fragment.path}", frame
            # The file's table and its pandas conversion are dropped by now; arrow's pool
            # keeps their pages unless told (about half the raw data, held to the end).
            del frame
            pa.default_memory_pool().release_unused()


def _flat(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with its named index levels as columns (a Dask DataFrame indexed by subject,
    a parquet file written from a panel with its index)."""
    names = [name for name in frame.index.names if name is not None]
    return frame.reset_index(level=names) if names else frame


def read_series(
    cohort: Cohort, what: str, order: list | None = None
) -> tuple[list[tuple[Hashable, pd.DataFrame]], list]:
    """The series of ``cohort`` in key order, as :func:`~levy_sklearn._panel.instances` gives
    them for the in-memory panel, and its columns; the same refusals and warnings as that
    panel's, each naming its partition.

    Parameters
    ----------
    cohort : Cohort
    what : str
        What the cohort is called in messages (``"the pretraining panel"``).
    order : list or None, default=None
        The channels a pretraining fixed, matched by name in every partition (``None``: the
        cohort's ``columns``).

    Returns
    -------
    series : list of (tuple, pd.DataFrame)
        ``(subject key, time-indexed frame of the channels)`` per subject.
    columns : list
        The channels, in the frames' order.

    Examples
    --------
    >>> import dask.dataframe as dd
    >>> from levy_sklearn.cohorts import Cohort, read_series
    >>> from levy_sklearn.datasets import make_irregular_vitals
    >>> table = make_irregular_vitals(4, random_state=0).reset_index()
    >>> by_patient = dd.from_pandas(table.set_index("patient"), npartitions=2)
    >>> cohort = Cohort(by_patient, subject="patient", time="time")
    >>> series, columns = read_series(cohort, "the cohort")
    >>> [key for key, _ in series], columns
    ([(0,), (1,), (2,), (3,)], ['ch0', 'ch1', 'ch2'])
    """
    columns = None if order is None else list(order)
    if columns is None and cohort.columns is not None:
        columns = list(cohort.columns)
    series: list[tuple[Hashable, pd.DataFrame]] = []
    where: dict[Hashable, str] = {}  # subject -> its partition
    first: tuple[str, str] | None = None  # (kind, partition) of the first time column
    for name, frame in cohort._partitions():
        try:
            part, columns, kind = _partition_series(frame, name, cohort, columns, order)
        except (TypeError, ValueError) as err:
            raise type(err)(f"{what}: {name}: {err}") from None
        if part and first is None:
            first = kind, name
        elif part and kind != first[0]:
            raise TypeError(
                f"{what}: {name} holds {describe_kind(kind)} in column {cohort.time!r} but "
                f"{first[1]} holds {describe_kind(first[0])}; write the time column with one "
                "type in every partition (e.g. timestamps everywhere)."
            )
        for key, _ in part:
            if key in where:
                raise ValueError(
                    f"{what}: subject {key[0]!r} has rows in {where[key]} and in {name}; "
                    + _SPLIT_FIX.format(subject=cohort.subject)
                    + "."
                )
            where[key] = name
        series += part
    if not series:
        raise ValueError(
            f"{what} has no rows: {cohort!r} holds no partition with a row; pass a cohort "
            "with the history to pretrain on."
        )
    _warn_unseen(series, columns, what)
    return in_key_order(series), columns


def _partition_series(
    frame: pd.DataFrame, name: str, cohort: Cohort, columns: list | None, order: list | None
) -> tuple[list, list, str]:
    """One partition's series (see :func:`read_series`), the cohort's columns (the first
    partition's where none were named) and the kind of its times."""
    subject, time = cohort.subject, cohort.time
    for column, role in ((subject, "subject"), (time, "time")):
        if column not in frame.columns:
            raise ValueError(
                f"it has no column {column!r} ({role}=) among {list(frame.columns)}; pass "
                f"{role}= naming the column that holds each row's {role}."
            )
    if columns is None:
        columns = [c for c in frame.columns if c not in (subject, time)]
    if order is None:
        missing = [c for c in columns if c not in frame.columns]
        if missing:
            raise ValueError(
                f"it lacks the channel column(s) {missing} of the cohort's columns {columns}; "
                "write every channel in every partition (NaN where not observed), or pass "
                "columns= naming those to read."
            )
        y = frame.set_index([subject, time])[columns]
    else:  # a further pretraining: the pretrained channels, matched by name
        y = in_order(frame.set_index([subject, time]), columns, "it")
    if y.empty:
        return [], columns, ""
    y = sktime_ready(y.sort_index())
    return instances(y, "the partition"), columns, index_kind(y.index.levels[1])


def _warn_unseen(series: list, columns: list, what: str) -> None:
    """:func:`~levy_sklearn._panel.warn_unseen` for the series of a cohort."""
    observed = np.array(
        [np.isfinite(frame.to_numpy(dtype=np.float64)).any(axis=0) for _, frame in series]
    ).reshape(len(series), len(columns))
    seen = pd.DataFrame(observed, index=[key[0] for key, _ in series], columns=columns)
    warn_unseen(columns, observed.any(axis=0), seen, what)
