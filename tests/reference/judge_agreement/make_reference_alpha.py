"""Alpha and raw-agreement references for judge_transfer_audit.statistics.judge.agreement (run from this directory).

Human-human alpha: the ``krippendorff`` package (nominal) on the readers x units reliability
matrix of the units with at least two votes. Judge-human alpha: the package on the two-coder
matrix (judge, reader vote), one column per reader vote on those units with a judge verdict.
Raw agreements by explicit loops over reader pairs and reader votes.
"""

import importlib.metadata
import itertools

import krippendorff
import numpy as np
import pandas as pd

v = pd.read_csv("votes.csv")
j = pd.read_csv("judge.csv")
rows = []
for case, vc in v.groupby("case"):
    jc = j[j.case == case].set_index("unit")["judge"]
    counts = vc.groupby("unit").size()
    keep = counts[counts >= 2].index
    vk = vc[vc.unit.isin(keep)]
    wide = vk.pivot(index="reader", columns="unit", values="category").astype(float)
    alpha_h = krippendorff.alpha(reliability_data=wide.to_numpy(), level_of_measurement="nominal")
    stacked = [(jc[u], c) for u, c in zip(vk.unit, vk.category) if jc[u] >= 0]
    alpha_jh = krippendorff.alpha(reliability_data=np.array(stacked, dtype=float).T, level_of_measurement="nominal")
    agree = total = 0
    for _, g in vk.groupby("unit"):
        for a, b in itertools.permutations(g.category.tolist(), 2):
            agree += a == b
            total += 1
    raw_jh = float(np.mean([a == b for a, b in stacked]))
    rows.append(
        dict(
            case=case, alpha_human=alpha_h, alpha_judge_human=alpha_jh, raw_human=agree / total, raw_judge_human=raw_jh
        )
    )
pd.DataFrame(rows).to_csv("alpha_krippendorff.csv", index=False, float_format="%.17g")
with open("session_python.txt", "w") as fh:
    fh.write(
        f"krippendorff {importlib.metadata.version('krippendorff')}\nnumpy {np.__version__}\npandas {pd.__version__}\n"
    )
