"""Run the native engine's BLAS/LAPACK calls on one thread.

The engine makes thousands of small matrix calls per fit. OpenBLAS wakes its worker threads for
each of them; on a busy machine (or with numpy's and scipy's two OpenBLAS copies taking turns)
the hand-offs cost far more than the arithmetic: a 50k-vote fit measured 0.9 s per deviance
evaluation with the default threads and 0.05 s on one thread. threadpoolctl is used when
installed; without it the BLAS defaults are left alone.
"""

from __future__ import annotations

import contextlib

_CONTROLLER = None


def single_threaded_blas():
    """Context manager limiting BLAS to one thread (no-op without threadpoolctl)."""
    global _CONTROLLER
    try:
        from threadpoolctl import ThreadpoolController
    except ImportError:
        return contextlib.nullcontext()
    if _CONTROLLER is None:
        _CONTROLLER = ThreadpoolController()
    return _CONTROLLER.limit(limits=1, user_api="blas")
