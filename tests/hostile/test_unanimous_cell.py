"""A cell where every vote goes one way (separation) is fitted in the time of any other cell.

The constant-response profile stops at converged modes: a profile that runs PIRLS into its step
limit there makes the human-model step of this study (40 pairs x 5 readers) take 2.2 CPU-s against
0.2 without the unanimous cell (the shipped fixture with one unanimous cell: 4.7 CPU-s against
0.3). CPU time, not wall time, so that a loaded machine does not fail the test; the bound is 3x the
figure measured with the profile stopping at converged modes.
"""

from __future__ import annotations

import json

import pandas as pd

from tests.hostile.conftest import fast_args, run_cli
from tests.hostile.study import write_study


def test_a_unanimous_cell_is_decided_quickly(tmp_path, capsys):
    files = write_study(tmp_path / "in", n_pairs=40, n_readers=5)
    humans = pd.read_csv(files["humans"], dtype=str, keep_default_na=False)
    humans.loc[humans["criterion"] == "empathy", "choice"] = "sysA"
    humans.to_csv(files["humans"], index=False)
    out = tmp_path / "out"
    status, _, err = run_cli(fast_args(files, out, "--jobs", "1", "--no-html"), capsys, protect=files.values())
    assert status == 0, err
    cell = next(c for c in json.loads((out / "result.json").read_text())["cells"] if c["criterion"] == "empathy")
    glmm = cell["human"]["glmm"]
    assert glmm["separation"] is True and glmm["estimate"] == 1.0 and 0.9 < glmm["ci_low"] < 1.0
    tasks = json.loads((out / "timings.json").read_text())["tasks"]
    cpu = sum(t["cpu_seconds"] for t in tasks if t["task"] == "human GLMMs")
    assert cpu < 1.2, cpu
