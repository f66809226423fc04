"""Data-parallel pretraining throughput: training rows per second with 2 processes against 1.

One pretraining (``LevyForecaster.pretrain``, ``calibration_folds=1``: one network trained on
four fifths of the patients) of ``make_irregular_vitals`` patients, run three ways in the
same call, each in a fresh process:

* ``1 process, default threads``: one process with torch's default intra-op threads (one per
  core);
* ``1 process, 1 thread``: one process, ``OMP_NUM_THREADS=1``;
* ``2 processes x 1 thread``: ``torchrun --nproc_per_node 2``, one thread each, each process
  training on its own half of the patients (gloo).

Training rows per second are the windows stepped through in all the processes over the
training epochs' wall time (skorch's ``history[:, "dur"]``; window cutting and calibration
excluded). A fifth of the windows is held out (``validation_fraction=0.2``; under torchrun
each process holds out a fifth of its own share, and the loss is that of every process's
validation windows together): the last epoch's validation loss says whether two processes
train as well as one. Repeat ``r`` of a way uses ``random_state=r``, so the repeats of the
one-process runs give the seed spread the two-process loss is compared with. Each process
steps through ``batch_size`` (32) of its own windows a step, so 2 processes take half the
steps of one for as many rows. On a machine shared with other work, the wall time depends
on what else runs: the training CPU time (the most of any process) is measured too, and
rows per CPU second give the ratio an idle machine reaches.
The launch is the one a user runs::

    torchrun --nproc_per_node 2 -m benchmarks._ddp_throughput --worker OUT.json

:func:`measure` is the entry point, :func:`report_section` its Markdown (which
``benchmarks/scale.py`` adds to its report); on a shared machine, compare the ratio within
one call, and read the load average it reports.

Run: ``python -m benchmarks._ddp_throughput [--patients 30] [--epochs 2] [--repeats 1]``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

# Patients of the pretraining panel and training epochs: about 1,500 windows of 24
# patients an epoch at the forecaster's default network and batch size.
PATIENTS = 30
EPOCHS = 2
WINDOWS_PER_SERIES = 64
VALIDATION_FRACTION = 0.2


def worker(out: str, patients: int, epochs: int, seed: int) -> None:
    """Pretrain once (data-parallel when launched so) and write its throughput to ``out``."""
    import torch

    from levy_sklearn import LevyForecaster
    from levy_sklearn.datasets import make_irregular_vitals
    from levy_sklearn.training import LevyNeuralNet

    # The CPU time of the training epochs (skorch's fit_loop), counted in this process only:
    # on a loaded machine the wall time of a step says little, its CPU time more.
    train_cpu = []
    fit_loop = LevyNeuralNet.fit_loop

    def timed_fit_loop(self, *args, **kwargs):
        start = time.process_time()
        try:
            return fit_loop(self, *args, **kwargs)
        finally:
            train_cpu.append(time.process_time() - start)

    LevyNeuralNet.fit_loop = timed_fit_loop

    y = make_irregular_vitals(patients, random_state=0)
    forecaster = LevyForecaster(
        calibration_folds=1,
        max_epochs=epochs,
        max_steps=None,
        windows_per_series=WINDOWS_PER_SERIES,
        validation_fraction=VALIDATION_FRACTION,
        random_state=seed,
    )
    start, cpu = time.perf_counter(), time.process_time()
    forecaster.pretrain(y)
    total, cpu = time.perf_counter() - start, time.process_time() - cpu
    history = forecaster.pretrained_net_.history
    world = int(os.environ.get("WORLD_SIZE", "1"))
    batches = [batch for epoch in history for batch in epoch["batches"] if "train_loss" in batch]
    rows = world * sum(batch["train_batch_size"] for batch in batches)
    seconds = float(sum(history[:, "dur"]))
    with open(f"{out}.{os.environ.get('RANK', '0')}", "w") as file:
        json.dump(
            {
                "processes": world,
                "threads": torch.get_num_threads(),
                "rows": int(rows),
                "steps": len(batches),
                "train_s": seconds,
                "pretrain_s": total,
                "pretrain_cpu_s": cpu,
                "train_cpu_s": sum(train_cpu),
                "rows_per_s": rows / seconds,
                "seed": seed,
                "valid_loss": float(history[-1, "valid_loss"]),
            },
            file,
        )


def _run(command: list[str], env: dict[str, str], out: str, processes: int) -> dict:
    """Rank 0's throughput, with the most CPU time any process took."""
    subprocess.run(command, env=env, check=True, stdout=subprocess.DEVNULL)
    ranks = []
    for rank in range(processes):
        with open(f"{out}.{rank}") as file:
            ranks.append(json.load(file))
    most = {key: max(r[key] for r in ranks) for key in ("pretrain_cpu_s", "train_cpu_s")}
    return ranks[0] | most


def measure(patients: int = PATIENTS, epochs: int = EPOCHS, repeats: int = 1) -> dict:
    """Training rows per second of one pretraining, three ways (see the module docstring).

    Parameters
    ----------
    patients : int
        Patients of the pretraining panel (``make_irregular_vitals``).
    epochs : int
        Training epochs (``max_epochs``, no ``max_steps``).
    repeats : int
        Runs of each way, interleaved, repeat ``r`` with ``random_state=r``; each way's
        fastest is kept (the one least slowed by other work on the machine).

    Returns
    -------
    dict
        ``runs``: one dict a way (``processes``, ``threads``, ``rows``, ``steps``,
        ``train_s``, ``rows_per_s``, ``train_cpu_s``, ``pretrain_s``, ``pretrain_cpu_s``,
        ``seed``, ``valid_loss``; CPU times the most of any process; ``all_rows_per_s`` and
        ``all_valid_loss``: every repeat's), the fastest of the repeats;
        ``speedup_vs_1_thread`` and ``speedup_vs_default_threads``: the 2-process rows per
        second over each one-process one; ``cpu_speedup_vs_1_thread``: the same in rows per
        training CPU second; ``ceiling_vs_default_threads``: what perfect scaling (twice one
        single-threaded process) would give over one process with its default threads;
        ``load_average``: the machine's 1-minute load before and after.
    """
    args = ["--patients", str(patients), "--epochs", str(epochs)]
    module = ["-m", "benchmarks._ddp_throughput", "--worker"]
    base = {k: v for k, v in os.environ.items() if k not in ("OMP_NUM_THREADS", "WORLD_SIZE")}
    one_thread = base | {"OMP_NUM_THREADS": "1"}
    torchrun = [sys.executable, "-m", "torch.distributed.run", "--nproc_per_node", "2"]
    load_before = os.getloadavg()[0]
    ways = (
        ("1 process, default threads", [sys.executable, *module], base, 1),
        ("1 process, 1 thread", [sys.executable, *module], one_thread, 1),
        ("2 processes x 1 thread", [*torchrun, *module], one_thread, 2),
    )
    every: dict[str, list[dict]] = {name: [] for name, *_ in ways}
    with tempfile.TemporaryDirectory() as tmp:
        for repeat in range(repeats):
            for name, command, env, processes in ways:
                out = os.path.join(tmp, f"{name.replace(' ', '_')}_{repeat}")
                seeded = [*command, out, *args, "--seed", str(repeat)]
                every[name].append(_run(seeded, env, out, processes))
    runs = {
        name: max(done, key=lambda run: run["rows_per_s"])
        | {
            "all_rows_per_s": [run["rows_per_s"] for run in done],
            "all_valid_loss": [run["valid_loss"] for run in done],
        }
        for name, done in every.items()
    }
    two, alone = runs["2 processes x 1 thread"], runs["1 process, 1 thread"]
    default = runs["1 process, default threads"]
    return {
        "runs": runs,
        "speedup_vs_1_thread": two["rows_per_s"] / alone["rows_per_s"],
        "cpu_speedup_vs_1_thread": (two["rows"] / two["train_cpu_s"])
        / (alone["rows"] / alone["train_cpu_s"]),
        "speedup_vs_default_threads": two["rows_per_s"] / default["rows_per_s"],
        "ceiling_vs_default_threads": 2 * alone["rows_per_s"] / default["rows_per_s"],
        "load_average": (load_before, os.getloadavg()[0]),
    }


def loss_within_spread(result: dict) -> tuple[float, list[float], bool]:
    """The 2-process runs' mean validation loss, the 1-process runs' losses (every seed,
    both thread counts) and whether the mean lies within those losses' range widened by
    their spread on each side."""
    one = [
        loss
        for name, run in result["runs"].items()
        if name.startswith("1 process")
        for loss in run["all_valid_loss"]
    ]
    two = float(np.mean(result["runs"]["2 processes x 1 thread"]["all_valid_loss"]))
    spread = max(one) - min(one)
    return two, one, min(one) - spread <= two <= max(one) + spread


def table(result: dict) -> str:
    """``result`` of :func:`measure` as a markdown table."""
    lines = [
        "| run | threads | training rows | steps | training s | rows/s | rows/s, every run | "
        "training CPU s | rows/CPU s | pretrain s | pretrain CPU s | validation loss, "
        "every run |",
        "|---|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|---|",
    ]
    for name, run in result["runs"].items():
        lines.append(
            f"| {name} | {run['threads']} | {run['rows']} | {run['steps']} | "
            f"{run['train_s']:.1f} | {run['rows_per_s']:.0f} | "
            f"{', '.join(f'{r:.0f}' for r in run['all_rows_per_s'])} | {run['train_cpu_s']:.1f} | "
            f"{run['rows'] / run['train_cpu_s']:.0f} | {run['pretrain_s']:.1f} | "
            f"{run['pretrain_cpu_s']:.1f} | "
            f"{', '.join(f'{loss:.4f}' for loss in run['all_valid_loss'])} |"
        )
    before, after = result["load_average"]
    two, one, within = loss_within_spread(result)
    lines += [
        "",
        f"2 processes / 1 process: {result['speedup_vs_1_thread']:.2f}x (1 thread), "
        f"{result['speedup_vs_default_threads']:.2f}x (default threads); "
        f"1-minute load average {before:.2f} before, {after:.2f} after. Rows per CPU "
        f"second (training CPU time: the most of a process): 2 processes / 1 process "
        f"(1 thread) {result['cpu_speedup_vs_1_thread']:.2f}x, what the wall-clock ratio "
        "reaches on an idle machine where the processes do not wait for each other. "
        "Against one process with its default threads (both cores through torch's "
        "intra-op threads), two single-threaded processes reach at most twice one "
        f"single-threaded process: {result['ceiling_vs_default_threads']:.2f}x here.",
        "",
        f"Validation loss (last epoch, seeds 0–{len(one) // 2 - 1}): 2 processes "
        f"{two:.4f} on average; 1 process {min(one):.4f} to {max(one):.4f} over its seeds "
        "and thread counts: "
        + ("within" if within else "**outside**")
        + " that range widened by its spread on each side.",
    ]
    return "\n".join(lines)


def report_section(patients: int = PATIENTS, epochs: int = EPOCHS, repeats: int = 1) -> str:
    """:func:`measure`'s result as a Markdown section of a report (``benchmarks/scale.py``
    adds it to its own), with the command that reproduces it."""
    command = (
        f"python -m benchmarks._ddp_throughput --patients {patients} --epochs {epochs} "
        f"--repeats {repeats}"
    )
    return "\n".join(
        [
            f"Produced by `{command}`: one pretraining of {patients} `make_irregular_vitals` "
            f"patients ({epochs} epochs, default network, `calibration_folds=1`), 1 process "
            "against `torchrun --nproc_per_node 2` (see the module's docstring).",
            "",
            table(measure(patients, epochs, repeats)),
        ]
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--worker", metavar="OUT", help="run one pretraining, write OUT")
    parser.add_argument("--patients", type=int, default=PATIENTS)
    parser.add_argument("--epochs", type=int, default=EPOCHS)
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--seed", type=int, default=0, help="the worker's random_state")
    args = parser.parse_args()
    if args.worker:
        worker(args.worker, args.patients, args.epochs, args.seed)
        return
    print(table(measure(args.patients, args.epochs, args.repeats)))


if __name__ == "__main__":
    main()
