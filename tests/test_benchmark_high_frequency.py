"""The pure helpers of ``benchmarks/high_frequency.py``: its CRPS and coverage, and its fixed
splits (the reported ones must stay exactly where its docstring puts them)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import integrate
from scipy.stats import norm

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # the benchmarks package lives beside the library, uninstalled
    sys.path.insert(0, str(ROOT))

from benchmarks import high_frequency as hf  # noqa: E402


def test_quantile_crps_is_twice_the_mean_pinball_loss_over_the_19_levels():
    rng = np.random.default_rng(0)
    y = rng.normal(size=(3, 4))
    y[0, 0] = np.nan  # not observed: left out, not counted as zero
    q = np.sort(rng.normal(size=(3, 4, 19)), axis=-1)
    total, count = 0.0, 0
    for i in range(3):
        for j in range(4):
            if np.isnan(y[i, j]):
                continue
            for k, level in enumerate(np.arange(1, 20) / 20):
                u = y[i, j] - q[i, j, k]
                total += u * level if u >= 0 else u * (level - 1)
                count += 1
    assert hf.quantile_crps(y, q) == pytest.approx(2 * total / count, rel=1e-12)


def test_quantile_crps_tends_to_the_normals_closed_form_crps_on_dense_levels():
    # The integral of twice the pinball loss over all levels is the CRPS: on dense levels the
    # definition meets the Normal's closed form (Gneiting & Raftery 2007, eq. 21).
    y, mu, sd = 0.7, 0.1, 1.3
    levels = (np.arange(20_000) + 0.5) / 20_000
    q = norm.ppf(levels, mu, sd)
    z = (y - mu) / sd
    closed = sd * (z * (2 * norm.cdf(z) - 1) + 2 * norm.pdf(z) - 1 / np.sqrt(np.pi))
    assert hf.quantile_crps(np.array(y), q, levels) == pytest.approx(closed, rel=1e-4)
    # and the 19 levels the benchmark scores stay within a few per cent of it
    assert hf.quantile_crps(np.array(y), norm.ppf(hf.CRPS_LEVELS, mu, sd)) == pytest.approx(
        closed, rel=0.05
    )
    # The CRPS as the integral of the squared CDF difference, by quadrature.
    squared = integrate.quad(lambda x: (norm.cdf(x, mu, sd) - (x >= y)) ** 2, -20, 20, points=[y])
    assert closed == pytest.approx(squared[0], rel=1e-6)


def test_coverage_counts_the_central_intervals_at_the_benchmarks_levels():
    y = np.array([0.0, 1.0, 2.0, np.nan])
    # Quantiles of the Uniform(0, 2) at LEVELS: 2 * level.
    q = np.broadcast_to(2 * hf.LEVELS, (4, len(hf.LEVELS)))
    assert hf.interval_coverage(y, q, 0.5) == pytest.approx(1 / 3)  # only 1.0 lies in [0.5, 1.5]
    assert hf.interval_coverage(y, q, 0.95) == pytest.approx(1 / 3)  # [0.05, 1.95]


def test_taylor_splits_report_the_last_20_days_and_ablate_28_days_before():
    report, ablation = hf.taylor_task(False), hf.taylor_task(True)
    assert len(report.times) == 4032 and report.times[0] == pd.Timestamp("2000-06-05")
    np.testing.assert_array_equal(report.origins, 4032 - 48 * np.arange(20, 0, -1))
    assert report.horizon == 48 and (report.day, report.week) == (48, 336)
    assert ablation.origins[-1] == report.origins[0] - 28 * 48
    assert len(ablation.origins) == 20 and np.all(np.diff(ablation.origins) == 48)


def test_bank_calls_splits_at_the_close_of_business_days_and_hours_of_the_next():
    day, hour = hf.bank_task("day", False), hf.bank_task("hour", False)
    times = day.times
    assert len(times) == 27716 and (day.day, day.week, day.horizon) == (169, 845, 169)
    # origins at a day's close, the targets the whole next business day, the last day last
    assert set(times[day.origins - 1].strftime("%H:%M")) == {"21:00"}
    assert set(times[day.origins].strftime("%H:%M")) == {"07:00"}
    assert day.origins[-1] + 169 == len(times) and len(day.origins) == 20
    assert day.levy_horizon == pd.Timedelta("3D")  # a Friday's close to Monday's
    # hour ahead: 12 steps from 9, 12, 15, 18 h in turn on the same forecast days
    assert hour.horizon == 12 and hour.levy_horizon == pd.Timedelta("1h")
    origin_times = times[hour.origins - 1]
    assert list(origin_times.hour[:4]) == [9, 12, 15, 18] and set(origin_times.minute) == {0}
    np.testing.assert_array_equal(origin_times.normalize(), times[day.origins].normalize())
    # ablation: its last origin 28 days (or the last business day before) ahead of the first
    ablation = hf.bank_task("day", True)
    gap = times[day.origins[0] - 1].normalize() - times[ablation.origins[-1] - 1].normalize()
    assert pd.Timedelta("28D") <= gap < pd.Timedelta("32D") and len(ablation.origins) == 20


def test_weather_splits_report_december_temperature_and_ablate_june_dew_point():
    report, ablation = hf.weather_task(False), hf.weather_task(True)
    assert sorted(report.series) == ["EWR", "JFK", "LGA"]
    assert report.series["EWR"].name == "temp" and ablation.series["EWR"].name == "dewp"
    starts = report.times[report.origins]
    # The records end at 2013-12-30 18:00: the last full day of targets is the 29th.
    assert report.times[-1] == pd.Timestamp("2013-12-30 18:00")
    assert set(starts.hour) == {0} and starts[-1] == pd.Timestamp("2013-12-29")
    june = ablation.times[ablation.origins]
    assert june[0] == pd.Timestamp("2013-06-11") and june[-1] == pd.Timestamp("2013-06-30")
    panel = report.levy_y(0, 48)  # what LevyForecaster gets: a pd-multiindex panel
    assert panel.index.names == ["series", "time"] and panel.shape == (3 * 48, 1)


def test_a_rerun_row_replaces_its_task_and_method_and_keeps_the_others(tmp_path):
    path = tmp_path / "high_frequency.csv"
    row = {"mae": 1.0, "crps": 1.0, "commit": "a", "levy_params": ""}
    hf.merge_row(path, {"task": "taylor", "method": "MSTL", **row})
    hf.merge_row(path, {"task": "taylor", "method": hf.LEVY, **row})
    hf.merge_row(path, {"task": "bank_calls day", "method": "MSTL", **row})
    hf.merge_row(path, {"task": "taylor", "method": hf.LEVY, **row, "mae": 2.0, "commit": "b"})
    frame = pd.read_csv(path, keep_default_na=False)
    assert list(zip(frame.task, frame.method, frame.mae, frame.commit, strict=True)) == [
        ("bank_calls day", "MSTL", 1.0, "a"),
        ("taylor", hf.LEVY, 2.0, "b"),
        ("taylor", "MSTL", 1.0, "a"),
    ]


def test_origin_sums_add_up_to_the_scores_of_every_forecast():
    rng = np.random.default_rng(1)
    y = rng.normal(size=(5, 2, 7))
    y[1, 0, :3] = np.nan  # unobserved targets count nowhere
    q = np.sort(rng.normal(size=(5, 2, 7, len(hf.LEVELS))), axis=-1)
    point = q[..., 10]
    whole, sums = hf.scores(y, point, q), hf.origin_sums(y, point, q)
    n = np.asarray(sums["n"])
    assert n.tolist() == [14, 11, 14, 14, 14]
    assert np.sum(sums["ae"]) / n.sum() == pytest.approx(whole["mae"], abs=1e-5)
    assert np.sum(sums["crps"]) / n.sum() == pytest.approx(whole["crps"], abs=1e-5)
    for c in hf.COVERAGES:
        name = f"cov{round(100 * c)}"
        assert np.sum(sums[name]) / n.sum() == pytest.approx(whole[name], abs=1e-12)


def _row(method, crps_per_origin, n=10):
    crps = np.asarray(crps_per_origin, float)
    hits = np.full(crps.size, n / 2)
    sums = {"n": [n] * crps.size, "ae": (crps * n).tolist(), "crps": (crps * n).tolist()}
    sums.update({f"cov{round(100 * c)}": hits.tolist() for c in hf.COVERAGES})
    return {
        "task": "t",
        "method": method,
        "mae": crps.mean(),
        "crps": crps.mean(),
        **{f"cov{round(100 * c)}": 0.5 for c in hf.COVERAGES},
        "cpu_s": 1.0,
        "per_origin": json.dumps(sums),
    }


def test_bars_resample_whole_origins_and_resolve_only_what_the_origins_can():
    peer = [1.0] * 20
    # Worse on every origin: the whole interval misses "≤ the best peer's".
    worse = pd.DataFrame([_row(hf.LEVY, [1.2] * 20), _row("MSTL", peer)])
    cell = hf.bars(worse).loc[0, "CRPS / best peer"]
    assert cell == "1.200 [1.200, 1.200] not met"
    # Worse on average by one bad origin in twenty: within the noise of twenty origins.
    one_bad = pd.DataFrame([_row(hf.LEVY, [0.98] * 19 + [2.0]), _row("MSTL", peer)])
    estimate, rest = hf.bars(one_bad).loc[0, "CRPS / best peer"].split(" ", 1)
    assert float(estimate) == pytest.approx((0.98 * 19 + 2) / 20, abs=1e-3)
    assert rest.endswith("unresolved")
    # Half of every origin's targets inside any interval: 50 % met, 90 % not.
    bars = hf.bars(worse)
    assert bars.loc[0, "cov50"].endswith(" met") and bars.loc[0, "cov90"].endswith("not met")
    # A row without its per-origin sums (an older run) reads pass / FAIL.
    old = worse.assign(per_origin="")
    assert hf.bars(old).loc[0, "CRPS / best peer"] == "1.200 FAIL"
