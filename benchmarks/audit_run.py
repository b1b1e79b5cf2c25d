"""How long `audit run` takes on the shipped fixture (targets: < 10 s cold with surface
features except perplexity; the statistics alone < 2 s).

    python benchmarks/audit_run.py [--repeat 3]

Prints, for each stage, the median over the repeats:
* cold: a fresh `audit run` process (imports, loading, every section, report) timed from outside;
* statistics: `run_audit` in-process on loaded data, every section except surface features;
* per section: core (judge, agreement, GLMMs), uncertainty, readers, surface.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEPLOY = ROOT / "fixtures" / "deployment"
DEV = ROOT / "fixtures" / "dev"


def cold_run(out: Path) -> float:
    cmd = [
        sys.executable,
        "-m",
        "audit",
        "run",
        str(DEPLOY / "judge.csv"),
        str(DEPLOY / "humans.csv"),
        "--pairs",
        str(DEPLOY / "pairs.csv"),
        "--stories",
        str(DEPLOY / "stories.csv"),
        "--dev-judge",
        str(DEV / "judge.csv"),
        "--dev-humans",
        str(DEV / "humans.csv"),
        "--out",
        str(out),
        "-q",
    ]
    start = time.perf_counter()
    subprocess.run(cmd, check=True, cwd=ROOT)
    return time.perf_counter() - start


def in_process(repeat: int) -> dict[str, list[float]]:
    from judge_transfer_audit.engine.pipeline import run_audit
    from judge_transfer_audit.inputs import load_audit_data
    from judge_transfer_audit.model.spec import AuditSpec

    data = load_audit_data(
        DEPLOY / "judge.csv",
        DEPLOY / "humans.csv",
        pairs=DEPLOY / "pairs.csv",
        stories=DEPLOY / "stories.csv",
        dev_judge=DEV / "judge.csv",
        dev_humans=DEV / "humans.csv",
    )
    configs = {
        "statistics (all but surface)": AuditSpec(surface=False),
        "core only (judge, agreement, GLMMs)": AuditSpec(uncertainty=False, readers=False, surface=False),
        "+ uncertainty": AuditSpec(readers=False, surface=False),
        "+ readers": AuditSpec(uncertainty=False, surface=False),
        "+ surface (no perplexity, no cache)": AuditSpec(uncertainty=False, readers=False),
    }
    run_audit(data, configs["core only (judge, agreement, GLMMs)"])  # warm imports
    times: dict[str, list[float]] = {name: [] for name in configs}
    for _ in range(repeat):
        for name, spec in configs.items():
            start = time.perf_counter()
            run_audit(data, spec)
            times[name].append(time.perf_counter() - start)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        cold = [cold_run(Path(tmp) / f"run{i}") for i in range(args.repeat)]
    print(f"{'stage':42s} {'median s':>9s} {'min s':>7s}  target")
    print(f"{'cold `audit run` (process, all sections)':42s} {statistics.median(cold):9.2f} {min(cold):7.2f}  < 10 s")
    for name, values in in_process(args.repeat).items():
        target = "< 2 s" if name.startswith("statistics") else ""
        print(f"{name:42s} {statistics.median(values):9.2f} {min(values):7.2f}  {target}")


if __name__ == "__main__":
    main()
