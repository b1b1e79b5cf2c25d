"""`audit --help` (and a subcommand's --help) starts without the data stack.

Listing the commands and their options needs click and the option definitions only: numpy,
pandas (and pyarrow, which pandas imports) are imported by the code that reads or computes
data, inside the subcommands. The check runs the real command in a fresh interpreter and
reads ``sys.modules``; the last test shows the probe can see such an import.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
DATA_STACK = ("numpy", "pandas", "pyarrow", "scipy")
PROBE = """
import io, json, sys, contextlib
from judge_transfer_audit.cli import main
with contextlib.redirect_stdout(io.StringIO()) as shown:
    status = main(json.loads(sys.argv[1]))
loaded = sorted({m.split(".")[0] for m in sys.modules} & set(json.loads(sys.argv[2])))
print(json.dumps({"status": int(status), "loaded": loaded, "help": shown.getvalue()}))
"""


def _probe(argv: list[str], preamble: str = "") -> dict:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run(
        [sys.executable, "-c", preamble + PROBE, json.dumps(argv), json.dumps(DATA_STACK)],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("argv", [["--help"], ["run", "--help"], ["report", "--help"], ["features", "--help"]])
def test_help_imports_no_data_stack(argv):
    probe = _probe(argv)
    assert probe["status"] == 0
    assert "Usage: audit" in probe["help"]
    assert probe["loaded"] == []


def test_run_help_still_lists_every_tie_rule():
    """The tie-rule choices come from the registry, which is read without numpy."""
    shown = _probe(["run", "--help"])["help"]
    for name in ("even-split", "decisive", "strict", "random"):
        assert name in shown


def test_the_probe_sees_a_data_stack_import():
    probe = _probe(["--help"], preamble="import pandas\n")
    assert probe["status"] == 0 and {"numpy", "pandas"} <= set(probe["loaded"])
