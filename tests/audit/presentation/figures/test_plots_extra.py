"""matplotlib is the optional ``[plots]`` extra: the audit's commands and the report never import
it, and drawing a figure through it without it installed says how to install it."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[4]

# a fresh interpreter in which any import of matplotlib fails
BLOCK = """
import sys
class _NoMatplotlib:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] == "matplotlib":
            raise ImportError("blocked for the test: " + name)
sys.meta_path.insert(0, _NoMatplotlib())
"""


def _without_matplotlib(code: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    return subprocess.run(
        [sys.executable, "-c", BLOCK + textwrap.dedent(code)], capture_output=True, text=True, cwd=ROOT, env=env
    )


@pytest.mark.slow
def test_the_commands_and_the_report_import_no_matplotlib():
    run = _without_matplotlib(
        """
        import importlib, pkgutil
        import judge_transfer_audit.cli, judge_transfer_audit.engine.pipeline, judge_transfer_audit.reports
        packages = (judge_transfer_audit.cli, judge_transfer_audit.reports)
        names = [m.name for p in packages for m in pkgutil.walk_packages(p.__path__, p.__name__ + ".")]
        for name in names:
            importlib.import_module(name)
        print(len(names), any(m.split(".")[0] == "matplotlib" for m in sys.modules))
        """
    )
    assert run.returncode == 0, run.stderr
    n_modules, imported = run.stdout.split()
    assert int(n_modules) > 20 and imported == "False"


def test_a_matplotlib_figure_without_matplotlib_names_the_extra():
    run = _without_matplotlib(
        """
        from judge_transfer_audit.core.errors import MissingDependencyError
        from judge_transfer_audit.presentation.figures._svg import new_figure
        try:
            new_figure(1, 1)
        except MissingDependencyError as exc:
            print(exc)
        """
    )
    assert run.returncode == 0, run.stderr
    assert "'matplotlib' is not installed" in run.stdout
    assert "pip install 'judge-transfer-audit[plots]'" in run.stdout
