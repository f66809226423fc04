"""Simulated type-1-diabetes cohorts from ``simglucose`` (the UVA/Padova model), written to the
file that :func:`levy_sklearn.datasets.load_simulated_glucose` reads.

Every virtual patient of the simulator (10 adults, 10 adolescents, 10 children) lives
``--days`` days from midnight of day 0 with simglucose's own parts, unchanged (only the
patient's parameters are handed to its model as plain attributes, the same values; see
``_Params``):

* meals from ``RandomScenario`` (up to six a day: breakfast, lunch and dinner with probability
  0.95, three snacks with probability 0.3; times and carbohydrate amounts random),
* the ``BBController`` basal-bolus controller (the basal rate that keeps the patient's steady
  state, and a bolus from the patient's carbohydrate ratio and correction factor, given in the
  3-minute step after the meal's),
* the ``Insulet`` pump and the ``Dexcom`` CGM sensor model (a reading every 3 minutes with the
  sensor's autocorrelated, non-Gaussian noise), through ``T1DSimEnv``.

Patient ``k`` (1-30 in the simulator's order: adolescents, adults, children) draws its meals
with seed ``MEAL_SEED + k`` and its sensor noise with seed ``SENSOR_SEED + k``; the patient's
initial state is the simulator's (no random initial glucose). The same command in the same
environment therefore writes the same file, byte for byte (the gzip header carries no time,
only the output's file name).

Output: one gzip-compressed CSV, one row per patient and 3-minute step (numbers to 6
significant digits), with the columns

* ``patient`` (``"adult#001"``, ...), ``group`` (``adult``, ``adolescent``, ``child``),
* ``minute``: minutes since midnight of day 0 (0, 3, 6, ...),
* ``glucose``: the CGM (mg/dL), simglucose's ``CGM`` column as ``T1DSimEnv`` records it,
  rounded to 0.01 mg/dL: the mean of the sensor's output over the three simulated minutes
  that end at ``minute``; the sensor samples every 3 minutes and holds its reading in
  between, so this is (2 x the previous sample + this sample) / 3 (at minute 0, the sample),
* ``CHO``: carbohydrate eaten in the 3 minutes from ``minute`` (g/min, mean rate over the
  step; a 45 g meal announced in the step reads 15),
* ``insulin``: insulin delivered in the 3 minutes from ``minute`` (U/min, mean rate over the
  step; basal and bolus together),
* the patient's traits, constant within a patient: ``age`` (years), ``weight`` (body
  weight, kg) and ``tdi`` (total daily insulin, U), from simglucose's ``Quest.csv`` and
  ``vpatient_params.csv``.

The file in ``levy_sklearn/data/`` was written with simglucose 0.2.11 (gym 0.9.4,
setuptools 65.5.0, NumPy 2.4.6, SciPy 1.17.1, pandas 3.1.1, CPython 3.11.7) in an environment
of its own, because simglucose needs ``gym`` and ``setuptools<70`` (for ``pkg_resources``), which
the project's own environments do not install::

    python3.11 -m venv /tmp/simglucose-venv
    /tmp/simglucose-venv/bin/pip install "simglucose==0.2.11" "setuptools<70" gym pandas
    /tmp/simglucose-venv/bin/python -m benchmarks.simglucose_cohorts

run from the repository root: 259 CPU s (626 s on a busy two-core machine) for the 30
patients x 5 days, a 0.43 MB file. The script needs only simglucose and its dependencies, not
levy-sklearn.

usage: python -m benchmarks.simglucose_cohorts [--days 5] [--patients adult#001,...] [--out PATH]
"""

from __future__ import annotations

import argparse
import logging
import time
import warnings
from datetime import datetime, timedelta
from pathlib import Path

import numpy as np
import pandas as pd

#: Where the loader reads the cohorts.
OUT = Path(__file__).resolve().parents[1] / "levy_sklearn" / "data" / "simglucose_cohorts.csv.gz"
MEAL_SEED = 100
SENSOR_SEED = 200
DAYS = 5
STEP_MIN = 3  # the Dexcom sensor model's sampling period
COLUMNS = ["patient", "group", "minute", "glucose", "CHO", "insulin", "age", "weight", "tdi"]


def _simglucose():
    """simglucose's parts; imported here so that ``--help`` works without them."""
    # pkg_resources (setuptools < 70) and gym warn on import; the warnings say nothing about
    # the simulation.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from simglucose.actuator.pump import InsulinPump
        from simglucose.controller.basal_bolus_ctrller import BBController
        from simglucose.patient.t1dpatient import PATIENT_PARA_FILE, T1DPatient
        from simglucose.sensor.cgm import CGMSensor
        from simglucose.simulation.env import T1DSimEnv
        from simglucose.simulation.scenario_gen import RandomScenario
        from simglucose.simulation.sim_engine import SimObj
    logging.getLogger("simglucose").setLevel(logging.WARNING)
    return {
        "InsulinPump": InsulinPump,
        "BBController": BBController,
        "T1DPatient": T1DPatient,
        "CGMSensor": CGMSensor,
        "T1DSimEnv": T1DSimEnv,
        "RandomScenario": RandomScenario,
        "SimObj": SimObj,
        "params": Path(PATIENT_PARA_FILE),
    }


def patient_table() -> pd.DataFrame:
    """The simulator's virtual patients in its order, with their number ``k`` (1-30) and
    traits."""
    sg = _simglucose()
    params = pd.read_csv(sg["params"])
    quest = pd.read_csv(sg["params"].with_name("Quest.csv"))
    table = params[["Name", "BW"]].merge(quest[["Name", "Age", "TDI"]], on="Name", how="left")
    return pd.DataFrame(
        {
            "patient": table["Name"],
            "k": np.arange(1, len(table) + 1),
            "group": table["Name"].str.split("#").str[0],
            "age": table["Age"].astype(float),
            "weight": table["BW"].astype(float),
            "tdi": table["TDI"].astype(float),
        }
    )


class _Params:
    """A virtual patient's parameters (simglucose's pandas Series) read as plain attributes.

    The patient model reads some 50 parameters as ``params.name`` at each of its ~20
    evaluations per simulated minute; on a Series each read goes through pandas' attribute
    lookup, which took 90 % of the run time. The values are the Series' own objects, so the
    simulation is unchanged; ``iloc`` (the initial state) and ``Name`` are kept.
    """

    def __init__(self, series: pd.Series):
        self.__dict__.update({key: series[key] for key in series.index})
        self.iloc = series.iloc


def simulate(name: str, k: int, days: int) -> pd.DataFrame:
    """One patient's ``days`` days: ``minute``, ``glucose``, ``CHO`` and ``insulin`` every 3
    minutes from midnight of day 0 (the step that starts at the end is not simulated)."""
    sg = _simglucose()
    start = datetime(2025, 1, 1)
    patient = sg["T1DPatient"].withName(name)
    env = sg["T1DSimEnv"](
        sg["T1DPatient"](_Params(patient._params)),
        sg["CGMSensor"].withName("Dexcom", seed=SENSOR_SEED + k),
        sg["InsulinPump"].withName("Insulet"),
        sg["RandomScenario"](start_time=start, seed=MEAL_SEED + k),
    )
    sim = sg["SimObj"](env, sg["BBController"](), timedelta(days=days), animate=False, path=None)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sim.simulate()
    hist = sim.results()
    # The history ends with the reading at the end of the last step, whose inputs are not
    # simulated; every row kept has a reading and the inputs of the step it starts.
    hist = hist.iloc[: days * 24 * 60 // STEP_MIN]
    minute = (hist.index - pd.Timestamp(start)) // pd.Timedelta(1, "min")
    return pd.DataFrame(
        {
            "minute": np.asarray(minute, dtype=np.int64),
            "glucose": hist["CGM"].to_numpy(dtype=float).round(2),
            "CHO": hist["CHO"].to_numpy(dtype=float),
            "insulin": hist["insulin"].to_numpy(dtype=float),
        }
    )


def cohorts(days: int = DAYS, patients: list[str] | None = None) -> pd.DataFrame:
    """Every patient's (or those named) simulated days with their traits, in the file's
    columns and order."""
    table = patient_table()
    if patients is not None:
        unknown = sorted(set(patients) - set(table["patient"]))
        if unknown:
            raise ValueError(
                f"unknown patients {unknown}; simglucose has {list(table['patient'])}"
            )
        table = table[table["patient"].isin(patients)]
    parts = []
    for row in table.itertuples(index=False):
        t0 = time.perf_counter()
        part = simulate(row.patient, row.k, days)
        for col in ("patient", "group", "age", "weight", "tdi"):
            part[col] = getattr(row, col)
        parts.append(part[COLUMNS])
        print(f"{row.patient}: {len(part)} steps in {time.perf_counter() - t0:.1f} s", flush=True)
    return pd.concat(parts, ignore_index=True)


def write(frame: pd.DataFrame, path: Path) -> None:
    """The cohorts as gzip-compressed CSV, byte-reproducible (no time in the gzip header)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    frame.to_csv(
        path,
        index=False,
        float_format="%.6g",
        compression={"method": "gzip", "compresslevel": 9, "mtime": 0},
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--days", type=int, default=DAYS, help="days per patient")
    parser.add_argument("--patients", default=None, help="comma-separated names (default: all)")
    parser.add_argument("--out", type=Path, default=OUT, help="the gzip-compressed CSV")
    args = parser.parse_args(argv)
    t0 = time.perf_counter()
    patients = None if args.patients is None else args.patients.split(",")
    frame = cohorts(args.days, patients)
    write(frame, args.out)
    print(
        f"{frame['patient'].nunique()} patients, {len(frame)} rows -> {args.out} "
        f"({args.out.stat().st_size / 1e6:.2f} MB) in {time.perf_counter() - t0:.0f} s"
    )


if __name__ == "__main__":
    main()
