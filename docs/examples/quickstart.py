# %% [markdown]
# # judge-audit from Python: a notebook-style walk-through
#
# Run it as a script (`python docs/examples/quickstart.py`) or cell by cell in Jupyter/VS Code.
# The test suite executes it (tests/audit/test_api.py), so every line here works.

# %%
import tempfile
from pathlib import Path

import pandas as pd

import judge_transfer_audit as audit

fixture = Path(__file__).resolve().parents[2] / "fixtures" / "deployment"

# %% [markdown]
# Inputs may be paths or DataFrames in any layout of docs/data-contract.md. Here the judge's
# scores come from a DataFrame (as they would straight out of a scoring loop), the human votes
# from a file.

# %%
judge = pd.read_csv(fixture / "judge.csv")
result = audit.run(
    judge, fixture / "humans.csv", pairs=fixture / "pairs.csv", seed=0, uncertainty=False, readers=False, surface=False
)
print(result.status.value, "-", result.verdict)

# %% [markdown]
# The transfer table: one tidy row per matchup x criterion.

# %%
cells = result.to_frame()
print(cells[["matchup", "criterion", "n_pairs", "n_readers"]].head())

# %% [markdown]
# Every table of the result by name; in Jupyter, `result` alone displays as an HTML summary.

# %%
print(sorted(result.frames()))
print(result._repr_html_()[:60], "...")

# %% [markdown]
# Each optional section is `Computed(payload)`, `Skipped(reason)` or `Failed(reason, error)`
# (docs/api.md); the agreement, reader baseline and judge pairs are typed tables, each a DataFrame
# one `to_frame()` away.

# %%
from judge_transfer_audit.model.section_result import Computed  # noqa: E402  (a notebook imports where it needs)

for name in ("readers", "judge_agreement"):
    section = getattr(result, name)
    shown = type(section.payload).__name__ if isinstance(section, Computed) else section.reason
    print(f"{name}: {type(section).__name__} ({shown})")
print(result.agreement.to_frame()[["matchup", "criterion", "krippendorff_alpha"]].head(3))

# %% [markdown]
# Write the same files `audit run` writes, and read the result back later without recomputing.

# %%
out = Path(tempfile.mkdtemp(prefix="judge-audit-example-"))
paths = audit.write(result, out, html=False)
again = audit.load_result(paths["result"])
print("round trip:", again.status == result.status and len(again.cells) == len(result.cells))
print("wrote", sorted(p.name for p in paths.values()))
