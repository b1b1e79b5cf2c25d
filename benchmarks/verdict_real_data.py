"""The verdict on the public datasets beside the repository (../shared/datasets), per dataset.

usage: python benchmarks/verdict_real_data.py [--datasets mtbench,pds,summeval,hanna]

Converts the datasets into a temporary folder (../shared/datasets/convert.py; HANNA with
tests/support/hanna.py), runs the audit's core (no optional
sections) with the default policy and prints, per dataset: the run's status, the cells per
status, the GLMM fits flagged degenerate, and the largest gap between a shown human figure and
its raw share. Nothing is written in the repository. docs/audit.md records the output.
"""

from __future__ import annotations

import argparse
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from judge_transfer_audit.engine.pipeline import run_audit  # noqa: E402
from judge_transfer_audit.inputs import load_audit_data  # noqa: E402
from judge_transfer_audit.model.spec import AuditSpec  # noqa: E402

SHARED = Path(os.environ.get("JUDGE_AUDIT_DATASETS") or ROOT.parent / "shared" / "datasets")


def _summary(name: str, result, seconds: float) -> str:
    gaps = []
    for c in result.cells:
        h, g = c.human, c.human.glmm
        if math.isfinite(g.estimate) and math.isfinite(h.rate):
            gaps.append((abs(g.estimate - h.rate), g.degenerate))
    worst_plain = max((gap for gap, flagged in gaps if not flagged), default=0.0)
    n_deg = sum(c.human.glmm.degenerate for c in result.cells)
    counts = ", ".join(f"{n} {s}" for s, n in result.counts.items())
    fails = [f"{c.matchup}/{c.criterion}" for c in result.cells if c.transfer.status.value == "FAIL"][:4]
    return (
        f"{name:<9} status {result.status.value:<12} cells {len(result.cells):>4}: {counts}; degenerate GLMM "
        f"{n_deg}; largest unflagged |expit(b0) - raw| {100 * worst_plain:.1f} points; {seconds:.0f} s"
        + (f"\n          e.g. FAIL: {', '.join(fails)}" if fails else "")
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--datasets", default="mtbench,pds,summeval,hanna")
    args = parser.parse_args(argv)
    if not (SHARED / "convert.py").exists():
        print(f"{SHARED} is absent", file=sys.stderr)
        return 2
    wanted = args.datasets.split(",")
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp)
        subprocess.run([sys.executable, str(SHARED / "convert.py"), str(out)], check=True, capture_output=True)
        spec = AuditSpec(uncertainty=False, readers=False, surface=False)
        runs = {
            "mtbench": lambda: load_audit_data(
                out / "mtbench/judge.csv", out / "mtbench/humans.csv", pairs=out / "mtbench/pairs.csv"
            ),
            "pds": lambda: load_audit_data(out / "pds/judge.csv", out / "pds/humans.csv", scale=(1, 5)),
            "summeval": lambda: load_audit_data(out / "summeval/judge.csv", out / "summeval/humans.csv"),
        }
        judges = {"pds": "gpt-4o", "hanna": "ChatGPT"}
        if "hanna" in wanted:
            from tests.support.hanna import convert_hanna  # noqa: PLC0415

            hanna = convert_hanna(SHARED / "hanna" / "hanna_metric_scores_llm.csv", out / "hanna")
            runs["hanna"] = lambda: load_audit_data(hanna / "judge.csv", hanna / "humans.csv")
        for name in wanted:
            started = time.perf_counter()
            data = runs[name]()
            result = run_audit(
                data,
                AuditSpec(uncertainty=False, readers=False, surface=False, judge=judges.get(name))
                if name in judges
                else spec,
            )
            print(_summary(name, result, time.perf_counter() - started), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
