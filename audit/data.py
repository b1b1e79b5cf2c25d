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
    pair_id, system, item_id (added: the scored output; ``"<pair_id>:<system>"`` when the
    judge file is keyed by pair_id, else the file's item_id, repeated in every pair the item
    belongs to), criterion, judge (configuration id, "judge" when absent), sample
    (int, 0 when absent), score (float, NaN = unparsable output), line.
``judge_verdicts`` (pairwise judges; None when the judge file is scalar)
    pair_id, criterion, judge, sample, choice (a system name, "tie" or "invalid"),
    shown_first (the system the judge saw first; "" when absent), line.
``pairs``
    pair_id, system_a, system_b, focal, other, matchup, group_id ("" when absent),
    item_a, item_b (added: the outputs compared, same convention as ``judge_scores.item_id``).
``stories`` (optional)
    pair_id, system, item_id (added, as above), text, plus any extra numeric column
    (precomputed features), line.
``dev_judge`` / ``dev_humans`` (optional development set, scalar)
    dev_judge: item_id, system ("" when absent), criterion, judge, sample, score, line;
    dev_humans: item_id, reader_id, criterion, rating, line (system, sample, line added).

Criterion values are lower-cased; ids and system names are kept as written (stripped).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
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


def load_audit_data(
    judge: str | os.PathLike[str],
    humans: str | os.PathLike[str],
    *,
    pairs: str | os.PathLike[str] | None = None,
    stories: str | os.PathLike[str] | None = None,
    dev_judge: str | os.PathLike[str] | None = None,
    dev_humans: str | os.PathLike[str] | None = None,
    focal: str | Sequence[str] | None = None,
    drop_invalid: bool = False,
    scale: tuple[float, float] | None = None,
) -> AuditData:
    """Read, validate and normalise the audit's input files (docs/data-contract.md).

    Parameters
    ----------
    judge, humans : path
        The judge's outputs and the human judgments (CSV, TSV, JSONL or Parquet, by
        extension; long or wide layouts; see the data contract).
    pairs : path, optional
        What each pair is (pair_id, system_a, system_b, optional focal, matchup, group_id).
        Without it the pairs come from the judge file (pairwise votes) or from items
        sharing a ``group_id`` (scalar ratings).
    stories : path, optional
        Story texts (pair_id or item_id, system, text; extra numeric columns are kept).
    dev_judge, dev_humans : path, optional
        A development set of scalar ratings and the judge's scores on it (both or neither).
    focal : str or sequence of str, optional
        ``"NAME[,NAME...]"``: in each pair, the first listed name present is the focal
        system (it overrides the pairs file). Otherwise the pairs file's ``focal`` column,
        else the first system name in sorted order; ``focal_source`` records which.
    drop_invalid : bool, default False
        False: any invalid row stops the load. True: invalid rows (non-numeric or
        out-of-scale values, choices naming a system not in the pair, duplicates, ids
        missing from the other file...) and unparsable judge outputs are left out and
        counted in ``exclusions``. Structural problems (missing columns, empty or
        unreadable files, a pair with other than two systems...) always stop the load.
    scale : (lo, hi), optional
        The declared score scale; judge scores and human ratings outside it are problems.

    Returns
    -------
    AuditData
        Normalised frames (see the module docstring), provenance (``sources`` with
        sha256), ``exclusions`` (every row left out, counted; unparsable judge outputs are
        counted even when kept as missing) and ``notes``.

    Raises
    ------
    audit.errors.InputError
        With one :class:`~audit.errors.InputProblem` per problem found in any file.
    """
    from audit.inputs.load import load

    return load(judge, humans, pairs=pairs, stories=stories, dev_judge=dev_judge, dev_humans=dev_humans,
                focal=focal, drop_invalid=drop_invalid, scale=scale)
