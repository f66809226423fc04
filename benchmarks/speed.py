"""Training throughput at default hyperparameters (issue 12's three timings), one torch thread.

* ``airline``   ``LevyForecaster(random_state=0).fit(load_airline())``;
* ``vitals``    ``LevyForecaster(context_length="12h", max_horizon="4h", random_state=0)``
  ``.pretrain(make_irregular_vitals(n_patients=20, random_state=0))`` (one fixed draw: the
  panel's size, and so the time, varies from draw to draw);
* ``regressor`` ``LevyAttentionRegressor(random_state=0).fit(X, y)``, ``X`` 5,000 × 10 normal.

Prints wall and process CPU seconds with the load average of the machine (CPU seconds are
the better guide on a shared machine) and writes ``benchmarks/results/speed.md``.
``--repeats N`` times every run ``N`` times in turn and reports the fastest and the slowest
(the fastest is the least disturbed by other load, as with :mod:`timeit`).
``--vitals-epochs N`` pretrains the vitals panel for ``N`` epochs instead of the default
budget. ``--profile`` adds the torch.profiler top table of each run, shortened to a few
epochs (a trace of a whole default fit is too large to summarise).

``--floor`` instead sets the regressor's training throughput (rows per CPU second, at batch
sizes 64 and 1,024) beside a floor for any attention network trained the same way: a stock
``torch.nn.TransformerEncoderLayer`` with a ``MultiheadAttention`` readout (the regressor's
width, heads and optimizer, Gaussian NLL) on the same machine, and writes
``benchmarks/results/speed_floor.md``: what the default fit's training rows cost each, and
how many epochs of 5,000 rows fit in 5 s.

``--predict`` instead times prediction before and after issue 30's inference batches, side by
side in one process (each repeat runs both, in turn, alternating which goes first; medians):
the network fed ``batch_size`` rows at a time, as before
(:data:`levy_sklearn.training.net.PREDICT_BATCH_BYTES` set to 1 byte, whose floor is
``batch_size``), against the default memory budget. Two cases: the clinical benchmark's step,
``predict(X, return_std=True)`` + ``argsort(σ)`` for 3,383 unseen patients with the regressor
of ``benchmarks/clinical.py`` (default settings, 4,000 training rows), and ``predict_var`` at
12 horizons for a panel of 2,000 irregular series (``benchmarks/memory.py``'s forecaster
case). Prints the ratios and the largest relative difference between the two paths' outputs,
and writes ``benchmarks/results/speed_predict.md``.

Run: ``python -m benchmarks.speed [--profile] [--vitals-epochs N] [--repeats N] [--floor]
[--predict]``.
"""

from __future__ import annotations

import argparse
import gc
import os
import statistics
import sys
import time
from collections.abc import Callable
from functools import partial

import numpy as np
import torch
from sktime.datasets import load_airline
from torch.profiler import ProfilerActivity, profile

from levy_sklearn import LevyAttentionRegressor, LevyForecaster
from levy_sklearn.datasets import make_irregular_vitals

from ._common import short_commit, stamp, write_report


def epochs(max_epochs: int | None) -> dict:
    return {} if max_epochs is None else {"max_epochs": max_epochs}


def airline(max_epochs: int | None = None) -> object:
    return LevyForecaster(random_state=0, **epochs(max_epochs)).fit(load_airline())


def vitals(max_epochs: int | None = None) -> object:
    forecaster = LevyForecaster(
        context_length="12h", max_horizon="4h", random_state=0, **epochs(max_epochs)
    )
    return forecaster.pretrain(make_irregular_vitals(n_patients=20, random_state=0))


def regressor(max_epochs: int | None = None, **params) -> LevyAttentionRegressor:
    rng = np.random.default_rng(0)
    X = rng.normal(size=(5000, 10))
    y = X @ rng.normal(size=10) + rng.normal(size=5000)
    return LevyAttentionRegressor(random_state=0, **epochs(max_epochs), **params).fit(X, y)


class StockAttention(torch.nn.Module):
    """Feature tokens → one ``TransformerEncoderLayer`` → a query's attention → (mean, log σ²)."""

    def __init__(self, n_features: int, d_model: int, n_heads: int) -> None:
        super().__init__()
        self.value = torch.nn.Linear(1, d_model)
        self.feature = torch.nn.Parameter(torch.randn(n_features, d_model))
        self.encoder = torch.nn.TransformerEncoderLayer(
            d_model, n_heads, 2 * d_model, dropout=0.0, batch_first=True
        )
        self.query = torch.nn.Parameter(torch.randn(1, 1, d_model))
        self.readout = torch.nn.MultiheadAttention(d_model, n_heads, batch_first=True)
        self.head = torch.nn.Linear(d_model, 2)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        tokens = self.encoder(self.value(x.unsqueeze(-1)) + self.feature)
        summary, _ = self.readout(self.query.expand(len(x), 1, -1), tokens, tokens)
        mean, log_var = self.head(summary[:, 0]).unbind(-1)
        return mean, log_var


def stock_seconds_per_step(
    n_features: int, params: dict, steps: int = 500, fused: bool = False
) -> float:
    """CPU seconds per AdamW step of :class:`StockAttention` on random batches.

    ``params`` holds the regressor's ``d_model``, ``n_heads``, ``batch_size``, ``lr`` and
    ``weight_decay``; ``fused``: torch's fused AdamW (else its ``foreach`` one), as the
    regressor's optimizer has it.
    """
    torch.manual_seed(0)
    net = StockAttention(n_features, params["d_model"], params["n_heads"])
    kind = {"fused": True} if fused else {"foreach": True}
    optimizer = torch.optim.AdamW(
        net.parameters(), lr=params["lr"], weight_decay=params["weight_decay"], **kind
    )
    x, y = torch.randn(params["batch_size"], n_features), torch.randn(params["batch_size"])

    def step() -> None:
        optimizer.zero_grad()
        mean, log_var = net(x)
        torch.nn.functional.gaussian_nll_loss(mean, y, log_var.exp()).backward()
        optimizer.step()

    for _ in range(20):  # warm-up: the first steps allocate and import lazily
        step()
    cpu = time.process_time()
    for _ in range(steps):
        step()
    return (time.process_time() - cpu) / steps


def rows_trained(reg: LevyAttentionRegressor) -> int:
    """Training rows a fit passed through its network (skorch's record of every batch)."""
    return sum(
        batch["train_batch_size"]
        for epoch in reg.net_.history
        for batch in epoch["batches"]
        if "train_loss" in batch
    )


def floor_report(commit: str) -> list[str]:
    """Training rows per CPU second of the regressor and of the stock network."""
    rows, default_rows = [], None
    # Untimed, as the stock network's warm-up steps are: the process's first optimizer
    # imports torch._dynamo (about 1.5 CPU s), once per process, not per row.
    regressor(max_epochs=1)
    for batch_size in (64, 1024):
        _wall, cpu, reg = timed(partial(regressor, batch_size=batch_size))
        params = reg.get_params()
        fused = bool(reg.net_.optimizer_.defaults.get("fused"))
        stock = stock_seconds_per_step(10, params, fused=fused)
        trained = rows_trained(reg)
        default_rows = default_rows or trained  # the first fit is the default one
        for name, rate in (
            ("`LevyAttentionRegressor`", trained / cpu),
            ("stock attention network", batch_size / stock),
        ):
            rows.append(
                f"| {name} | {batch_size} | {1e3 * batch_size / rate:.1f} | {rate:.0f} "
                f"| {default_rows / rate:.1f} | {5 * rate / 5000:.1f} |"
            )
            print(rows[-1], flush=True)
    return [
        "# How fast can an attention regressor train here? A floor from stock torch layers",
        "",
        f"{stamp(commit)}, 1 thread. "
        "Produced by `OMP_NUM_THREADS=1 python -m benchmarks.speed --floor`. The regressor: "
        "`LevyAttentionRegressor(random_state=0, batch_size=B)` fitted on the 5,000 × 10 "
        "table of the main mode, CPU seconds of the whole fit over the training rows it passed "
        "through its network. The stock network: feature tokens (a linear value embedding "
        "plus a learned feature embedding), one `torch.nn.TransformerEncoderLayer` and a "
        "`MultiheadAttention` readout of one learned query, at the regressor's width, heads, "
        "learning rate and weight decay, AdamW as the regressor's (fused where torch has "
        "it, else foreach), Gaussian NLL; CPU seconds per step after 20 warm-up steps. An "
        "untimed one-epoch regressor fit runs first (the process's one-time imports). The "
        f"default fit trains on {default_rows:,} rows.",
        "",
        "| network | batch | CPU per step (ms) | training rows per CPU s "
        f"| CPU s for {default_rows:,} rows | epochs of 5,000 rows in 5 s |",
        "|---|---|---|---|---|---|",
        *rows,
        "",
    ]


def predict_cases() -> dict[str, Callable[[], object]]:
    """The two prediction steps of ``--predict``, fitted once (public API only)."""
    import pandas as pd

    from .clinical import (
        EDGES,
        MAX_TRAIN_ROWS,
        N_NEW_PATIENTS,
        N_TRAIN_PATIENTS,
        TARGET,
        feature_times,
        lag_rows,
        one_row_per_patient,
        ward,
    )
    from .memory import irregular_panel

    X_train, y_train, _ = lag_rows(ward(N_TRAIN_PATIENTS, seed=0), TARGET, EDGES)
    rows = np.random.default_rng(0).permutation(len(y_train))[:MAX_TRAIN_ROWS]
    X_new, _ = one_row_per_patient(ward(N_NEW_PATIENTS + 200, seed=1), N_NEW_PATIENTS, seed=1)
    reg = LevyAttentionRegressor(feature_times=feature_times(EDGES, 3), random_state=0)
    reg.fit(X_train[rows], y_train[rows])

    def rank_patients() -> np.ndarray:
        mean, std = reg.predict(X_new, return_std=True)
        return np.stack([mean, std, np.argsort(std)])

    forecaster = LevyForecaster(max_epochs=2, windows_per_series=64, random_state=0)
    forecaster.pretrain(irregular_panel(32, 200, seed=1))
    forecaster.fit(irregular_panel(2000, 24, seed=2))
    fh = pd.to_timedelta(np.arange(1, 13), unit="h")

    def panel_variance() -> np.ndarray:
        return forecaster.predict_var(fh=fh).to_numpy()

    return {
        f"regressor: rank {N_NEW_PATIENTS:,} unseen patients": rank_patients,
        "forecaster: predict_var, 2,000 series × 12 horizons": panel_variance,
    }


def predict_report(commit: str, repeats: int) -> list[str]:
    """``--predict``: old (``batch_size`` rows a batch) against new inference batches."""
    from levy_sklearn.training import net as training

    budget = training.PREDICT_BATCH_BYTES
    paths = {"before": 1, "after": budget}  # 1 byte: batch_size rows a batch, as before
    rows = []
    for name, run in predict_cases().items():
        seconds = {path: [] for path in paths}
        outputs = {}
        for repeat in range(repeats + 1):  # the first round warms up and is not counted
            # Alternate which path goes first: the second of a pair ran up to 10 % slower.
            for path in sorted(paths, reverse=repeat % 2 == 1):
                training.PREDICT_BATCH_BYTES = paths[path]
                gc.collect()
                wall = time.perf_counter()
                outputs[path] = run()
                seconds[path].append(time.perf_counter() - wall)
        training.PREDICT_BATCH_BYTES = budget
        before, after = (statistics.median(seconds[path][1:]) for path in paths)
        old, new = outputs["before"], outputs["after"]
        relative = np.abs(new - old) / np.maximum(np.abs(old), np.finfo(float).tiny)
        rows.append(
            f"| {name} | {before:.3f} | {after:.3f} | {before / after:.2f} "
            f"| {relative.max():.1e} |"
        )
        print(rows[-1], flush=True)
    return [
        "# Prediction: inference batches by memory (issue 30, item 3)",
        "",
        f"{stamp(commit)}, 1 thread; "
        f"median of {repeats} repeats after a warm-up, the two paths in turn in one process "
        "(alternating which goes first). "
        "Before: the network fed `batch_size` rows a batch (64 for the regressor, 32 for the "
        "forecaster); after: as many rows as keep a batch within "
        f"`PREDICT_BATCH_BYTES` = {budget / 2**20:g} MiB. Produced by `OMP_NUM_THREADS=1 python"
        " -m benchmarks.speed" + "".join(f" {a}" for a in sys.argv[1:]) + "`.",
        "",
        "| prediction | before (s) | after (s) | before / after | largest relative difference |",
        "|---|---|---|---|---|",
        *rows,
        "",
        "The forecaster's `predict_var` spends about a sixth of its time in the network (0.46 s "
        "of 2.7 s timed separately, the same at either batch size); the rest is per-series "
        "Python around it (forecast indexes, windows), so its ratio is within the spread "
        "between runs on a shared machine (0.88–1.08 in four runs).",
        "",
    ]


def timed(run: Callable[[], object]) -> tuple[float, float, object]:
    """Wall and CPU seconds of ``run()`` and its result."""
    wall, cpu = time.perf_counter(), time.process_time()
    result = run()
    return time.perf_counter() - wall, time.process_time() - cpu, result


def top_ops(run: Callable[[], object]) -> str:
    """torch.profiler's table of the operators with the most self CPU time in ``run()``."""
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        run()
    return prof.key_averages().table(
        sort_by="self_cpu_time_total", row_limit=15, max_name_column_width=45
    )


def epochs_run(result: object) -> int:
    net = getattr(result, "net_", None) or getattr(result, "pretrained_net_", None)
    return len(net.history)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--vitals-epochs", type=int, default=None)
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--floor", action="store_true")
    parser.add_argument("--predict", action="store_true")
    args = parser.parse_args()
    torch.set_num_threads(1)
    commit = short_commit()
    if args.floor:
        write_report("\n".join(floor_report(commit)), "speed_floor.md", echo=False)
        return
    if args.predict:
        report = predict_report(commit, max(args.repeats, 7))
        write_report("\n".join(report), "speed_predict.md", echo=False)
        return
    runs = {
        "airline fit": (airline, None, 10),
        "vitals-20 pretrain": (vitals, args.vitals_epochs, 1),
        "regressor fit 5000 × 10": (regressor, None, 2),
    }
    rows, tables = [], []
    timings = {name: [] for name in runs}
    for _ in range(args.repeats):  # in turn, so that a burst of load hits every run alike
        for name, (run, max_epochs, _profiled) in runs.items():
            load = os.getloadavg()[0]
            wall, cpu, result = timed(partial(run, max_epochs))
            timings[name].append((cpu, wall, load, epochs_run(result)))
            print(name, f"wall {wall:.1f} s, CPU {cpu:.1f} s, load {load:.1f}", flush=True)
    for name, (run, _max_epochs, profiled_epochs) in runs.items():
        cpu, wall, load, n_epochs = min(timings[name])
        slow_cpu, slow_wall, _, _ = max(timings[name])
        rows.append(
            f"| {name} | {n_epochs} | {wall:.1f} | {cpu:.1f} | {slow_wall:.1f} | {slow_cpu:.1f} "
            f"| {cpu / n_epochs:.2f} | {load:.1f} |"
        )
        if args.profile:
            table = top_ops(partial(run, profiled_epochs))
            tables.append(f"### {name}, {profiled_epochs} epoch(s)\n\n```\n{table}```\n")
    lines = [
        "# Training throughput at defaults",
        "",
        f"{stamp(commit)}, 1 thread"
        + (f", vitals for {args.vitals_epochs} epoch(s)" if args.vitals_epochs else "")
        + f"; each run timed {args.repeats} time(s) in turn: the fastest (wall, CPU), the slowest"
        + " and the load average before the fastest. Produced by `OMP_NUM_THREADS=1 python"
        + " -m benchmarks.speed"
        + "".join(f" {a}" for a in sys.argv[1:])
        + "`.",
        "",
        "| run | epochs | wall (s) | CPU (s) | slowest wall (s) | slowest CPU (s) "
        "| CPU per epoch (s) | load average |",
        "|---|---|---|---|---|---|---|---|",
        *rows,
        "",
        *tables,
    ]
    write_report("\n".join(lines), "speed.md", echo=False)


if __name__ == "__main__":
    main()
