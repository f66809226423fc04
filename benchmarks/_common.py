"""What the benchmark scripts share: where reports go, the commit and machine they record,
writing a report, the classical forecasters that serve as peers, and the scoring of quantile
forecasts that the probabilistic benchmarks share.

Nothing here changes what a report says; each script still composes its own text. The
hand-kept ``results/*_notes.md`` files are never written here or by any script.
"""

from __future__ import annotations

import gzip
import json
import platform
import subprocess
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

#: The folder every report, CSV and figure is written to.
RESULTS = Path(__file__).resolve().parent / "results"
GIB = 2.0**30


# --------------------------------------------------------------------------- quantile scores
#: Quantile levels every method forecasts where quantiles are scored: the 19 of the CRPS and
#: the 95 % interval's ends.
CRPS_LEVELS = np.round(np.arange(1, 20) * 0.05, 2)
LEVELS = np.concatenate([[0.025], CRPS_LEVELS, [0.975]])
#: Central intervals whose coverage is reported.
COVERAGES = (0.5, 0.8, 0.9, 0.95)


def pinball(y: np.ndarray, q: np.ndarray, levels: np.ndarray) -> np.ndarray:
    """Pinball loss of the quantiles ``q`` at ``levels`` (``q`` has one more, last, axis
    than ``y``): an array of ``q``'s shape."""
    diff = np.asarray(y, float)[..., None] - np.asarray(q, float)
    return np.maximum(levels * diff, (levels - 1) * diff)


def central_columns(coverage: float, levels: np.ndarray = LEVELS) -> tuple[int, int]:
    """The columns of ``levels`` nearest the bounds of the central ``coverage`` interval."""
    lo = int(np.argmin(np.abs(levels - (1 - coverage) / 2)))
    hi = int(np.argmin(np.abs(levels - (1 + coverage) / 2)))
    return lo, hi


def interval_coverage(
    y: np.ndarray, q: np.ndarray, coverage: float, levels: np.ndarray = LEVELS
) -> float:
    """Share of the finite values of ``y`` inside the central ``coverage`` interval of the
    quantiles ``q`` at ``levels`` (last axis)."""
    lo, hi = central_columns(coverage, levels)
    y = np.asarray(y, float)
    inside = (q[..., lo] <= y) & (y <= q[..., hi])
    return float(inside[np.isfinite(y)].mean())


# --------------------------------------------------------------------------- provenance
def git(*args: str) -> str:
    """Standard output of ``git *args`` run in this checkout (empty outside a repository)."""
    return subprocess.run(
        ["git", *args], capture_output=True, text=True, check=False, cwd=RESULTS.parent
    ).stdout


def short_commit() -> str:
    """The checked-out commit, abbreviated (empty outside a repository)."""
    return git("rev-parse", "--short", "HEAD").strip()


def library_edited() -> bool:
    """Whether ``levy_sklearn/`` differs from the checked-out commit (a run then measures
    code no commit holds)."""
    # ":(top)": the library path from the repository root (git runs in benchmarks/).
    return bool(git("status", "--porcelain", "--", ":(top)levy_sklearn").strip())


def stamp(commit: str) -> str:
    """The start of a report's provenance line: commit, torch version and processor."""
    import torch

    return f"commit `{commit}`, torch {torch.__version__}, {platform.machine()}"


def machine_line() -> str:
    """The machine and versions a memory or throughput report records."""
    import psutil
    import torch

    return (
        f"Machine: {platform.machine()}, {psutil.cpu_count()} CPUs, "
        f"{psutil.virtual_memory().total / GIB:.0f} GiB RAM; Python "
        f"{platform.python_version()}, torch {torch.__version__}"
    )


# --------------------------------------------------------------------------- reports
def write_report(text: str, name: str | Path, *, echo: bool = True) -> Path:
    """Write a generated report: ``name`` in :data:`RESULTS`, or the path given; print it too
    unless ``echo`` is false. The whole file is replaced."""
    path = name if isinstance(name, Path) else RESULTS / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    if echo:
        print(text)
    return path


#: Cluster-bootstrap draws behind a verdict (:func:`cluster_verdict`).
BOOTSTRAP = 2000


def cluster_verdict(
    num: np.ndarray,
    den: np.ndarray,
    bar: tuple[float, float],
    draws: np.ndarray,
) -> str:
    """A ratio of sums over clusters, its 95 % cluster-bootstrap interval and the verdict the
    data can resolve against ``bar``: ``"estimate [low, high] verdict"``.

    ``num`` and ``den`` hold each cluster's sums (a subject's or an origin's forecasts: one
    cluster's are correlated, clusters are not); the estimate is ``Σ num / Σ den``, and each
    row of ``draws`` (cluster multiplicities) gives one bootstrap ratio. Verdict: ``met``
    when the estimate lies in ``bar`` (closed), ``not met`` when the whole interval misses
    it, ``unresolved`` otherwise (the estimate misses within the noise).

    Examples
    --------
    >>> import numpy as np
    >>> from benchmarks._common import cluster_draws, cluster_verdict
    >>> draws = cluster_draws(4)
    >>> cluster_verdict(np.array([1.0, 2, 3, 4]), np.full(4, 2.0), (0.0, 1.0), draws)
    '1.250 [0.750, 1.750] unresolved'
    >>> cluster_verdict(np.array([3.0, 3, 3, 3.2]), np.full(4, 2.0), (0.0, 1.0), draws)
    '1.525 [1.500, 1.575] not met'
    """
    low, high = bar
    estimate = num.sum() / den.sum()
    with np.errstate(invalid="ignore", divide="ignore"):
        boot = (draws @ num) / (draws @ den)
    a, b = np.nanquantile(boot, [0.025, 0.975])
    if low <= estimate <= high:
        verdict = "met"
    elif b < low or a > high:
        verdict = "not met"
    else:
        verdict = "unresolved"
    return f"{estimate:.3f} [{a:.3f}, {b:.3f}] {verdict}"


def cluster_draws(n: int, seed: int = 0, size: int = BOOTSTRAP) -> np.ndarray:
    """``size`` bootstrap draws of ``n`` clusters, each as the clusters' multiplicities:
    ``(size, n)``, for :func:`cluster_verdict`."""
    draws = np.random.default_rng(seed).integers(0, n, (size, n))
    return np.stack([np.bincount(d, minlength=n) for d in draws])


# --------------------------------------------------------------------------- run records
#: How a raw run record is stored: compact JSON, gzip-compressed (the per-target arrays
#: that reports bootstrap over make plain JSON ten times larger).
RECORD_SUFFIX = ".json.gz"


def write_record(path: Path, record: dict) -> Path:
    """Write one run's raw record to ``path`` (which ends in :data:`RECORD_SUFFIX`).

    The bytes depend on the record alone (no timestamp in the gzip header), so an unchanged
    record rewrites to an unchanged file. Floats round-trip exactly through JSON.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(record, separators=(",", ":"), ensure_ascii=False)
    with path.open("wb") as raw, gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0) as f:
        f.write(text.encode("utf-8"))
    return path


def read_record(path: Path) -> dict:
    """One run record written by :func:`write_record`."""
    with gzip.open(path, "rt", encoding="utf-8") as f:
        return json.load(f)


def record_paths(folder: Path, pattern: str = "*") -> list[Path]:
    """The run records in ``folder`` whose name (before the suffix) matches ``pattern``,
    sorted by name."""
    return sorted(folder.glob(pattern + RECORD_SUFFIX))


# --------------------------------------------------------------------------- peers
#: The classical forecasters of ``forecasters.py`` and ``fold_coverage.py``.
PEERS = ("AutoARIMA", "AutoETS", "AutoTheta", "ARAR", "Naive")


def make_peer(name: str, sp: int):
    """A classical forecaster; the seasonal models get ``sp`` only for monthly data."""
    from sktime.forecasting.arar import ARARForecaster
    from sktime.forecasting.naive import NaiveForecaster
    from sktime.forecasting.statsforecast import (
        StatsForecastAutoARIMA,
        StatsForecastAutoETS,
        StatsForecastAutoTheta,
    )

    season = sp if sp == 12 else 1
    return {
        "AutoARIMA": lambda: StatsForecastAutoARIMA(sp=season),
        "AutoETS": lambda: StatsForecastAutoETS(season_length=season),
        "AutoTheta": lambda: StatsForecastAutoTheta(season_length=season),
        "ARAR": ARARForecaster,
        "Naive": lambda: NaiveForecaster(strategy="last", sp=sp),
    }[name]()


def splitter(y: pd.Series, initial: int, step: int, horizon: int, folds: int | None = None):
    """The expanding window of the backtests: every fold, or only the last ``folds``."""
    from sktime.split import ExpandingWindowSplitter

    n_folds = (len(y) - initial - horizon) // step + 1
    if folds is not None:  # the last folds (quick runs)
        initial += (n_folds - folds) * step
    return ExpandingWindowSplitter(
        fh=list(range(1, horizon + 1)), initial_window=initial, step_length=step
    )


def backtest(forecaster, y: pd.Series, initial: int, step: int, horizon: int, folds=None):
    """sktime ``evaluate`` on an expanding window; per-fold scores and the total run time."""
    from sktime.forecasting.model_evaluation import evaluate
    from sktime.performance_metrics.forecasting import MeanAbsoluteError
    from sktime.performance_metrics.forecasting.probabilistic import CRPS, EmpiricalCoverage

    cv = splitter(y, initial, step, horizon, folds)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = evaluate(
            forecaster,
            cv=cv,
            y=y,
            scoring=[CRPS(), MeanAbsoluteError(), EmpiricalCoverage(coverage=0.9)],
            error_score="raise",
        )
    return pd.DataFrame(
        {
            "fold": np.arange(len(r)),
            "crps": r["test_CRPS"].to_numpy(float),
            "mae": r["test_MeanAbsoluteError"].to_numpy(float),
            "cov90": r["test_EmpiricalCoverage"].to_numpy(float),
            "seconds": (r["fit_time"] + r["pred_time"]).to_numpy(float),
        }
    )
