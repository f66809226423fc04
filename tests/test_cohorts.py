"""Cohorts from disk (issue 55): ``pretrain`` reads partitioned parquet and Dask DataFrames
partition by partition, into the series of the equivalent in-memory panel; bad partitions
are refused with their name and the fix."""

import sys
import warnings

import numpy as np
import pandas as pd
import pytest
from conftest import TINY_FC

from levy_sklearn.cohorts import Cohort, read_series
from levy_sklearn.datasets import make_irregular_vitals
from levy_sklearn.forecaster import LevyForecaster

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")
dd = pytest.importorskip("dask.dataframe")

CHANNELS = ["ch0", "ch1", "ch2"]
FH = pd.to_timedelta([1, 3], unit="h")


@pytest.fixture(scope="module")
def panel():
    return make_irregular_vitals(10, random_state=0)


def write(table: pd.DataFrame, path, **kwargs) -> None:
    pq.write_to_dataset(pa.Table.from_pandas(table, preserve_index=False), str(path), **kwargs)


def pretrained_forecasts(y) -> np.ndarray:
    """The intervals of a zero-shot fit on one subject after pretraining on ``y``."""
    subject = make_irregular_vitals(1, random_state=5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        forecaster = LevyForecaster(**TINY_FC).pretrain(y)
        forecaster.fit(subject)
    return forecaster.predict_interval(fh=FH, coverage=[0.5, 0.9]).to_numpy()


def test_pretraining_from_parquet_equals_pretraining_from_the_panel(panel, tmp_path):
    # Rows shuffled on disk and subjects in three hive partitions: the same series, the
    # same pretrained network, bitwise.
    table = panel.reset_index().sample(frac=1.0, random_state=1)
    table["ward"] = table["patient"] % 3
    write(table, tmp_path, partition_cols=["ward"])
    cohort = Cohort(tmp_path, subject="patient", time="time", columns=CHANNELS)
    assert np.array_equal(pretrained_forecasts(cohort), pretrained_forecasts(panel))


def test_pretraining_from_a_dask_frame_equals_pretraining_from_the_panel(panel):
    table = dd.from_pandas(panel.reset_index().set_index("patient"), npartitions=3)
    assert table.npartitions > 1
    cohort = Cohort(table, subject="patient", time="time")
    assert np.array_equal(pretrained_forecasts(cohort), pretrained_forecasts(panel))


def test_a_further_pretraining_on_a_cohort_matches_its_columns_by_name(panel, tmp_path):
    # Columns written in another order are matched by name to the pretrained channels.
    write(panel.reset_index()[["patient", "time", "ch2", "ch0", "ch1"]], tmp_path)
    forecaster = LevyForecaster(**TINY_FC)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        forecaster.pretrain(panel)
        forecaster.pretrain(Cohort(tmp_path, subject="patient", time="time"))
    assert forecaster.pretrained_columns_ == CHANNELS
    series, columns = read_series(
        Cohort(tmp_path, subject="patient", time="time"), "the cohort", CHANNELS
    )
    assert columns == CHANNELS
    assert np.array_equal(series[0][1].to_numpy(), panel.loc[0].to_numpy(), equal_nan=True)


def test_the_series_of_a_cohort_are_the_panels(panel, tmp_path):
    table = panel.reset_index()
    write(table[table["patient"] < 5], tmp_path / "a")
    write(table[table["patient"] >= 5], tmp_path / "b")
    series, columns = read_series(Cohort(tmp_path, subject="patient", time="time"), "cohort")
    assert columns == CHANNELS
    assert [key for key, _ in series] == [(i,) for i in range(10)]
    for key, frame in series:
        pd.testing.assert_frame_equal(frame, panel.loc[key[0]])


def test_a_cohort_partitioned_by_subject_reads_the_subject_from_the_folder_names(panel, tmp_path):
    # Hive partitions patient=<k>: the subject is in the folder names only, not the files.
    write(panel.reset_index(), tmp_path, partition_cols=["patient"])
    assert "patient" not in pq.read_schema(next(tmp_path.rglob("*.parquet"))).names
    series, _ = read_series(Cohort(tmp_path, subject="patient", time="time"), "cohort")
    assert [key for key, _ in series] == [(i,) for i in range(10)]
    for key, frame in series:
        pd.testing.assert_frame_equal(frame, panel.loc[key[0]])


@pytest.mark.parametrize("role", ["subject", "time"])
def test_a_partition_without_the_subject_or_time_column_is_named(panel, tmp_path, role):
    table = panel.reset_index()
    column = {"subject": "patient", "time": "time"}[role]
    table[table["patient"] < 5].to_parquet(tmp_path / "a.parquet")
    table[table["patient"] >= 5].rename(columns={column: "x"}).to_parquet(tmp_path / "b.parquet")
    cohort = Cohort(tmp_path, subject="patient", time="time", columns=CHANNELS)
    with pytest.raises(ValueError, match=rf"file .*b\.parquet: it has no column '{column}'") as e:
        LevyForecaster(**TINY_FC).pretrain(cohort)
    assert f"pass {role}= naming the column" in str(e.value)


def test_times_of_another_type_in_one_partition_are_refused_naming_both(panel, tmp_path):
    table = panel.reset_index()
    seconds = table[table["patient"] >= 5].assign(
        time=lambda t: (t["time"] / pd.Timedelta("1s")).round().astype(np.int64)
    )
    table[table["patient"] < 5].to_parquet(tmp_path / "a.parquet")
    seconds.to_parquet(tmp_path / "b.parquet")
    cohort = Cohort(tmp_path, subject="patient", time="time")
    message = (
        r"b\.parquet holds integer times in column 'time' but file .*a\.parquet holds time "
        r"spans; write the time column with one type in every partition"
    )
    with pytest.raises(TypeError, match=message):
        LevyForecaster(**TINY_FC).pretrain(cohort)


def test_a_subject_split_across_partitions_is_refused_naming_both(panel, tmp_path):
    table = panel.reset_index()
    table[table.index % 2 == 0].to_parquet(tmp_path / "a.parquet")
    table[table.index % 2 == 1].to_parquet(tmp_path / "b.parquet")
    cohort = Cohort(tmp_path, subject="patient", time="time")
    with pytest.raises(ValueError, match=r"subject 0 has rows in file .*a\.parquet and in file"):
        read_series(cohort, "the cohort")
    split = dd.from_pandas(table, npartitions=2, sort=False)
    with pytest.raises(ValueError, match=r"partition 0 of the Dask DataFrame and in partition 1"):
        read_series(Cohort(split, subject="patient", time="time"), "the cohort")


def test_repeated_times_and_text_values_name_their_partition(panel, tmp_path):
    table = panel.reset_index()
    twice = pd.concat([table[table["patient"] == 1]] * 2)
    twice.to_parquet(tmp_path / "twice.parquet")
    with pytest.raises(ValueError, match=r"twice\.parquet: series \(1,\) .* more than one row"):
        read_series(Cohort(tmp_path, subject="patient", time="time"), "the cohort")
    text = table.astype({"ch0": str}).assign(ch0="high")
    text.to_parquet(tmp_path / "twice.parquet")
    with pytest.raises(TypeError, match=r"twice\.parquet: Column 'ch0' of y holds values that"):
        read_series(Cohort(tmp_path, subject="patient", time="time"), "the cohort")


def test_an_empty_cohort_is_refused(panel, tmp_path):
    panel.reset_index().iloc[:0].to_parquet(tmp_path / "empty.parquet")
    with pytest.raises(ValueError, match="the pretraining panel has no rows: Cohort"):
        LevyForecaster(**TINY_FC).pretrain(Cohort(tmp_path, subject="patient", time="time"))


def test_a_cohort_is_for_pretrain_only(panel, tmp_path):
    write(panel.reset_index(), tmp_path)
    cohort = Cohort(tmp_path, subject="patient", time="time")
    with pytest.raises(TypeError, match="A Cohort is read by pretrain only"):
        LevyForecaster(**TINY_FC).fit(cohort)
    with pytest.raises(TypeError, match="pretrain reads a Cohort without X"):
        LevyForecaster(**TINY_FC).pretrain(cohort, X=panel)
    with pytest.raises(TypeError, match="Cohort reads a folder of parquet, a pyarrow dataset"):
        LevyForecaster(**TINY_FC).pretrain(Cohort(panel, subject="patient", time="time"))


def test_reading_parquet_without_pyarrow_names_the_install(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "pyarrow.dataset", None)  # import fails
    with pytest.raises(ImportError, match="pip install pyarrow"):
        read_series(Cohort(tmp_path, subject="patient", time="time"), "the cohort")
