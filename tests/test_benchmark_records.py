"""The benchmarks' raw run records: compact, exact, and only what the reports read.

Generated reports are rebuilt from the records in ``benchmarks/results`` by one command each,
so the records must round-trip exactly and the folder must hold data, not code.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # the benchmarks package lives beside the library, uninstalled
    sys.path.insert(0, str(ROOT))

from benchmarks import _common  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results"


def test_a_run_record_round_trips_exactly_and_rewrites_to_the_same_bytes(tmp_path):
    values = np.random.default_rng(0).normal(size=50).tolist()
    record = {"label": "x", "created": "2026-12-06T00:00:00+00:00", "crps": values}
    path = _common.write_record(tmp_path / f"x{_common.RECORD_SUFFIX}", record)
    assert _common.read_record(path) == record  # every float bit for bit
    first = path.read_bytes()
    _common.write_record(path, _common.read_record(path))
    assert path.read_bytes() == first  # no timestamp in the file: a rewrite changes nothing
    assert _common.record_paths(tmp_path) == [path]


def test_the_zero_shot_report_reads_the_newest_run_of_each_panel():
    from benchmarks.zero_shot import newest_per_panel

    old = {"created": "1", "panels": {"theoph": {}, "vitals": {}}}
    mid = {"created": "2", "panels": {"vitals": {}}}
    new = {"created": "3", "panels": {"theoph": {}}}
    assert newest_per_panel([old, mid, new]) == [mid, new]
    assert newest_per_panel([old]) == [old]


def test_benchmark_results_hold_no_code_and_stay_small():
    files = [p for p in RESULTS.rglob("*") if p.is_file()]
    assert not [p.name for p in files if p.suffix in (".py", ".patch")]
    assert not [p.name for p in files if p.suffix == ".json"]  # records are .json.gz
    assert sum(p.stat().st_size for p in files) <= 20 * 2**20
