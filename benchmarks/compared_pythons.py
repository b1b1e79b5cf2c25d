"""The interpreters a benchmark compares, and where each one's ``judge_transfer_audit`` comes from.

The package is installed in editable mode and its tree has ``audit/``, not ``judge_transfer_audit/``, so the
import name maps to the installed tree whatever ``PYTHONPATH`` says. Two versions of the code are therefore
compared through two environments, each with its version installed::

    git worktree add DIR REV
    python -m venv --system-site-packages V
    V/bin/pip install --no-deps -e DIR

and then ``--pythons V/bin/python VENV/bin/python``. Every run reports the ``judge_transfer_audit.__file__`` it
imported; a benchmark labels its columns by :func:`package_location` of that file, so a table shows which code
was measured, and :func:`legend` says so when two interpreters import the same code.

    python benchmarks/compared_pythons.py BASE_VENV/bin/python VENV/bin/python   # what each one imports
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

#: a child's code that prints the file of the package it imports
PRINT_PACKAGE = "import judge_transfer_audit; print(judge_transfer_audit.__file__)"


def package_location(package_file: str | Path) -> Path:
    """The folder holding the imported package: the source tree of an editable install, else site-packages."""
    return Path(package_file).resolve().parent.parent


def imported_package(python: str, env: dict[str, str] | None = None) -> Path:
    """``judge_transfer_audit.__file__`` as a fresh ``python`` process (with ``env``) imports it."""
    out = subprocess.run([python, "-c", PRINT_PACKAGE], capture_output=True, text=True, env=env)
    if out.returncode != 0:
        raise SystemExit(f"{python} cannot import judge_transfer_audit:\n{out.stderr}")
    return Path(out.stdout.strip().splitlines()[-1])


def column_labels(locations: list[Path]) -> list[str]:
    """A short column name per location: its folder's name, numbered where two names are the same."""
    names = [location.name for location in locations]
    return [f"{name}#{k + 1}" if names.count(name) > 1 else name for k, name in enumerate(names)]


def legend(pythons: list[str], locations: list[Path]) -> str:
    """One line per column (its label, interpreter and package location), and a warning for shared code."""
    lines = [
        f"{label}: {python} imports {location}"
        for label, python, location in zip(column_labels(locations), pythons, locations)
    ]
    if len(set(locations)) < len(locations):
        lines.append("WARNING: two interpreters import the same code, so their columns measure one version")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("pythons", nargs="*", default=[sys.executable], help="interpreters to compare")
    args = parser.parse_args(argv)
    pythons = args.pythons or [sys.executable]
    print(legend(pythons, [package_location(imported_package(p)) for p in pythons]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
