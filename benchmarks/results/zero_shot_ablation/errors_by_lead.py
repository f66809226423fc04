"""Scratch diagnosis (session 23): RMS error and RMS σ of LevyForecaster by lead (in time
units) in a zero-shot run file. Usage: ``python errors_by_lead.py RUN.json PANEL UNIT_HOURS``
(Quinidine: 72.42, its 3-day median spacing)."""

import json
import sys

import numpy as np

run, panel, unit = json.load(open(sys.argv[1])), sys.argv[2], float(sys.argv[3])
lead, err2, sig2 = [], [], []
for res in run["panels"][panel].values():
    targets, levy = res["targets"], res["methods"]["Levy"]
    lead += targets["lead_h"]
    err2 += list(np.subtract(targets["y"], levy["mean"]) ** 2)
    sig2 += list(np.square(levy["sigma"]))
lead, err2, sig2 = np.array(lead) / unit, np.array(err2), np.array(sig2)
edges = [0, 1, 2, 4, 8, 12, 24, 48, np.inf]
for lo, hi in zip(edges[:-1], edges[1:], strict=True):
    s = (lead > lo) & (lead <= hi)
    if s.any():
        rmse, rms_sigma = np.sqrt(err2[s].mean()), np.sqrt(sig2[s].mean())
        print(f"lead {lo}-{hi} units: n={s.sum()} rmse={rmse:.3f} rms sigma={rms_sigma:.3f}")
