"""CPU seconds per stage of the whole `audit run` as the number of tiny cells grows (10k criteria).

    python benchmarks/scale_criteria.py --criteria 250 500 1000 2000
    python benchmarks/scale_criteria.py --criteria 500 2000 --pairs 6 --readers 3 --readers-per-pair 3

For each count of criteria a seeded study of ``benchmarks/scale_data.py`` (6 pairs x 3 readers x 3 votes
per pair and criterion by default: the ``criteria`` preset's cells) is written to a temporary folder and
audited in a fresh process (``--jobs 1``, report included). The child records, at each of the command's
stage messages, its CPU time (``time.process_time``: the load inflates it far less than wall time) and
its resident and peak memory. One row per study: CPU seconds per stage, the total, CPU milliseconds per
criterion (flat when every stage is linear in the cells; rising: something is superlinear), the peak RSS
and the size of result.json. Stages are the command's own messages: "cells" is the human GLMMs and the
verdict's paired bootstraps (``assess_cells``), "sections" the readers, judge agreement, judge
configurations and the rest, "outputs" the text of every output file.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

#: the command's stage messages (judge_transfer_audit.engine.pipeline) -> the column they open
STAGES = {
    "judge verdicts": "load+",
    "human GLMMs": "cells",
    "bootstraps and leave-one-reader-out": "uncertainty",
    "reader analysis": "sections",
    "writing outputs": "outputs",
}

_CHILD = r"""
import json, os, resource, sys, time
import judge_transfer_audit.core.timings as T
marks = []
def mark(name):
    with open('/proc/self/statm') as f:
        rss = int(f.read().split()[1]) * os.sysconf('SC_PAGE_SIZE') / 2**20
    marks.append((name, time.process_time(), rss, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024))
stage = T.RunTimings.stage
def recording(self, name):
    mark(name)
    return stage(self, name)
T.RunTimings.stage = recording
sys.argv = ['audit'] + sys.argv[1:]
from judge_transfer_audit.cli import main
try:
    code = main(sys.argv[1:])
finally:
    mark('end')
    print('MARKS ' + json.dumps(marks), file=sys.stderr)
sys.exit(code or 0)
"""


def run_one(judge: Path, humans: Path, out: Path) -> dict:
    """Audit one study in a child process; CPU seconds per column, peak MB, result.json MB."""
    cmd = [sys.executable, "-c", _CHILD, "run", str(judge), str(humans), "--out", str(out), "-q", "--jobs", "1"]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    line = next((ln for ln in proc.stderr.splitlines() if ln.startswith("MARKS ")), None)
    if line is None:
        raise SystemExit(f"the audit failed (exit {proc.returncode}):\n{proc.stderr[-2000:]}")
    marks = json.loads(line[len("MARKS ") :])
    columns: dict[str, float] = {}
    current, since = "load+", 0.0
    for name, cpu, _rss, _peak in marks:
        columns[current] = columns.get(current, 0.0) + cpu - since
        current, since = STAGES.get(name, current), cpu
    return {
        **columns,
        "total": marks[-1][1],
        "peak MB": max(m[3] for m in marks),
        "result MB": (out / "result.json").stat().st_size / 2**20,
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--criteria", type=int, nargs="+", default=[250, 500, 1000, 2000])
    parser.add_argument("--pairs", type=int, default=6)
    parser.add_argument("--readers", type=int, default=3)
    parser.add_argument("--readers-per-pair", type=int, default=3)
    args = parser.parse_args(argv)
    from scale_data import StudyShape, write_study

    names = ["load+", "cells", "uncertainty", "sections", "outputs"]
    print(f"load {os.getloadavg()[0]:.1f} (1-min) at the start; CPU seconds per stage, one process, --jobs 1")
    print(f"{'criteria':>8} " + " ".join(f"{n:>11}" for n in names) + "       total  ms/crit  peak MB  result MB")
    for n in args.criteria:
        shape = StudyShape(pairs=args.pairs, readers=args.readers, readers_per_pair=args.readers_per_pair, criteria=n)
        with tempfile.TemporaryDirectory() as tmp:
            judge, humans = write_study(Path(tmp) / "study", shape)
            row = run_one(judge, humans, Path(tmp) / "out")
        cells = " ".join(f"{row.get(k, 0.0):11.2f}" for k in names)
        print(
            f"{n:>8} {cells} {row['total']:11.2f} {1000 * row['total'] / n:8.1f} {row['peak MB']:8.0f} "
            f"{row['result MB']:10.1f}",
            flush=True,
        )
    print(f"load {os.getloadavg()[0]:.1f} (1-min) at the end")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
