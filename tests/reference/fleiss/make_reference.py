"""Reference values for Fleiss' kappa (run: python make_reference.py).

Independent implementation: statsmodels.stats.inter_rater.fleiss_kappa (method="fleiss").
Inputs: wikipedia_example.csv (the worked example of the Wikipedia article "Fleiss' kappa":
10 subjects x 14 raters x 5 categories; published P-bar = 0.378, P_e = 0.213, kappa = 0.210)
and random_counts.csv (seeded random balanced count tables, written by this script).
R's irr::kappam.fleiss is not packaged for Debian bookworm (r-cran-irr absent), hence statsmodels.
"""

import json
import platform

import numpy as np
import pandas as pd
import statsmodels
from statsmodels.stats.inter_rater import fleiss_kappa

rng = np.random.default_rng(20261130)
tables = []
for t, (n_units, n_raters, k) in enumerate([(30, 7, 3), (97, 5, 5), (12, 3, 2), (60, 7, 3)]):
    probs = rng.dirichlet(np.ones(k))
    for u in range(n_units):
        counts = rng.multinomial(n_raters, probs)
        tables.append({"table": t, "unit": u, **{f"c{j}": int(c) for j, c in enumerate(counts)}})
random_counts = pd.DataFrame(tables).fillna(0).astype(int)
random_counts.to_csv("random_counts.csv", index=False)

out = {"statsmodels": statsmodels.__version__, "python": platform.python_version(), "values": {}}
wiki = pd.read_csv("wikipedia_example.csv")
out["values"]["wikipedia"] = float(fleiss_kappa(wiki.drop(columns="subject").to_numpy(), method="fleiss"))
for t, sub in random_counts.groupby("table"):
    counts = sub.filter(like="c").to_numpy()  # unused categories are zero columns
    out["values"][f"random_{t}"] = float(fleiss_kappa(counts, method="fleiss"))
with open("reference.json", "w") as fh:
    json.dump(out, fh, indent=2)
print(json.dumps(out, indent=2))
