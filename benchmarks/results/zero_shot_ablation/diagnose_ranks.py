"""Scratch diagnosis (session 21), not a benchmark: the scores of the pretrained calibration's
held-out forecasts by lead and by the target's rank among its window's targets (Remifentanil
seed 10). Spies on ``calibrate``. Run from the repository root in the peers environment::

    OMP_NUM_THREADS=2 PYTHONPATH=. python \\
        benchmarks/results/zero_shot_ablation/diagnose_ranks.py
"""

import warnings

import numpy as np
import pandas as pd

import benchmarks.zero_shot as Z
import levy_sklearn._series_training as ST
import levy_sklearn.uncertainty as U
from levy_sklearn import LevyForecaster

warnings.filterwarnings("ignore")

cap = []
orig = U.calibrate


def spy(parts, n):
    cap.append(parts)
    return orig(parts, n)


ST.calibrate = spy
U.calibrate = spy
seed = 10
panel = Z.load_panels(seed, ["remifentanil"])[0]
tr, te = Z.split_subjects(panel.frame, seed)
tp = panel.frame.loc[tr]
tp = tp[tp.notna().any(axis=1)]
f = LevyForecaster(**Z.LEVY_PARAMS, random_state=seed)
f.pretrain(tp)
cal = f.pretrained_calibration_
parts = cap[-1]
rows = []
for p in parts:
    y, m, s, ch, lead, w, lev, org = p[:8]
    wt = cal.mean_weight_at(ch, lead)
    u = cal.level_weight_at(ch, lead)
    z = np.abs(y - (wt * m + u * lev)) / s
    d = pd.DataFrame(dict(z=z, lead=lead, org=org))
    d["rank"] = d.groupby("org").lead.rank(method="first")
    rows.append(d)
d = pd.concat(rows)
d["lb"] = pd.cut(d.lead, [0, 2, 5, 12, 30, 1e9])
d["rb"] = pd.cut(d["rank"], [0, 1, 3, 6, 100])
print(
    d.pivot_table(index="lb", columns="rb", values="z", aggfunc="median", observed=True).round(2)
)
print(d.pivot_table(index="lb", columns="rb", values="z", aggfunc="size", observed=True))
