"""Loading speed: load_audit_data (read + validate + normalise) vs bare pandas.read_csv.

usage: python benchmarks/load.py [--repeat N]

The "competitor" is the floor any loader pays: pandas reading the same files with no
validation. Prints medians over N warm runs and the ratio. With ../shared/datasets present,
also times the SummEval conversion (144,000 votes after pairing), written to a tmp dir.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

from judge_transfer_audit.inputs import load_audit_data

ROOT = Path(__file__).resolve().parents[1]
FIX = ROOT / "fixtures"
DATASETS = ROOT.parent / "shared" / "datasets"


def _median_seconds(fn, repeat: int) -> float:
    fn()  # warm (imports, caches)
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def _compare(label: str, files: dict[str, Path], repeat: int) -> None:
    ours = _median_seconds(lambda: load_audit_data(**files), repeat)
    bare = _median_seconds(lambda: [pd.read_csv(p) for p in files.values()], repeat)
    print(
        f"{label:<34} load_audit_data {ours * 1000:8.1f} ms | pandas.read_csv only {bare * 1000:8.1f} ms"
        f" | ratio {ours / bare:5.1f}x  (median of {repeat})"
    )


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeat", type=int, default=7)
    args = ap.parse_args(argv)
    d, v = FIX / "deployment", FIX / "dev"
    _compare(
        "fixture (6 files, 2,520 votes)",
        dict(
            judge=d / "judge.csv",
            humans=d / "humans.csv",
            pairs=d / "pairs.csv",
            stories=d / "stories.csv",
            dev_judge=v / "judge.csv",
            dev_humans=v / "humans.csv",
        ),
        args.repeat,
    )
    if (DATASETS / "convert.py").exists():
        with tempfile.TemporaryDirectory() as tmp:
            subprocess.run([sys.executable, str(DATASETS / "convert.py"), tmp], check=True, capture_output=True)
            s = Path(tmp) / "summeval"
            _compare(
                "SummEval (144,000 votes)",
                dict(judge=s / "judge.csv", humans=s / "humans.csv"),
                max(1, args.repeat // 3),
            )
            p = Path(tmp) / "pds"
            _compare(
                "PDS (6,850 votes)",
                dict(judge=p / "judge.csv", humans=p / "humans.csv", stories=p / "stories.csv"),
                args.repeat,
            )
    else:
        print(f"({DATASETS} absent: real-data timings skipped)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
