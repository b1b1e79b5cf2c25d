"""Modules a dependency imports that the command line never uses: loaded on first use instead.

SciPy's array-API layer (every ``import scipy.special``, so every ``scipy.stats``) clones NumPy's
namespace with ``from numpy import *``, and NumPy's ``__all__`` names its submodule ``f2py`` (the
Fortran wrapper generator), so the import runs ``numpy.f2py`` and, when ``charset_normalizer`` is
installed (``requests`` brings it), that package too: ~80 ms of a 3.7 s audit of the fixture,
in every process, for a module nothing in the audit calls. :func:`defer` makes such a module
lazy (:class:`importlib.util.LazyLoader`): the import returns a module object at once, and the
module runs the first time one of its attributes is read, so whoever uses it gets the real module.

Only the console script installs it (:func:`audit.cli.run_main`): importing :mod:`audit` as a
library leaves the import system alone. Python 3.11's ``LazyLoader`` is not thread-safe (two threads
reading a lazy module's first attribute at once can see it half-run; fixed in 3.12.3): only modules
no thread of the audit touches belong in :data:`UNUSED`.
"""

from __future__ import annotations

import importlib.abc
import importlib.util
import sys

#: imported by a dependency, never used by the audit
UNUSED = ("numpy.f2py",)


class DeferredFinder(importlib.abc.MetaPathFinder):
    """Finds ``names`` with the import system's other finders and hands them a lazy loader."""

    def __init__(self, names: tuple[str, ...] = UNUSED):
        self.names = frozenset(names)

    def find_spec(self, fullname, path, target=None):
        if fullname not in self.names:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(fullname, path, target)
            if spec is None:
                continue
            if spec.loader is None or not hasattr(spec.loader, "exec_module"):
                return None  # not a loader LazyLoader can wrap: the import goes on as usual
            spec.loader = importlib.util.LazyLoader(spec.loader)
            return spec
        return None


def defer(names: tuple[str, ...] = UNUSED) -> None:
    """Make ``names`` lazy in this process from now on (once; a module already imported stays)."""
    if not any(isinstance(f, DeferredFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, DeferredFinder(names))


__all__ = ["defer", "DeferredFinder", "UNUSED"]
