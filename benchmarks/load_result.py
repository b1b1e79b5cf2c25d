"""Memory and time of reading a saved result back: ``audit.load_result`` (a chunk of the file and a block of
each long table's rows at a time) beside reading the whole text (``result_from_json(Path.read_text())``, as
``load_result`` read it before).

Each reader runs ``--repeats`` times, alternating, each time in a fresh process (its VmHWM, /proc, is its own):
the CPU and wall seconds of the read, the high-water mark of the process's resident memory, and its resident
memory after the read (the result); medians. Checks that both give the same result (the same JSON text).
Linux only (/proc). For a result of 100k votes (the Chatbot-Arena shape), e.g.:

    python benchmarks/scale_data.py DIR --preset chatbot-arena-100k
    python -m judge_transfer_audit run DIR/judge.csv DIR/humans.csv --out OUT -q
    python benchmarks/load_result.py OUT/result.json
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

_READ = r"""
import hashlib, json, re, sys, time
from pathlib import Path
import judge_transfer_audit as audit
from judge_transfer_audit.results.result import result_from_json, result_to_json
import judge_transfer_audit.sections.registry  # imported before the mark: the section table's modules

def kib(key):
    return int(re.search(rf"^{key}:\s+(\d+) kB", Path("/proc/self/status").read_text(), re.MULTILINE).group(1))

path, how = sys.argv[1], sys.argv[2]
Path("/proc/self/clear_refs").write_text("5")  # the high-water mark starts again from the resident size
wall, cpu = time.perf_counter(), time.process_time()
if how == "blocks":
    result = audit.load_result(path)
else:
    result = result_from_json(Path(path).read_text(encoding="utf-8"), source=path)
wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
peak, resident = kib("VmHWM"), kib("VmRSS")
digest = hashlib.sha256(result_to_json(result).encode()).hexdigest()
print(json.dumps({"wall": wall, "cpu": cpu, "peak": peak, "resident": resident, "digest": digest}))
"""

_READERS = {"blocks": "audit.load_result (in blocks)", "whole": "the whole text (result_from_json)"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("result_json", help="a result.json written by audit run")
    parser.add_argument("--repeats", type=int, default=3, help="runs of each reader (default 3)")
    args = parser.parse_args()
    runs: dict[str, list[dict]] = {how: [] for how in _READERS}
    for _ in range(args.repeats):
        for how in _READERS:
            out = subprocess.run(
                [sys.executable, "-c", _READ, args.result_json, how], check=True, capture_output=True, text=True
            )
            runs[how].append(json.loads(out.stdout.strip().splitlines()[-1]))
    size = Path(args.result_json).stat().st_size
    print(f"{args.result_json}: {size / 2**20:,.0f} MiB; medians of {args.repeats} runs each, alternating")
    for how, label in _READERS.items():
        med = {key: statistics.median(run[key] for run in runs[how]) for key in ("wall", "cpu", "peak", "resident")}
        print(
            f"{label:36s} {med['cpu']:6.2f} CPU-s, {med['wall']:6.2f} s wall; VmHWM {med['peak'] / 1024:,.0f} MiB, "
            f"then resident {med['resident'] / 1024:,.0f} MiB"
        )
    digests = {run["digest"] for how in runs for run in runs[how]}
    print("the same result from both" if len(digests) == 1 else "DIFFERENT RESULTS: " + ", ".join(sorted(digests)))


if __name__ == "__main__":
    main()
