"""Independent, individually seeded tasks and the in-process runner that maps them.

A :class:`TaskRunner` maps a module-level function over picklable task items and returns the
results in item order. This one runs them in this process; the engine's runners
(:mod:`judge_transfer_audit.engine.parallel`: a local process pool, a Dask cluster) have the same
interface, so the statistics take a runner and never import the scheduler. Every task carries
its own seed (:func:`task_seed`), derived from the run's seed and the task's key, never from a
worker, and runs with BLAS on one thread: the results do not depend on who runs it.
"""

from __future__ import annotations

import hashlib
from typing import Any, Callable, Sequence

import numpy as np

from judge_transfer_audit.core.progress import ProgressFactory, no_progress


def _digest_update(h, parts: tuple) -> None:
    """Feed ``parts`` to the hash ``h`` (each part, then a separator; a tuple or list item by item)."""
    for part in parts:
        if isinstance(part, (tuple, list)):
            h.update(b"\x1e")
            if part:  # the items joined: the same bytes as one update per item and separator
                h.update(("\x1f".join(map(str, part)) + "\x1f").encode("utf-8"))
        else:
            h.update(str(part).encode("utf-8"))
        h.update(b"\x1d")


def stable_digest(*parts: object) -> int:
    """A 63-bit integer digest of ``parts`` that is the same in every process and run
    (unlike ``hash``, which Python salts per process)."""
    h = hashlib.blake2b(digest_size=8)
    _digest_update(h, parts)
    return int.from_bytes(h.digest(), "little") >> 1


def task_seed(seed: int, *key: object) -> np.random.SeedSequence:
    """The seed sequence of the task ``key`` in a run seeded with ``seed``.

    Depends only on the run's seed and the task's key (e.g. ``("pair", ids, chunk)``), so a
    task draws the same numbers in-process, in any worker, on any machine.
    """
    return np.random.SeedSequence(int(seed), spawn_key=(stable_digest(*key),))


class TaskSeeds:
    """:func:`task_seed` of the keys ``key + rest`` for many ``rest``, the shared ``key`` hashed once
    (a key holding a cluster set's ids costs milliseconds to hash; its chunks then cost nothing)."""

    def __init__(self, seed: int, *key: object):
        self.seed = int(seed)
        self._prefix = hashlib.blake2b(digest_size=8)
        _digest_update(self._prefix, key)

    def __call__(self, *rest: object) -> np.random.SeedSequence:
        """``task_seed(seed, *key, *rest)``."""
        h = self._prefix.copy()
        _digest_update(h, rest)
        return np.random.SeedSequence(self.seed, spawn_key=(int.from_bytes(h.digest(), "little") >> 1,))


def _run_one(fn: Callable[[Any], Any], item: Any) -> Any:
    """Run one task with BLAS on one thread, as every runner does."""
    from judge_transfer_audit.core.threads import single_threaded_blas

    with single_threaded_blas():
        return fn(item)


class TaskRunner:
    """Maps a function over task items; see the module docstring.

    Attributes
    ----------
    jobs : int
        How many tasks can run at once (callers size their task lists with it; the results
        never depend on it).
    where : str
        ``"in-process"``, ``"local pool of N"`` or the scheduler address (for provenance).
    """

    jobs: int = 1
    where: str = "in-process"

    def __init__(self, progress: ProgressFactory | None = None):
        self.progress = progress or no_progress

    def map(self, fn: Callable[[Any], Any], items: Sequence[Any], *, label: str = "tasks") -> list[Any]:
        bar = self.progress(label, len(items))
        try:
            results = []
            for item in items:
                results.append(_run_one(fn, item))
                bar.advance()
            return results
        finally:
            bar.close()

    def close(self) -> None:
        pass

    def __enter__(self) -> "TaskRunner":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
