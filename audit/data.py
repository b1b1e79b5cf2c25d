"""Validated audit inputs: ``load_audit_data(...) -> AuditData``.

Everything downstream (statistics, detectors, the pipeline, reports) reads an
:class:`AuditData` and never a file. Loading normalises every accepted shape of the data
contract (docs/data-contract.md) into the long frames documented below, and collects one
:class:`~audit.errors.InputProblem` per violation before raising a single
:class:`~audit.errors.InputError`.

Normalised frames (column names are fixed; all ids are strings):

``votes`` (one row per human pairwise judgment)
    pair_id, reader_id, criterion, matchup, focal, other, choice (a system name or
    ``"tie"``), y (1.0 focal chosen, 0.0 other chosen, NaN tie), seconds (float, NaN when
    absent), comment (str, "" when absent), shown_first (str, "" when absent),
    reader_group (str, "" when absent), order (int, 0-based row order in the source file),
    line (int, line number in the source file; 0 when derived from scalar ratings).
``judge_scores`` (scalar judges; None when the judge file is pairwise)
    pair_id, system, criterion, judge (configuration id, "judge" when absent), sample
    (int, 0 when absent), score (float, NaN = unparsable output), line.
``judge_verdicts`` (pairwise judges; None when the judge file is scalar)
    pair_id, criterion, judge, sample, choice (a system name, "tie" or "invalid"), line.
``pairs``
    pair_id, system_a, system_b, focal, other, matchup, group_id ("" when absent).
``stories`` (optional)
    pair_id, system, text, plus any extra numeric column (precomputed features).
``dev_judge`` / ``dev_humans`` (optional development set, scalar)
    dev_judge: item_id, criterion, judge, score; dev_humans: item_id, reader_id,
    criterion, rating.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

HUMAN_OVERALL = "overall"  #: the humans' overall-preference criterion
JUDGE_AGGREGATE = "aggregate"  #: the judge's mean-of-criteria score per story


@dataclass(frozen=True)
class SourceFile:
    """Provenance of one input file."""

    role: str  #: "judge", "humans", "pairs", "stories", "dev_judge", "dev_humans"
    path: str
    sha256: str
    format: str  #: "csv", "tsv", "jsonl", "parquet"
    n_rows: int
    layout: str = ""  #: e.g. "pairwise-long", "scalar-wide"


@dataclass(frozen=True)
class Exclusion:
    """Rows the audit left out, counted (nothing is dropped silently)."""

    role: str
    reason: str
    n_rows: int


@dataclass(frozen=True)
class AuditData:
    votes: pd.DataFrame
    pairs: pd.DataFrame
    judge_scores: pd.DataFrame | None = None
    judge_verdicts: pd.DataFrame | None = None
    stories: pd.DataFrame | None = None
    dev_judge: pd.DataFrame | None = None
    dev_humans: pd.DataFrame | None = None
    focal_source: str = ""  #: "pairs file", "--focal", or "first in sorted order"
    human_shape: str = "pairwise"  #: "pairwise" or "scalar" (ratings turned into pairs)
    sources: tuple[SourceFile, ...] = ()
    exclusions: tuple[Exclusion, ...] = ()
    notes: tuple[str, ...] = field(default_factory=tuple)

    @property
    def criteria(self) -> tuple[str, ...]:
        """Human criteria in first-seen order (``overall`` last when present)."""
        seen = list(dict.fromkeys(self.votes["criterion"]))
        if HUMAN_OVERALL in seen:
            seen.remove(HUMAN_OVERALL)
            seen.append(HUMAN_OVERALL)
        return tuple(seen)

    @property
    def matchups(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(self.pairs["matchup"]))

    @property
    def judges(self) -> tuple[str, ...]:
        frame = self.judge_scores if self.judge_scores is not None else self.judge_verdicts
        if frame is None:
            return ()
        return tuple(dict.fromkeys(frame["judge"]))
