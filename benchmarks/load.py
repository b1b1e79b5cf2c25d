"""Loading speed: load_audit_data (read + validate + normalise) vs bare pandas.read_csv.

usage: python benchmarks/load.py [--repeat N] [--study DIR] [--cpu]

The "competitor" is the floor any loader pays: pandas reading the same files with no
validation. Prints medians over N warm runs and the ratio. With ../shared/datasets present,
also times the SummEval conversion (144,000 votes after pairing), written to a tmp dir.
``--study DIR`` times DIR/judge.csv and DIR/humans.csv instead (e.g. the Chatbot-Arena shape of
``benchmarks/scale_data.py DIR --preset chatbot-arena-1m``); ``--cpu`` measures CPU seconds
(``time.process_time``) rather than wall seconds, for a busy machine.
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


def _median_seconds(fn, repeat: int, clock) -> float:
    fn()  # warm (imports, caches)
    times = []
    for _ in range(repeat):
        t = clock()
        fn()
        times.append(clock() - t)
    return statistics.median(times)


def _compare(label: str, files: dict[str, Path], repeat: int, clock=time.perf_counter) -> None:
    ours = _median_seconds(lambda: load_audit_data(**files), repeat, clock)
    bare = _median_seconds(lambda: [pd.read_csv(p) for p in files.values()], repeat, clock)
    unit = "CPU ms" if clock is time.process_time else "ms"
    print(
        f"{label:<34} load_audit_data {ours * 1000:8.1f} {unit} | pandas.read_csv only {bare * 1000:8.1f} {unit}"
        f" | ratio {ours / bare:5.1f}x  (median of {repeat})"
    )


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--study", type=Path, help="a folder holding judge.csv and humans.csv: time only those")
    ap.add_argument("--cpu", action="store_true", help="CPU seconds (time.process_time), not wall seconds")
    args = ap.parse_args(argv)
    clock = time.process_time if args.cpu else time.perf_counter
    if args.study is not None:
        files = dict(judge=args.study / "judge.csv", humans=args.study / "humans.csv")
        _compare(f"{args.study.name} (judge + humans)", files, args.repeat, clock)
        return 0
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
        clock,
    )
    if (DATASETS / "convert.py").exists():
        with tempfile.TemporaryDirectory() as tmp:
            subprocess.run([sys.executable, str(DATASETS / "convert.py"), tmp], check=True, capture_output=True)
            s = Path(tmp) / "summeval"
            _compare(
                "SummEval (144,000 votes)",
                dict(judge=s / "judge.csv", humans=s / "humans.csv"),
                max(1, args.repeat // 3),
                clock,
            )
            p = Path(tmp) / "pds"
            _compare(
                "PDS (6,850 votes)",
                dict(judge=p / "judge.csv", humans=p / "humans.csv", stories=p / "stories.csv"),
                args.repeat,
                clock,
            )
    else:
        print(f"({DATASETS} absent: real-data timings skipped)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
