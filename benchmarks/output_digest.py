"""SHA-256 of everything the audit writes, to show that a refactoring changes no output.

Runs, in a scratch folder (so the recorded command lines are the same from run to run):
the README's fixture audit, ``audit report`` re-rendering its result, the audits of MT-Bench and
PDS (``--data``: a folder holding ``python ../shared/datasets/convert.py OUT``'s output; left out
without it), and three seeded simulation studies (the agreement decision's calibration, the
diagnostics' false-alarm rates, the label budget's trade-off table). Prints one line per output
file: ``<sha256>  <run>/<file>``. Run it before and after a change and compare the two listings:

    python benchmarks/output_digest.py --data /tmp/ds > before.txt
    ... change ...
    python benchmarks/output_digest.py --data /tmp/ds > after.txt && diff before.txt after.txt

``timings.json`` (wall-clock seconds) is listed but not hashed, nor its entry in the output
folder's manifest. ``--module`` names the package to
run (``python -m MODULE``), for a comparison with a checkout that names it differently.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = [
    "run",
    "fixtures/deployment/judge.csv",
    "fixtures/deployment/humans.csv",
    "--pairs",
    "fixtures/deployment/pairs.csv",
    "--stories",
    "fixtures/deployment/stories.csv",
    "--dev-judge",
    "fixtures/dev/judge.csv",
    "--dev-humans",
    "fixtures/dev/humans.csv",
    "--out",
    "fixture",
]
UNHASHED = {"timings.json"}
MANIFEST = ".judge-audit-manifest.json"

#: (name, module under the package, the call) of the simulations
SIMULATIONS = (
    (
        "agreement decision calibration",
        ("verdict.agreement_calibration", "agreement_calibration"),
        lambda m: m.calibrate(designs=((5, 20),), studies=3, n_boot=99).to_csv(),
    ),
    (
        "diagnostics false alarms",
        ("sections.diagnostics_simulation", "diagnostics_simulation"),
        lambda m: m.warn_rates(range(2), "aligned").to_csv(),
    ),
    (
        "label budget trade-off",
        ("statistics.budget.simulation", "budget_simulation"),
        lambda m: m.tradeoff_table(n_pilot=200),
    ),
)


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _audit(module: str, args: list[str], cwd: Path) -> None:
    done = subprocess.run([sys.executable, "-m", module, *args], cwd=cwd, capture_output=True, text=True)
    if done.returncode not in (0, 1):
        sys.exit(f"python -m {module} {' '.join(args)}: exit {done.returncode}\n{done.stderr[-2000:]}")


def _listing(folder: Path, name: str) -> list[str]:
    lines = []
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        rel = path.relative_to(folder).as_posix()
        if path.name in UNHASHED:
            digest = "(not hashed: timings)"
        elif path.name == MANIFEST:  # hashed without the timings file's entry
            manifest = json.loads(path.read_text(encoding="utf-8"))
            digest = _sha(json.dumps(_without_timings(manifest), sort_keys=True).encode("utf-8"))
        else:
            digest = _sha(path.read_bytes())
        lines.append(f"{digest}  {name}/{rel}")
    return lines


def _without_timings(value):
    """The manifest without any entry that names timings.json (its hash changes from run to run)."""
    if isinstance(value, dict):
        return {k: _without_timings(v) for k, v in value.items() if k not in UNHASHED}
    return value


def _simulation(module: str, names: tuple[str, str], call) -> str:
    for name in names:
        try:
            mod = importlib.import_module(f"{module}.{name}")
        except ModuleNotFoundError:
            continue
        return _sha(call(mod).encode("utf-8"))
    raise SystemExit(f"none of {names} under {module}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--module", default="judge_transfer_audit", help="the package to run (python -m MODULE)")
    parser.add_argument("--data", type=Path, help="convert.py's output folder (mtbench/, pds/); without it: left out")
    parser.add_argument("--root", type=Path, default=ROOT, help="the checkout whose fixtures to audit")
    parser.add_argument("--no-simulations", action="store_true", help="leave the simulation studies out")
    args = parser.parse_args(argv)
    lines: list[str] = []
    with tempfile.TemporaryDirectory() as scratch:
        work = Path(scratch)
        for folder in ("deployment", "dev"):  # copied, so that the recorded command is the same from any checkout
            shutil.copytree(args.root / "fixtures" / folder, work / "fixtures" / folder)
        _audit(args.module, FIXTURE, work)
        lines += _listing(work / "fixture", "fixture")
        _audit(args.module, ["report", "fixture/result.json", "-o", "rerendered.html"], work)
        lines.append(f"{_sha((work / 'rerendered.html').read_bytes())}  report/rerendered.html")
        if args.data is not None:
            for name in ("mtbench", "pds"):
                folder = args.data / name
                extra = ["--pairs", str(folder / "pairs.csv")] if (folder / "pairs.csv").exists() else []
                extra += ["--stories", str(folder / "stories.csv")] if (folder / "stories.csv").exists() else []
                files = [str(folder / "judge.csv"), str(folder / "humans.csv")]
                _audit(args.module, ["run", *files, *extra, "--out", name], work)
                lines += _listing(work / name, name)
    if not args.no_simulations:
        for name, modules, call in SIMULATIONS:
            lines.append(f"{_simulation(args.module, modules, call)}  simulation/{name}")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    raise SystemExit(main())
