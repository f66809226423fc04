"""The pure helpers of ``benchmarks/scale.py``: its test of whether pretraining time falls
from one cohort size to the next, and the bars it writes from several seeds a size."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # the benchmarks package lives beside the library, uninstalled
    sys.path.insert(0, str(ROOT))

from benchmarks import scale  # noqa: E402


def _run(patients: int, seed: int, seconds: float, peak_mib: float = 700.0) -> dict:
    mib = 2.0**20
    return {
        "patients": patients,
        "seed": seed,
        "rows": 300 * patients,
        "raw_bytes": 0.01 * mib * patients,
        "disk_bytes": 0.005 * mib * patients,
        "peak_bytes": peak_mib * mib,
        "rss_before_bytes": 380 * mib,
        "added_bytes": (peak_mib - 380) * mib,
        "first_step_seconds": 1.0,
        "rss_at_first_step_bytes": 520 * mib,
        "networks": 6,
        "steps": 1200,
        "step_cpu_ms": 36.0,
        "within_step_cpu_ms": 25.0,
        "seconds": seconds,
        "cpu_seconds": seconds,
        "stopped_after": None,
    }


def test_a_fall_counts_where_welchs_test_finds_the_later_size_faster():
    # The rule (a drop beyond twice the standard error of the difference of the means) is
    # Welch's t statistic above 2: checked against scipy's on many random pairs.
    rng = np.random.default_rng(0)
    for _ in range(200):
        a = 98 + rng.normal(size=3)
        b = 98 + rng.normal(loc=rng.uniform(-3, 1), size=3)
        t = stats.ttest_ind(a, b, equal_var=False).statistic
        assert scale.falls(list(a), list(b)) == (t > 2)


@pytest.mark.parametrize(
    ("earlier", "later", "expected"),
    [([100.0], [99.9], True), ([100.0], [100.1], False), ([100.0, 100.2], [99.9], True)],
)
def test_with_one_seed_any_fall_counts(earlier, later, expected):
    assert scale.falls(earlier, later) is expected


def test_bars_read_each_sizes_mean_over_its_seeds():
    flat = [(97.7, 97.6), (99.1, 98.9), (98.0, 98.4)]  # 200 against 1,000 patients
    sizes = (200, 1000)
    runs = [_run(n, s, t) for s, pair in enumerate(flat) for n, t in zip(sizes, pair, strict=True)]
    runs += [_run(10_000, 0, 108.0, peak_mib=900.0)]
    text = "\n".join(scale.bars(runs))
    assert "never falls beyond the seeds' noise" not in text  # 10,000 ran one seed
    assert "monotone." in text and "falls" not in text.replace("never falls", "")
    assert "200: 98.3 s" in text and "1,000: 98.3 s" in text
    # Memory: the means over seeds, beyond the raw data (0.01 MiB a patient).
    assert f"= {(900 - 100) / (700 - 10):.2f}" in text

    seed_zero = [r for r in runs if r["seed"] == 0 and r["patients"] < 10_000]
    assert "**falls** at 1,000" in "\n".join(scale.bars(seed_zero))  # 97.7 then 97.6 s
