"""Pooled-over-matchups alpha references for judge_transfer_audit.statistics.judge.agreement (run from this directory
after make_inputs_pooled.py).

Each matchup's (case's) alpha from the ``krippendorff`` package, as in make_reference_alpha.py;
its expected disagreement D_e = (n^2 - sum_c n_c^2) / (n - 1) counted here from the pairable
values (n values, n_c of category c), its observed D_o = (1 - alpha) D_e; pooled alpha =
1 - sum D_o / sum D_e (expected disagreement within each matchup). Raw agreements pool counts
and do not depend on the orientation: explicit loops over reader pairs and reader votes.
"""

import itertools

import krippendorff
import numpy as np
import pandas as pd

v = pd.read_csv("votes_pooled.csv")
j = pd.read_csv("judge_pooled.csv")


def expected(values):
    values = np.asarray(values)
    n = values.size
    return (n**2 - sum(np.sum(values == c) ** 2 for c in (0, 1, 2))) / (n - 1)


d_o = dict(h=0.0, jh=0.0)
d_e = dict(h=0.0, jh=0.0)
agree = total = agree_jh = total_jh = 0
for case, vc in v.groupby("case"):
    jc = j[j.case == case].set_index("unit")["judge"]
    counts = vc.groupby("unit").size()
    vk = vc[vc.unit.isin(counts[counts >= 2].index)]
    wide = vk.pivot(index="reader", columns="unit", values="category").astype(float)
    stacked = np.array([(jc[u], c) for u, c in zip(vk.unit, vk.category) if jc[u] >= 0], dtype=float).T
    for key, data, values in (("h", wide.to_numpy(), vk.category), ("jh", stacked, stacked.ravel())):
        e = expected(values)
        d_e[key] += e
        d_o[key] += (1.0 - krippendorff.alpha(reliability_data=data, level_of_measurement="nominal")) * e
    for _, g in vk.groupby("unit"):
        for a, b in itertools.permutations(g.category.tolist(), 2):
            agree += a == b
            total += 1
    agree_jh += int(np.sum(stacked[0] == stacked[1]))
    total_jh += stacked.shape[1]
pd.DataFrame(
    [
        dict(
            alpha_human=1 - d_o["h"] / d_e["h"],
            alpha_judge_human=1 - d_o["jh"] / d_e["jh"],
            raw_human=agree / total,
            raw_judge_human=agree_jh / total_jh,
        )
    ]
).to_csv("alpha_krippendorff_pooled.csv", index=False, float_format="%.17g")
