"""Figures for the documentation, regenerated at the start of every Sphinx build.

Run by ``docs/conf.py``; can also be run by hand::

    python docs/_scripts/make_figures.py [output_dir]

Writes ``psi.png`` (into ``docs/_static/`` by default):

* left: ψ(Λ) = E[1/N; N ≥ 1] for N ~ Poisson(Λ), computed with :func:`levy_sklearn.psi`,
  its small-Λ and large-Λ limits, and Monte Carlo estimates from Poisson draws (the
  definition) as dots;
* right: the three terms of the variance identity for unit disagreement, unit prior spread
  and unit prior gap, ψ(Λ)·D, p₀·tr S₀ and p₀(1 − p₀)·‖μ − m₀‖², and their sum.
"""

from __future__ import annotations

import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import torch  # noqa: E402

from levy_sklearn import psi  # noqa: E402

DEFAULT_OUT = Path(__file__).resolve().parents[1] / "_static"


def psi_monte_carlo(lam: np.ndarray, n_draws: int = 200_000, seed: int = 0) -> np.ndarray:
    """E[1/N ; N ≥ 1] by drawing N ~ Poisson(Λ): the definition, no special function."""
    rng = np.random.default_rng(seed)
    out = np.empty_like(lam)
    for i, rate in enumerate(lam):
        n = rng.poisson(rate, n_draws).astype(np.float64)
        out[i] = np.mean(np.where(n > 0, 1.0 / np.maximum(n, 1.0), 0.0))
    return out


def make_psi_figure(out_dir: Path) -> Path:
    lam = np.logspace(-3, 3, 600)
    psi_val = psi(torch.as_tensor(lam, dtype=torch.float64)).numpy()
    p0 = np.exp(-lam)
    prior_term = p0  # p₀ tr S₀ with tr S₀ = 1
    switch_term = p0 * (1.0 - p0)  # p₀(1 − p₀)‖μ − m₀‖² with a unit gap
    lam_mc = np.logspace(-2, 2, 13)
    psi_mc = psi_monte_carlo(lam_mc)

    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 4), constrained_layout=True)

    ax1.loglog(lam, psi_val, color="C0", lw=2.2, label=r"$\psi(\Lambda)$ (levy_sklearn.psi)")
    small = lam < 0.5
    ax1.loglog(
        lam[small], lam[small], "--", color="0.45", lw=1.2, label=r"$\Lambda$ (small $\Lambda$)"
    )
    large = lam > 2.0
    ax1.loglog(
        lam[large],
        1.0 / lam[large],
        ":",
        color="0.2",
        lw=1.4,
        label=r"$1/\Lambda$ (large $\Lambda$)",
    )
    ax1.loglog(lam_mc, psi_mc, "o", ms=5, color="C3", label="Monte Carlo: Poisson draws")
    ax1.set_xlabel(r"evidence $\Lambda$")
    ax1.set_ylabel(r"$\psi(\Lambda) = E[1/N;\ N \geq 1]$")
    ax1.set_title(r"$\psi$: variance per unit of disagreement")
    ax1.set_ylim(1e-4, 1.5)
    ax1.grid(True, which="major", alpha=0.3)
    ax1.legend(fontsize=8, loc="lower center")

    ax2.semilogx(
        lam, psi_val, color="C0", lw=2.2, label=r"$\psi(\Lambda)\,D$  (disagreement term)"
    )
    ax2.semilogx(lam, prior_term, color="C2", lw=2.2, label=r"$p_0\,\mathrm{tr}\,S_0$  (prior term)")
    ax2.semilogx(
        lam,
        switch_term,
        color="C1",
        lw=2.2,
        label=r"$p_0(1-p_0)\,\|\mu - m_0\|^2$  (switch term)",
    )
    total = psi_val + prior_term + switch_term
    ax2.semilogx(lam, total, color="k", lw=1.2, ls="--", label="total variance")
    ax2.set_xlabel(r"evidence $\Lambda$")
    ax2.set_ylabel("variance (unit $D$, $\\mathrm{tr}\\,S_0$, $\\|\\mu - m_0\\|^2$)")
    ax2.set_title("The three terms of the variance identity")
    ax2.set_ylim(0.0, 1.6)
    ax2.grid(True, which="major", alpha=0.3)
    ax2.legend(fontsize=8, loc="upper left")

    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / "psi.png"
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def main(out_dir: Path = DEFAULT_OUT) -> list[Path]:
    return [make_psi_figure(Path(out_dir))]


if __name__ == "__main__":
    for p in main(Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT_OUT):
        print(p)
