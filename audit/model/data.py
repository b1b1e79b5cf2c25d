"""Validated audit inputs: the :class:`AuditData` that :func:`judge_transfer_audit.inputs.load_audit_data` returns.

Everything downstream (statistics, detectors, the pipeline, reports) reads an
:class:`AuditData` and never a file. This module holds only the data types: it imports no
loader, so audit/inputs/ builds them and dependencies run one way. Loading normalises every
accepted shape of the data contract (docs/data-contract.md) into the long frames documented
below, and collects one :class:`~judge_transfer_audit.core.errors.InputProblem` per violation before raising a
single :class:`~judge_transfer_audit.core.errors.InputError`.

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
    """Rows the audit left out, counted (nothing is dropped silently).

    ``kept`` marks rows counted but kept in the frames (unparsable judge outputs kept as
    missing); every other exclusion is a row removed.
    """

    role: str
    reason: str
    n_rows: int
    kept: bool = False


@dataclass(frozen=True)
class RowCount:
    """Every record of one input file: read = used + the excluded counts.

    A record is a row of a long file, or one value cell of a wide file (a row x a criterion
    column). ``used`` records are in the audit's frames; ``excluded`` lists (reason, count)
    of the others, as in :attr:`AuditData.exclusions`.
    """

    role: str
    unit: str  #: "votes", "ratings" (humans, dev_humans), "outputs" (judge), "pairs", "texts", "scores" (dev_judge)
    read: int
    used: int
    excluded: tuple[tuple[str, int], ...] = ()

    @property
    def n_excluded(self) -> int:
        return sum(n for _, n in self.excluded)


@dataclass(frozen=True)
class MatchupOrientation:
    """How one matchup is oriented: its focal system and which rule chose it
    (docs/data-contract.md, "Which system is focal")."""

    matchup: str
    focal: str
    other: str
    source: str  #: "--focal", "pairs file" or "automatic" ("given" for frames built by hand)
    n_pairs: int
    n_reoriented: int = 0  #: pairs whose proposed focal was the other system (flipped)

    @property
    def declared(self) -> bool:
        """True when the user chose the focal system (``--focal`` or the pairs file)."""
        return self.source != "automatic"


@dataclass(frozen=True)
class AuditData:
    votes: pd.DataFrame
    pairs: pd.DataFrame
    judge_scores: pd.DataFrame | None = None
    judge_verdicts: pd.DataFrame | None = None
    stories: pd.DataFrame | None = None
    dev_judge: pd.DataFrame | None = None
    dev_humans: pd.DataFrame | None = None
    focal_source: str = ""  #: "--focal", "pairs file", "automatic", or several joined by " + "
    human_shape: str = "pairwise"  #: "pairwise" or "scalar" (ratings turned into pairs)
    sources: tuple[SourceFile, ...] = ()
    exclusions: tuple[Exclusion, ...] = ()
    notes: tuple[str, ...] = field(default_factory=tuple)
    rows: tuple[RowCount, ...] = ()  #: per input file: records read, used, excluded by reason
    orientation: tuple[MatchupOrientation, ...] = ()  #: one per matchup
    #: pairs with judge outputs and no human vote (the ``pairs`` columns, oriented as the voted
    #: pairs of their matchup) and their judge outputs (``judge_scores`` / ``judge_verdicts``
    #: columns); read only by the prediction-powered section (audit/statistics/prediction_powered/)
    judge_only_pairs: pd.DataFrame | None = None
    judge_only_scores: pd.DataFrame | None = None
    judge_only_verdicts: pd.DataFrame | None = None

    @property
    def n_judge_only_pairs(self) -> int:
        return 0 if self.judge_only_pairs is None else len(self.judge_only_pairs)

    def pooling_scopes(self) -> dict[str, tuple[str, ...]]:
        """Matchups that may be pooled into one preference figure, by label: see
        :func:`pooling_scopes`. Frames built by hand (no ``orientation``) count as oriented
        by their author (source ``"given"``)."""
        orientation = self.orientation
        if not orientation and len(self.pairs):
            first = self.pairs.drop_duplicates("matchup")
            orientation = tuple(
                MatchupOrientation(str(m), str(f), str(o), "given", 0)
                for m, f, o in zip(first["matchup"], first["focal"], first["other"])
            )
        return pooling_scopes(orientation)

    @property
    def criteria(self) -> tuple[str, ...]:
        """Human criteria in first-seen order (``overall`` last when present)."""
        seen = _first_seen(self.votes["criterion"])
        if HUMAN_OVERALL in seen:
            seen.remove(HUMAN_OVERALL)
            seen.append(HUMAN_OVERALL)
        return tuple(seen)

    @property
    def matchups(self) -> tuple[str, ...]:
        return tuple(_first_seen(self.pairs["matchup"]))

    @property
    def judges(self) -> tuple[str, ...]:
        frame = self.judge_scores if self.judge_scores is not None else self.judge_verdicts
        if frame is None:
            return ()
        return tuple(_first_seen(frame["judge"]))


ALL_MATCHUPS = "(all matchups)"  #: label of a figure pooled over every matchup


def _first_seen(column: pd.Series) -> list:
    """Distinct values in order of first appearance (hash-based: ``dict.fromkeys`` over a
    million-row column took seconds per call)."""
    return list(pd.unique(column))


def pooling_scopes(orientation) -> dict[str, tuple[str, ...]]:
    """Which matchups a pooled preference figure ("all matchups") may average, by label.

    A preference for "the focal system" only pools over matchups whose focal means one thing:

    * every matchup's focal system was chosen by the user (``--focal`` or the pairs file's
      ``focal`` column: e.g. "the reasoning model"), or every matchup has the same focal
      system: one scope, ``"(all matchups)"``;
    * otherwise (some orientations automatic, different focal systems): one scope per focal
      system that is focal in two or more matchups, ``"(all matchups, focal X)"``; matchups
      whose focal system is focal nowhere else are not pooled with anything.

    With a single matchup there is nothing to pool (empty). Orientation-free statistics
    (agreement, the story-level and within-matchup surface fits) pool every matchup anyway;
    their labels say so.
    """
    orientation = tuple(orientation)
    if len(orientation) < 2:
        return {}
    names = tuple(o.matchup for o in orientation)
    if all(o.declared for o in orientation) or len({o.focal for o in orientation}) == 1:
        return {ALL_MATCHUPS: names}
    by_focal: dict[str, list[str]] = {}
    for o in orientation:
        by_focal.setdefault(o.focal, []).append(o.matchup)
    return {f"(all matchups, focal {focal})": tuple(ms) for focal, ms in by_focal.items() if len(ms) >= 2}
