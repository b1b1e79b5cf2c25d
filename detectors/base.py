"""What a detector is, and the registry that names them.

A *detector* turns a list of texts into one row of numeric features per text. It is
identified by a stable ``name``, a ``version`` that changes whenever its output could
change for the same input (a new tokeniser, a bug fix), its ``params`` and, for model-based
detectors, a ``revision`` of the model. Those four, plus a hash of the text, key the cache
(:mod:`judge_transfer_audit.detectors.cache`), so a changed heuristic can never silently reuse stale scores.
"""

from __future__ import annotations

import abc
import json
from typing import Any

import pandas as pd

from judge_transfer_audit.core.registry import Registry


class Detector(abc.ABC):
    """Base class of every text detector.

    Subclasses set ``name``, ``version`` and ``features`` (the output column names, in
    order) and implement :meth:`params` and :meth:`compute`.
    """

    name: str = ""
    version: str = ""
    features: tuple[str, ...] = ()
    #: Pure function of the text, cheap to pickle: may be split over processes.
    parallel_safe: bool = False

    @abc.abstractmethod
    def params(self) -> dict[str, Any]:
        """Every setting that can change the output (JSON-serialisable values)."""

    def revision(self) -> str:
        """The model revision the output depends on ("" for model-free detectors).

        Must be cheap: it is called before any text is computed, to look up the cache.
        """
        return ""

    def availability(self) -> str | None:
        """``None`` when the detector can run, else the reason it cannot (it is SKIPPED)."""
        return None

    @abc.abstractmethod
    def compute(self, texts: list[str]) -> pd.DataFrame:
        """One row per text, in order, with exactly the columns ``self.features`` (float)."""

    def params_text(self) -> dict[str, str]:
        """``params()`` rendered as strings (stable JSON for non-strings), for the record."""
        return {k: v if isinstance(v, str) else json.dumps(v, sort_keys=True) for k, v in self.params().items()}

    def cache_key(self) -> dict[str, Any]:
        """The identity of this detector's output, minus the text."""
        return {
            "detector": self.name,
            "version": self.version,
            "params": self.params(),
            "revision": self.revision(),
        }


#: Detector classes by name. ``DETECTORS.get(name)(**params)`` builds one.
DETECTORS: Registry[type[Detector]] = Registry("detector")

#: Detectors run when the caller names none (perplexity is added only when configured).
DEFAULT_DETECTORS: tuple[str, ...] = ("length", "sentences", "lexical")
