"""Model files (issue 31): save + load time and file size of a 10⁶-parameter regressor.

Fits a :class:`~levy_sklearn.LevyAttentionRegressor` of about 10⁶ parameters
(``d_model=160``, 4 encoder blocks; one epoch on small random data: the weights' values do
not matter here) and measures, in the same run:

* ``levy_sklearn.serialization.save`` then ``load`` of the whole estimator (weights as
  safetensors, every fitted attribute as JSON and ``.npy``, the skorch net rebuilt and
  checked), and
* the floor: ``torch.save`` of the network's state dict then ``torch.load`` of it
  (``weights_only=True``), the weights alone,

each the median of ``--repeats`` runs (time: wall clock of save + load to a file on disk;
size: bytes on disk). The bars (issue 31): save + load ≤ 0.5 s and a file ≤ 2× the weights'
size (``torch.save``'s file). The loaded model's predictions are checked to be bitwise the
fitted one's.

Writes ``benchmarks/results/serialization.md``.

Run: ``OMP_NUM_THREADS=1 python -m benchmarks.serialization [--repeats 5]``.
"""

from __future__ import annotations

import argparse
import platform
import tempfile
import time
from pathlib import Path
from statistics import median

import numpy as np
import torch

from levy_sklearn import LevyAttentionRegressor
from levy_sklearn.serialization import load, save

from ._common import short_commit, write_report

TIME_BAR_S = 0.5
SIZE_BAR = 2.0


def timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--d-model", type=int, default=160)
    parser.add_argument("--n-layers", type=int, default=4)
    args = parser.parse_args()
    torch.set_num_threads(1)

    rng = np.random.default_rng(0)
    X = rng.normal(size=(256, 10))
    y = X[:, 0] + 0.1 * rng.normal(size=256)
    model = LevyAttentionRegressor(
        d_model=args.d_model, n_heads=4, n_layers=args.n_layers, max_epochs=1, random_state=0
    ).fit(X, y)
    module = model.net_.module_
    n_params = sum(p.numel() for p in module.parameters())

    folder = Path(tempfile.mkdtemp())
    ours, theirs = folder / "model.levy.zip", folder / "state_dict.pt"
    ours_s, theirs_s = [], []
    loaded = None
    for _ in range(args.repeats):

        def ours_round_trip() -> None:
            nonlocal loaded
            save(model, ours)
            loaded = load(ours)

        def torch_round_trip() -> None:
            torch.save(module.state_dict(), theirs)
            torch.load(theirs, weights_only=True)

        ours_s.append(timed(ours_round_trip))
        theirs_s.append(timed(torch_round_trip))
    same = bool(np.array_equal(loaded.predict(X, return_std=True), model.predict(X, True)))

    t_ours, t_theirs = median(ours_s), median(theirs_s)
    size_ours, size_theirs = ours.stat().st_size, theirs.stat().st_size
    size_ok = size_ours <= SIZE_BAR * size_theirs
    lines = [
        "# Model files: save + load of a 10⁶-parameter regressor",
        "",
        "`OMP_NUM_THREADS=1 python -m benchmarks.serialization "
        f"--repeats {args.repeats} --d-model {args.d_model} --n-layers {args.n_layers}` "
        f"(commit {short_commit()}, {platform.python_implementation()} "
        f"{platform.python_version()}, torch {torch.__version__}, one thread).",
        "",
        f"LevyAttentionRegressor(d_model={args.d_model}, n_heads=4, "
        f"n_layers={args.n_layers}): {n_params:,} parameters "
        f"({next(module.parameters()).dtype}, as fitted models predict). "
        f"Median of {args.repeats} runs; save then load, to a file on local disk.",
        "",
        "| | save + load (s) | file (bytes) |",
        "|---|---|---|",
        f"| `levy_sklearn.serialization` (whole estimator) | {t_ours:.3f} | {size_ours:,} |",
        f"| `torch.save` + `torch.load` (state dict only) | {t_theirs:.3f} | {size_theirs:,} |",
        f"| ratio | {t_ours / t_theirs:.2f} | {size_ours / size_theirs:.3f} |",
        "",
        f"Bars (issue 31): save + load ≤ {TIME_BAR_S} s: "
        f"{'met' if t_ours <= TIME_BAR_S else 'NOT met'} ({t_ours:.3f} s); file ≤ "
        f"{SIZE_BAR:g}× the weights' size: {'met' if size_ok else 'NOT met'} "
        f"({size_ours / size_theirs:.3f}×). Loaded predictions bitwise equal: {same}.",
        "",
        "All runs (s), ours: "
        + ", ".join(f"{t:.3f}" for t in ours_s)
        + "; torch: "
        + ", ".join(f"{t:.3f}" for t in theirs_s)
        + ".",
    ]
    text = "\n".join(lines) + "\n"
    write_report(text, "serialization.md")


if __name__ == "__main__":
    main()
