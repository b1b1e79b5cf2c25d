"""Reference values for Krippendorff's alpha (run: python make_reference.py).

Independent implementation: the ``krippendorff`` package (krippendorff.alpha), on
coders x units reliability matrices written by this script (seeded) plus Krippendorff's
own worked example (Krippendorff 2011, "Computing Krippendorff's alpha-reliability",
4 coders x 12 units, nominal alpha = 0.743, published).
"""

import json
import platform

import krippendorff
import numpy as np
import pandas as pd

rng = np.random.default_rng(20261130)
nan = np.nan
# Krippendorff (2011), section C: 4 observers, 12 units, values 1-5, '*' = missing.
worked = np.array(
    [
        [1, 2, 3, 3, 2, 1, 4, 1, 2, nan, nan, nan],
        [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, nan, 3],
        [nan, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, nan],
        [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, nan],
    ]
)
matrices = {"worked_example": worked}
for name, (coders, units, k, miss) in {
    "likert_5x97": (5, 97, 5, 0.0),
    "likert_missing_7x40": (7, 40, 5, 0.25),
    "three_category_7x60": (7, 60, 3, 0.05),
    "continuous_4x50": (4, 50, None, 0.1),
}.items():
    if k is None:
        x = rng.normal(size=(coders, units)) + rng.normal(size=units)
    else:
        latent = rng.normal(size=units)
        x = np.clip(np.round(latent + rng.normal(scale=1.2, size=(coders, units)) + (k + 1) / 2), 1, k)
    x[rng.random(x.shape) < miss] = nan
    matrices[name] = x

out = {
    "krippendorff": krippendorff.__version__ if hasattr(krippendorff, "__version__") else "0.9.0",
    "python": platform.python_version(),
    "numpy": np.__version__,
    "values": {},
}
for name, x in matrices.items():
    pd.DataFrame(x).to_csv(f"input_{name}.csv", index=False)
    levels = ["nominal", "ordinal", "interval"] + (["ratio"] if np.nanmin(x) > 0 else [])
    out["values"][name] = {
        lvl: float(krippendorff.alpha(reliability_data=x, level_of_measurement=lvl)) for lvl in levels
    }
with open("reference.json", "w") as fh:
    json.dump(out, fh, indent=2)
print(json.dumps(out, indent=2))
