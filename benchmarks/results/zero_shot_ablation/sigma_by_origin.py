"""Per forecast origin, how many origins with two or more targets have a later target with a
smaller calibrated sigma, per panel of each run file given::

    python benchmarks/results/zero_shot_ablation/sigma_by_origin.py \
        benchmarks/results/zero_shot_ablation/head.json
"""

import collections
import json
import sys

import numpy as np

for path in sys.argv[1:]:
    d = json.load(open(path))
    out = []
    for panel, seeds in d["panels"].items():
        viol = tot = 0
        for res in seeds.values():
            t = res["targets"]
            s = res["methods"]["Levy"]["sigma"]
            g = collections.defaultdict(list)
            for i, (sub, k, ch) in enumerate(zip(t["subject"], t["k"], t["channel"], strict=True)):
                g[(sub, k, ch)].append((t["lead_h"][i], s[i]))
            for v in g.values():
                if len(v) < 2:
                    continue
                v.sort()
                tot += 1
                sig = np.array([x[1] for x in v])
                viol += bool((np.diff(sig) < -1e-9).any())
        out.append(f"{panel} {viol}/{tot}")
    print(path.split("/")[-1], "; ".join(out))
