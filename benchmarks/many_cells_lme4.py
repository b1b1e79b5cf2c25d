"""A many-cell study, side by side: our whole default audit against lme4 fitting the cells' GLMMs alone.

    python benchmarks/many_cells_lme4.py DIR            # DIR holds judge.csv and humans.csv
    JUDGE_AUDIT_DATASETS=../shared/datasets python benchmarks/many_cells_lme4.py --summeval

``--summeval`` converts the public SummEval ratings (480 cells: 120 matchups of 16 systems x 4
criteria, 3 experts) with ``../shared/datasets/convert.py`` into a temporary folder first. In one
run, on the same machine:

* **ours**: ``python -m judge_transfer_audit run judge.csv humans.csv --out OUT -q`` (every default
  section, report included), wall time and the child's CPU seconds;
* **glmer**: the cells' votes as the audit reads them (``judge_transfer_audit.inputs.load``: every
  matchup x criterion, each reader's decisive votes oriented to the focal system), written to one
  CSV; R then fits ``glmer(y ~ 1 + (1 | pair_id) + (1 | reader_id), family = binomial)`` to every
  cell in a loop, timed inside R (``system.time``, so R's start-up and the CSV read are not counted).

Printed: both times, the ratio, and the cells fitted. The audit computes far more than the GLMMs
(bootstraps, leave-one-reader-out, agreement, the report); the question is whether all of it costs
less than the one model lme4 users would fit per cell.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

R_SCRIPT = r"""
suppressMessages(library(lme4))
args <- commandArgs(trailingOnly = TRUE)
votes <- read.csv(args[1], stringsAsFactors = TRUE)
cells <- split(votes, votes$cell)
fitted <- 0L
failed <- 0L
t <- system.time(for (v in cells) {
  v <- droplevels(v)
  r <- tryCatch({
    glmer(y ~ 1 + (1 | pair_id) + (1 | reader_id), data = v, family = binomial)
    TRUE
  }, error = function(e) FALSE)
  if (r) fitted <- fitted + 1L else failed <- failed + 1L
})
cat(sprintf("%d %d %.3f %.3f\n", fitted, failed, t[["elapsed"]], t[["user.self"]] + t[["sys.self"]]))
"""


def _summeval(tmp: Path) -> Path:
    datasets = Path(os.environ.get("JUDGE_AUDIT_DATASETS", ROOT.parent / "shared" / "datasets")).resolve()
    convert = datasets / "convert.py"
    if not convert.is_file():
        raise SystemExit(f"--summeval needs {convert} (set JUDGE_AUDIT_DATASETS)")
    out = tmp / "converted"
    subprocess.run([sys.executable, str(convert), str(out)], cwd=datasets, check=True, capture_output=True)
    return out / "summeval"


def _cell_votes(data_dir: Path, out: Path) -> int:
    """Every cell's decisive votes (ties left out, as the GLMM reads them) in one CSV; the number of cells."""
    from judge_transfer_audit.inputs.load import load

    data = load(data_dir / "judge.csv", data_dir / "humans.csv")
    votes = data.votes.dropna(subset=["y"])
    votes = votes.assign(cell=votes["matchup"].astype(str) + "|" + votes["criterion"].astype(str))
    votes[["cell", "pair_id", "reader_id", "y"]].assign(y=lambda f: f["y"].astype(int)).to_csv(out, index=False)
    return votes["cell"].nunique()


def _ours(data_dir: Path, out: Path) -> tuple[float, float, int]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "judge_transfer_audit", "run", "judge.csv", "humans.csv", "--out", str(out), "-q"],
        cwd=data_dir,
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, done.returncode


def _glmer(votes_csv: Path, tmp: Path) -> tuple[int, int, float, float]:
    script = tmp / "fit_cells.R"
    script.write_text(R_SCRIPT)
    done = subprocess.run(["Rscript", str(script), str(votes_csv)], capture_output=True, text=True, check=True)
    fitted, failed, wall, cpu = done.stdout.split()[-4:]
    return int(fitted), int(failed), float(wall), float(cpu)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data", nargs="?", type=Path, help="a folder with judge.csv and humans.csv")
    parser.add_argument("--summeval", action="store_true", help="convert ../shared/datasets' SummEval first")
    args = parser.parse_args(argv)
    if (args.data is None) == (not args.summeval):
        parser.error("give a data folder or --summeval (one of them)")
    if shutil.which("Rscript") is None:
        raise SystemExit("the lme4 side needs R: Rscript on PATH, with the lme4 package installed")
    if args.data is not None and not (args.data / "judge.csv").is_file():
        parser.error(f"{args.data}: no judge.csv in it")
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        data_dir = _summeval(tmp) if args.summeval else args.data.resolve()
        votes_csv = tmp / "cell_votes.csv"
        cells = _cell_votes(data_dir, votes_csv)
        wall, cpu, status = _ours(data_dir, tmp / "out")
        fitted, failed, r_wall, r_cpu = _glmer(votes_csv, tmp)
    print(f"cells: {cells} (glmer fitted {fitted}, failed {failed})")
    print(f"ours, whole default audit (exit {status}): {wall:8.1f} s wall {cpu:8.1f} CPU-s")
    print(f"lme4 glmer, the cells' GLMMs alone:    {r_wall:8.1f} s wall {r_cpu:8.1f} CPU-s")
    print(f"ratio ours / glmer: {wall / r_wall:.2f} (wall), {cpu / r_cpu:.2f} (CPU)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
