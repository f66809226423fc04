"""Pretraining a cohort from disk: peak memory, CPU per optimizer step and time by cohort size.

For each size, ``make_irregular_vitals`` patients (3 channels, 48-hour stays, about 300
observations each) are written to parquet chunk by chunk (``CHUNK`` patients a file, each
chunk drawn with a seed of its own and its patients numbered on), so that no size needs its
whole frame in memory; a size's files are written once and kept in ``--data``. A fresh
subprocess per size then pretrains :class:`~levy_sklearn.LevyForecaster` (default network and
windows, one torch thread) on :class:`~levy_sklearn.cohorts.Cohort` (the folder, read file by
file) with a fixed step budget: ``max_epochs=1`` and ``max_steps`` (``--max-steps``), once per
seed (``--seeds``: ``random_state``, so each seed draws other windows and batches).

Measured per size, in the subprocess:

* *peak RSS*: the process's peak resident set size (``getrusage``, the whole life of the
  process, imports included), and the RSS the pretrain call adds over the RSS just before it
  (sampled every 2 ms by a psutil thread, ``benchmarks.memory.PeakRSS``);
* *raw data*: what the panel occupies as a pandas frame in memory (``memory_usage(deep=True)``
  of each chunk's ``(patient, time)``-indexed frame, summed), and the parquet files' size;
* *CPU per step*: the main thread's CPU time (``time.thread_time``) from one optimizer step to
  the next (the batch's windows, forward, backward and update; median over every step of
  every network), and within the step alone (forward, backward, update: skorch steps the
  optimizer with a closure), from torch's global optimizer-step hooks, which also count the
  steps and the networks trained;
* *time*: the pretrain call's wall time and the process's CPU time over it.

Bars (issue 55): peak memory at 10,000 patients at most 1.3 times that at 1,000 beyond the
raw data's own size (peak RSS minus raw data); CPU per step within ±20 % across sizes; the
100,000-patient pretrain completes; the time grows monotonically with the size (50, 90, 110,
200 patients: no jump where cross-fitting changes). Every bar reads each size's mean over its
seeds. With the step budget fixed, beyond a few hundred patients only reading and indexing the
cohort grow (about a millisecond a patient), less than the difference the drawn batches' lengths
make to the steps' cost: the time test counts a fall from one size to the next only where it
exceeds twice the standard error of the two means' difference (seeds' spread); with one seed
the comparison is strict.

The data-parallel throughput (two processes against one) is measured by the data-parallel
pretraining's own benchmark where it exists: its section is added from
``benchmarks._ddp_throughput.report_section()`` (a Markdown string) when that module is
present.

Writes ``benchmarks/results/scale.md`` (``--out`` for another name).

Run: ``nice -n 5 python -m benchmarks.scale [--sizes 50,90,110,200,1000,10000,100000]
[--max-steps 200] [--seeds 0,1,2] [--data /tmp/levy_scale] [--timeout SECONDS]`` (the default
sizes leave out 100,000).
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from ._common import RESULTS, machine_line, short_commit, write_report

MIB = 2.0**20
#: Patients per parquet file (one chunk drawn at a time).
CHUNK = 2000
SIZES = (50, 90, 110, 200, 1000, 10_000, 100_000)
CHANNELS = ["ch0", "ch1", "ch2"]
MEMORY_BAR = 1.3
CPU_BAR = 0.2


# --------------------------------------------------------------------------- data


def write_cohort(n_patients: int, folder: Path) -> dict:
    """``n_patients`` vitals patients in parquet files of ``CHUNK`` patients under ``folder``
    (hive partitions ``chunk=<k>``), written chunk by chunk; the raw data's size as pandas
    frames and on disk (kept beside ``folder`` in a JSON file, the files written once)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from levy_sklearn.datasets import make_irregular_vitals

    info_path = folder.with_suffix(".json")  # beside the folder: pyarrow reads every file in it
    if info_path.exists():
        return json.loads(info_path.read_text())
    rows = raw = 0
    for k, start in enumerate(range(0, n_patients, CHUNK)):
        size = min(CHUNK, n_patients - start)
        frame = make_irregular_vitals(size, random_state=1000 + k)
        raw += int(frame.memory_usage(index=True, deep=True).sum())
        rows += len(frame)
        table = frame.reset_index()
        table["patient"] += start
        part = folder / f"chunk={k:05d}"
        part.mkdir(parents=True, exist_ok=True)
        pq.write_table(pa.Table.from_pandas(table, preserve_index=False), part / "part-0.parquet")
    disk = sum(path.stat().st_size for path in folder.rglob("*.parquet"))
    info = {"patients": n_patients, "rows": rows, "raw_bytes": raw, "disk_bytes": disk}
    info_path.write_text(json.dumps(info))
    return info


# --------------------------------------------------------------------------- one size


class Stopped(Exception):
    """Raised by :class:`StepClock` after its last step (``--stop-after``)."""


class StepClock:
    """Torch's global optimizer-step hooks: the main thread's CPU time at the start and end
    of every optimizer step, which optimizer (network) took it, and the wall time and RSS at
    the first step; :class:`Stopped` is raised after ``stop_after`` steps (``None``: never)."""

    def __init__(self, stop_after: int | None = None) -> None:
        import psutil
        from torch.optim.optimizer import (
            register_optimizer_step_post_hook,
            register_optimizer_step_pre_hook,
        )

        self.stop_after = stop_after
        self.process = psutil.Process()
        self.created = time.perf_counter()
        self.first: tuple[float, int] | None = None
        self.starts: list[float] = []
        self.ends: list[float] = []
        self.networks: list[int] = []
        self._handles = [
            register_optimizer_step_pre_hook(self._pre),
            register_optimizer_step_post_hook(self._post),
        ]

    def _pre(self, optimizer, args, kwargs) -> None:
        self.starts.append(time.thread_time())

    def _post(self, optimizer, args, kwargs) -> None:
        self.ends.append(time.thread_time())
        # Numbered at first sight: a freed network's optimizer may leave its id to the next.
        if not hasattr(optimizer, "_scale_network"):
            optimizer._scale_network = len(set(self.networks))
        self.networks.append(optimizer._scale_network)
        if self.first is None:
            self.first = time.perf_counter() - self.created, self.process.memory_info().rss
        if self.stop_after is not None and len(self.ends) >= self.stop_after:
            raise Stopped

    def summary(self) -> dict:
        starts, ends, nets = np.array(self.starts), np.array(self.ends), np.array(self.networks)
        within = ends - starts
        # From one step's end to the next's, within one network's training only.
        same = nets[1:] == nets[:-1]
        cycle = np.diff(ends)[same]
        return {
            "first_step_seconds": None if self.first is None else self.first[0],
            "rss_at_first_step_bytes": None if self.first is None else self.first[1],
            "steps": len(ends),
            "networks": len(set(self.networks)),
            "step_cpu_ms": float(np.median(cycle) * 1e3) if cycle.size else float("nan"),
            "within_step_cpu_ms": float(np.median(within) * 1e3) if within.size else float("nan"),
        }


def run_size(folder: Path, max_steps: int, stop_after: int | None = None, seed: int = 0) -> dict:
    """Pretrain on the cohort in ``folder`` (in this process, ``random_state=seed``) and
    measure it, the pretrain interrupted after ``stop_after`` optimizer steps if given."""
    import warnings

    import torch

    from levy_sklearn import LevyForecaster
    from levy_sklearn.cohorts import Cohort

    from .memory import PeakRSS

    torch.set_num_threads(1)
    cohort = Cohort(folder, subject="patient", time="time", columns=CHANNELS)
    forecaster = LevyForecaster(max_epochs=1, max_steps=max_steps, random_state=seed)
    cpu = time.process_time()
    with PeakRSS(interval=0.002) as rss, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        clock = StepClock(stop_after)
        try:
            forecaster.pretrain(cohort)
        except Stopped:
            pass
    return {
        "seed": seed,
        "stopped_after": stop_after,
        "seconds": rss.seconds,
        "cpu_seconds": time.process_time() - cpu,
        "rss_before_bytes": rss.base,
        "added_bytes": rss.peak - rss.base,
        "peak_bytes": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
        **clock.summary(),
    }


def measure(
    n_patients: int,
    data: Path,
    max_steps: int,
    timeout: float | None,
    stop_after: int | None,
    seed: int = 0,
) -> dict:
    """One size and seed: its files (written if missing), then its pretrain in a fresh
    process."""
    folder = data / f"vitals_{n_patients}"
    info = {**write_cohort(n_patients, folder), "seed": seed}
    command = [sys.executable, "-m", "benchmarks.scale", "--child", str(folder)]
    command += ["--max-steps", str(max_steps), "--seed", str(seed)]
    if stop_after is not None:
        command += ["--stop-after", str(stop_after)]
    try:
        out = subprocess.run(
            command,
            cwd=RESULTS.parents[1],
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return {**info, "failed": f"not finished within {timeout:.0f} s"}
    if out.returncode != 0:
        tail = (out.stderr.strip().splitlines() or ["?"])[-1]
        return {**info, "failed": f"exit {out.returncode}: {tail[:200]}"}
    return {**info, **json.loads(out.stdout.strip().splitlines()[-1])}


# --------------------------------------------------------------------------- report


def by_size(results: list[dict]) -> dict[int, dict]:
    """Each size's runs that finished, as one record: the mean of every number over its seeds,
    with ``runs`` (how many) and ``seconds_all`` (each run's time)."""
    sizes: dict[int, list[dict]] = {}
    for r in results:
        if "failed" not in r:
            sizes.setdefault(r["patients"], []).append(r)
    merged = {}
    for n, runs in sizes.items():
        record = dict(runs[0])
        for key, value in runs[0].items():
            measured = key not in ("patients", "seed", "stopped_after")
            if measured and isinstance(value, (int, float)) and not isinstance(value, bool):
                values = [r[key] for r in runs if r.get(key) is not None]
                record[key] = float(np.mean(values)) if values else None
        record["runs"] = len(runs)
        record["seconds_all"] = [r["seconds"] for r in runs]
        merged[n] = record
    return merged


def falls(earlier: list[float], later: list[float]) -> bool:
    """Whether the mean time falls from ``earlier``'s runs to ``later``'s: by more than twice
    the standard error of the difference of the means where both sizes ran several seeds,
    at all where either ran one.

    >>> falls([100.0], [99.9])
    True
    >>> falls([97.7, 99.1, 98.0], [97.5, 98.9, 98.2])  # 0.07 s down, within the seeds' spread
    False
    >>> falls([97.0, 97.1, 96.9], [90.0, 90.2, 89.9])
    True
    """
    a, b = np.asarray(earlier, float), np.asarray(later, float)
    drop = a.mean() - b.mean()
    if a.size < 2 or b.size < 2:
        return bool(drop > 0)
    noise = np.sqrt(a.var(ddof=1) / a.size + b.var(ddof=1) / b.size)
    return bool(drop > 2 * noise)


def bars(results: list[dict]) -> list[str]:
    """The issue's bars, on the sizes measured (a bar whose sizes are missing says so), each
    size's mean over its seeds (see :func:`by_size`)."""
    done = by_size(results)
    lines = []
    if 1000 in done and 10_000 in done:
        small, large = (done[n]["peak_bytes"] - done[n]["raw_bytes"] for n in (1000, 10_000))
        ratio = large / small
        verdict = "met" if ratio <= MEMORY_BAR else "**not met**"
        lines.append(
            f"- Peak RSS beyond the raw data, 10,000 against 1,000 patients: "
            f"{large / MIB:,.0f} / {small / MIB:,.0f} MiB = {ratio:.2f} "
            f"(bar ≤ {MEMORY_BAR}): {verdict}."
        )
    else:
        lines.append("- Peak memory, 10,000 against 1,000 patients: not measured in this run.")
    steps = [r["step_cpu_ms"] for r in done.values() if np.isfinite(r.get("step_cpu_ms", np.nan))]
    if len(steps) > 1:
        centre = float(np.median(steps))
        spread = max(abs(s / centre - 1) for s in steps)
        verdict = "met" if spread <= CPU_BAR else "**not met**"
        lines.append(
            f"- CPU per step across sizes: {min(steps):.1f} to {max(steps):.1f} ms, at most "
            f"{spread:.0%} from their median {centre:.1f} ms (bar ±{CPU_BAR:.0%}): {verdict}."
        )
    large = next((r for r in results if r["patients"] == 100_000), None)
    if large is None:
        lines.append("- 100,000 patients: not run in this run.")
    elif "failed" in large:
        lines.append(f"- 100,000 patients: failed: {large['failed']}.")
    elif large.get("stopped_after") is not None:
        lines.append(
            f"- 100,000 patients: reached optimizer step {large['steps']} and was interrupted "
            "there (`--stop-after`); the whole pretrain was not run."
        )
    else:
        lines.append("- 100,000 patients: completed.")
    ordered = sorted(done.values(), key=lambda r: r["patients"])
    if len(ordered) > 1:
        pairs = list(zip(ordered, ordered[1:], strict=False))
        fell = [b for a, b in pairs if falls(a["seconds_all"], b["seconds_all"])]
        several = min(r["runs"] for r in ordered) > 1
        listed = ", ".join(
            f"{r['patients']:,}: {r['seconds']:.1f} s"
            + (f" ({' / '.join(f'{t:.1f}' for t in r['seconds_all'])})" if several else "")
            for r in ordered
        )
        what = (
            "Time to the interruption" if ordered[0].get("stopped_after") else "Pretraining time"
        )
        if not fell:
            verdict = "never falls beyond the seeds' noise." if several else "monotone."
        else:
            verdict = "**falls** at " + ", ".join(f"{r['patients']:,}" for r in fell) + "."
        lines.append(f"- {what} by size, mean over seeds ({listed}): {verdict}")
    return lines


def data_parallel_section() -> list[str]:
    """The data-parallel throughput's section, from its own benchmark where it exists."""
    lines = ["## Data-parallel pretraining: two processes against one", ""]
    try:
        module = importlib.import_module("benchmarks._ddp_throughput")
    except ImportError:
        return lines + [
            "Not measured here: `benchmarks/_ddp_throughput.py` (its `report_section()`) is not "
            "in this checkout.",
            "",
        ]
    # Three seeds: their validation losses are the spread the two-process loss is held to.
    return lines + [module.report_section(repeats=3), ""]


def report_text(results: list[dict], max_steps: int, load: float, command: str) -> str:
    lines = [
        "# Pretraining a cohort from disk, by size",
        "",
        "Produced by `benchmarks/scale.py` (its docstring says what is measured and how):",
        f"`{command}`. Each size pretrains `LevyForecaster(max_epochs=1, "
        f"max_steps={max_steps}, random_state=seed)` (default network and windows, one torch "
        "thread) on `Cohort(folder)`, parquet files of "
        f"{CHUNK:,} `make_irregular_vitals` patients, in a fresh process.",
        "",
        "| patients | seed | rows | raw data (MiB) | parquet (MiB) | peak RSS (MiB) | RSS before "
        "pretrain (MiB) | added by pretrain (MiB) | peak − raw (MiB) | first step (s) | RSS "
        "at first step (MiB) | networks | steps | CPU/step (ms) | within step (ms) | "
        "pretrain (s) | CPU (s) |",
        "|" + "---|" * 17,
    ]
    stopped = {r.get("stopped_after") for r in results} - {None}
    if stopped:
        lines[5:5] = [
            f"Each pretrain was interrupted after {stopped.pop()} optimizer steps "
            "(`--stop-after`): its time, CPU and peak are those up to then.",
            "",
        ]
    for r in sorted(results, key=lambda r: (r["patients"], r.get("seed", 0))):
        head = (
            f"| {r['patients']:,} | {r.get('seed', 0)} | {r['rows']:,} | "
            f"{r['raw_bytes'] / MIB:,.1f} | "
            f"{r['disk_bytes'] / MIB:,.1f} |"
        )
        if "failed" in r:
            lines.append(head + f" {r['failed']} |" + " |" * 11)
            continue
        first = "–" if r["first_step_seconds"] is None else f"{r['first_step_seconds']:,.1f}"
        first_rss = r["rss_at_first_step_bytes"]
        first_rss = "–" if first_rss is None else f"{first_rss / MIB:,.0f}"
        lines.append(
            head + f" {r['peak_bytes'] / MIB:,.0f} | {r['rss_before_bytes'] / MIB:,.0f} | "
            f"{r['added_bytes'] / MIB:,.0f} | {(r['peak_bytes'] - r['raw_bytes']) / MIB:,.0f} | "
            f"{first} | {first_rss} | {r['networks']} | {r['steps']:,} | {r['step_cpu_ms']:.1f} | "
            f"{r['within_step_cpu_ms']:.1f} | {r['seconds']:,.1f} | {r['cpu_seconds']:,.1f} |"
        )
    lines += ["", "## Bars (issue 55)", "", *bars(results), "", *data_parallel_section()]
    commit = short_commit()
    lines += [
        f"{machine_line()}; commit {commit or 'unknown'} (plus uncommitted changes, if any). "
        f"Times are indicative: the load average was {load:.1f} when the run started.",
        "",
    ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default=",".join(map(str, SIZES[:-1])))
    parser.add_argument("--max-steps", type=int, default=200)
    parser.add_argument("--data", type=Path, default=Path("/tmp/levy_scale"))
    parser.add_argument("--timeout", type=float, default=None, help="seconds per size")
    parser.add_argument("--out", default="scale.md")
    parser.add_argument("--seeds", default="0", help="random_state of each run of a size")
    parser.add_argument("--seed", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument(
        "--stop-after",
        type=int,
        default=None,
        help="interrupt each pretrain after this many optimizer steps (the cost of what comes "
        "before training: memory and time to the first steps)",
    )
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child is not None:  # a child process: one size, one JSON line on stdout
        print(json.dumps(run_size(args.child, args.max_steps, args.stop_after, args.seed)))
        return
    load = os.getloadavg()[0]
    results = []
    seeds = [int(s) for s in args.seeds.split(",")]
    # Every size within each seed's round: a change in the machine's load then falls on all
    # sizes alike rather than on one size's seeds.
    for seed in seeds:
        for n in sorted(int(s) for s in args.sizes.split(",")):
            results.append(
                measure(n, args.data, args.max_steps, args.timeout, args.stop_after, seed)
            )
            print(json.dumps(results[-1]), flush=True)
    command = "python -m benchmarks.scale " + " ".join(sys.argv[1:])
    out = Path(args.out) if os.sep in args.out else args.out
    write_report(report_text(results, args.max_steps, load, command.strip()), out)


if __name__ == "__main__":
    main()
