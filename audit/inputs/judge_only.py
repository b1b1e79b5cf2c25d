"""Scalar ratings with a scalar judge keyed by item_id on more items than the readers rated:
the judge's items no reader rated that carry a ``group_id`` in the judge file are *judge-only
items*; their pairs (formed within each group as the rated items' are) are judge-only pairs,
read by the prediction-powered estimates only (docs/data-contract.md)."""

from __future__ import annotations

import pandas as pd

from judge_transfer_audit.inputs.pairs import pairs_from_groups
from judge_transfer_audit.inputs.problems import ProblemLog
from judge_transfer_audit.inputs.resolve import distinct, member

#: the columns of :func:`judge_transfer_audit.inputs.pairs.pairs_from_groups`' pairs
PAIR_COLUMNS_FROM_GROUPS = ("pair_id", "system_a", "system_b", "focal", "matchup", "group_id", "item_a", "item_b")


def judge_only_items(
    judge: pd.DataFrame, ratings: pd.DataFrame, rejected: frozenset | set, path: str, log: ProblemLog
) -> pd.DataFrame:
    """The judge-only items (``item_id``, ``group_id``) of the judge rows ``judge``: items no
    rating names (nor a rating left out for a problem already reported, in ``rejected``) with a
    non-empty ``group_id``. An item given two groups by the judge file, or a group other than
    the human file's, is a problem reported to ``log``."""
    empty = pd.DataFrame({"item_id": pd.Series([], dtype=object), "group_id": pd.Series([], dtype=object)})
    if "group_id" not in judge.columns:
        return empty
    given = judge[judge["group_id"] != ""]
    groups = given.groupby("item_id", sort=False)["group_id"].unique()
    for item in groups.index[groups.map(len).to_numpy() > 1]:
        log.add(
            path,
            "this item appears in more than one group",
            "give each item a single group_id",
            column="group_id",
            value=f"{item}: {', '.join(groups[item])}",
        )
    human_group = ratings.drop_duplicates("item_id").set_index("item_id")["group_id"]
    judge_group = given.drop_duplicates("item_id").set_index("item_id")["group_id"]
    both = judge_group.index.intersection(human_group.index)
    clash = both[(judge_group.loc[both] != human_group.loc[both]).to_numpy()]
    for item in clash[:20]:
        log.add(
            path,
            "the judge file gives this item another group_id than the human file",
            "make the two files' group_id agree",
            column="group_id",
            value=f"{item}: {judge_group[item]} (judge), {human_group[item]} (humans)",
        )
    only = ~member(given["item_id"], distinct(ratings["item_id"]) | set(rejected))
    return given[only].drop_duplicates("item_id")[["item_id", "group_id"]].reset_index(drop=True)


def judge_only_item_pairs(ratings: pd.DataFrame, only_items: pd.DataFrame, item_system: dict[str, str]) -> pd.DataFrame:
    """The pairs (``i~j`` within a group, two different systems) with at least one judge-only
    item: items in order of first appearance, the rated ones first (as
    :func:`judge_transfer_audit.inputs.pairs.pairs_from_groups`; self-matchups left out)."""
    if len(only_items) == 0:
        return pd.DataFrame(columns=list(PAIR_COLUMNS_FROM_GROUPS))
    rated = ratings.drop_duplicates("item_id")[["item_id", "group_id"]]
    rated = rated[member(rated["group_id"], distinct(only_items["group_id"]))]
    every, _ = pairs_from_groups(pd.concat([rated, only_items], ignore_index=True), item_system)
    new = distinct(only_items["item_id"])
    return every[member(every["item_a"], new) | member(every["item_b"], new)].reset_index(drop=True)
