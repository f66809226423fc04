"""What the seeds can resolve: paired tests behind the claims' counting verdicts.

``claims.py`` judges each claim by counting cells (met only if every cell agrees). A count says
nothing about whether a difference is larger than the seed-to-seed noise. This script reads the
per-seed table ``claims.py --full`` wrote (``benchmarks/results/claims.csv``) and, per claim, runs
a one-sided Wilcoxon signed-rank test over every paired (dataset, keep, seed) row in each
direction, with Holm's correction over all the tests of the page (statsmodels), at α = 0.05:

* **met**: the favourable direction is significant (and no tested part of the claim is
  significant the other way);
* **not met**: some part is significant in the unfavourable direction;
* **unresolved**: neither: the seeds cannot tell.

Claims and the paired difference tested (favourable when negative):

* (1) ``log(MSE_levy / MSE_softmax) − log(1.056)`` (the non-inferiority margin of claims.py);
* (2), (2b) Spearman(σ, absolute error) of MC dropout minus Lévy's, and Lévy's AURC minus
  MC dropout's (both parts must be met);
* (3), (3b) ``log(CRPS_levy / CRPS_sampler)``, standard and fair sampler estimator.

Claims (5) and (6) are not paired comparisons (coverage against a band, Spearman against zero);
claims.py already tests (6a) over seeds. Writes ``benchmarks/results/claims_resolution.md``.
Runs in seconds: ``OMP_NUM_THREADS=1 python -m benchmarks.claims_resolution``.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats
from statsmodels.stats.multitest import multipletests

from ._common import RESULTS, short_commit, write_report
from .claims import MSE_TOLERANCE

ALPHA = 0.05
KEYS = ["dataset", "keep", "seed"]


def paired(table: pd.DataFrame, a: str, b: str, metric_a: str, metric_b: str) -> pd.DataFrame:
    """Rows of method ``a`` joined to those of ``b`` on (dataset, keep, seed)."""
    left = table.loc[table["method"] == a, [*KEYS, metric_a]].rename(columns={metric_a: "a"})
    right = table.loc[table["method"] == b, [*KEYS, metric_b]].rename(columns={metric_b: "b"})
    return left.merge(right, on=KEYS).dropna()


def differences(table: pd.DataFrame) -> dict[str, list[tuple[str, np.ndarray]]]:
    """Per claim, its parts: (description, paired differences; favourable when < 0)."""
    mse = paired(table, "levy", "softmax", "mse", "mse")
    parts = {
        "(1) Lévy MSE ≤ 1.056 × softmax twin": [
            ("log MSE ratio − log 1.056", np.log(mse["a"] / mse["b"]) - np.log(MSE_TOLERANCE))
        ]
    }
    for baseline, tag in (("mc_dropout", "(2)"), ("mc_dropout+head", "(2b)")):
        rho = paired(table, baseline, "levy", "spearman", "spearman")
        area = paired(table, "levy", baseline, "aurc", "aurc")
        parts[f"{tag} Lévy σ ranks the absolute error better than {baseline}"] = [
            ("Spearman: baseline − Lévy", (rho["a"] - rho["b"]).to_numpy()),
            ("AURC: Lévy − baseline", (area["a"] - area["b"]).to_numpy()),
        ]
    for metric, tag in (("crps", "(3)"), ("crps_fair", "(3b)")):
        crps = paired(table, "levy", "levy_sampler50", "crps", metric)
        parts[f"{tag} Lévy closed-form CRPS ≤ 50-draw sampler ({metric})"] = [
            ("log CRPS ratio", np.log(crps["a"] / crps["b"]).to_numpy())
        ]
    return parts


def resolve(parts: dict[str, list[tuple[str, np.ndarray]]]) -> pd.DataFrame:
    """One row per claim part with both one-sided p-values, Holm-corrected over the page."""
    rows = []
    for claim, tests in parts.items():
        for what, d in tests:
            d = np.asarray(d, dtype=float)
            rows.append(
                {
                    "claim": claim,
                    "part": what,
                    "pairs": d.size,
                    "median difference": float(np.median(d)),
                    "favourable": float(np.mean(d < 0)),
                    "p_less": stats.wilcoxon(d, alternative="less").pvalue,
                    "p_greater": stats.wilcoxon(d, alternative="greater").pvalue,
                }
            )
    out = pd.DataFrame(rows)
    p = np.concatenate([out["p_less"], out["p_greater"]])
    adjusted = multipletests(p, alpha=ALPHA, method="holm")[1]
    out["p_less (Holm)"] = adjusted[: len(out)]
    out["p_greater (Holm)"] = adjusted[len(out) :]
    return out


def verdicts(parts: pd.DataFrame) -> pd.Series:
    """met / not met / unresolved per claim (see the module docstring)."""

    def one(group: pd.DataFrame) -> str:
        if (group["p_greater (Holm)"] < ALPHA).any():
            return "not met"
        if (group["p_less (Holm)"] < ALPHA).all():
            return "met"
        return "unresolved"

    return parts.groupby("claim", sort=False)[parts.columns].apply(one)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--table", type=Path, default=RESULTS / "claims.csv")
    args = parser.parse_args()
    table = pd.read_csv(args.table)
    parts = resolve(differences(table))
    verdict = verdicts(parts)
    shown = parts.drop(columns=["p_less", "p_greater"]).round(4)
    for col in ("p_less (Holm)", "p_greater (Holm)"):
        shown[col] = parts[col].map(lambda p: f"{p:.2g}")
    lines = [
        "# Claims: what the seeds can resolve",
        "",
        f"From `{args.table.name}` ({len(table)} rows; commit `{short_commit()}` of this page). "
        "One-sided Wilcoxon signed-rank tests over paired (dataset, keep, seed) rows, both "
        f"directions, Holm-corrected over the page, α = {ALPHA}; `favourable`: share of pairs "
        "whose difference is negative. The counting verdicts are in `claims.md`. Reproduce: "
        "`OMP_NUM_THREADS=1 python -m benchmarks.claims_resolution`.",
        "",
        "| claim | resolved verdict |",
        "|:--|:--|",
        *(f"| {claim} | {v} |" for claim, v in verdict.items()),
        "",
        shown.to_markdown(index=False),
        "",
    ]
    write_report("\n".join(lines), "claims_resolution.md", echo=False)
    print("\n".join(f"{v}: {claim}" for claim, v in verdict.items()))


if __name__ == "__main__":
    main()
