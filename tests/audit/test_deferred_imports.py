"""Modules a dependency imports and the audit never uses load on first use (command line only)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _python(code: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


@pytest.mark.slow
def test_scipy_special_no_longer_runs_numpy_f2py_and_f2py_still_works_when_used():
    out = _python(
        """
        import sys
        from audit.deferred_imports import defer
        defer()
        import scipy.special, scipy.stats
        lazy = type(sys.modules["numpy.f2py"]).__name__
        crack_before = "numpy.f2py.crackfortran" in sys.modules
        from numpy.f2py import crackfortran   # first use: the real module runs
        import numpy
        print(lazy, crack_before, callable(crackfortran.crackfortran), callable(numpy.f2py.run_main))
        """
    )
    assert out == "_LazyModule False True True"


def test_without_defer_the_import_system_is_untouched():
    # importing audit as a library (or its command line in-process) installs nothing
    out = _python(
        """
        import sys
        import audit, audit.cli
        from audit.deferred_imports import DeferredFinder
        print(any(isinstance(f, DeferredFinder) for f in sys.meta_path))
        """
    )
    assert out == "False"


def test_the_console_script_defers_and_defer_installs_once():
    out = _python(
        """
        import sys
        from audit.cli import run_main
        from audit.deferred_imports import DeferredFinder, defer
        def finders():
            return sum(isinstance(f, DeferredFinder) for f in sys.meta_path)
        before = finders()
        sys.argv = ["audit", "--version"]
        try:
            run_main()
        except SystemExit:
            pass
        after_run = finders()
        defer()
        print(before, after_run, finders())
        """
    )
    assert out.splitlines()[-1] == "0 1 1"


def test_other_modules_are_left_to_the_usual_finders():
    from audit.deferred_imports import DeferredFinder

    assert DeferredFinder().find_spec("json", None) is None
    assert DeferredFinder(("no_such_module_here",)).find_spec("no_such_module_here", None) is None
