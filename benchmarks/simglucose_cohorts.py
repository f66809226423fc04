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

``--missed-bolus P`` skips each meal bolus with probability ``P`` (the basal as usual; patient
``k``'s draws seeded ``MISSED_SEED + k``), for cohorts whose insulin does not always come with
a meal and sized to it. The adults of ``benchmarks/covariates.py --missed-bolus-adults``
(42 of their 201 meal boluses skipped, a 0.14 MB file, 204 s on a busy two-core machine)::

    /tmp/simglucose-venv/bin/python -m benchmarks.simglucose_cohorts --missed-bolus 0.25 \
        --patients "$(echo adult#00{1..9} adult#010 | tr ' ' ,)" \
        --out benchmarks/data/simglucose_adults_missed_bolus.csv.gz

``--plans`` writes instead what would have happened under other plans, for
``benchmarks/covariates.py --plans`` (coverage per plan): each adolescent (the group
``covariates.py`` never pretrains on) lives its days again, and from the state just before
each meal after the first day (the reading before the meal's step: the forecast origin of
``covariates.py``'s simulated set) the simulation is copied and run on for 3 hours under each
alternative plan of :data:`PLANS`:

* ``no bolus``: the meal as it happened, its bolus not given (the basal only in the step
  after the meal's, where the controller boluses);
* ``half meal``: half the meal's carbohydrate, the bolus given for the whole meal.

Everything else goes on as it would have: the same sensor noise (the copied generator), the
controller's later actions (which may differ, as the CGM does), the next meals. The copy is
checked: the plan as it happened, run from it, gives the cohort's own rows. Output
``benchmarks/data/simglucose_plans.csv.gz``, one row per plan, meal and 3-minute step
(60 steps from the meal's), with the columns ``patient``, ``plan``, ``origin`` (the minute of
the reading before the meal), ``minute``, ``glucose``, ``CHO`` and ``insulin`` as above::

    /tmp/simglucose-venv/bin/python -m benchmarks.simglucose_cohorts --plans

in the same environment: 149 meals, 17,880 rows, a 0.11 MB file, in 178 CPU s (4 min on a
busy two-core machine).

usage: python -m benchmarks.simglucose_cohorts [--days 5] [--patients adult#001,...]
       [--plans | --missed-bolus P] [--out PATH]
"""

from __future__ import annotations

import argparse
import copy
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
#: Seed (plus the patient's number) of the draws of ``--missed-bolus``.
MISSED_SEED = 300
DAYS = 5
STEP_MIN = 3  # the Dexcom sensor model's sampling period
COLUMNS = ["patient", "group", "minute", "glucose", "CHO", "insulin", "age", "weight", "tdi"]
START = datetime(2025, 1, 1)  # midnight of day 0


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


class _MissedBoluses:
    """The basal-bolus controller with each meal bolus skipped with probability ``p`` (the
    basal given as usual), drawn from ``seed``: a patient who sometimes forgets, so that
    insulin does not always come with a meal and sized to it."""

    def __init__(self, controller, p: float, seed: int):
        self.controller, self.p, self.seed = controller, p, seed
        self.rng = np.random.default_rng(seed)

    def policy(self, observation, reward, done, **info):
        action = self.controller.policy(observation, reward, done, **info)
        if action.bolus > 0 and self.rng.random() < self.p:
            action = action._replace(bolus=0.0)
        return action

    def reset(self):
        self.controller.reset()
        self.rng = np.random.default_rng(self.seed)


def _environment(name: str, k: int, missed_bolus: float = 0.0):
    """Patient ``k``'s simulation, not started: the environment and its controller (which
    skips each meal bolus with probability ``missed_bolus``)."""
    sg = _simglucose()
    patient = sg["T1DPatient"].withName(name)
    env = sg["T1DSimEnv"](
        sg["T1DPatient"](_Params(patient._params)),
        sg["CGMSensor"].withName("Dexcom", seed=SENSOR_SEED + k),
        sg["InsulinPump"].withName("Insulet"),
        sg["RandomScenario"](start_time=START, seed=MEAL_SEED + k),
    )
    controller = sg["BBController"]()
    if missed_bolus > 0:
        controller = _MissedBoluses(controller, missed_bolus, MISSED_SEED + k)
    return env, controller


def _rows(hist: pd.DataFrame) -> pd.DataFrame:
    """``T1DSimEnv``'s history as the file's columns: each row's reading and the inputs of
    the step it starts."""
    minute = (hist.index - pd.Timestamp(START)) // pd.Timedelta(1, "min")
    return pd.DataFrame(
        {
            "minute": np.asarray(minute, dtype=np.int64),
            "glucose": hist["CGM"].to_numpy(dtype=float).round(2),
            "CHO": hist["CHO"].to_numpy(dtype=float),
            "insulin": hist["insulin"].to_numpy(dtype=float),
        }
    )


def simulate(name: str, k: int, days: int, missed_bolus: float = 0.0) -> pd.DataFrame:
    """One patient's ``days`` days: ``minute``, ``glucose``, ``CHO`` and ``insulin`` every 3
    minutes from midnight of day 0 (the step that starts at the end is not simulated), each
    meal bolus skipped with probability ``missed_bolus``."""
    sg = _simglucose()
    env, controller = _environment(name, k, missed_bolus)
    sim = sg["SimObj"](env, controller, timedelta(days=days), animate=False, path=None)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sim.simulate()
    # The history ends with the reading at the end of the last step, whose inputs are not
    # simulated; every row kept has a reading and the inputs of the step it starts.
    return _rows(sim.results().iloc[: days * 24 * 60 // STEP_MIN])


def _patients(table: pd.DataFrame, patients: list[str]) -> pd.DataFrame:
    """The rows of :func:`patient_table` of the patients named."""
    unknown = sorted(set(patients) - set(table["patient"]))
    if unknown:
        raise ValueError(f"unknown patients {unknown}; simglucose has {list(table['patient'])}")
    return table[table["patient"].isin(patients)]


def cohorts(
    days: int = DAYS, patients: list[str] | None = None, missed_bolus: float = 0.0
) -> pd.DataFrame:
    """Every patient's (or those named) simulated days with their traits, in the file's
    columns and order (each meal bolus skipped with probability ``missed_bolus``)."""
    table = patient_table()
    if patients is not None:
        table = _patients(table, patients)
    parts = []
    for row in table.itertuples(index=False):
        t0 = time.perf_counter()
        part = simulate(row.patient, row.k, days, missed_bolus)
        for col in ("patient", "group", "age", "weight", "tdi"):
            part[col] = getattr(row, col)
        parts.append(part[COLUMNS])
        print(f"{row.patient}: {len(part)} steps in {time.perf_counter() - t0:.1f} s", flush=True)
    return pd.concat(parts, ignore_index=True)


# --------------------------------------------------------------------------- plans
#: Where ``--plans`` writes the outcomes of the alternative plans.
PLANS_OUT = Path(__file__).resolve().parent / "data" / "simglucose_plans.csv.gz"
#: The group re-simulated under alternative plans: the one covariates.py never pretrains on.
PLANS_GROUP = "adolescent"
#: Readings recorded per plan from the meal's step: 3 hours.
PLAN_STEPS = 60
#: Each meal's alternative plans: the fraction of its carbohydrate eaten, and whether the
#: bolus given for the whole meal (as it happened) is given.
PLANS = {
    "no bolus": {"meal": 1.0, "bolus": False},
    "half meal": {"meal": 0.5, "bolus": True},
}
PLAN_COLUMNS = ["patient", "plan", "origin", "minute", "glucose", "CHO", "insulin"]


def meal_steps(rows: pd.DataFrame) -> np.ndarray:
    """The rows whose step starts a meal after the first day (the reading before it, the
    forecast origin, at or after minute 1440), as ``benchmarks.covariates`` picks origins."""
    cho = rows["CHO"].to_numpy() > 0
    starts = np.flatnonzero(cho[1:] & ~cho[:-1]) + 1
    return starts[rows["minute"].to_numpy()[starts - 1] >= 24 * 60]


class _ScaledMeal:
    """A scenario that passes on another's meals, those announced in ``[start, stop)``
    scaled by ``factor``."""

    def __init__(self, scenario, start: datetime, stop: datetime, factor: float):
        self.scenario, self.start, self.stop, self.factor = scenario, start, stop, factor
        self.start_time = scenario.start_time

    def get_action(self, t: datetime):
        action = self.scenario.get_action(t)
        if self.start <= t < self.stop:
            action = action._replace(meal=action.meal * self.factor)
        return action


def _branch(snapshot: tuple, plan: dict, given: tuple, steps: int) -> pd.DataFrame:
    """``steps`` rows from a snapshot taken before a meal's step, under ``plan``: the meal
    scaled, and in the next step (the bolus's) the bolus given as it happened (``given``,
    the controller's action there) or none (the basal only). Everything else, the sensor's
    noise included, goes on from the snapshot's state as it would have."""
    env, controller, state = copy.deepcopy(snapshot)
    row = len(env.CHO_hist)
    stop = env.time + timedelta(minutes=STEP_MIN)
    env.scenario = _ScaledMeal(env.scenario, env.time, stop, plan["meal"])
    for j in range(steps):
        obs, reward, done, info = state
        action = controller.policy(obs, reward, done, **info)
        if j == 1:  # the step after the meal's: the controller boluses for the meal
            action = given if plan["bolus"] else action._replace(bolus=0.0)
        state = env.step(action)
    return _rows(env.show_history()).iloc[row : row + steps]


def simulate_plans(name: str, k: int, days: int, steps: int = PLAN_STEPS) -> pd.DataFrame:
    """Patient ``k`` re-simulated from the state before each meal of :func:`meal_steps`
    under each of :data:`PLANS`: ``steps`` rows (reading, then the step's inputs) from the
    meal's step, with the plan's name and the minute of the origin (the reading before).

    The patient first lives its days as :func:`simulate` has it (to find the meals), then
    again step by step as ``SimObj`` runs it, with a snapshot of the whole simulation before
    each meal; this second run must give the same rows, and the plan "as it happened" run
    from each snapshot must give the same rows as the first, or the snapshot is not the
    simulation's state (``RuntimeError``)."""
    happened = simulate(name, k, days)
    meals = meal_steps(happened)
    env, controller = _environment(name, k)
    controller.reset()
    state = env.reset()
    snapshots, given = {}, []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for row in range(len(happened)):
            if row in meals:
                snapshots[row] = copy.deepcopy((env, controller, state))
            obs, reward, done, info = state
            given.append(controller.policy(obs, reward, done, **info))
            state = env.step(given[-1])
        again = _rows(env.show_history()).iloc[: len(happened)]
        if not again.equals(happened):
            raise RuntimeError(f"{name}: the step-by-step run differs from SimObj's")
        parts = []
        for row in meals:
            check = _branch(snapshots[row], {"meal": 1.0, "bolus": True}, given[row + 1], steps)
            n = min(steps, len(happened) - row)
            if (
                not check.iloc[:n]
                .reset_index(drop=True)
                .equals(happened.iloc[row : row + n].reset_index(drop=True))
            ):
                raise RuntimeError(f"{name}: the meal at row {row} does not rerun as it was")
            for plan_name, plan in PLANS.items():
                part = _branch(snapshots[row], plan, given[row + 1], steps)
                part.insert(0, "origin", happened["minute"].iat[row - 1])
                part.insert(0, "plan", plan_name)
                part.insert(0, "patient", name)
                parts.append(part)
    return pd.concat(parts, ignore_index=True)[PLAN_COLUMNS]


def plans(days: int = DAYS, patients: list[str] | None = None) -> pd.DataFrame:
    """:func:`simulate_plans` for every patient of :data:`PLANS_GROUP` (or those named)."""
    table = patient_table()
    if patients is None:
        patients = table.loc[table["group"] == PLANS_GROUP, "patient"].tolist()
    parts = []
    for row in _patients(table, patients).itertuples(index=False):
        t0 = time.perf_counter()
        parts.append(simulate_plans(row.patient, row.k, days))
        print(f"{row.patient}: {len(parts[-1])} rows in {time.perf_counter() - t0:.1f} s")
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
    parser.add_argument(
        "--patients",
        default=None,
        help=f"comma-separated names (default: all; with --plans, every {PLANS_GROUP})",
    )
    parser.add_argument(
        "--plans",
        action="store_true",
        help="re-simulate each meal under the alternative plans (PLANS) instead",
    )
    parser.add_argument(
        "--missed-bolus",
        type=float,
        default=0.0,
        help="probability that a meal's bolus is skipped (seeded; not with --plans)",
    )
    parser.add_argument(
        "--out",
        type=Path,
        default=None,
        help=f"the gzip-compressed CSV (default: {OUT.name}, with --plans {PLANS_OUT.name})",
    )
    args = parser.parse_args(argv)
    t0 = time.perf_counter()
    patients = None if args.patients is None else args.patients.split(",")
    if args.plans and args.missed_bolus:
        parser.error(
            "--missed-bolus varies the cohorts' boluses; --plans re-simulates as they were"
        )
    if args.plans:
        frame = plans(args.days, patients)
    else:
        frame = cohorts(args.days, patients, args.missed_bolus)
    out = args.out or (PLANS_OUT if args.plans else OUT)
    write(frame, out)
    print(
        f"{frame['patient'].nunique()} patients, {len(frame)} rows -> {out} "
        f"({out.stat().st_size / 1e6:.2f} MB) in {time.perf_counter() - t0:.0f} s"
    )


if __name__ == "__main__":
    main()
