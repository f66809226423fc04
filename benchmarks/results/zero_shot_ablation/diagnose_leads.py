"""Scratch diagnosis (session 21), not a benchmark: Remifentanil seed 10, the pretrained
calibration (centres, 50/90 % factors) and the test subjects' |y - mean| / sigma and sigma by
lead. Reads private forecaster internals. Run from the repository root in the peers
environment::

    OMP_NUM_THREADS=2 PYTHONPATH=. python \\
        benchmarks/results/zero_shot_ablation/diagnose_leads.py
"""

import warnings

import numpy as np
import pandas as pd

import benchmarks.zero_shot as Z
from levy_sklearn import LevyForecaster

warnings.filterwarnings("ignore")

seed = 10
panel = Z.load_panels(seed, ["remifentanil"])[0]
train_ids, test_ids = Z.split_subjects(panel.frame, seed)
tp = panel.frame.loc[train_ids]
tp = tp[tp.notna().any(axis=1)]
f = LevyForecaster(**Z.LEVY_PARAMS, random_state=seed)
f.pretrain(tp)
cal = f.pretrained_calibration_
print("centres(h)", cal.centres, "edges", cal.edges)
print("n", cal.n_scores)
for c in (0.5, 0.9):
    print(c, cal.quantile(c, np.zeros(cal.n_bins, int), cal.centres).round(3))
print("w", cal.mean_weight, "u", cal.level_weight, "m2", cal.second_moment.round(3))
rows = []
for s in test_ids:
    ser = Z.subject_series(panel.frame, s)
    for k in Z.origins(len(ser), panel.min_history):
        h, fu = ser.iloc[:k], ser.iloc[k : k + Z.N_AHEAD]
        fh = pd.DatetimeIndex(fu.index)
        f.fit(h)
        from sktime.forecasting.base import ForecastingHorizon as FH

        r, mean, var, sd, lead, ch = f._moments(FH(fh, is_relative=False))
        y = fu.to_numpy(float)
        for i in range(len(fh)):
            rows.append(
                (
                    lead[i, 0],
                    abs(y[i, 0] - mean[i, 0]) / sd[i, 0],
                    sd[i, 0],
                    k,
                    i,
                    float(h.iloc[-1, 0]),
                )
            )
d = pd.DataFrame(rows, columns=["lead", "z", "sd", "k", "i", "last"])
d["bin"] = pd.cut(d.lead, [0, 2, 5, 12, 30, 1000])
print(d.groupby("bin").z.describe(percentiles=[0.5, 0.9]))
print(d.groupby("bin").i.value_counts().unstack())
d["steps_k"] = d.k
print(d.groupby("bin").sd.median())
d["kb"] = pd.cut(d.k, [0, 10, 20, 30, 60])
print(d.groupby(["kb"]).agg(z=("z", "median"), lead=("lead", "median"), n=("z", "size")))
