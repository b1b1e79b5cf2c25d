"""Pair-level divergence: where every judge configuration agrees and the readers do not.

For each pair x criterion on which the judge is *unanimous* (every configuration gave the
focal system credit 1, or every one gave 0; a tie or an invalid output breaks unanimity),
the readers' even-split rate is compared with the judge's direction. ``divergence`` is
``|judge credit - reader rate|`` and the cell goes ``against`` the judge when the readers'
majority is on the other side (rate < 0.5 for a judge at 1, > 0.5 for a judge at 0).
Pairs are ranked by the number of criteria going against the judge, then by mean
divergence -- the motivating study's "Pair 56" is the top of such a ranking.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from judge_transfer_audit.model.checks import Status
from judge_transfer_audit.model.tie_rules import EVEN_SPLIT, TieRule
from judge_transfer_audit.statistics.readers._common import (
    COMPUTED,
    check_judge_credits,
    first_seen,
    fmt,
    judge_criterion_map,
    vote_credit,
)

CELL_COLUMNS = [
    "pair_id",
    "matchup",
    "criterion",
    "judge_criterion",
    "judge_direction",
    "n_configs",
    "reader_rate",
    "n_votes",
    "divergence",
    "against",
]
PAIR_COLUMNS = [
    "rank",
    "pair_id",
    "matchup",
    "n_unanimous",
    "n_against",
    "mean_divergence",
    "max_divergence",
    "against_criteria",
    "n_comments",
]


@dataclass(frozen=True)
class ReaderComment:
    """One reader's free-text justification (raw text: the report escapes it)."""

    reader_id: str
    criterion: str
    text: str


@dataclass(frozen=True)
class StoryExcerpt:
    """The opening of one story of a divergent pair (raw text: the report escapes it)."""

    system: str
    text: str
    truncated: bool


def story_excerpts(stories: pd.DataFrame | None, pair_id: str, max_chars: int) -> tuple[StoryExcerpt, ...]:
    """The pair's story openings, cut at a word boundary after at most ``max_chars`` characters."""
    if stories is None or "pair_id" not in stories.columns or "text" not in stories.columns:
        return ()
    out = []
    for rec in stories[stories["pair_id"].astype(str) == pair_id].itertuples(index=False):
        text = str(rec.text)
        cut = len(text) > max_chars
        if cut:
            text = text[:max_chars].rsplit(" ", 1)[0]
        out.append(StoryExcerpt(system=str(rec.system), text=text, truncated=cut))
    return tuple(out)


@dataclass(frozen=True, eq=False)
class DivergentPair:
    """One ranked pair with its vote table and the readers' comments.

    Attributes
    ----------
    rank : int
    pair_id, matchup : str
    n_against : int
        Criteria on which the readers' majority goes against the unanimous judge.
    mean_divergence : float
    votes : DataFrame
        reader_id x criterion table of ``focal`` / ``other`` / ``tie`` (Table 13 of the paper).
    comments : tuple[ReaderComment, ...]
    excerpts : tuple[StoryExcerpt, ...]
        The openings of the two stories, when the texts were given.
    """

    rank: int
    pair_id: str
    matchup: str
    n_against: int
    mean_divergence: float
    votes: pd.DataFrame
    comments: tuple[ReaderComment, ...] = ()
    excerpts: tuple[StoryExcerpt, ...] = ()

    def to_frame(self) -> pd.DataFrame:
        return self.votes.copy()

    def __str__(self) -> str:
        head = (
            f"#{self.rank} pair {self.pair_id} ({self.matchup}): {self.n_against} criteria against the judge, "
            f"mean divergence {fmt(self.mean_divergence, 2)}, {len(self.comments)} comment(s)"
        )
        # the case study is the comments and the texts, so show them (shortened) too
        lines = [head] + [f"    {c.reader_id} on {c.criterion}: {c.text}" for c in self.comments]
        lines += [
            f"    [{e.system}] {e.text[:100]}{'...' if len(e.text) > 100 or e.truncated else ''}" for e in self.excerpts
        ]
        return "\n".join(lines)


@dataclass(frozen=True, eq=False)
class DivergentPairs:
    """Ranked pair-level divergence between a unanimous judge and the readers.

    Attributes
    ----------
    status : Status
    reason : str
    cells : DataFrame
        pair_id, matchup, criterion, judge_criterion, judge_direction (1 or 0), n_configs,
        reader_rate, n_votes, divergence, against.
    ranking : DataFrame
        rank, pair_id, matchup, n_unanimous, n_against, mean_divergence, max_divergence,
        against_criteria (comma-joined), n_comments.
    top : tuple[DivergentPair, ...]
        The ``top_k`` pairs in detail (vote table and comments).
    n_not_unanimous : int
        Pair x criterion cells left out because the judge configurations disagreed, tied
        or were invalid.
    """

    status: Status
    reason: str = ""
    cells: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=CELL_COLUMNS))
    ranking: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=PAIR_COLUMNS))
    top: tuple[DivergentPair, ...] = ()
    n_not_unanimous: int = 0

    def to_frame(self) -> pd.DataFrame:
        return self.ranking.copy()

    def __str__(self) -> str:
        if self.status is not COMPUTED:
            return f"Divergent pairs: {self.status.value} ({self.reason})"
        lines = [f"Divergent pairs (judge unanimous; {self.n_not_unanimous} cell(s) not unanimous, left out)"]
        lines += [f"  {p}" for p in self.top]
        return "\n".join(lines)


def _vote_table(pv: pd.DataFrame) -> pd.DataFrame:
    """One pair's reader_id x criterion table of ``focal`` / ``other`` / ``tie`` (a reader's first vote
    on a criterion; missing: NaN), readers and criteria in order of appearance: what
    ``pivot_table(index="reader_id", columns="criterion", aggfunc="first", sort=False)`` gives, reset to
    a ``reader_id`` column, without its group-by (one column per criterion: 10k criteria)."""
    r, readers = pd.factorize(pv["reader_id"], sort=False)
    c, criteria = pd.factorize(pv["criterion"], sort=False)
    y = pv["y"].to_numpy(float)
    labels = np.where(np.isnan(y), "tie", np.where(y == 1, "focal", "other")).astype(object)
    grid = np.full((len(readers), len(criteria)), np.nan, dtype=object)
    grid[r[::-1], c[::-1]] = labels[::-1]  # assigned last to first: the first vote stays
    table = pd.DataFrame(grid, columns=[str(x) for x in criteria], dtype="str")
    table.insert(0, "reader_id", pd.Series(np.asarray(readers, dtype=object), dtype="str"))
    return table


def divergent_pairs(
    votes: pd.DataFrame,
    judge_credits: pd.DataFrame | None,
    *,
    top_k: int = 5,
    stories: pd.DataFrame | None = None,
    excerpt_chars: int = 700,
    tie_rule: TieRule = EVEN_SPLIT,
) -> DivergentPairs:
    """Rank pairs by how far the readers stray from a unanimous judge.

    Parameters
    ----------
    votes : DataFrame
        Normalised votes (``comment`` used when present).
    judge_credits : DataFrame or None
        pair_id, criterion, judge, credit (and ``outcome``: win, loss, tie, invalid, needed
        when the credits do not tell ties apart under ``tie_rule``). SKIPPED when None. The
        judge is unanimous on a pair x criterion when every configuration won (or every one
        lost) it, whatever a tie would be credited.
    top_k : int
        How many pairs get a detailed vote table and comments.
    stories : DataFrame, optional
        ``AuditData.stories`` (pair_id, system, text): the top pairs then carry the openings
        of their two stories (``excerpt_chars`` characters at most, cut at a word boundary).
    tie_rule : TieRule
        How a tied vote is credited in the readers' rate (:mod:`judge_transfer_audit.model.tie_rules`).

    Returns
    -------
    DivergentPairs
    """
    if judge_credits is None or not len(judge_credits):
        return DivergentPairs(status=Status.SKIPPED, reason="needs the judge's credits")
    mapping = judge_criterion_map(first_seen(votes["criterion"]), first_seen(judge_credits["criterion"]))
    if not mapping:
        return DivergentPairs(status=Status.SKIPPED, reason="no criterion is shared by the judge and the readers")
    inverse = {j: h for h, j in mapping.items()}
    if "outcome" not in judge_credits.columns:
        judge_credits = check_judge_credits(judge_credits, tie_rule)
    jc = judge_credits[judge_credits["criterion"].isin(inverse)].assign(criterion=lambda d: d["criterion"].map(inverse))
    # a decisive verdict is 1 (won) or 0 (lost) whatever the rule; ties and invalid outputs are neither
    jc = jc.assign(decided=np.where(jc["outcome"] == "win", 1.0, np.where(jc["outcome"] == "loss", 0.0, np.nan)))
    agg = jc.groupby(["pair_id", "criterion"], sort=False).agg(
        lo=("decided", "min"), hi=("decided", "max"), n=("decided", "size"), n_decided=("decided", "count")
    )
    unanimous = agg[(agg["lo"] == agg["hi"]) & (agg["n_decided"] == agg["n"])]
    n_not = int(len(agg) - len(unanimous))
    if "matchup" in votes.columns:
        first = votes.drop_duplicates("pair_id")
        matchup_of = dict(zip(first["pair_id"].to_numpy(dtype=object), first["matchup"].to_numpy(dtype=object)))
    else:
        matchup_of = {}
    human = (
        votes.assign(credit=vote_credit(votes, tie_rule))
        .groupby(["pair_id", "criterion"], sort=False)["credit"]
        .agg(["mean", "count"])
        .rename(columns={"count": "size"})
    )
    joined = unanimous.join(human, how="inner")
    joined = joined[joined["size"] > 0]  # every vote a tie the rule does not count: no reader rate
    pairs, crits = joined.index.get_level_values(0).tolist(), joined.index.get_level_values(1).tolist()
    direction = joined["lo"].to_numpy(float).astype(np.int64)
    rate = joined["mean"].to_numpy(float)
    cells = pd.DataFrame(
        {
            "pair_id": pairs,
            "matchup": [matchup_of.get(pair, "") for pair in pairs],
            "criterion": crits,
            "judge_criterion": [mapping[crit] for crit in crits],
            "judge_direction": direction,
            "n_configs": joined["n"].to_numpy(np.int64),
            "reader_rate": rate,
            "n_votes": joined["size"].to_numpy(np.int64),
            "divergence": np.abs(direction - rate),
            "against": np.where(direction == 1, rate < 0.5, rate > 0.5),
        },
        columns=CELL_COLUMNS,
    )
    if cells.empty:
        return DivergentPairs(
            status=Status.SKIPPED, reason="the judge is unanimous on no pair x criterion", n_not_unanimous=n_not
        )
    has_comments = "comment" in votes.columns
    comments_of: dict[str, list[ReaderComment]] = {}
    if has_comments:
        texts = votes[votes["comment"].fillna("").astype(str).str.strip() != ""]
        for rec in texts.drop_duplicates(["pair_id", "reader_id", "comment"]).itertuples(index=False):
            comments_of.setdefault(str(rec.pair_id), []).append(
                ReaderComment(reader_id=str(rec.reader_id), criterion=str(rec.criterion), text=str(rec.comment))
            )
    summary = cells.groupby("pair_id", sort=False).agg(
        matchup=("matchup", "first"),
        n_unanimous=("criterion", "size"),
        n_against=("against", "sum"),
        mean_divergence=("divergence", "mean"),
        max_divergence=("divergence", "max"),
    )
    against = cells[cells["against"]]
    # a pair against the judge on one criterion has that criterion; only the others are joined
    repeated = against["pair_id"].duplicated(keep=False).to_numpy(bool)
    single = against[~repeated].set_index("pair_id")["criterion"]
    summary["against_criteria"] = (
        pd.concat([single, against[repeated].groupby("pair_id")["criterion"].agg(",".join)])
        if repeated.any()
        else single
    )
    summary["against_criteria"] = summary["against_criteria"].fillna("")
    summary["n_comments"] = (
        [len(comments_of.get(p, [])) for p in summary.index] if comments_of else np.zeros(len(summary), np.int64)
    )
    summary = summary.reset_index().sort_values(
        ["n_against", "mean_divergence", "pair_id"], ascending=[False, False, True], kind="mergesort"
    )
    summary.insert(0, "rank", np.arange(1, len(summary) + 1))
    summary["n_against"] = summary["n_against"].astype(int)
    ranking = summary[PAIR_COLUMNS].reset_index(drop=True)
    top = []
    for rec in ranking.head(top_k).itertuples(index=False):
        table = _vote_table(votes[votes["pair_id"] == rec.pair_id])
        top.append(
            DivergentPair(
                rank=int(rec.rank),
                pair_id=str(rec.pair_id),
                matchup=str(rec.matchup),
                n_against=int(rec.n_against),
                mean_divergence=float(rec.mean_divergence),
                votes=table,
                comments=tuple(comments_of.get(str(rec.pair_id), [])),
                excerpts=story_excerpts(stories, str(rec.pair_id), excerpt_chars),
            )
        )
    return DivergentPairs(status=COMPUTED, cells=cells, ranking=ranking, top=tuple(top), n_not_unanimous=n_not)
