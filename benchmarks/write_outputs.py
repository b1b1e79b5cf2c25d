"""Memory and time of writing a saved result's outputs: ``audit.load_result``, then ``audit.write``.

Prints the seconds (wall and CPU) and the high-water mark of this process's resident memory (VmHWM,
/proc/self/status) of each step; the mark is reset after the result is loaded, so the writing's is
its own. Linux only (/proc). For a result of a million votes, e.g. the Chatbot-Arena shape:

    python benchmarks/scale_data.py DIR --preset chatbot-arena-1m
    python -m judge_transfer_audit run DIR/judge.csv DIR/humans.csv --out OUT --jobs 2 -q
    python benchmarks/write_outputs.py OUT/result.json OUT2
"""

from __future__ import annotations

import argparse
import re
import time
from pathlib import Path


def _status_kib(key: str) -> int:
    """A memory figure of this process from /proc/self/status, in KiB."""
    text = Path("/proc/self/status").read_text()
    return int(re.search(rf"^{key}:\s+(\d+) kB", text, re.MULTILINE).group(1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("result_json", help="a result.json written by audit run")
    parser.add_argument("out", help="the output folder to write (new, or written by judge-audit)")
    parser.add_argument("--no-html", action="store_true", help="leave report.html out")
    args = parser.parse_args()
    if Path(args.out).resolve() == Path(args.result_json).resolve().parent:
        parser.error("the output folder holds the result.json it reads: give another folder")

    import judge_transfer_audit as audit

    wall, cpu = time.perf_counter(), time.process_time()
    result = audit.load_result(args.result_json)
    load_wall, load_cpu = time.perf_counter() - wall, time.process_time() - cpu
    load_peak, loaded = _status_kib("VmHWM"), _status_kib("VmRSS")
    Path("/proc/self/clear_refs").write_text("5")  # the high-water mark starts again from the resident size
    wall, cpu = time.perf_counter(), time.process_time()
    audit.write(result, args.out, html=not args.no_html)
    write_wall, write_cpu = time.perf_counter() - wall, time.process_time() - cpu
    write_peak = _status_kib("VmHWM")
    print(f"load:  {load_wall:.1f} s wall, {load_cpu:.1f} CPU-s; VmHWM {load_peak:,} KiB; then resident {loaded:,} KiB")
    print(
        f"write: {write_wall:.1f} s wall, {write_cpu:.1f} CPU-s; VmHWM {write_peak:,} KiB "
        f"({(write_peak - loaded) / 2**20:.2f} GiB above the loaded result)"
    )


if __name__ == "__main__":
    main()
