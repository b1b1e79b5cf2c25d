"""The optional parts of an audit computed from the data: one folder per section.

Each folder (``audit/sections/<name>/``) holds the section's ``compute.py``
(``compute(data, spec, ...) -> Section[X]``: ``Computed(X)``, ``Skipped(reason)`` when an input is
missing, ``Failed(reason, error)`` when an :class:`~judge_transfer_audit.core.errors.AuditError` is raised
inside it, and the rest of the audit goes on), its ``checks.py`` when it gates anything, and its
``render.py`` (its part of the HTML report and its terminal lines). The payload types live in the
statistics' leaf modules. Every section is registered once, in
:mod:`judge_transfer_audit.sections.registry`, the table the pipeline, the result, the outputs, the
terminal and the report read.
"""

from __future__ import annotations

import pandas as pd

from judge_transfer_audit.sections._guard import not_requested

__all__ = ["judge_credits", "primary_credits", "not_requested"]


def judge_credits(outcomes: pd.DataFrame) -> pd.DataFrame:
    """Every configuration's per-pair credit and outcome (win, loss, tie, invalid: a tie is
    told apart whatever the rule credits it), as the judge criteria name them."""
    return outcomes[["pair_id", "matchup", "criterion", "judge", "credit", "outcome"]].copy()


def primary_credits(choices: pd.DataFrame, pairs: pd.DataFrame, primary: str | None) -> pd.DataFrame:
    """The primary judge's credits keyed by the *human* criterion (``overall`` = aggregate)."""
    frame = choices.merge(pairs[["pair_id", "matchup"]], on="pair_id", how="left")
    return frame.rename(columns={"y_judge": "credit"}).assign(judge=primary or "")[
        ["pair_id", "matchup", "criterion", "judge", "credit"]
    ]
