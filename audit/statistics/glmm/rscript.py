"""Run ``lme4::glmer`` through ``Rscript`` on a data frame (live comparisons and benchmarks).

This is the light alternative to the pymer4 backend: no Python-R bridge, one R process per fit,
timings measured inside R (so R's start-up is excluded).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
from pathlib import Path

import pandas as pd

from judge_transfer_audit.core.errors import MissingDependencyError

GLMER_SCRIPT = Path(__file__).with_name("fit_glmer.R")


def rscript_available() -> bool:
    """True when ``Rscript`` is on PATH and lme4 + jsonlite load."""
    exe = shutil.which("Rscript")
    if exe is None:
        return False
    probe = subprocess.run(
        [exe, "-e", "quit(status = !all(sapply(c('lme4','jsonlite'), requireNamespace, quietly = TRUE)))"],
        capture_output=True,
        timeout=120,
    )
    return probe.returncode == 0


def run_glmer(
    data: pd.DataFrame, formula: str, *, profile: bool = False, timeout: float = 7200.0, tol_pwrss: float | None = None
) -> dict:
    """Fit ``formula`` with glmer on ``data`` and return the JSON written by ``fit_glmer.R``
    (``tol_pwrss``: ``glmerControl(tolPwrss = ...)``, glmer's default 1e-7 when None).

    Grouping columns must be strings (they become R factors). Raises
    :class:`judge_transfer_audit.core.errors.MissingDependencyError` when Rscript is not installed.
    """
    exe = shutil.which("Rscript")
    if exe is None:
        raise MissingDependencyError(
            "Rscript is not on PATH; the glmer comparison needs R with lme4 and jsonlite "
            "(Debian: apt-get install --no-install-recommends r-base-core r-cran-lme4 r-cran-jsonlite)"
        )
    with tempfile.TemporaryDirectory() as tmp:
        csv = Path(tmp) / "data.csv"
        out = Path(tmp) / "out.json"
        data.to_csv(csv, index=False, float_format="%.17g")
        proc = subprocess.run(
            [exe, str(GLMER_SCRIPT), str(csv), str(out), formula, "1" if profile else "0"]
            + ([] if tol_pwrss is None else [f"{tol_pwrss:g}"]),
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        if proc.returncode != 0 or not out.exists():
            raise MissingDependencyError(f"Rscript failed (exit {proc.returncode}): {proc.stderr.strip()[-2000:]}")
        return json.loads(out.read_text())
