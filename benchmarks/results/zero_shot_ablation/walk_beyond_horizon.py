"""Scratch diagnosis (session 23): 90 % coverage of 200 fresh random walks at 5, 10, 20 and 40
steps ahead, zero-shot after pretraining on the six walks of tests/test_forecaster.py
(max_horizon=10). Run from the repository root with the library to check:
``OMP_NUM_THREADS=1 python benchmarks/results/zero_shot_ablation/walk_beyond_horizon.py``."""

import sys

import numpy as np
import pandas as pd

sys.path.insert(0, ".")
sys.path.insert(0, "tests")
from test_forecaster import FAST, random_walk

from levy_sklearn.forecaster import LevyForecaster

panel = pd.concat({f"w{i}": random_walk(seed=i) for i in range(6)}).to_frame("y")
f = LevyForecaster(context_length=20, max_horizon=10, **FAST).pretrain(panel)
print("growth", getattr(f.pretrained_calibration_, "growth", "rw"))
fh = [5, 10, 20, 40]
hits = {h: [] for h in fh}
for s in range(200):
    y = random_walk(n=340, seed=5000 + s).interpolate()
    hist, fut = y.iloc[:300], y.iloc[300:]
    g = f.clone().fit(hist)
    iv = g.predict_interval(fh=fh, coverage=0.9).to_numpy()
    for j, h in enumerate(fh):
        v = fut.iloc[h - 1]
        hits[h].append(iv[j, 0] <= v <= iv[j, 1])
print({h: round(np.mean(v), 3) for h, v in hits.items()})
